"""Exercise: what the 1/sqrt(d_k) of equation 1 does to the softmax, measured on random vectors."""

import functools

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, to_numpy

OK_FORMAT = False
name = "ex-ablations-saturation"
points = 2

KEY_DIMS = (1, 4, 16, 64, 256)


@functools.lru_cache(maxsize=None)
def reference(d_k, scaled, divisor=None, queries=20000, keys=10, seed=0):
    """Mean over queries of the largest softmax weight over ``keys`` random keys; the logits are
    divided by sqrt(d_k) when ``scaled`` (or by ``divisor``, to name a mistake)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((queries, 1, d_k))
    k = rng.standard_normal((queries, keys, d_k))
    logits = (q * k).sum(-1) / (divisor or (np.sqrt(d_k) if scaled else 1.0))  # (queries, keys)
    logits -= logits.max(-1, keepdims=True)
    weights = np.exp(logits)
    weights /= weights.sum(-1, keepdims=True)
    return float(weights.max(-1).mean())


def _value(mean_top_weight, d_k, scaled):
    value = to_numpy(call(mean_top_weight, "mean_top_weight", d_k, scaled), f"mean_top_weight({d_k}, {scaled})")
    if value.size != 1:
        raise AssertionError(f"mean_top_weight({d_k}, {scaled}) must be one number; it has shape {value.shape}.")
    value = float(value.reshape(()))
    if not 0.1 - 1e-9 <= value <= 1 + 1e-9:
        raise AssertionError(f"mean_top_weight({d_k}, {scaled}) = {value:.4g}, but the largest of 10 softmax "
                             "weights lies between 1/10 and 1.")
    return value


# The sampling error of a mean over 4000 queries is below 0.005; the known mistakes are further off.
TOLERANCE = 0.02


def _scaled(mean_top_weight, key_dims):
    for d_k in key_dims:
        got, right = _value(mean_top_weight, d_k, True), reference(d_k, True)
        if d_k > 1 and abs(got - reference(d_k, False)) < TOLERANCE:
            raise AssertionError(f"mean_top_weight({d_k}, True) is the unscaled value: with scaled=True divide "
                                 "the dot products by sqrt(d_k).")
        if d_k > 1 and abs(got - reference(d_k, True, divisor=d_k)) < TOLERANCE:
            raise AssertionError(f"mean_top_weight({d_k}, True) = {got:.3f}: you divide by d_k; equation 1 "
                                 "divides by its square root.")
        if abs(got - right) > TOLERANCE:
            side = "too large" if got > right else "too small"
            raise AssertionError(f"mean_top_weight({d_k}, True) = {got:.3f}: that is {side}. Draw q and the "
                                 "keys with standard normal entries, one query against 10 keys, and average the "
                                 "largest weight over at least 4000 queries.")


def _unscaled(mean_top_weight, key_dims):
    for d_k in key_dims:
        got, right = _value(mean_top_weight, d_k, False), reference(d_k, False)
        if d_k > 1 and abs(got - reference(d_k, True)) < TOLERANCE:
            raise AssertionError(f"mean_top_weight({d_k}, False) is the scaled value: with scaled=False use the "
                                 "plain dot products.")
        if abs(got - right) > TOLERANCE:
            side = "too large" if got > right else "too small"
            raise AssertionError(f"mean_top_weight({d_k}, False) = {got:.3f}: that is {side}.")


@test_case(points=1)
def scaled_logits(mean_top_weight):
    _scaled(mean_top_weight, KEY_DIMS)


@test_case(points=1)
def unscaled_logits(mean_top_weight):
    _unscaled(mean_top_weight, KEY_DIMS)

"""Exercise: find and fix the bug of the from-scratch TensorFlow tutorial's masking."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-attention-fix-additive-mask"
points = 3

RULE = ("`fixed_attention` calls the package's scaled_dot_product_attention: fix the tutorial's own code "
        "instead.")

EMPTY_ROW = ("With only a large negative number added, a row with no allowed key becomes uniform "
             "(every logit is about -1e9): it must give weights 0 and output 0, as the package does.")
BLOCKED = "Blocked keys (mask False) must get weight 0."
ALLOWED = ("Each row's allowed keys must share weight 1, as softmax(q k^T / sqrt(d_k)) over the "
           "allowed keys only, and blocked keys get 0: replace the blocked logits before the softmax.")


def _qkv(seed, t, s):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(2, 1, t, 8)).astype("float32")
    k = rng.normal(size=(2, 1, s, 8)).astype("float32")
    v = rng.normal(size=(2, 1, s, 3)).astype("float32")
    return q, k, v


def _hint(w, ref, keep):
    """The hint for the entry where the weights are most wrong."""
    error = np.where(np.isfinite(w), np.abs(w - ref), np.inf)
    where = np.unravel_index(np.argmax(error), error.shape)
    if not keep[where[:-1]].any():
        return EMPTY_ROW
    return ALLOWED if keep[where] else BLOCKED


def _check(fixed_attention, q, k, v, mask, case):
    ref_out, ref_w = (to_numpy(t, "") for t in mt.scaled_dot_product_attention(q, k, v, mask=mask))
    unscaled = to_numpy(mt.scaled_dot_product_attention(q * np.sqrt(q.shape[-1]), k, v, mask=mask)[1], "")
    with refusing([mt.scaled_dot_product_attention], fixed_attention, RULE):
        result = call(fixed_attention, "fixed_attention", q, k, v, mask)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise AssertionError("`fixed_attention` must still return (output, weights).")
    if like(result[0], ref_w, atol=1e-4) and not like(result[0], ref_out, atol=1e-4):
        raise AssertionError(f"{case}: you returned (weights, output); return (output, weights), in that order.")
    w = to_numpy(result[1], "the weights array")
    keep = np.broadcast_to(to_numpy(mask, "mask") > 0, ref_w.shape)
    if w.shape == keep.shape:
        # The bug shows on the rows that have both allowed and blocked keys (a row whose keys are
        # all allowed is uniform with the bug, since every logit is about -1e9).
        mixed = np.broadcast_to(keep.any(axis=-1, keepdims=True) & ~keep.all(axis=-1, keepdims=True), keep.shape)
        if np.all(w[mixed & keep] < 1e-3) and np.any(w[mixed & ~keep] > 1e-3):
            raise AssertionError(
                f"{case}: still the bug: the weight goes to the wrong keys. Which keys does the book's "
                "mask mark True, and which keys does the tutorial's mask mark 1?"
            )
        empty = ~keep.any(axis=-1, keepdims=True)  # a half fix leaves these rows uniform
        if not like(unscaled, ref_w) and (
                like(w, unscaled) or like(w, np.where(empty, 1.0 / keep.shape[-1], unscaled))):
            raise AssertionError(
                f"{case}: these weights are unscaled: keep the tutorial's division of the logits by sqrt(d_k)."
            )
    close(w, ref_w, f"{case}: the weights array", atol=1e-5,
          hint=_hint(w, ref_w, keep) if w.shape == ref_w.shape else "")
    close(result[0], ref_out, f"{case}: the output", atol=1e-5, hint="output = weights @ v.")


@test_case(points=1)
def padding_mask(fixed_attention):
    tokens = np.array([[4, 5, 0, 0], [4, 5, 6, 7]])
    q, k, v = _qkv(0, 3, 4)
    _check(fixed_attention, q, k, v, mt.padding_mask(tokens), "With a padding mask")


@test_case(points=1)
def look_ahead_mask(fixed_attention):
    tokens = np.array([[4, 5, 6, 0], [4, 5, 6, 7]])
    q, k, v = _qkv(1, 4, 4)
    _check(fixed_attention, q, k, v, mt.decoder_self_mask(tokens), "With a decoder mask")


@test_case(points=1)
def nothing_to_attend_to(fixed_attention):
    q, k, v = _qkv(2, 2, 3)
    mask = np.array([[True, False, False], [False, False, False]])
    _check(fixed_attention, q, k, v, mask, "A query whose mask row is all False")

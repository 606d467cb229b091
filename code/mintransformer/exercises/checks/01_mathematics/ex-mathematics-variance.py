"""Exercise: the variance of q . k is d_k sigma^4; of q . k / sqrt(d_k), sigma^4."""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-mathematics-variance"
points = 3

GRID = [(d_k, sigma) for d_k in (1, 16, 64, 256) for sigma in (0.5, 1.0, 2.0)]


def _values(function, label):
    return np.array([float(to_numpy(call(function, label, d_k, sigma), f"{label}({d_k}, {sigma})"))
                     for d_k, sigma in GRID])


def _formula(f):
    return np.array([f(float(d_k), sigma) for d_k, sigma in GRID])


def _name_the_mistake(got, label, mistakes):
    for wrong, message in mistakes:
        if like(got, _formula(wrong), rtol=1e-6, atol=1e-9):
            raise AssertionError(f"{label} is wrong: {message}")


@test_case(points=1)
def variance_of_the_dot_product(dot_variance):
    got = _values(dot_variance, "dot_variance")
    _name_the_mistake(got, "dot_variance(d_k, sigma)", [
        (lambda d, s: d * s**2,
         "it gives d_k sigma^2. The variance of one term is Var(q_i k_i) = E[q_i^2] E[k_i^2] = "
         "sigma^2 * sigma^2 = sigma^4, not sigma^2."),
        (lambda d, s: d,
         "it does not depend on sigma. With variance sigma^2 per component, each term q_i k_i has "
         "variance sigma^4."),
        (lambda d, s: np.sqrt(d) * s**2,
         "that is the standard deviation of q . k; the variance is its square."),
        (lambda d, s: d**2 * s**4,
         "the variances of d_k independent terms add up to d_k times one term's, not d_k^2 times."),
    ])
    close(got, _formula(lambda d, s: d * s**4), "dot_variance(d_k, sigma)", rtol=1e-6, atol=1e-9,
          hint="Var(q . k) = sum over the d_k terms of Var(q_i k_i).")


@test_case(points=1)
def variance_of_the_scaled_dot_product(scaled_dot_variance):
    got = _values(scaled_dot_variance, "scaled_dot_variance")
    _name_the_mistake(got, "scaled_dot_variance(d_k, sigma)", [
        (lambda d, s: 1.0 + 0 * d,
         "it is always 1, which holds only for sigma = 1. Dividing by sqrt(d_k) removes the factor "
         "d_k, not sigma^4."),
        (lambda d, s: np.sqrt(d) * s**4,
         "dividing by a constant c divides the variance by c^2: here by (sqrt(d_k))^2 = d_k."),
        (lambda d, s: d * s**4,
         "that is the variance before dividing by sqrt(d_k)."),
        (lambda d, s: s**2,
         "one term q_i k_i has variance sigma^4, not sigma^2, so Var(q . k / sqrt(d_k)) = "
         "d_k sigma^4 / d_k."),
    ])
    close(got, _formula(lambda d, s: s**4 + 0 * d), "scaled_dot_variance(d_k, sigma)", rtol=1e-6,
          atol=1e-9, hint="Var(X / c) = Var(X) / c^2.")


@test_case(points=1)
def measured_ratio(sample_ratio):
    answered(sample_ratio, "sample_ratio")
    try:
        ratio = float(np.asarray(to_numpy(sample_ratio, "sample_ratio")).squeeze())
    except TypeError:
        raise AssertionError("sample_ratio must be one number: the sample variance divided by "
                             "your formula.") from None
    if abs(ratio - 4) < 0.2:
        raise AssertionError(
            f"sample_ratio = {ratio:.2f}, about 4 = sigma^2: you divided by d_k sigma^2. The "
            "variance of q . k is d_k sigma^4."
        )
    if abs(ratio - 16) < 0.8:
        raise AssertionError(
            f"sample_ratio = {ratio:.2f}, about 16 = sigma^4: either you divided by d_k alone (the "
            "variance of q . k is d_k sigma^4), or you drew with scale sigma^2 = 4 "
            "(rng.normal(scale=sigma**2)): `scale` is the standard deviation, sigma = 2."
        )
    if not abs(ratio - 1) < 0.05:
        raise AssertionError(
            f"sample_ratio = {ratio:.2f}; with 20,000 pairs it should be within 0.05 of 1. Draw q "
            "and k with sigma = 2 (sigma * rng.standard_normal(...)), take the variance of the "
            "20,000 dot products, and divide it by your formula at d_k = 256, sigma = 2."
        )

"""Exercise: the variance of q . k for components of variance sigma^2, measured on the student's own sample.

The check catches known mistakes in the two formulas and measures the ratio again on the student's samples;
the formulas' values are hidden test cases (grading/hidden/), checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, like, to_numpy

OK_FORMAT = False
name = "ex-mathematics-variance"
points = 3

GRID = [(d_k, sigma) for d_k in (1, 16, 64, 256) for sigma in (0.5, 1.0, 2.0)]


def _values(function, label, grid=GRID):
    return np.array([float(to_numpy(call(function, label, d_k, sigma), f"{label}({d_k}, {sigma})"))
                     for d_k, sigma in grid])


def _formula(f, grid=GRID):
    return np.array([f(float(d_k), sigma) for d_k, sigma in grid])


def _name_the_mistake(got, label, mistakes):
    for wrong, message in mistakes:
        if like(got, _formula(wrong), rtol=1e-6, atol=1e-9):
            raise AssertionError(f"{label} is wrong: {message}")
    if not np.all(np.isfinite(got) & (got > 0)):
        raise AssertionError(f"{label} is wrong: a variance of a quantity that is not constant is a positive number.")


@test_case(points=1)
def variance_of_the_dot_product(dot_variance):
    got = _values(dot_variance, "dot_variance")
    _name_the_mistake(got, "dot_variance(d_k, sigma)", [
        (lambda d, s: d * s**2,
         "it grows like sigma^2, as if only one of q_i and k_i had variance sigma^2. A term q_i k_i is "
         "a product of two such components: write Var(q_i k_i) with E[q_i^2] and E[k_i^2]."),
        (lambda d, s: d,
         "it does not depend on sigma. Larger components give larger products: redo the variance of "
         "one term q_i k_i with variance sigma^2 per component."),
        (lambda d, s: np.sqrt(d) * s**2,
         "that is the standard deviation of q . k; the variance is its square."),
        (lambda d, s: d**2 * s**4,
         "the variances of d_k independent terms add up to d_k times one term's, not d_k^2 times."),
    ])


@test_case(points=1)
def variance_of_the_scaled_dot_product(scaled_dot_variance):
    got = _values(scaled_dot_variance, "scaled_dot_variance")
    _name_the_mistake(got, "scaled_dot_variance(d_k, sigma)", [
        (lambda d, s: 1.0 + 0 * d,
         "it is always 1, which holds only for sigma = 1. Dividing by sqrt(d_k) removes the dependence "
         "on d_k, not the one on sigma."),
        (lambda d, s: s**2,
         "it grows like sigma^2; redo the variance of one term q_i k_i, a product of two components "
         "of variance sigma^2 each."),
    ])


N_PAIRS, D_K, SIGMA = 20_000, 256, 2.0


def _sample(value, name):
    answered(value, name)
    array = to_numpy(value, name)
    if array.shape != (N_PAIRS, D_K):
        raise AssertionError(f"{name} has shape {array.shape}: draw {N_PAIRS:,} vectors of d_k = {D_K} "
                             f"components, shape ({N_PAIRS}, {D_K}).")
    if abs(array.mean()) > 0.05 or not 0.97 < array.std() / SIGMA < 1.03:
        raise AssertionError(
            f"{name} does not look like components of mean 0 and standard deviation sigma = 2 (its "
            "standard deviation is " + ("too large" if array.std() > SIGMA else "too small") + " or its mean "
            "is not near 0). `scale` is the standard deviation: sigma * rng.standard_normal(...) or "
            "rng.normal(scale=sigma, ...)."
        )
    return array


@test_case(points=1)
def measured_ratio(sample_ratio, q_sample, k_sample):
    answered(sample_ratio, "sample_ratio")
    try:
        ratio = float(np.asarray(to_numpy(sample_ratio, "sample_ratio")).squeeze())
    except TypeError:
        raise AssertionError("sample_ratio must be one number: the sample variance divided by "
                             "your formula.") from None
    q, k = _sample(q_sample, "q_sample"), _sample(k_sample, "k_sample")
    if np.array_equal(q, k):
        raise AssertionError("q_sample and k_sample are the same array: q and k are independent, draw "
                             "them separately.")
    if not abs(ratio - 1) < 0.05:
        off_by_sigma = any(abs(ratio / p - 1) < 0.05 for p in (SIGMA**2, SIGMA**4, SIGMA**-2, SIGMA**-4))
        raise AssertionError(
            f"sample_ratio = {ratio:.2f}; with 20,000 pairs it should be within 0.05 of 1. " + (
                "It is off by a power of sigma = 2: your formula, or the scale you drew with, misses one "
                "(`scale` is the standard deviation, sigma)." if off_by_sigma else
                "Take the variance of the 20,000 dot products of q_sample and k_sample, and divide it by "
                "your formula at d_k = 256, sigma = 2.")
        )
    measured = np.var(np.sum(q * k, axis=-1)) / (D_K * SIGMA**4)
    if abs(ratio - measured) > 1e-3 * measured:
        raise AssertionError(
            "sample_ratio is not the ratio that your own q_sample and k_sample give: measure it on them (the "
            "sample variance of the 20,000 dot products, divided by your formula), do not type it in."
        )

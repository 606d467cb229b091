"""Exercise: below which spread sigma the two places of epsilon differ by more than 1%."""

import numbers

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered

OK_FORMAT = False
name = "ex-layernorm-epsilon"
points = 2


def _r(sigma, eps):
    return np.sqrt(sigma**2 + eps) / (sigma + eps)


def _threshold(eps, ratio=1.01):
    """The largest sigma with r(sigma) > ratio: r decreases from 1/sqrt(eps) at 0 through 1.01."""
    low, high = eps, 0.5
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if _r(middle, eps) > ratio else (low, middle)
    return low


def _same(value, target, rtol):
    """Equal within rtol, or equal once both are rounded to 3 significant digits (what the task asks)."""
    return np.isclose(value, target, rtol=rtol) or float(f"{value:.3g}") == float(f"{target:.3g}")


def _check(value, name, eps, other_name, other_eps):
    answered(value, name)
    if isinstance(value, bool) or (
            not isinstance(value, numbers.Real) and not (np.ndim(value) == 0 and np.isrealobj(value))):
        raise AssertionError(f"`{name}` must be one number, the spread sigma, not {type(value).__name__}.")
    value = float(value)
    expected = _threshold(eps)
    if _same(value, expected, rtol=5e-4):  # 3 significant digits: 0.00702 is not 0.0070029
        return
    if _same(value, np.sqrt(50 * eps), rtol=1e-3):
        raise AssertionError(
            f"`{name}` = {value:.4g} is the first-order estimate sigma = sqrt(50 eps). Now compute r(sigma) "
            "itself (on a fine grid of sigma, or by solving r = 1.01): the + eps in sigma + eps moves the "
            "answer."
        )
    if _same(value, np.sqrt(eps / (1.01**2 - 1)), rtol=1e-3):
        raise AssertionError(
            f"`{name}` = {value:.4g} solves sqrt(sigma^2 + eps) / sigma = 1.01: you left out the eps of "
            "the denominator sigma + eps."
        )
    if _same(value, _threshold(other_eps), rtol=5e-4):  # (without saying that it is right for the other one)
        raise AssertionError(f"`{name}` = {value:.4g}: check which eps you used. `{name}` is for eps = {eps:g}.")
    if 0 < value < expected and _r(value, eps) > 1.01 and value > 0.5 * expected:
        raise AssertionError(
            f"`{name}` = {value:.4g}: there r(sigma) > 1.01 indeed, but it is not the largest such sigma: "
            "yours is too small. Use a finer grid of sigma near the threshold, or solve r(sigma) = 1.01 "
            "(give the answer to 3 significant digits)."
        )
    if expected < value < 2 * expected:
        raise AssertionError(
            f"`{name}` = {value:.4g}: there r(sigma) = {_r(value, eps):.5f}, which does not exceed 1.01, so "
            "your sigma is too large. Use a finer grid of sigma near the threshold, or solve r(sigma) = 1.01 "
            "(give the answer to 3 significant digits)."
        )
    raise AssertionError(
        f"`{name}` = {value:.4g} is not the largest sigma at which r(sigma) = sqrt(sigma^2 + eps) / "
        f"(sigma + eps) exceeds 1.01 for eps = {eps:g} (give it to 3 significant digits). r is close "
        "to 1 for large sigma and grows as sigma shrinks."
    )


@test_case(points=1)
def eps_of_this_book(sigma_small_eps):
    _check(sigma_small_eps, "sigma_small_eps", 1e-6, "sigma_keras_eps", 1e-3)


@test_case(points=1)
def eps_of_keras(sigma_keras_eps):
    _check(sigma_keras_eps, "sigma_keras_eps", 1e-3, "sigma_small_eps", 1e-6)

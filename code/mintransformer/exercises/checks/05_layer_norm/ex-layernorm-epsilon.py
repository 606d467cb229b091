"""Exercise: below which spread sigma the two places of epsilon differ by more than the ratio's percent.

The numbers are the student's own (mt.exercises.parameters, drawn from STUDENT_ID): the ratio that
r(sigma) must exceed (1.01 in the book), and the two epsilons. The public cases check the form of
the answers and name the known mistakes that show without the thresholds (the first-order estimate,
eps left out of sigma + eps); the thresholds themselves, and whether a sigma is too large or too
small, are for the hidden cases, when the notebook is graded (a public "too large" would let a
student find the threshold by bisection on the check).
"""

import numbers

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-layernorm-epsilon"
points = 2


def _r(sigma, eps):
    return np.sqrt(sigma**2 + eps) / (sigma + eps)


def _same(value, target, rtol):
    """Equal within rtol, or equal once both are rounded to 3 significant digits (what the task asks)."""
    return np.isclose(value, target, rtol=rtol) or float(f"{value:.3g}") == float(f"{target:.3g}")


def _number(value, name):
    answered(value, name)
    if isinstance(value, bool) or (
            not isinstance(value, numbers.Real) and not (np.ndim(value) == 0 and np.isrealobj(value))):
        raise AssertionError(f"`{name}` must be one number, the spread sigma, not {type(value).__name__}.")
    value = float(value)
    if not value > 0:
        raise AssertionError(f"`{name}` = {value:.4g}: a spread sigma is a positive number.")
    return value


def _known_mistakes(value, name, eps, ratio):
    """The mistakes that show without the threshold: each is a formula other than r(sigma) = ratio."""
    if _same(value, np.sqrt(eps / (2 * (ratio - 1))), rtol=1e-3):
        raise AssertionError(
            f"`{name}` = {value:.4g} is the first-order estimate sigma = sqrt(eps / (2 (ratio - 1))). Now "
            f"compute r(sigma) itself (on a fine grid of sigma, or by solving r = {ratio:g}): the + eps in "
            "sigma + eps moves the answer."
        )
    if _same(value, np.sqrt(eps / (ratio**2 - 1)), rtol=1e-3):
        raise AssertionError(
            f"`{name}` = {value:.4g} solves sqrt(sigma^2 + eps) / sigma = {ratio:g}: you left out the eps of "
            "the denominator sigma + eps."
        )


@test_case(points=1)
def eps_of_this_book(sigma_small_eps, STUDENT_ID, epsilon_numbers):
    n = student_numbers(name, STUDENT_ID, epsilon_numbers)
    _known_mistakes(_number(sigma_small_eps, "sigma_small_eps"), "sigma_small_eps", n["eps_small"], n["ratio"])


@test_case(points=1)
def eps_of_keras(sigma_keras_eps, STUDENT_ID, epsilon_numbers):
    n = student_numbers(name, STUDENT_ID, epsilon_numbers)
    _known_mistakes(_number(sigma_keras_eps, "sigma_keras_eps"), "sigma_keras_eps", n["eps_keras"], n["ratio"])

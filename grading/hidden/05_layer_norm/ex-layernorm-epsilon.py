"""Hidden cases of ex-layernorm-epsilon: the thresholds themselves, for the student's numbers.

Merged after the public check (mt.exercises.merged_source), so its helpers (_number, _r, _same,
_known_mistakes, name) are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import student_numbers


def _threshold(eps, ratio):
    """The largest sigma with r(sigma) > ratio: r decreases from 1/sqrt(eps) at 0 through the ratio."""
    low, high = eps, 0.5
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if _r(middle, eps) > ratio else (low, middle)  # noqa: F821 (the public check's)
    return low


def _value(value, name, eps, other_eps, ratio):
    value = _number(value, name)  # noqa: F821
    _known_mistakes(value, name, eps, ratio)  # noqa: F821
    expected = _threshold(eps, ratio)
    if _same(value, expected, rtol=5e-4):  # noqa: F821 (3 significant digits: 0.00700 is not 0.0070029)
        return
    step = 10.0 ** (np.floor(np.log10(expected)) - 2)
    if np.isclose(value, np.floor(expected / step) * step, rtol=1e-9):  # truncated to 3 digits: r > ratio there too
        return
    lowest = value - 0.5 * 10.0 ** (np.floor(np.log10(value)) - 2)  # the least that rounds to it (3 digits)
    if not _r(lowest, eps) > ratio:  # noqa: F821 (past the threshold, even before rounding)
        raise AssertionError(
            f"`{name}` = {value:.4g}: there r(sigma) does not exceed {ratio:g}, so your sigma is too large for "
            f"eps = {eps:g}. Use a finer grid of sigma near the threshold, or solve r(sigma) = {ratio:g} (give "
            "the answer to 3 significant digits)."
        )
    if _same(value, _threshold(other_eps, ratio), rtol=5e-4):  # noqa: F821 (without saying that it is right there)
        raise AssertionError(f"`{name}` = {value:.4g}: check which eps you used. `{name}` is for eps = {eps:g}.")
    if 0 < value < expected and value > 0.5 * expected:
        raise AssertionError(
            f"`{name}` = {value:.4g}: there r(sigma) > {ratio:g} indeed, but it is not the largest such sigma: "
            f"yours is too small. Use a finer grid of sigma near the threshold, or solve r(sigma) = {ratio:g} "
            "(give the answer to 3 significant digits)."
        )
    raise AssertionError(
        f"`{name}` = {value:.4g} is not the largest sigma at which r(sigma) = sqrt(sigma^2 + eps) / "
        f"(sigma + eps) exceeds {ratio:g} for eps = {eps:g} (give it to 3 significant digits). r is close "
        "to 1 for large sigma and grows as sigma shrinks."
    )


@test_case(points=1, hidden=True)
def hidden_threshold_of_this_book(sigma_small_eps, STUDENT_ID, epsilon_numbers):
    n = student_numbers(name, STUDENT_ID, epsilon_numbers)  # noqa: F821 (the public check's name)
    _value(sigma_small_eps, "sigma_small_eps", n["eps_small"], n["eps_keras"], n["ratio"])


@test_case(points=1, hidden=True)
def hidden_threshold_of_keras(sigma_keras_eps, STUDENT_ID, epsilon_numbers):
    n = student_numbers(name, STUDENT_ID, epsilon_numbers)  # noqa: F821
    _value(sigma_keras_eps, "sigma_keras_eps", n["eps_keras"], n["eps_small"], n["ratio"])

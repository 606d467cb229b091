"""Exercise: which pair has a wavelength closest to a target, and which pairs barely move in a sentence.

The target wavelength and the sentence length are the student's own (mt.exercises.parameters, drawn from
STUDENT_ID). The check confirms the format and catches a known mistake; the numbers themselves are hidden
test cases (grading/hidden/), checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-positional-wavelength"
points = 2

D_MODEL = 512
PAIRS = np.arange(D_MODEL // 2)
OMEGA = 10000.0 ** (-2 * PAIRS / D_MODEL)


def _numbers(STUDENT_ID, wavelength_numbers):
    """(the target wavelength, the number of tokens) of the student's numbers."""
    n = student_numbers(name, STUDENT_ID, wavelength_numbers)
    return n["wavelength"], n["tokens"]


def _no_two_pi(target):
    """The pair whose wavelength would be the target without its 2 pi."""
    return int(np.argmin(np.abs(1 / OMEGA - target)))


def _integer(value, name):
    answered(value, name)
    try:
        number = float(np.asarray(value).item())
    except Exception:
        raise AssertionError(f"`{name}` must be one number, not {type(value).__name__}.") from None
    if number != round(number):
        raise AssertionError(f"`{name}` is {number:g}: it counts or numbers pairs, so it is a whole number.")
    return int(round(number))


@test_case(points=1)
def closest_to_100_positions(closest_pair, STUDENT_ID, wavelength_numbers):
    i = _integer(closest_pair, "closest_pair")
    target, _ = _numbers(STUDENT_ID, wavelength_numbers)
    if i == _no_two_pi(target):
        raise AssertionError(
            f"Pair {i} has 10000^(2i / 512) closest to {target}: you left out the 2 pi. The wavelength is "
            "2 pi / omega_i = 2 pi 10000^(2i / d_model) positions, not 10000^(2i / d_model).")
    if not 0 <= i < len(PAIRS):
        raise AssertionError(f"closest_pair = {i}: the pairs of d_model = 512 are numbered 0 to 255 "
                             "(a feature index runs to 511: pair i holds features 2i and 2i + 1).")


@test_case(points=1)
def pairs_that_barely_move(slow_pairs, STUDENT_ID, wavelength_numbers):
    n = _integer(slow_pairs, "slow_pairs")
    _numbers(STUDENT_ID, wavelength_numbers)  # the student's numbers are the notebook's
    if not 0 <= n <= len(PAIRS):
        raise AssertionError(f"slow_pairs = {n}: it counts some of the 256 pairs, so it is between 0 and 256.")

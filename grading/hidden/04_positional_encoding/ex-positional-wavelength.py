"""Hidden cases of ex-positional-wavelength: the pair and the count themselves, for the student's target
wavelength and sentence length, and the slips only they show.

Merged after the public check (mt.exercises.merged_source): PAIRS, OMEGA, _numbers, _no_two_pi and
_integer are its.
"""

import numpy as np
from otter.test_files import test_case

WAVELENGTHS = 2 * np.pi / OMEGA  # noqa: F821 (OMEGA: the public check's)


def _closest(target):
    return int(np.argmin(np.abs(WAVELENGTHS - target)))


def _slow(tokens):
    return int(np.sum(OMEGA * (tokens - 1) < np.pi / 2))  # noqa: F821


@test_case(points=1, hidden=True)
def hidden_closest_to_100_positions(closest_pair, STUDENT_ID, wavelength_numbers):
    i = _integer(closest_pair, "closest_pair")  # noqa: F821 (the public check's)
    target, _ = _numbers(STUDENT_ID, wavelength_numbers)  # noqa: F821
    closest = _closest(target)
    if i in (2 * closest, 2 * closest + 1):
        raise AssertionError(
            f"{i} is a feature index: pair i holds features 2i and 2i + 1. Give the pair, i.")
    if i == _no_two_pi(target):  # noqa: F821
        raise AssertionError(
            f"Pair {i} has 10000^(2i / 512) = {target}: you left out the 2 pi. The wavelength is "
            "2 pi / omega_i = 2 pi 10000^(2i / d_model) positions, not 10000^(2i / d_model).")
    if i == _closest(100) and i != closest:
        raise AssertionError(
            f"closest_pair = {i} is the pair of the book's 100 positions: your target is {target} positions.")
    if i != closest:
        # Which way it is off, never its wavelength: two wavelengths would give the ratio, and so the answer.
        side = (f" (its wavelength is shorter than {target} positions)" if WAVELENGTHS[i] < target else
                f" (its wavelength is longer than {target} positions)") if 0 <= i < len(PAIRS) else ""  # noqa: F821
        raise AssertionError(
            f"closest_pair = {i} is not the pair whose wavelength is closest to {target}{side}. "
            "Find the pair from the wavelengths of equation (eq-position-frequency), then compare the "
            f"pairs on either side of {target}.")


@test_case(points=1, hidden=True)
def hidden_pairs_that_barely_move(slow_pairs, STUDENT_ID, wavelength_numbers):
    n = _integer(slow_pairs, "slow_pairs")  # noqa: F821
    _, tokens = _numbers(STUDENT_ID, wavelength_numbers)  # noqa: F821
    slow = _slow(tokens)
    last = tokens - 1
    wrong = {
        len(PAIRS) - slow: "You counted the pairs that turn by MORE than a quarter turn; count those "  # noqa: F821
                           "that turn by less.",
        int(np.sum(OMEGA * tokens < np.pi / 2)):  # noqa: F821
            f"Over {tokens} tokens the positions go from 0 to {last}: the angle grows by omega_i * {last}, "
            f"not omega_i * {tokens}.",
        int(np.sum(OMEGA * last < 2 * np.pi)): "That counts the pairs that turn by less than a full "  # noqa: F821
                                               "turn (2 pi); a quarter turn is pi / 2.",
        int(np.sum(OMEGA * last < np.pi)): "That counts the pairs that turn by less than half a "  # noqa: F821
                                           "turn (pi); a quarter turn is pi / 2.",
        int(np.sum(10000.0 ** (-PAIRS / D_MODEL) * last < np.pi / 2)):  # noqa: F821
            "omega_i = 10000^(-2i / d_model): with 2i, not i, in the exponent.",
    }
    if tokens != 50:
        wrong.setdefault(_slow(50), "That is the count of the book's sentence of 50 tokens: yours has "
                                    f"{tokens}.")
    wrong.pop(slow, None)
    if n in wrong:
        raise AssertionError(f"slow_pairs = {n}: {wrong[n]}")
    if n != slow:
        raise AssertionError(
            f"slow_pairs = {n} is not the number of the 256 pairs with omega_i * {last} < pi / 2.")

"""Hidden cases of ex-positional-wavelength: the pair and the count themselves, and the slips only they show.

Merged after the public check (mt.exercises.merged_source): PAIRS, OMEGA, NO_TWO_PI and _integer are
its.
"""

import numpy as np
from otter.test_files import test_case

WAVELENGTHS = 2 * np.pi / OMEGA  # noqa: F821 (OMEGA: the public check's)
CLOSEST = int(np.argmin(np.abs(WAVELENGTHS - 100)))
SLOW = int(np.sum(OMEGA * 49 < np.pi / 2))  # noqa: F821


@test_case(points=1, hidden=True)
def hidden_closest_to_100_positions(closest_pair):
    i = _integer(closest_pair, "closest_pair")  # noqa: F821 (the public check's)
    if i in (2 * CLOSEST, 2 * CLOSEST + 1):
        raise AssertionError(
            f"{i} is a feature index: pair i holds features 2i and 2i + 1. Give the pair, i.")
    if i == NO_TWO_PI:
        raise AssertionError(
            f"Pair {i} has 10000^(2i / 512) = 100: you left out the 2 pi. The wavelength is "
            "2 pi / omega_i = 2 pi 10000^(2i / d_model) positions, not 10000^(2i / d_model).")
    if i != CLOSEST:
        # Which way it is off, never its wavelength: two wavelengths would give the ratio, and so the answer.
        side = (" (its wavelength is shorter than 100 positions)" if WAVELENGTHS[i] < 100 else
                " (its wavelength is longer than 100 positions)") if 0 <= i < len(PAIRS) else ""
        raise AssertionError(
            f"closest_pair = {i} is not the pair whose wavelength is closest to 100{side}. "
            "Find the pair from the wavelengths of equation (eq-position-frequency), then compare the "
            "pairs on either side of 100.")


@test_case(points=1, hidden=True)
def hidden_pairs_that_barely_move(slow_pairs):
    n = _integer(slow_pairs, "slow_pairs")  # noqa: F821
    wrong = {
        len(PAIRS) - SLOW: "You counted the pairs that turn by MORE than a quarter turn; count those "
                           "that turn by less.",
        int(np.sum(OMEGA * 50 < np.pi / 2)): "Over 50 tokens the positions go from 0 to 49: the "
                                             "angle grows by omega_i * 49, not omega_i * 50.",
        int(np.sum(OMEGA * 49 < 2 * np.pi)): "That counts the pairs that turn by less than a full "
                                             "turn (2 pi); a quarter turn is pi / 2.",
        int(np.sum(OMEGA * 49 < np.pi)): "That counts the pairs that turn by less than half a "
                                         "turn (pi); a quarter turn is pi / 2.",
        int(np.sum(10000.0 ** (-PAIRS / D_MODEL) * 49 < np.pi / 2)):
            "omega_i = 10000^(-2i / d_model): with 2i, not i, in the exponent.",
    }
    wrong.pop(SLOW, None)
    if n in wrong:
        raise AssertionError(f"slow_pairs = {n}: {wrong[n]}")
    if n != SLOW:
        raise AssertionError(
            f"slow_pairs = {n} is not the number of the 256 pairs with omega_i * 49 < pi / 2.")

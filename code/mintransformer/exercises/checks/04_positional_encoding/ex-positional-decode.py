"""Exercise: decode the position of each row of the encoding from its values."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, to_numpy

OK_FORMAT = False
name = "ex-positional-decode"
points = 3


def _check(decode_positions, length, d_model, positions, case):
    rows = mt.positional_encoding(length, d_model)[positions]  # (N, D), in the order of `positions`
    got = call(decode_positions, "decode_positions", rows, length)
    decoded = to_numpy(got, f"{case}: the decoded positions").reshape(-1)
    if decoded.shape != positions.shape:
        raise AssertionError(f"{case}: {decoded.size} positions for {len(positions)} rows; "
                             "return one position per row, shape (N,).")
    if not np.array_equal(positions, np.arange(len(positions))) and np.array_equal(decoded, np.arange(len(positions))):
        raise AssertionError(f"{case}: you returned 0, 1, 2, ... in order, but the rows come in "
                             "any order: decode each row from its values.")
    if not np.allclose(decoded, np.round(decoded), atol=1e-9) and np.allclose(decoded, positions, atol=0.5):
        raise AssertionError(f"{case}: your positions are close but not whole numbers: round them "
                             "to the nearest integer.")
    wrong = np.flatnonzero(decoded != positions)
    if wrong.size:
        r = wrong[0]
        raise AssertionError(
            f"{case}: {wrong.size} of {len(positions)} rows are decoded wrongly; row {r} is position "
            f"{positions[r]}, and you decoded {decoded[r]:g}. Is the wavelength 2 pi / omega_i of your pair "
            f"longer than {length}? A shorter one wraps around: arctan2 gives its angle only modulo 2 pi.")


@test_case(points=1)
def the_chapters_table(decode_positions):
    positions = np.random.default_rng(0).permutation(1000)  # every row, shuffled
    _check(decode_positions, 1000, 128, positions, "1000 positions, d_model = 128, rows shuffled")


@test_case(points=1)
def a_longer_wider_table(decode_positions):
    positions = np.random.default_rng(1).choice(3000, size=200, replace=False)  # some rows
    _check(decode_positions, 3000, 256, positions, "200 of 3000 positions, d_model = 256")


@test_case(points=1)
def a_narrow_table(decode_positions):
    _check(decode_positions, 50, 16, np.arange(50)[::-1], "50 positions, d_model = 16, rows reversed")

"""Exercise: decode the position of each row of the encoding from its values."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, to_numpy

OK_FORMAT = False
name = "ex-positional-decode"
points = 3


def _omega(d_model):
    return 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # (d_model/2,)


def _readings(rows, i, omega, swapped=False):
    """The decodings of rows from pair i: (rounded, truncated), with and without the % 2 pi."""
    sin, cos = rows[:, 2 * i].astype(np.float64), rows[:, 2 * i + 1].astype(np.float64)
    angle = np.arctan2(cos, sin) if swapped else np.arctan2(sin, cos)
    for a in (angle % (2 * np.pi), angle):
        yield np.round(a / omega[i])
        yield np.trunc(a / omega[i])


def _matches(decoded, reading, positions):
    """Whether ``decoded`` follows a wrong ``reading`` where it differs from the true positions
    (on 90% of those rows: the student's floats may round a few rows the other way)."""
    differ = reading != positions
    return bool(differ.any()) and np.mean(decoded[differ] == reading[differ]) >= 0.9


def _swapped(decoded, rows, omega, positions):
    """Whether ``decoded`` is arctan2(cos, sin) of some pair: the arguments swapped."""
    return any(_matches(decoded, reading, positions)
               for i in range(len(omega)) for reading in _readings(rows, i, omega, swapped=True))


def _wrapping_pair(decoded, rows, omega, length, positions):
    """The pair, too fast for ``length`` positions, that ``decoded`` was read from, or None."""
    for i in np.flatnonzero(2 * np.pi / omega <= length):
        if any(_matches(decoded, reading, positions) for reading in _readings(rows, i, omega)):
            return int(i)
    return None


def _check(decode_positions, length, d_model, positions, case):
    rows = mt.positional_encoding(length, d_model)[positions]  # (N, D), in the order of `positions`
    got = call(decode_positions, "decode_positions", rows, length)
    decoded = to_numpy(got, f"{case}: the decoded positions").reshape(-1)
    if decoded.shape != positions.shape:
        raise AssertionError(f"{case}: {decoded.size} positions for {len(positions)} rows; "
                             "return one position per row, shape (N,).")
    if np.array_equal(decoded, positions):
        return
    if not np.array_equal(positions, np.arange(len(positions))) and np.array_equal(decoded, np.arange(len(positions))):
        raise AssertionError(f"{case}: you returned 0, 1, 2, ... in order, but the rows come in "
                             "any order: decode each row from its values.")
    if not np.allclose(decoded, np.round(decoded), atol=1e-9) and np.allclose(decoded, positions, atol=0.5):
        raise AssertionError(f"{case}: your positions are close but not whole numbers: round them "
                             "to the nearest integer.")
    omega = _omega(d_model)
    if _swapped(decoded, rows, omega, positions):
        raise AssertionError(f"{case}: you read the angle as np.arctan2(cos, sin). np.arctan2(y, x) "
                             "takes the sine first: the angle of (cos theta, sin theta) is "
                             "np.arctan2(sin theta, cos theta).")
    if decoded.min() < 0:
        r = int(np.argmin(decoded))
        raise AssertionError(f"{case}: you decoded a negative position, {decoded[r]:g} for position "
                             f"{positions[r]}. np.arctan2 returns angles in (-pi, pi]: take "
                             "angle % (2 * np.pi) to get them in [0, 2 pi) before dividing by omega_i.")
    error = decoded - positions
    if np.all((error == 0) | (error == -1)):
        r = int(np.flatnonzero(error)[0])
        raise AssertionError(f"{case}: some positions are one too small (position {positions[r]} "
                             f"decoded as {decoded[r]:g}): for some rows angle / omega_i comes out a "
                             "hair below the whole number, and astype(int) cuts it down. Round, "
                             "don't truncate: np.round(angle / omega_i).astype(int).")
    wrong = np.flatnonzero(error)
    r = wrong[0]
    pair = _wrapping_pair(decoded, rows, omega, length, positions)
    if pair is not None:
        raise AssertionError(
            f"{case}: you decoded from pair {pair}, whose wavelength 2 pi / omega_i = "
            f"{2 * np.pi / omega[pair]:.1f} is shorter than the {length} positions: its angle wraps "
            f"around, and arctan2 gives it only modulo 2 pi (row {r} is position {positions[r]}, "
            f"you decoded {decoded[r]:g}). Use a pair whose wavelength is longer than {length}.")
    raise AssertionError(
        f"{case}: {wrong.size} of {len(positions)} rows are decoded wrongly; row {r} is position "
        f"{positions[r]}, and you decoded {decoded[r]:g}. For a pair i whose wavelength 2 pi / omega_i "
        f"is longer than {length}: angle = np.arctan2(row[2i], row[2i + 1]) % (2 * np.pi), and the "
        "position is angle / omega_i, rounded, with omega_i = 10000^(-2i / d_model).")


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

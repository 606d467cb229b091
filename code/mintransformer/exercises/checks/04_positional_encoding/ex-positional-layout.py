"""Exercise: a table saved with Tensor2Tensor's encoding (concatenated layout, other frequencies):
its shift matrix, and which of its pairs are the paper's."""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-positional-layout"
points = 2


def _paper_omega(d_model):
    return 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # omega_i = 10000^(-2i/d)


def _t2t_omega(d_model):
    return 10000.0 ** (-np.arange(d_model // 2) / (d_model // 2 - 1))  # omega'_i = 10000^(-i/(d/2 - 1))


def _t2t_table(length, d_model):
    angles = np.arange(length)[:, None] * _t2t_omega(d_model)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)  # (T, D): [sines | cosines]


def _rotation(k, omega):
    d_model = 2 * len(omega)
    m = np.zeros((d_model, d_model))
    for i, w in enumerate(omega):
        c, s = np.cos(w * k), np.sin(w * k)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m


def _to_concatenated(m):
    d_model = m.shape[0]
    pi = np.eye(d_model)[:, np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])]
    return pi.T @ m @ pi


@test_case(points=1)
def shift_of_the_t2t_table(t2t_shift):
    for k, d_model in [(4, 16), (1, 8), (7, 64)]:
        what = f"t2t_shift({k}, {d_model})"
        m = to_numpy(call(t2t_shift, "t2t_shift", k, d_model), what)
        if m.shape != (d_model, d_model):
            raise AssertionError(f"{what} has shape {m.shape}; it should be ({d_model}, {d_model}).")
        paper, t2t = _paper_omega(d_model), _t2t_omega(d_model)
        if like(m, _to_concatenated(_rotation(k, paper)), atol=1e-5):
            raise AssertionError(f"{what} shifts a concatenated table with the paper's frequencies, "
                                 "10000^(-2i/d_model). Tensor2Tensor's are spaced otherwise: build the "
                                 "rotations from its omega'_i.")
        if like(m, _rotation(k, t2t), atol=1e-5) or like(m, _rotation(k, paper), atol=1e-5):
            raise AssertionError(f"{what} is block diagonal, for the interleaved layout. In the saved table a "
                                 "pair's sine and cosine are d_model/2 columns apart: permute the matrix to "
                                 "that layout.")
        if like(m, _to_concatenated(_rotation(-k, t2t)), atol=1e-5):
            raise AssertionError(f"{what} shifts BACK by {k}: with it, saved[p] @ m.T is row p - {k}, not "
                                 f"p + {k}. Transpose it (a rotation's inverse is its transpose).")
        saved = _t2t_table(40, d_model)
        close(saved[:-k] @ m.T, saved[k:], f"The colleague's table shifted by {what}", atol=1e-5,
              hint="Rows are positions: the shifted table is saved[:-k] @ m.T, and it must equal saved[k:].")


CASES = [(16, 20), (64, 50), (512, 1000)]  # (d_model, length): every pair's gap at least 1e-5 from 0.01


def _gaps(d_model, length):
    """Each pair's largest difference from the paper's sinusoids over positions 0 .. length - 1 (float64)."""
    p = np.arange(length)[:, None]
    t2t, paper = p * _t2t_omega(d_model), p * _paper_omega(d_model)
    return np.maximum(np.abs(np.sin(t2t) - np.sin(paper)).max(axis=0), np.abs(np.cos(t2t) - np.cos(paper)).max(axis=0))


def _pairs(close_pairs, d_model, length, what):
    """The student's close_pairs(d_model, length), as a sorted list of ints."""
    got = call(close_pairs, "close_pairs", d_model, length)
    answered(got, what)
    try:
        return sorted(int(i) for i in np.atleast_1d(np.asarray(got)).reshape(-1))
    except (TypeError, ValueError):
        raise AssertionError(f"{what} must be a list of pair indices i, whole numbers.") from None


@test_case(points=1)
def pairs_close_to_the_papers(close_pairs):
    for d_model, length in CASES:
        what = f"close_pairs({d_model}, {length})"
        pairs = _pairs(close_pairs, d_model, length, what)
        right = [int(i) for i in np.flatnonzero(_gaps(d_model, length) < 0.01)]
        if pairs == right:
            continue
        if any(i < 0 or i >= d_model // 2 for i in pairs):
            raise AssertionError(f"{what} is {pairs}: pairs run from 0 to d_model/2 - 1 = {d_model // 2 - 1}.")
        if pairs == list(range(d_model // 2)):
            raise AssertionError(f"{what} lists every pair. Reordered, the columns are in the paper's layout, "
                                 "but a pair's values are the paper's only if its frequency is close enough too.")
        if pairs == [0]:
            raise AssertionError(f"{what} is [0], the pairs whose frequency is exactly the paper's. A pair whose "
                                 "frequency differs can still stay within 0.01 over a short sequence: compute "
                                 "each pair's largest difference over the positions.")
        if 0 not in pairs:
            raise AssertionError(f"{what} leaves out pair 0: compare omega'_0 with omega_0.")
        raise AssertionError(f"{what} is {pairs}: for each pair, take the largest difference of its sine and of "
                             f"its cosine column from the paper's over positions 0 to {length - 1}, and keep the "
                             "pairs where it is below 0.01.")

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


@test_case(points=1)
def pairs_that_are_the_papers(same_pairs):
    for d_model in (16, 64, 512):
        what = f"same_pairs({d_model})"
        got = call(same_pairs, "same_pairs", d_model)
        answered(got, what)
        try:
            pairs = sorted(int(i) for i in np.atleast_1d(np.asarray(got)).reshape(-1))
        except (TypeError, ValueError):
            raise AssertionError(f"{what} must be a list of pair indices i, whole numbers.") from None
        right = [i for i in range(d_model // 2)
                 if np.isclose(_t2t_omega(d_model)[i], _paper_omega(d_model)[i], rtol=1e-9)]
        if pairs == right:
            continue
        if any(i < 0 or i >= d_model // 2 for i in pairs):
            raise AssertionError(f"{what} is {pairs}: pairs run from 0 to d_model/2 - 1 = {d_model // 2 - 1}.")
        if pairs == list(range(d_model // 2)):
            raise AssertionError(f"{what} lists every pair. Reordered, the columns are in the paper's layout, "
                                 "but a pair is the paper's only if its frequency is too: compare omega'_i "
                                 "with omega_i pair by pair.")
        if not pairs:
            raise AssertionError(f"{what} is empty: compare omega'_i = 10000^(-i/(d_model/2 - 1)) with "
                                 "omega_i = 10000^(-2i/d_model) for every i; where are they equal?")
        if pairs == [d_model // 2 - 1]:
            raise AssertionError(f"{what} is [{d_model // 2 - 1}], the last pair: Tensor2Tensor's ends exactly "
                                 "at 1/10000, the paper's just above it. Compare the two for every i.")
        raise AssertionError(f"{what} is {pairs}: a pair is the paper's when omega'_i = omega_i, "
                             "10000^(-i/(d_model/2 - 1)) = 10000^(-2i/d_model). For which i?")

"""Exercise: convert a concatenated (sines, then cosines) table to the paper's interleaved layout."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-positional-layout"
points = 2


def _concatenated(length, d_model):
    angles = np.arange(length)[:, None] * 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)  # (T, D): [sines | cosines]


def _rotation(k, d_model):
    m = np.zeros((d_model, d_model))
    for i, w in enumerate(10000.0 ** (-np.arange(0, d_model, 2) / d_model)):
        c, s = np.cos(w * k), np.sin(w * k)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m


def _even_then_odd(d_model):
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])


@test_case(points=1)
def index_to_interleaved(interleave_index):
    for d_model in (8, 16, 64):
        got = call(interleave_index, "interleave_index", d_model)
        what = f"interleave_index({d_model})"
        index = to_numpy(got, what)
        if index.shape != (d_model,):
            raise AssertionError(f"{what} has shape {index.shape}: it is one column index per feature, shape ({d_model},).")
        if not np.array_equal(np.sort(index), np.arange(d_model)):
            raise AssertionError(f"{what} is {index.astype(int).tolist()}: it must hold each column "
                                 f"0 .. {d_model - 1} exactly once (a permutation).")
        if np.array_equal(index, _even_then_odd(d_model)):
            raise AssertionError(
                f"{what} goes the other way: interleaved[:, index] gives the concatenated table. "
                "You need the inverse permutation (np.argsort of this one): column 2i of the "
                "result reads the sine of pair i, which is column i of the concatenated table.")
        saved = _concatenated(20, d_model)
        close(saved[:, index.astype(int)], mt.positional_encoding(20, d_model),
              f"The concatenated table reordered by {what}", atol=1e-5,
              hint="Column 2i must read column i (the sine of pair i) and column 2i + 1 must read "
                   "column d_model/2 + i (its cosine).")


@test_case(points=1)
def shift_of_the_concatenated_table(concatenated_shift):
    for k, d_model in [(4, 16), (1, 8), (7, 64)]:
        got = call(concatenated_shift, "concatenated_shift", k, d_model)
        what = f"concatenated_shift({k}, {d_model})"
        m = to_numpy(got, what)
        if m.shape != (d_model, d_model):
            raise AssertionError(f"{what} has shape {m.shape}; it should be ({d_model}, {d_model}).")
        perm = _even_then_odd(d_model)
        pi = np.eye(d_model)[:, perm]
        rotation = _rotation(k, d_model)
        if like(m, rotation, atol=1e-5):
            raise AssertionError(f"{what} is M_{k}, the shift of the interleaved layout. In the "
                                 "concatenated table a pair's sine and cosine are d_model/2 columns apart: "
                                 "permute M_k to that layout.")
        if like(m, rotation.T, atol=1e-5):
            raise AssertionError(f"{what} is M_{k}^T = M_(-{k}), the shift back by {k} of the interleaved "
                                 "layout. Shift forward (saved[p] @ m.T must be row p + k), and permute "
                                 "M_k to the concatenated layout.")
        if like(m, pi @ rotation @ pi.T, atol=1e-5):
            raise AssertionError(f"{what} is Pi M_{k} Pi^T: the permutation is on the wrong sides. "
                                 "With concatenated = interleaved @ Pi, the shift is Pi^T M_k Pi.")
        if like(m, (pi.T @ rotation @ pi).T, atol=1e-5):
            raise AssertionError(f"{what} shifts BACK by {k}: with it, saved[p] @ m.T is row p - {k}, "
                                 f"not p + {k}. It is the transpose of the shift you need "
                                 f"(M_k^T = M_(-k)): transpose it, or build it from M_{k}, not M_(-{k}).")
        saved = _concatenated(40, d_model)
        close(saved[:-k] @ m.T, saved[k:], f"The concatenated table shifted by {what}", atol=1e-5,
              hint="Rows are positions: the shifted table is saved[:-k] @ m.T, and it must equal saved[k:].")

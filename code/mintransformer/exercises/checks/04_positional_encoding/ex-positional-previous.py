"""Exercise: an attention pattern, from the encoding alone, that looks at the previous position."""

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy


OK_FORMAT = False
name = "ex-positional-previous"
points = 3


def _queries(look_back_queries, pe, case):
    got = call(look_back_queries, "look_back_queries", pe)  # a copy of pe: the keys stay clean
    if isinstance(got, (tuple, list)) and len(got) == 2 and np.ndim(got[1]) == 0:
        raise AssertionError(f"{case}: look_back_queries returned two things, (queries, c). Return "
                             "only the queries, one (T, d_model) array, with c already multiplied "
                             "in: c * PE M^T.")
    return to_numpy(got, f"{case}: the queries")


def _weights(look_back_queries, pe, case):
    q = _queries(look_back_queries, pe, case)
    if q.shape != pe.shape:
        raise AssertionError(f"{case}: the queries have shape {q.shape}; one query per position, "
                             f"shape (T, d_model) = {pe.shape}.")
    T = pe.shape[0]
    values = np.eye(T, dtype="float32")  # (T, T): one-hot values
    _, weights = mt.scaled_dot_product_attention(q[None].astype("float32"), pe[None], values[None])
    return ops.convert_to_numpy(weights)[0]  # (T, T)


def _check(look_back_queries, T, d_model):
    case = f"T = {T}, d_model = {d_model}"
    weights = _weights(look_back_queries, mt.positional_encoding(T, d_model), case)
    best = weights.argmax(axis=1)[1:]
    rows = np.arange(1, T)
    if np.array_equal(best[:-1], rows[:-1] + 1):
        raise AssertionError(f"{case}: each position attends to the NEXT one: your matrix moves the "
                             "queries the wrong way.")
    wrong = np.flatnonzero(best != rows - 1)
    if wrong.size:
        p = rows[wrong[0]]
        raise AssertionError(f"{case}: position {p} attends most to position {best[wrong[0]]}, not "
                             f"{p - 1}. Which matrix M, the same for every position, turns PE_pos into "
                             "PE_(pos - 1)?")
    share = weights[rows, rows - 1]
    if share.min() <= 0.5:
        p = rows[np.argmin(share)]
        raise AssertionError(f"{case}: the largest weight of each row is on the previous position, "
                             f"but position {p} gives it only {share.min():.2f}. Neighbouring "
                             "encodings are alike: sharpen the softmax with a larger factor c, so "
                             "that each row puts more than half its weight there at every size the "
                             "check uses (T from 12 to 30, d_model from 64 to 256).")


@test_case(points=1)
def the_chapters_sizes(look_back_queries):
    _check(look_back_queries, 12, 128)


@test_case(points=1)
def other_sizes(look_back_queries):
    _check(look_back_queries, 30, 64)
    _check(look_back_queries, 20, 256)


@test_case(points=1)
def one_matrix_for_every_position(look_back_queries):
    pe = mt.positional_encoding(16, 128)
    whole = _queries(look_back_queries, pe, "T = 16, d_model = 128")
    part = _queries(look_back_queries, pe[6:9], "look_back_queries(pe[6:9])")
    close(part, whole[6:9], "look_back_queries(pe[6:9])", atol=1e-4,
          hint="Each query is made from its own row alone, by one matrix for all positions: "
               "c * PE_pos M^T. Shifting or rolling the rows of the table is not that.")

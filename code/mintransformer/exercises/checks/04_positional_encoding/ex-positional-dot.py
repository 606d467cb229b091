"""Exercise: the dot product of two encodings depends on their distance only, and not on its sign."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-positional-dot"
points = 2


def _omega(d_model):
    return 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # (d_model/2,)


def _rotation(k, d_model):
    m = np.zeros((d_model, d_model))
    for i, w in enumerate(_omega(d_model)):
        c, s = np.cos(w * k), np.sin(w * k)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m


@test_case(points=1)
def dot_product_by_distance(dot_by_distance):
    for d_model in (128, 16):
        pe = mt.positional_encoding(400, d_model).astype(np.float64)
        for k in (0, 1, 7, 50, -3):
            expected = pe[300] @ pe[300 + k]  # PE_300 . PE_(300 + k), from the table
            got = call(dot_by_distance, "dot_by_distance", k, d_model)
            what = f"dot_by_distance({k}, {d_model})"
            value = to_numpy(got, what)
            if value.size != 1:
                raise AssertionError(f"{what} has shape {value.shape}: it is one number, a sum over the pairs.")
            value = value.reshape(())
            omega = _omega(d_model)
            if like(value, 2 * expected, atol=1e-3):
                raise AssertionError(f"{what} is twice the dot product: the sum runs over the "
                                     "d_model / 2 pairs, one cos(omega_i k) per pair, not over the d_model features.")
            if like(value, np.sin(omega * k).sum(), atol=1e-3):
                raise AssertionError(f"{what}: each pair gives sin(theta) sin(theta + phi) + "
                                     "cos(theta) cos(theta + phi) = cos(phi), a cosine, not a sine.")
            close(value, expected, what, atol=1e-3,
                  hint=f"It must equal PE_pos . PE_(pos + k) for every pos (here pos = 300), "
                       "with omega_i = 10000^(-2i / d_model).")


@test_case(points=1)
def scores_ahead_and_behind(score_ahead, score_behind):
    pe = mt.positional_encoding(64, 128).astype(np.float64)
    query = pe[30] @ _rotation(3, 128).T  # PE_30 M_3^T
    ahead, behind = query @ pe[33], query @ pe[27]
    answered(score_ahead, "score_ahead")
    answered(score_behind, "score_behind")
    a = to_numpy(score_ahead, "score_ahead").reshape(-1)
    b = to_numpy(score_behind, "score_behind").reshape(-1)
    if a.size != 1 or b.size != 1:
        raise AssertionError("score_ahead and score_behind are numbers, one score each.")
    a, b = a[0], b[0]
    plain = pe[30] @ pe[33]
    if like(a, plain, atol=1e-3) and like(b, plain, atol=1e-3):
        raise AssertionError(
            "These are the plain dot products PE_30 . PE_33 and PE_30 . PE_27: equal, since the "
            "cosine is even. Score with the query that looks 3 positions ahead, PE_30 M_3^T.")
    if like(a, behind, atol=1e-3) and like(b, ahead, atol=1e-3):
        raise AssertionError(
            "Your scores are swapped: your query looks back, not ahead. With rows, "
            "PE_(pos + k) = PE_pos M_k^T, so the query is PE_30 M_3^T (M_3 transposed).")
    close(a, ahead, "score_ahead", atol=1e-3, hint="score_ahead = PE_30 M_3^T PE_33^T, with PE = mt.positional_encoding(64, 128).")
    close(b, behind, "score_behind", atol=1e-3, hint="score_behind = PE_30 M_3^T PE_27^T, with PE = mt.positional_encoding(64, 128).")

"""Exercise: reversing the sentence reverses attention's outputs, and nothing more."""

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, pair

OK_FORMAT = False
name = "ex-mathematics-permutation"
points = 2


def _attention(X, W_Q, W_K, W_V):
    return tuple(ops.convert_to_numpy(t) for t in mt.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V))


def _case():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 6)).astype("float32")
    W_Q, W_K, W_V = (rng.normal(size=(6, d)).astype("float32") for d in (4, 4, 3))
    out, A = _attention(X, W_Q, W_K, W_V)
    out_rev, A_rev = _attention(X[::-1].copy(), W_Q, W_K, W_V)
    return out, A, out_rev, A_rev



def _predict(predict_reversed, out, A):
    result = call(predict_reversed, "predict_reversed", out.copy(), A.copy())
    first, second = pair(result, "predict_reversed", "(output, weights)", item_ndim=2)
    _, _, out_rev, A_rev = _case()
    if like(first, A_rev) and like(second, out_rev):
        raise AssertionError("You returned (weights, output); the order is (output, weights).")
    return first, second


@test_case(points=1)
def the_outputs(predict_reversed):
    out, A, out_rev, _ = _case()
    got = _predict(predict_reversed, out, A)[0]
    if like(got, out[::-1, ::-1]):
        raise AssertionError(
            "np.flip without an axis reverses every axis, so it also reversed the d_v features of "
            "each output row. Only the tokens changed places: reverse only the rows."
        )
    if like(got, out):
        raise AssertionError(
            "The output is the old one, row for row. Each token's output is unchanged, but the "
            "tokens are listed in the new order: row t belongs to the token now at position t."
        )
    close(got, out_rev, "The predicted output (T, d_v)", atol=1e-5,
          hint="Permuting the tokens permutes the output rows the same way.")


@test_case(points=1)
def the_weights(predict_reversed):
    out, A, _, A_rev = _case()
    got = _predict(predict_reversed, out, A)[1]
    if like(got, A[::-1]):
        raise AssertionError(
            "You reversed the rows of the weights (the queries) but not the columns: the keys are "
            "the same reversed tokens, so reverse both axes."
        )
    if like(got, A[:, ::-1]):
        raise AssertionError(
            "You reversed the columns of the weights (the keys) but not the rows: the queries are "
            "the same reversed tokens, so reverse both axes."
        )
    if like(got, A.T):
        raise AssertionError(
            "A.T swaps the queries and the keys: entry (t, s) becomes the weight of query s on key "
            "t, which is another number. Reversing the sentence keeps the roles of the queries and "
            "the keys; only their order changes."
        )
    if like(got, A):
        raise AssertionError("The weights are the old ones: the queries (rows) and the keys (columns) "
                             "are both in the new order.")
    close(got, A_rev, "The predicted weights (T, T)", atol=1e-5,
          hint="Entry (t, s) is the weight of query t on key s: both are reversed.")

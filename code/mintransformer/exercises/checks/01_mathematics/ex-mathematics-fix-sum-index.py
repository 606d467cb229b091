"""Exercise: find and fix the bug of the PyTorch-sketch chapter's attention weights, typed in as written."""

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import LIBRARIES, call, close, library_softmaxes, like, pair, refusing, to_numpy

OK_FORMAT = False
name = "ex-mathematics-fix-sum-index"
points = 3

RULE = ("`fixed_attention` calls the package's attention or a library softmax: the exercise is to fix the "
        "sketch's own formula (your stable_softmax of the first exercise may be reused).")


def _random(seed, T=3, S=4, d_k=8, d_v=3):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=shape).astype("float32") for shape in ((T, d_k), (S, d_k), (S, d_v)))


def _large_scores():
    """Scaled scores near +1000 in row 0 and -1000 in row 1, spread by about 1 within each row."""
    rng = np.random.default_rng(2)
    Q = rng.normal(size=(2, 4)).astype("float32")
    K = rng.normal(size=(5, 4)).astype("float32")
    V = rng.normal(size=(5, 3)).astype("float32")
    Q[:, 0], K[:, 0] = [2000.0, -2000.0], 1.0  # adds +-2000 / sqrt(4) to every score of a row
    return Q, K, V


def _softmax(logits, axis=-1, shift="row"):
    with np.errstate(all="ignore"):
        if shift == "row":
            logits = logits - logits.max(axis=axis, keepdims=True)
        elif shift == "all":
            logits = logits - logits.max()
        e = np.exp(logits)
        return e / e.sum(axis=axis, keepdims=True)


def _name_the_mistake(w, ref_w, Q, K, case):
    """Raise, naming the mistake, if the weights ``w`` are a known wrong answer."""
    scores = Q.astype("float64") @ K.T.astype("float64")
    scaled = scores / np.sqrt(K.shape[-1])

    def differs(wrong):  # a wrong answer that happens to be right for this case names nothing
        return not np.allclose(wrong, ref_w, atol=1e-5)

    last_only = np.zeros_like(ref_w)
    last_only[:, -1] = _softmax(scaled)[:, -1]
    if differs(last_only) and np.allclose(w[:, :-1], 0) and (
            np.allclose(w, last_only, atol=1e-5) or np.all(np.isnan(w[:, -1]))):
        raise AssertionError(
            f"{case}: still the bug. Only the last key gets a weight: the inner loop that sums the "
            "denominator reuses j, leaves it at n - 1, and alpha[i, j] is then always written in the "
            "last column. Give the sum its own index (s' in the chapter)."
        )
    if differs(np.ones_like(ref_w)) and np.allclose(w, 1.0):
        raise AssertionError(
            f"{case}: every weight is 1. The denominator must sum exp(score) over ALL the keys s' of "
            "the query, not repeat the entry's own term."
        )
    by_column = _softmax(scaled, axis=0)
    if differs(by_column) and like(w, by_column):
        raise AssertionError(
            f"{case}: each column of your weights sums to 1: you normalised over the queries. The sum "
            "in the denominator runs over the keys s' of one query: each ROW must sum to 1."
        )
    if w.shape[0] > 1 and np.all(np.isfinite(w)) and abs(w.sum() - 1) < 1e-5 \
            and not np.allclose(w.sum(axis=-1), 1, atol=1e-5):
        raise AssertionError(
            f"{case}: all T x S weights together sum to 1: you normalised by the sum over the whole "
            "matrix (e / e.sum()). The sum in the denominator runs over the keys s' of one query: "
            "each ROW must sum to 1 (axis=-1, keepdims=True)."
        )
    unscaled = _softmax(scores)
    if differs(unscaled) and like(w, unscaled):
        raise AssertionError(f"{case}: these are the weights of softmax(Q K^T): divide the scores by "
                             "sqrt(d_k).")
    if np.any(np.isnan(w)):
        if np.array_equal(np.isnan(w), np.isnan(_softmax(scaled, shift="all"))):
            raise AssertionError(
                f"{case}: the weights of the low-scoring query are nan. You subtracted the largest "
                "score of the whole matrix, so every exp of that row underflows to 0 (0 / 0). "
                "Subtract each row's own maximum."
            )
        raise AssertionError(
            f"{case}: the weights contain nan. exp of a score near +1000 overflows to inf "
            "(inf / inf = nan), and near -1000 it underflows to 0 (0 / 0 = nan): subtract each "
            "row's largest score before exp, the stable softmax. It changes nothing else."
        )



def _check(fixed_attention, Q, K, V, case, atol):
    with refusing([mt.scaled_dot_product_attention, *library_softmaxes()], fixed_attention, RULE, modules=LIBRARIES):
        result = call(fixed_attention, "fixed_attention", Q.copy(), K.copy(), V.copy())
    first, second = pair(result, "fixed_attention", "(output, weights)", item_ndim=2)
    ref_out, ref_w = (ops.convert_to_numpy(t) for t in mt.scaled_dot_product_attention(Q, K, V))
    if like(first, ref_w, atol=atol) and like(second, ref_out, atol=atol):
        raise AssertionError(f"{case}: you returned (weights, output); the order is (output, weights).")
    with np.errstate(all="ignore"):
        w = to_numpy(second, "the weights")
    if w.shape == ref_w.shape:
        _name_the_mistake(w, ref_w, Q, K, case)
    close(w, ref_w, f"{case}: the weights (T, S)", atol=atol,
          hint="alpha[t, s] = exp(score[t, s]) / (sum over s' of exp(score[t, s'])), "
          "with score = Q K^T / sqrt(d_k).")
    close(first, ref_out, f"{case}: the output (T, d_v)", atol=atol, hint="output = weights @ V.")


@test_case(points=1)
def three_queries_four_keys(fixed_attention):
    Q, K, V = _random(0)
    _check(fixed_attention, Q, K, V, "Three queries over four keys", atol=1e-5)


@test_case(points=1)
def other_shapes(fixed_attention):
    for seed, (T, S, d_k, d_v) in enumerate([(1, 1, 2, 2), (5, 2, 4, 6), (2, 7, 16, 1)], start=1):
        Q, K, V = _random(seed, T, S, d_k, d_v)
        case = f"{T} {'query' if T == 1 else 'queries'} over {S} {'key' if S == 1 else 'keys'}, d_k = {d_k}"
        _check(fixed_attention, Q, K, V, case, atol=1e-5)


@test_case(points=1)
def scores_near_a_thousand(fixed_attention):
    Q, K, V = _large_scores()
    _check(fixed_attention, Q, K, V, "Scaled scores near +1000 and -1000", atol=1e-4)

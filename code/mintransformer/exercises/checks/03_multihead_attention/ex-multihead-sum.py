"""Exercise: the output projection as a sum of one term per head, head_i W^O_i."""

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-multihead-sum"
points = 2

D, H = 16, 4
RULE = ("Compute each head from its column slices of the kernels, as the exercise asks: do not call "
        "the package's split_heads or merge_heads (the layer's own call uses them too).")


def _layer(seed, d_model=D, num_heads=H):
    """An mt.MultiHeadAttention (16, 4 by default) with random kernels and biases (biases not 0, so they count)."""
    rng = np.random.default_rng(seed)
    layer = mt.MultiHeadAttention(d_model=d_model, num_heads=num_heads)
    layer.build((None, None, d_model))
    layer.set_weights([(rng.normal(size=w.shape) / (np.sqrt(d_model) if w.ndim == 2 else 2)).astype("float32")
                       for w in layer.get_weights()])
    return layer


def _inputs(seed, T=3, S=5, d_model=D):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(2, n, d_model)).astype("float32") for n in (T, S, S))  # query, key, value


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _terms(layer, query, key, value, biases=True, wo_columns=False, scale=None, strided=False):
    """The h terms head_i W^O_i, (h, B, T, D), in float64; the keyword arguments make known mistakes."""
    h, d_k = layer.num_heads, layer.d_k
    scale = d_k if scale is None else scale
    (wq, bq), (wk, bk), (wv, bv), (wo, _) = (
        [ops.convert_to_numpy(w).astype("float64") for w in dense.weights]
        for dense in (layer.wq, layer.wk, layer.wv, layer.wo))
    if not biases:
        bq, bk, bv = 0 * bq, 0 * bk, 0 * bv
    terms = []
    for i in range(h):
        c = slice(i, None, h) if strided else slice(i * d_k, (i + 1) * d_k)
        q, k, v = query @ wq[:, c] + bq[c], key @ wk[:, c] + bk[c], value @ wv[:, c] + bv[c]
        head = _softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(scale)) @ v  # (B, T, d_k)
        terms.append(head @ (wo[:, c].T if wo_columns else wo[c, :]))
    return np.stack(terms)


def _as_array(terms):
    if isinstance(terms, (list, tuple)):
        return np.stack([to_numpy(t, "each term") for t in terms])
    return to_numpy(terms, "head_terms(...)")


def _compare(head_terms, seed, d_model=D, num_heads=H, T=3):
    layer = _layer(seed, d_model, num_heads)
    query, key, value = _inputs(seed, T=T, d_model=d_model)
    d_k = d_model // num_heads
    try:
        with refusing([mt.split_heads, mt.merge_heads], head_terms, RULE):
            got = _as_array(call(head_terms, "head_terms", layer, query, key, value))
    except AssertionError as error:
        if any(word in str(error) for word in ("matmul", "mismatch", "ncompatible", "not aligned")):
            raise AssertionError(
                f"{error}\n\nCheck the shapes: query (B, T, D) times a column slice Wq[:, c] gives "
                "(B, T, d_k); head_i is (B, T, d_k); W^O_i is a block of d_k ROWS of W^O, "
                "Wo[c, :], of shape (d_k, D).") from None
        raise
    expected = _terms(layer, query, key, value)
    if like(got, expected):
        return got, layer, (query, key, value)
    bias = ops.convert_to_numpy(layer.wo.bias)
    if like(got, expected + bias):
        raise AssertionError(
            "Each of your terms includes the bias b^O: the sum would then hold it h times. The terms "
            "are head_i W^O_i only; b^O is added once, after the sum.")
    if like(got, _terms(layer, query, value, key)):
        raise AssertionError(
            "Your terms use the `value` input for the keys and the `key` input for the values: "
            "head_i = Attention(query W_i^Q, key W_i^K, value W_i^V).")
    if like(got, _terms(layer, query, key, value, biases=False)):
        raise AssertionError(
            "Your heads leave out the biases of the projections: head i's queries are "
            "query @ Wq[:, c] + bq[c] with c its columns [i d_k, (i + 1) d_k), and the same for the "
            "keys and the values.")
    if like(got, _terms(layer, query, key, value, wo_columns=True)):
        raise AssertionError(
            "Your W^O_i is a block of columns of W^O, transposed. Head i's output occupies features "
            "[i d_k, (i + 1) d_k) of the concatenation, which multiply the ROWS [i d_k, (i + 1) d_k) "
            "of W^O: W^O_i = Wo[c, :].")
    if like(got, _terms(layer, query, key, value, scale=d_model), atol=1e-4):
        raise AssertionError(
            f"Your heads divide the scores by sqrt(d_model) = sqrt({d_model}): each head's queries and keys "
            f"have d_k = d_model / h = {d_k} features, so its scores are divided by sqrt(d_k) = sqrt({d_k}) "
            "(mt.scaled_dot_product_attention does this for you).")
    if like(got, _terms(layer, query, key, value, strided=True), atol=1e-4):
        raise AssertionError(
            "Your head i uses the features i, i + h, i + 2h, ... (slice(i, None, h)). Head i must use "
            "the consecutive block [i d_k, (i + 1) d_k), the one split_heads gives it: "
            "c = slice(i * d_k, (i + 1) * d_k), for the columns of W^Q, W^K, W^V and the rows of W^O.")
    if got.shape == expected.shape[1:]:
        if like(got, expected.sum(axis=0) + bias):
            raise AssertionError(
                f"head_terms returns the layer's output, shape {got.shape}: return the h terms "
                f"head_i W^O_i, not their sum (and without b^O), stacked into shape {expected.shape}.")
        raise AssertionError(
            f"head_terms returns shape {got.shape}, one (B, T, D) array: return the h terms, not their "
            f"sum, stacked on a first axis of length h, {expected.shape}.")
    if got.shape == (num_heads, 2, T, d_k):
        raise AssertionError(
            f"Your terms have shape {got.shape}: W^O_i is a block of d_k ROWS of W^O, "
            "Wo[i * d_k:(i + 1) * d_k, :], so head_i W^O_i has width d_model.")
    close(got, expected, "head_terms(layer, query, key, value)", atol=1e-5,
          hint="Term i is head_i W^O_i, shape (B, T, D), with head_i = Attention(query W_i^Q + b_i^Q, "
          "key W_i^K + b_i^K, value W_i^V + b_i^V) from columns [i d_k, (i + 1) d_k) of the kernels "
          "and biases; stack the h terms on a first axis.")
    return got, layer, (query, key, value)


@test_case(points=1)
def each_head_term(head_terms):
    _compare(head_terms, 0)


@test_case(points=1)
def the_sum_is_the_layer(head_terms):
    got, layer, inputs = _compare(head_terms, 1)
    total = got.sum(axis=0) + ops.convert_to_numpy(layer.wo.bias)
    close(total, ops.convert_to_numpy(layer(*inputs)), "The sum of your terms + b^O", atol=1e-5)

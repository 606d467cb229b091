"""Multi-head attention against Keras's own ``MultiHeadAttention`` with the same weights."""

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops

B, T, S, D, H = 2, 5, 7, 8, 2
D_K = D // H


# --- split_heads / merge_heads ----------------------------------------------------------------


def test_split_merge_walkthrough_of_seed_003():
    x = np.random.default_rng(3).normal(size=(1, 5, 256)).astype("float32")
    heads = mt.split_heads(x, 8)
    assert tuple(heads.shape) == (1, 8, 5, 32)
    heads = ops.convert_to_numpy(heads)
    for i in range(8):  # head i holds features [i * 32, (i + 1) * 32) of every position
        np.testing.assert_array_equal(heads[0, i], x[0, :, i * 32:(i + 1) * 32])
    back = ops.convert_to_numpy(mt.merge_heads(heads))
    assert back.shape == (1, 5, 256)
    assert np.array_equal(back, x)


def test_split_heads_literal_small_case():
    x = np.arange(2 * 3 * 4).reshape(2, 3, 4)  # (B=2, T=3, D=4), h=2, d_k=2
    heads = ops.convert_to_numpy(mt.split_heads(x, 2))
    np.testing.assert_array_equal(heads[0, 0], [[0, 1], [4, 5], [8, 9]])
    np.testing.assert_array_equal(heads[0, 1], [[2, 3], [6, 7], [10, 11]])
    np.testing.assert_array_equal(heads[1, 1], [[14, 15], [18, 19], [22, 23]])


def test_split_and_merge_work_with_unknown_length():
    x = keras.Input((None, D))
    heads = mt.split_heads(x, H)
    assert tuple(heads.shape) == (None, H, None, D_K)
    assert tuple(mt.merge_heads(heads).shape) == (None, None, D)


# --- equality with keras.layers.MultiHeadAttention ------------------------------------------


def randomize(layer, rng):
    """Give every weight (biases too) a non-trivial random value."""
    for w in layer.weights:
        w.assign(rng.normal(scale=0.5, size=w.shape).astype("float32"))


def keras_twin(ours, query, key, value):
    """keras.layers.MultiHeadAttention(num_heads=h, key_dim=D/h) with our weights copied in."""
    theirs = keras.layers.MultiHeadAttention(num_heads=ours.num_heads, key_dim=ours.d_k)
    theirs(query, value, key=key)  # build; Keras's order is (query, value, key)
    h, d_k, d = ours.num_heads, ours.d_k, ours.d_model
    pairs = [(ours.wq, theirs._query_dense), (ours.wk, theirs._key_dense),
             (ours.wv, theirs._value_dense)]
    for mine, keras_dense in pairs:
        keras_dense.kernel.assign(ops.reshape(mine.kernel, (d, h, d_k)))  # (D, D) -> (D, h, d_k)
        keras_dense.bias.assign(ops.reshape(mine.bias, (h, d_k)))  # (D,) -> (h, d_k)
    theirs._output_dense.kernel.assign(ops.reshape(ours.wo.kernel, (h, d_k, d)))  # -> (h, d_k, D)
    theirs._output_dense.bias.assign(ours.wo.bias)
    assert len(theirs.weights) == len(ours.weights) == 8
    return theirs


def to_keras_mask(mask, t, s):
    """Our mask, broadcastable to (B, h, T, S) and shared by the heads, as Keras's (B, T, S)."""
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.ndim == 4:
        mask = mask[:, 0]
    return np.broadcast_to(mask, (B, t, s))


def source_tokens(s):
    tokens = np.full((B, s), 3)
    tokens[0, s - 2:] = 0  # two pads in the first sequence
    tokens[1, s - 4:] = 0  # four in the second
    return tokens


CASES = {
    "self/no mask": (T, None),
    "self/padding": (T, lambda: mt.padding_mask(source_tokens(T))),
    "self/causal": (T, lambda: mt.causal_mask(T)),
    "self/causal and padding": (T, lambda: mt.decoder_self_mask(source_tokens(T))),
    "cross/no mask": (S, None),
    "cross/padding": (S, lambda: mt.padding_mask(source_tokens(S))),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_equals_keras_multi_head_attention(case, rng):
    s, make_mask = CASES[case]
    query = rng.normal(size=(B, T, D)).astype("float32")
    if case.startswith("self"):
        key = value = query
    else:  # cross-attention: S != T, and keys different from values
        key = rng.normal(size=(B, s, D)).astype("float32")
        value = rng.normal(size=(B, s, D)).astype("float32")
    mask = None if make_mask is None else ops.convert_to_numpy(make_mask())

    ours = mt.MultiHeadAttention(D, H)
    ours(query, key, value)
    randomize(ours, rng)
    theirs = keras_twin(ours, query, key, value)

    out, weights = ours(query, key, value, attention_mask=mask, return_attention_scores=True)
    expected, expected_weights = theirs(
        query, value, key=key, attention_mask=to_keras_mask(mask, T, s),
        return_attention_scores=True,
    )
    assert tuple(out.shape) == (B, T, D) and tuple(weights.shape) == (B, H, T, s)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    if mask is not None:
        blocked = ~np.broadcast_to(mask, weights.shape)
        assert np.all(ops.convert_to_numpy(weights)[blocked] == 0.0)


def test_fully_masked_query_equals_keras_too(rng):
    query = rng.normal(size=(B, T, D)).astype("float32")
    mask = np.ones((B, 1, T, T), bool)
    mask[0, 0, 1] = False  # query 1 of batch 0 may attend to nothing
    ours = mt.MultiHeadAttention(D, H)
    ours(query, query, query)
    randomize(ours, rng)
    theirs = keras_twin(ours, query, query, query)
    out, weights = ours(query, query, query, attention_mask=mask, return_attention_scores=True)
    expected, expected_weights = theirs(query, query, attention_mask=mask[:, 0],
                                        return_attention_scores=True)
    assert np.all(np.isfinite(ops.convert_to_numpy(out)))
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    # Zero weights: the output of that query is just the output projection's bias.
    np.testing.assert_allclose(out[0, 1], ours.wo.bias, atol=1e-6)


def test_self_attention_is_cross_attention_with_itself(rng):
    x = rng.normal(size=(B, T, D)).astype("float32")
    c = rng.normal(size=(B, S, D)).astype("float32")
    mha = mt.MultiHeadAttention(D, H)
    y_self = mha(x, x, x)
    y_cross, w_cross = mha(x, c, c, return_attention_scores=True)
    assert tuple(w_cross.shape) == (B, H, T, S)
    assert tuple(y_cross.shape) == (B, T, D)
    assert not np.allclose(y_self, y_cross)
    # Keys and values play different roles: swapping them changes the result.
    c2 = rng.normal(size=(B, S, D)).astype("float32")
    assert not np.allclose(mha(x, c, c2), mha(x, c2, c))


def test_parameter_count_is_four_d_by_d_projections():
    mha = mt.MultiHeadAttention(D, H)
    mha(np.zeros((1, T, D), "float32"), np.zeros((1, S, D), "float32"),
        np.zeros((1, S, D), "float32"))
    assert mha.count_params() == 4 * (D * D + D)
    assert sorted(tuple(w.shape) for w in mha.weights) == sorted([(D, D), (D,)] * 4)

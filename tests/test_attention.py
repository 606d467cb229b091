"""Scaled dot-product attention (paper equation 1) against a NumPy computation by hand."""

import math

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops

B, H, T, S, D_K, D_V = 2, 2, 5, 6, 8, 4


def numpy_attention(q, k, v, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V in float64; masked keys are left out of the softmax."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    logits = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = np.broadcast_to(mask, logits.shape)
        logits = np.where(mask, logits, -np.inf)
    peak = np.max(logits, axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.exp(logits - peak)
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights @ v, weights


@pytest.fixture
def qkv(rng):
    q = rng.normal(size=(B, H, T, D_K)).astype("float32")
    k = rng.normal(size=(B, H, S, D_K)).astype("float32")
    v = rng.normal(size=(B, H, S, D_V)).astype("float32")
    return q, k, v


@pytest.fixture
def random_mask(rng):
    """A (B, 1, T, S) mask with at least one key allowed in every query row."""
    mask = rng.random((B, 1, T, S)) > 0.4
    mask[..., 0] = True
    return mask


def test_equals_numpy_formula(qkv):
    out, weights = mt.scaled_dot_product_attention(*qkv)
    expected_out, expected_weights = numpy_attention(*qkv)
    assert out.shape == (B, H, T, D_V) and weights.shape == (B, H, T, S)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-6)
    np.testing.assert_allclose(out, expected_out, atol=1e-5)


def test_tiny_case_by_hand():
    # One query, two keys: logits [1, 0] / sqrt(1) -> weights [e/(e+1), 1/(e+1)].
    q = np.array([[[1.0]]], "float32")  # (1, T=1, d_k=1)
    k = np.array([[[1.0], [0.0]]], "float32")  # (1, S=2, 1)
    v = np.array([[[10.0], [20.0]]], "float32")
    out, weights = mt.scaled_dot_product_attention(q, k, v)
    w0 = math.e / (math.e + 1)
    np.testing.assert_allclose(weights, [[[w0, 1 - w0]]], rtol=1e-6)
    np.testing.assert_allclose(out, [[[10 * w0 + 20 * (1 - w0)]]], rtol=1e-6)


def test_scale_is_one_over_sqrt_d_k(qkv):
    q, k, v = qkv
    # Multiplying q by sqrt(d_k) undoes the scaling: the weights are softmax(Q K^T).
    _, weights = mt.scaled_dot_product_attention(q * math.sqrt(D_K), k, v)
    logits = q.astype(np.float64) @ np.swapaxes(k, -1, -2)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(weights, expected, atol=1e-6)


def test_rows_sum_to_one(qkv, random_mask):
    for mask in (None, random_mask):
        _, weights = mt.scaled_dot_product_attention(*qkv, mask=mask)
        np.testing.assert_allclose(np.sum(weights, axis=-1), 1.0, atol=1e-6)


def test_masked_weights_are_exactly_zero_and_match_numpy(qkv, random_mask):
    out, weights = mt.scaled_dot_product_attention(*qkv, mask=random_mask)
    weights = ops.convert_to_numpy(weights)
    blocked = ~np.broadcast_to(random_mask, weights.shape)
    assert blocked.any()
    assert np.all(weights[blocked] == 0.0)
    expected_out, expected_weights = numpy_attention(*qkv, mask=random_mask)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-6)
    np.testing.assert_allclose(out, expected_out, atol=1e-5)


def test_masked_keys_do_not_influence_output(qkv, random_mask, rng):
    q, k, v = qkv
    # A mask that blocks whole key columns, the same for every query.
    column_mask = random_mask[:, :, :1, :]  # (B, 1, 1, S)
    blocked = ~np.broadcast_to(column_mask, (B, H, 1, S))[:, :, 0]  # (B, H, S)
    k2, v2 = k.copy(), v.copy()
    k2[blocked] = rng.normal(size=k2[blocked].shape) * 100
    v2[blocked] = rng.normal(size=v2[blocked].shape) * 100
    out1, _ = mt.scaled_dot_product_attention(q, k, v, mask=column_mask)
    out2, _ = mt.scaled_dot_product_attention(q, k2, v2, mask=column_mask)
    np.testing.assert_allclose(out1, out2, atol=1e-6)


def test_fully_masked_query_row_gives_zero_not_nan(qkv, random_mask):
    mask = random_mask.copy()
    mask[0, 0, 2, :] = False  # query 2 of batch 0 may attend to nothing
    out, weights = mt.scaled_dot_product_attention(*qkv, mask=mask)
    out, weights = ops.convert_to_numpy(out), ops.convert_to_numpy(weights)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))
    assert np.all(weights[0, :, 2] == 0.0)
    assert np.all(out[0, :, 2] == 0.0)
    # The other rows are untouched.
    np.testing.assert_allclose(weights[0, :, 3].sum(-1), 1.0, atol=1e-6)


def test_causal_mask_of_shape_t_t_broadcasts(rng):
    x = rng.normal(size=(B, H, T, D_K)).astype("float32")
    out, weights = mt.scaled_dot_product_attention(x, x, x, mask=mt.causal_mask(T))
    weights = ops.convert_to_numpy(weights)
    assert np.all(np.triu(np.ones((T, T), bool), k=1)[None, None] <= (weights == 0))
    expected_out, expected_weights = numpy_attention(x, x, x, mask=np.tril(np.ones((T, T), bool)))
    np.testing.assert_allclose(weights, expected_weights, atol=1e-6)
    np.testing.assert_allclose(out, expected_out, atol=1e-5)
    # The first query can only see itself.
    np.testing.assert_allclose(out[:, :, 0], x[:, :, 0], atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.float16
def test_half_precision_with_mask_is_finite_and_exact_zero(qkv, random_mask, dtype):
    mask = random_mask.copy()
    mask[1, 0, 4, :] = False  # one fully masked row too
    q, k, v = (ops.cast(a, dtype) for a in qkv)
    out, weights = mt.scaled_dot_product_attention(q, k, v, mask=mask)
    assert keras.backend.standardize_dtype(out.dtype) == dtype
    assert keras.backend.standardize_dtype(weights.dtype) == dtype
    out = ops.convert_to_numpy(ops.cast(out, "float32"))
    weights = ops.convert_to_numpy(ops.cast(weights, "float32"))
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))
    blocked = ~np.broadcast_to(mask, weights.shape)
    assert np.all(weights[blocked] == 0.0)
    assert np.all(out[1, :, 4] == 0.0)
    # Close to the float64 reference, within half-precision rounding.
    expected_out, expected_weights = numpy_attention(*qkv, mask=mask)
    tol = 1e-2 if dtype == "float16" else 5e-2
    np.testing.assert_allclose(weights, expected_weights, atol=tol)
    np.testing.assert_allclose(out, expected_out, atol=4 * tol)


@pytest.mark.float16
def test_mask_fill_value_is_finite_in_every_float_dtype():
    assert mt.MASK_FILL_VALUE == -65504.0 == float(np.finfo(np.float16).min)
    assert np.isfinite(np.float16(mt.MASK_FILL_VALUE))
    for dtype in ("float16", "bfloat16", "float32"):
        value = ops.cast(ops.cast(mt.MASK_FILL_VALUE, dtype), "float32")  # -65536 in bfloat16
        assert np.isfinite(ops.convert_to_numpy(value)), dtype


@pytest.mark.float16
def test_minus_1e9_overflows_float16_which_is_why_we_do_not_use_it():
    # The sources' fill value rounds to -inf in float16...
    with np.errstate(over="ignore"):
        assert np.float16(-1e9) == -np.inf
        row = np.full(3, np.float16(-1e9))
    # ...and a softmax over a fully masked row of -inf is NaN (-inf - -inf).
    with np.errstate(invalid="ignore"):
        shifted = row - row.max()
    assert np.all(np.isnan(np.exp(shifted) / np.exp(shifted).sum()))


def test_dropout_layer_applies_to_the_output_not_to_the_returned_weights(qkv):
    dropout = keras.layers.Dropout(0.5, seed=1)
    out_eval, w_eval = mt.scaled_dot_product_attention(*qkv, dropout_layer=dropout, training=False)
    out_train, w_train = mt.scaled_dot_product_attention(*qkv, dropout_layer=dropout, training=True)
    np.testing.assert_array_equal(w_eval, w_train)
    np.testing.assert_allclose(out_eval, numpy_attention(*qkv)[0], atol=1e-5)
    assert not np.allclose(out_eval, out_train)


@pytest.mark.float16
def test_large_activations_under_mixed_float16_do_not_overflow(mixed_float16):
    """Entries of 40 at d_k = 64: Q K^T = 64 * 1600 = 102400 overflows float16 (max 65504),
    Q K^T / sqrt(d_k) = 12800 does not. The queries are scaled before the product."""
    q = np.full((1, 1, 2, 64), 40.0, "float32")
    k = np.full((1, 1, 3, 64), 40.0, "float32")
    k[..., 1, :] = 39.0  # keys of different similarity, so the softmax is not uniform
    v = np.eye(3, 64, dtype="float32")[None, None]
    out, weights = mt.scaled_dot_product_attention(*(ops.cast(a, "float16") for a in (q, k, v)))
    weights = ops.convert_to_numpy(ops.cast(weights, "float32"))
    assert np.all(np.isfinite(weights))
    expected_out, expected_weights = numpy_attention(q, k, v)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-2)
    # The same inputs through the layer under the mixed_float16 policy, with identity weights.
    layer = mt.MultiHeadAttention(64, 1)
    x = np.full((1, 2, 64), 40.0, "float32")
    layer(x, x, x)
    for dense in (layer.wq, layer.wk, layer.wv, layer.wo):
        dense.kernel.assign(np.eye(64, dtype="float32"))
    out = ops.convert_to_numpy(ops.cast(layer(x, x, x), "float32"))
    assert layer.compute_dtype == "float16" and np.all(np.isfinite(out))
    np.testing.assert_allclose(out, x, rtol=1e-3)  # equal keys and values: the output is v

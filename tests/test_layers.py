"""Feed-forward, encoder and decoder layers against the paper's equations in NumPy."""

import math

import mintransformer as mt
import numpy as np
import pytest
from keras import ops

B, T, S, D, H, DFF = 2, 5, 6, 8, 2, 16


# --- NumPy references, written from the paper's equations ------------------------------------


def w(variable):
    return ops.convert_to_numpy(variable).astype(np.float64)


def np_dense(x, dense):
    return x @ w(dense.kernel) + w(dense.bias)


def np_layer_norm(x, norm):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return w(norm.gamma) * (x - mu) / np.sqrt(var + norm.epsilon) + w(norm.beta)


def np_ffn(x, ffn):
    """FFN(x) = max(0, x W1 + b1) W2 + b2 (equation 2)."""
    return np_dense(np.maximum(0.0, np_dense(x, ffn.inner)), ffn.outer)


def np_multi_head(mha, query, key, value, mask=None):
    """Concat(head_1..head_h) W^O, head_i = softmax(Q_i K_i^T / sqrt(d_k)) V_i."""
    heads = []
    q, k, v = np_dense(query, mha.wq), np_dense(key, mha.wk), np_dense(value, mha.wv)
    d_k = mha.d_model // mha.num_heads
    for i in range(mha.num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        logits = q[..., cols] @ np.swapaxes(k[..., cols], -1, -2) / math.sqrt(d_k)  # (B, T, S)
        if mask is not None:
            m = np.broadcast_to(np.asarray(mask), (query.shape[0], 1) + logits.shape[1:])[:, 0]
            logits = np.where(m, logits, -np.inf)
        e = np.exp(logits - logits.max(-1, keepdims=True))
        heads.append(e / e.sum(-1, keepdims=True) @ v[..., cols])
    return np_dense(np.concatenate(heads, axis=-1), mha.wo)


def np_sublayer(x, fn, norm, norm_first):
    """Post-norm LN(x + Sublayer(x)) or pre-norm x + Sublayer(LN(x)) (section 3.1)."""
    return x + fn(np_layer_norm(x, norm)) if norm_first else np_layer_norm(x + fn(x), norm)


def np_encoder_layer(layer, x, mask):
    x = np_sublayer(x, lambda h: np_multi_head(layer.self_attention, h, h, h, mask),
                    layer.norm1, layer.norm_first)
    return np_sublayer(x, lambda h: np_ffn(h, layer.ffn), layer.norm2, layer.norm_first)


def np_decoder_layer(layer, x, context, self_mask, cross_mask):
    x = np_sublayer(x, lambda h: np_multi_head(layer.self_attention, h, h, h, self_mask),
                    layer.norm1, layer.norm_first)
    x = np_sublayer(x, lambda h: np_multi_head(layer.cross_attention, h, context, context,
                                               cross_mask), layer.norm2, layer.norm_first)
    return np_sublayer(x, lambda h: np_ffn(h, layer.ffn), layer.norm3, layer.norm_first)


def randomize(layer, rng):
    for v in layer.weights:
        scale = 0.1 if v.name == "beta" else 0.4
        center = 1.0 if v.name == "gamma" else 0.0
        v.assign(rng.normal(center, scale, size=v.shape).astype("float32"))


@pytest.fixture
def data(rng):
    x = rng.normal(size=(B, T, D)).astype("float32")
    context = rng.normal(size=(B, S, D)).astype("float32")
    source = np.ones((B, S), "int32")
    source[0, -2:] = 0
    target = np.ones((B, T), "int32")
    target[1, -1] = 0
    return x, context, source, target


# --- FeedForward ------------------------------------------------------------------------------


def test_feed_forward_equals_equation_2(rng, data):
    x = data[0]
    ffn = mt.FeedForward(D, DFF)
    ffn(x)
    randomize(ffn, rng)
    np.testing.assert_allclose(ffn(x), np_ffn(x.astype(np.float64), ffn), atol=1e-5)
    assert tuple(ffn.inner.kernel.shape) == (D, DFF) and tuple(ffn.outer.kernel.shape) == (DFF, D)


def test_feed_forward_acts_on_each_position_alone(rng, data):
    x = data[0]
    ffn = mt.FeedForward(D, DFF)
    y = ops.convert_to_numpy(ffn(x))
    x2 = x.copy()
    x2[:, 2] += 10.0
    y2 = ops.convert_to_numpy(ffn(x2))
    np.testing.assert_array_equal(np.delete(y, 2, axis=1), np.delete(y2, 2, axis=1))
    assert not np.allclose(y[:, 2], y2[:, 2])


# --- Encoder and decoder layers ----------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_layer_equals_numpy(norm_first, rng, data):
    _, context, source, _ = data
    layer = mt.EncoderLayer(D, H, DFF, norm_first=norm_first)
    mask = ops.convert_to_numpy(mt.padding_mask(source))
    layer(context, attention_mask=mask)
    randomize(layer, rng)
    out, weights = layer(context, attention_mask=mask, return_attention_scores=True)
    expected = np_encoder_layer(layer, context.astype(np.float64), mask)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert tuple(weights.shape) == (B, H, S, S)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_layer_equals_numpy(norm_first, rng, data):
    x, context, source, target = data
    layer = mt.DecoderLayer(D, H, DFF, norm_first=norm_first)
    self_mask = ops.convert_to_numpy(mt.decoder_self_mask(target))
    cross_mask = ops.convert_to_numpy(mt.padding_mask(source))
    layer(x, context, self_mask=self_mask, cross_mask=cross_mask)
    randomize(layer, rng)
    out, (self_w, cross_w) = layer(x, context, self_mask=self_mask, cross_mask=cross_mask,
                                   return_attention_scores=True)
    expected = np_decoder_layer(layer, x.astype(np.float64), context.astype(np.float64),
                                self_mask, cross_mask)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert tuple(self_w.shape) == (B, H, T, T) and tuple(cross_w.shape) == (B, H, T, S)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_stack_is_its_layers_in_order(norm_first, rng, data):
    _, context, source, _ = data
    mask = ops.convert_to_numpy(mt.padding_mask(source))
    encoder = mt.Encoder(2, D, H, DFF, norm_first=norm_first)
    encoder(context, attention_mask=mask)
    randomize(encoder, rng)
    expected = context.astype(np.float64)
    for layer in encoder.stack:
        expected = np_encoder_layer(layer, expected, mask)
    if norm_first:
        expected = np_layer_norm(expected, encoder.final_norm)
    else:
        assert encoder.final_norm is None
    np.testing.assert_allclose(encoder(context, attention_mask=mask), expected, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_stack_is_its_layers_in_order(norm_first, rng, data):
    x, context, source, target = data
    self_mask = ops.convert_to_numpy(mt.decoder_self_mask(target))
    cross_mask = ops.convert_to_numpy(mt.padding_mask(source))
    decoder = mt.Decoder(2, D, H, DFF, norm_first=norm_first)
    decoder(x, context, self_mask=self_mask, cross_mask=cross_mask)
    randomize(decoder, rng)
    expected = x.astype(np.float64)
    for layer in decoder.stack:
        expected = np_decoder_layer(layer, expected, context.astype(np.float64), self_mask,
                                    cross_mask)
    if norm_first:
        expected = np_layer_norm(expected, decoder.final_norm)
    out, weights = decoder(x, context, self_mask=self_mask, cross_mask=cross_mask,
                           return_attention_scores=True)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert len(weights) == 2 and all(len(pair) == 2 for pair in weights)


def test_decoder_layer_attends_to_the_encoder_context(rng, data):
    x, context, source, _ = data
    layer = mt.DecoderLayer(D, H, DFF)
    cross_mask = mt.padding_mask(source)
    causal = mt.causal_mask(T)
    out = ops.convert_to_numpy(layer(x, context, self_mask=causal, cross_mask=cross_mask))
    # A different context changes the output...
    other = rng.normal(size=context.shape).astype("float32")
    out_other = ops.convert_to_numpy(layer(x, other, self_mask=causal, cross_mask=cross_mask))
    assert np.max(np.abs(out - out_other)) > 1e-2
    # ...but changing only the context positions the cross mask hides does not.
    hidden = context.copy()
    hidden[0, -2:] = rng.normal(size=(2, D)) * 10
    out_hidden = layer(x, hidden, self_mask=causal, cross_mask=cross_mask)
    np.testing.assert_allclose(out_hidden, out, atol=1e-6)


def test_decoder_does_not_look_ahead(rng, data):
    x, context, _, _ = data
    decoder = mt.Decoder(2, D, H, DFF)
    causal = mt.causal_mask(T)
    out = ops.convert_to_numpy(decoder(x, context, self_mask=causal))
    future = x.copy()
    future[:, 3:] = rng.normal(size=(B, T - 3, D))
    out_future = ops.convert_to_numpy(decoder(future, context, self_mask=causal))
    np.testing.assert_allclose(out_future[:, :3], out[:, :3], atol=1e-6)
    assert not np.allclose(out_future[:, 3:], out[:, 3:])


def test_dropout_only_in_training(data):
    x, context, _, _ = data
    layer = mt.DecoderLayer(D, H, DFF, dropout=0.3)
    eval1 = ops.convert_to_numpy(layer(x, context, training=False))
    eval2 = ops.convert_to_numpy(layer(x, context, training=False))
    np.testing.assert_array_equal(eval1, eval2)
    train = ops.convert_to_numpy(layer(x, context, training=True))
    assert not np.allclose(train, eval1)

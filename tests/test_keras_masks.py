"""Keras's conventions at the layers' boundary: mask arguments, implicit padding masks, dtype policies.

``attention_mask=`` is pairwise (broadcastable to (B, h, T, S)); a padding mask that Keras attaches to
a tensor (``Embedding(mask_zero=True)``) has shape (B, S) and must mask key positions, never be read as
a (T, S) mask. Before the layers followed this convention, an argument named ``mask`` received Keras's
(B, S) mask and broadcast it as (T, S): query i got the padding of sequence i, silently, when B == S.
"""

import keras
import mintransformer as mt
import numpy as np
import pytest
import tensorflow as tf
from keras import ops
from test_multihead import keras_twin

V, D, H = 11, 16, 4
MODES = ["eager", "graph", "xla"]


def tokens_with_padding(batch, length, rng):
    """(B, S) ids in 1..V-1, each row padded (id 0) from a different position on."""
    tokens = rng.integers(1, V, size=(batch, length))
    for b in range(batch):
        tokens[b, length - 1 - b % (length - 1):] = 0
    return tokens.astype("int32")


def run(fn, mode, *args):
    """Call ``fn`` eagerly, inside a tf.function, or compiled by XLA."""
    if mode == "graph":
        fn = tf.function(fn)
    elif mode == "xla":
        fn = tf.function(fn, jit_compile=True)
    return ops.convert_to_numpy(fn(*args))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_keras_padding_mask_of_the_input_masks_keys(rng, mode, norm_first):
    # B == S: the shape where a (B, S) mask read as (T, S) gives no error, only a wrong answer.
    tokens = tokens_with_padding(6, 6, rng)
    embed = keras.layers.Embedding(V, D, mask_zero=True)
    layer = mt.EncoderLayer(D, H, 32, dropout=0.0, norm_first=norm_first)

    def implicit(t):
        return layer(embed(t), training=False)

    def explicit(t):
        return layer(embed(t), attention_mask=mt.padding_mask(t), training=False)

    def unmasked(t):
        x = embed(t)
        return layer(x + ops.zeros_like(x), training=False)  # a new tensor: Keras's mask is gone

    got, expected = run(implicit, mode, tokens), run(explicit, mode, tokens)
    keep = tokens != 0  # rows of padding positions are not compared: nothing reads them
    np.testing.assert_allclose(got[keep], expected[keep], atol=1e-5)
    assert not np.allclose(run(unmasked, mode, tokens)[keep], expected[keep], atol=1e-3)


def test_padding_mask_argument_and_keras_mask_in_a_functional_model(rng):
    tokens = tokens_with_padding(5, 5, rng)
    inputs = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(V, D, mask_zero=True)(inputs)
    x = mt.EncoderLayer(D, H, 32, dropout=0.0, name="first")(x)
    x = mt.EncoderLayer(D, H, 32, dropout=0.0, name="second")(x)  # the mask is passed on
    model = keras.Model(inputs, x)
    got = model.predict(tokens, verbose=0)

    explicit_mask = mt.padding_mask(tokens)
    h = model.layers[1](tokens)
    for layer in model.layers[2:]:
        h = layer(h + 0.0, attention_mask=explicit_mask, training=False)  # + 0.0 drops Keras's mask
    keep = tokens != 0
    np.testing.assert_allclose(got[keep], ops.convert_to_numpy(h)[keep], atol=1e-5)
    # The same through the explicit argument, on a tensor without Keras's mask.
    first = model.get_layer("first")
    np.testing.assert_allclose(
        ops.convert_to_numpy(first(model.layers[1](tokens) + 0.0, padding_mask=tokens != 0))[keep],
        ops.convert_to_numpy(first(model.layers[1](tokens) + 0.0, attention_mask=explicit_mask))[keep],
        atol=1e-6,
    )


def test_encoder_and_decoder_merge_keras_masks(rng):
    source, target = tokens_with_padding(4, 4, rng), tokens_with_padding(4, 5, rng)
    embed = keras.layers.Embedding(V, D, mask_zero=True)
    encoder = mt.Encoder(2, D, H, 32, dropout=0.0)
    decoder = mt.Decoder(2, D, H, 32, dropout=0.0)
    context = encoder(embed(source))
    np.testing.assert_allclose(
        ops.convert_to_numpy(context)[source != 0],
        ops.convert_to_numpy(encoder(embed(source) + 0.0, attention_mask=mt.padding_mask(source)))[source != 0],
        atol=1e-5)
    x = embed(target)
    got = decoder(x, embed(source), self_mask=mt.causal_mask(5))
    expected = decoder(x + 0.0, embed(source) + 0.0, self_mask=mt.decoder_self_mask(target),
                       cross_mask=mt.padding_mask(source))
    keep = target != 0
    np.testing.assert_allclose(ops.convert_to_numpy(got)[keep], ops.convert_to_numpy(expected)[keep], atol=1e-5)


def test_multi_head_attention_merges_the_keys_keras_mask_like_keras(rng):
    tokens = tokens_with_padding(3, 7, rng)
    embed = keras.layers.Embedding(V, D, mask_zero=True)
    query = ops.convert_to_numpy(embed(rng.integers(1, V, size=(3, 4))))  # no mask on the queries
    ours = mt.MultiHeadAttention(D, H)
    keys = embed(tokens)
    ours(query, keys, keys)
    theirs = keras_twin(ours, query, keys, keys)
    np.testing.assert_allclose(ops.convert_to_numpy(ours(query, keys, keys)),
                               ops.convert_to_numpy(theirs(query, keys, keys)), atol=1e-5)


@pytest.mark.parametrize("bad", [np.ones((2, 1, 5), bool), np.ones((5,), bool)], ids=["rank 3", "rank 1"])
def test_a_padding_mask_of_the_wrong_rank_is_refused(bad):
    layer = mt.EncoderLayer(D, H, 32)
    x = np.zeros((2, 5, D), "float32")
    with pytest.raises(ValueError, match=r"padding mask has shape \(batch, length\).*attention_mask="):
        layer(x, padding_mask=bad)


def test_mask_keyword_is_not_accepted_any_more():
    # Keras would fill an argument named `mask` with the input's (B, S) padding mask.
    x = np.zeros((2, 5, D), "float32")
    for layer in (mt.EncoderLayer(D, H, 32), mt.Encoder(1, D, H, 32)):
        with pytest.raises(TypeError, match="mask"):
            layer(x, mask=mt.causal_mask(5))


# --- dtype policies reach every sub-layer ---------------------------------------------------------


def sublayers(layer):
    return [sub for sub in layer._flatten_layers(include_self=False, recursive=True)]


def test_dtype_policy_reaches_every_sublayer_float16():
    model = mt.MinTransformer(num_layers=1, d_model=D, num_heads=H, dff=32, input_vocab_size=V,
                              target_vocab_size=V, max_length=8, dtype="mixed_float16")
    model((np.ones((2, 5), "int32"), np.ones((2, 4), "int32")))
    names = {sub.name: sub.dtype_policy.name for sub in sublayers(model)}
    assert set(names.values()) == {"mixed_float16"}, {n: p for n, p in names.items() if p != "mixed_float16"}
    x = np.random.default_rng(0).normal(size=(2, 5, D)).astype("float32")
    layer = mt.EncoderLayer(D, H, 32, dtype="mixed_float16")
    assert ops.convert_to_numpy(layer(x)).dtype == np.float16
    assert {sub.dtype_policy.name for sub in sublayers(layer)} == {"mixed_float16"}
    assert layer.self_attention.wq.kernel.dtype == "float32"  # variables stay float32
    logits = model((np.ones((2, 5), "int32"), np.ones((2, 4), "int32")))
    assert logits.dtype == "float32"  # the logits are cast back for a stable loss


def test_dtype_policy_survives_a_keras_round_trip(tmp_path):
    layer = mt.EncoderLayer(D, H, 32, dtype="bfloat16")
    x = np.zeros((1, 3, D), "float32")
    layer(x)
    model = keras.Sequential([keras.Input((3, D)), layer])
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    assert {sub.dtype_policy.name for sub in sublayers(loaded.layers[0])} == {"bfloat16"}


# --- decode_step fed several tokens: the last position's logits, in both models -----------------


def test_decode_step_with_several_tokens_returns_the_last_positions_logits(tiny_transformer, rng):
    model = tiny_transformer(dropout=0.0)
    source, target = rng.integers(1, 13, size=(2, 6)), rng.integers(1, 13, size=(2, 5))
    full = ops.convert_to_numpy(model((source, target), training=False))
    caches = model.start_cache(source, 8)
    logits, caches = model.decode_step(target[:, :3], 0, caches, source)  # prefill 3 tokens
    np.testing.assert_allclose(ops.convert_to_numpy(logits), full[:, 2], atol=1e-5)
    logits, caches = model.decode_step(target[:, 3:5], 3, caches, source)
    np.testing.assert_allclose(ops.convert_to_numpy(logits), full[:, 4], atol=1e-5)

    gpt = mt.MinGPT(num_layers=1, d_model=D, num_heads=H, dff=32, vocab_size=V, max_length=8, dropout=0.0)
    tokens = rng.integers(1, V, size=(2, 5))
    full = ops.convert_to_numpy(gpt(tokens, training=False))
    logits, _ = gpt.decode_step(tokens[:, :3], 0, gpt.start_cache(2, 8))
    np.testing.assert_allclose(ops.convert_to_numpy(logits), full[:, 2], atol=1e-5)


# --- masks in Keras's layouts and dtypes ----------------------------------------------------------


def test_a_keras_shaped_mask_gets_a_heads_axis(rng):
    # Keras's MultiHeadAttention takes (B, T, S); broadcast as it is against (B, h, T, S), B would
    # meet the heads axis, silently when B == h.
    B, T, S = H, 3, 5
    mask = rng.random((B, T, S)) > 0.3
    mask[..., 0] = True
    query, value = rng.normal(size=(B, T, D)).astype("float32"), rng.normal(size=(B, S, D)).astype("float32")
    ours = mt.MultiHeadAttention(D, H)
    ours(query, value, value)
    theirs = keras_twin(ours, query, value, value)
    expected = ops.convert_to_numpy(theirs(query, value, value, attention_mask=mask))
    for mode in MODES:
        got = run(lambda m: ours(query, value, value, attention_mask=m), mode, mask)
        np.testing.assert_allclose(got, expected, atol=1e-5)
    layer = mt.EncoderLayer(D, H, 32, dropout=0.0)  # the same through a layer that merges padding
    x = rng.normal(size=(B, S, D)).astype("float32")
    pairwise = rng.random((B, S, S)) > 0.3
    np.testing.assert_allclose(ops.convert_to_numpy(layer(x, attention_mask=pairwise)),
                               ops.convert_to_numpy(layer(x, attention_mask=pairwise[:, None])), atol=1e-6)


def test_padding_masks_output_is_accepted_as_padding_mask(rng):
    tokens = tokens_with_padding(3, 6, rng)
    x = rng.normal(size=(3, 6, D)).astype("float32")
    layer = mt.EncoderLayer(D, H, 32, dropout=0.0)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(x, padding_mask=mt.padding_mask(tokens))),
                               ops.convert_to_numpy(layer(x, padding_mask=tokens != 0)), atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_a_float_mask_is_refused(mode):
    q = np.ones((1, 2, 4), "float32")
    additive = np.array([[0.0, -1e9]], "float32")  # a tutorial's additive mask: read as bool, it is inverted
    with pytest.raises(ValueError, match="dtype float32.*boolean"):
        run(lambda m: mt.scaled_dot_product_attention(q, q, q, mask=m)[0], mode, additive)
    for ok in (additive == 0, (additive == 0).astype("int32")):
        run(lambda m: mt.scaled_dot_product_attention(q, q, q, mask=m)[0], mode, ok)


# --- positions past the cache ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["python", "numpy", "tensor"])
def test_decode_step_past_the_cache_raises_eagerly(tiny_transformer, rng, kind):
    model = tiny_transformer(dropout=0.0)
    source = rng.integers(1, 13, size=(2, 4))
    caches = model.start_cache(source, 4)
    position = {"python": 4, "numpy": np.int64(4), "tensor": tf.constant(4)}[kind]
    with pytest.raises(ValueError, match=r"positions 4 to 4 do not fit: the cache holds 4"):
        model.decode_step(np.ones((2, 1), "int32"), position, caches, source)
    gpt = mt.MinGPT(num_layers=1, d_model=D, num_heads=H, dff=32, vocab_size=V, max_length=8)
    with pytest.raises(ValueError, match=r"do not fit: the cache holds 3"):
        gpt.decode_step(np.ones((2, 2), "int32"), {"python": 2, "numpy": np.int64(2),
                                                   "tensor": tf.constant(2)}[kind], gpt.start_cache(2, 3))


@pytest.mark.parametrize("mode", ["graph", "xla"])
def test_decode_step_past_the_cache_is_nan_when_traced(tiny_transformer, rng, mode):
    model = tiny_transformer(dropout=0.0)
    source = rng.integers(1, 13, size=(2, 4))
    caches = model.start_cache(source, 4)

    def step(position):
        return model.decode_step(np.ones((2, 1), "int32"), position, caches, source)[0]

    assert np.isfinite(run(step, mode, tf.constant(3))).all()
    assert np.isnan(run(step, mode, tf.constant(4))).all()


# --- the loss and the metric ----------------------------------------------------------------------


def test_masked_loss_label_past_the_vocabulary_is_nan_under_xla():
    logits = np.random.default_rng(0).normal(size=(1, 3, 5)).astype("float32")
    labels = np.array([[1, 7, 0]])
    assert np.isnan(run(lambda y, p: mt.masked_loss(y, p), "xla", labels, logits))
    assert np.isfinite(run(lambda y, p: mt.masked_loss(y, p), "xla", np.array([[1, 4, 0]]), logits))


def test_sample_weights_are_refused_by_the_token_loss_and_metric():
    logits = np.zeros((1, 3, 5), "float32")
    labels = np.array([[1, 2, 0]])
    with pytest.raises(ValueError, match="takes no sample_weight"):
        mt.MaskedLoss()(labels, logits, sample_weight=np.ones(1))
    with pytest.raises(ValueError, match="takes no sample_weight"):
        mt.MaskedAccuracy().update_state(labels, logits, sample_weight=np.ones(1))


def test_plot_attention_heads_refuses_a_batch():
    with pytest.raises(ValueError, match=r"\(h, T, S\).*weights\[b\]"):
        mt.plotting.plot_attention_heads(np.full((2, 4, 3, 4), 0.25))

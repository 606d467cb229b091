"""Chapter 13's switches checked against references we did not write.

RMSNorm against ``keras.layers.RMSNormalization``; rotary positions against KerasHub's
``RotaryEmbedding`` (half layout) and a NumPy transcription of Meta's released Llama code
(interleaved layout); grouped-query attention against ``keras.layers.GroupQueryAttention``;
SwiGLU and tiled attention against their formulas; a Llama-style ``MinGPT`` against KerasHub's
``LlamaBackbone`` with every weight copied in. Then the cache, the parameter count and the
defaults (every switch off is the paper's model, as before the switches existed).
"""

import json

import keras
import keras_hub
import mintransformer as mt
import numpy as np
import pytest
import tensorflow as tf
from keras import ops
from layer_contract import Features, run_layer_contract

from mintransformer.rotary import rotary_frequencies

B, T, D, H = 2, 6, 16, 4
D_K = D // H


def numpy_of(x):
    return np.asarray(ops.convert_to_numpy(x))


def three_ways(fn):
    """``fn`` in eager mode, inside a tf.function and compiled by XLA."""
    return {"eager": fn, "tf.function": tf.function(fn), "XLA": tf.function(fn, jit_compile=True)}


def randomize(layer, rng, std=0.3):
    """Every weight random: kernels and biases around 0 with ``std``, norm scales around 1."""
    for w in layer.weights:
        centre = 1.0 if w.name in ("gamma", "scale") else 0.0
        w.assign((centre + rng.normal(scale=std, size=w.shape)).astype("float32"))


# --- 1. RMSNorm ---------------------------------------------------------------------------------


def numpy_rms_norm(x, gamma, eps):
    """gamma * x / sqrt(mean(x^2) + eps): epsilon inside the root (Zhang and Sennrich, 2019; Llama)."""
    x = np.asarray(x, np.float64)
    return gamma * x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)


def rms_norm_outside_root(x, gamma, eps):
    """The other function: x / (rms + eps), epsilon added after the root."""
    x = np.asarray(x, np.float64)
    return gamma * x / (np.sqrt(np.mean(x**2, axis=-1, keepdims=True)) + eps)


@pytest.mark.parametrize("dtype", ["float32", pytest.param("mixed_float16", marks=pytest.mark.float16)])
@pytest.mark.parametrize("eps", [1e-6, 1e-5])
def test_rms_norm_equals_keras_rms_normalization(dtype, eps, rng):
    x = (rng.normal(size=(B, T, D)) * 3 + 1).astype("float32")
    ours = mt.RMSNormalization(epsilon=eps, dtype=dtype)
    theirs = keras.layers.RMSNormalization(epsilon=eps, dtype=dtype)
    ours(x), theirs(x)
    gamma = rng.normal(1.0, 0.5, size=D).astype("float32")
    ours.gamma.assign(gamma)
    theirs.scale.assign(gamma)
    got, expected = numpy_of(ours(x)), numpy_of(theirs(x))
    assert got.dtype == expected.dtype == (np.float16 if dtype == "mixed_float16" else np.float32)
    # float32: both compute the same function, up to float32 rounding. mixed_float16: ours computes the
    # statistics in float32 and rounds once; a few float16 units in the last place (values up to ~6).
    atol = 1e-5 if dtype == "float32" else 1e-2
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), atol=atol)
    np.testing.assert_allclose(got.astype(np.float64), numpy_rms_norm(x, gamma, eps), atol=atol)


def test_rms_norm_equals_the_numpy_formula_and_keeps_epsilon_inside_the_root(rng):
    x = (rng.normal(size=(B, T, D)) * 2 - 1).astype("float32")
    x[0, 0] *= 1e-4  # a row of small norm: mean(x^2) ~ 1e-8, below epsilon = 1e-6
    layer = mt.RMSNormalization()
    layer(x)
    gamma = rng.normal(1.0, 0.5, size=D).astype("float32")
    layer.gamma.assign(gamma)
    y = numpy_of(layer(x))
    np.testing.assert_allclose(y, numpy_rms_norm(x, gamma, 1e-6), atol=1e-5)
    # On the small row, sqrt(1e-8 + 1e-6) ~ 1e-3 while rms + eps ~ 1e-4: the outputs differ ten-fold.
    outside = rms_norm_outside_root(x, gamma, 1e-6)
    assert np.abs(y[0, 0] - outside[0, 0]).max() > 0.5
    # ...and on the other rows the two agree (which is why the mix-up goes unnoticed).
    np.testing.assert_allclose(y[1], outside[1], atol=1e-4)


def test_rms_norm_does_not_centre_the_features(rng):
    """Unlike layer norm, RMSNorm does not remove a shift c of every feature: RMSNorm(x + c) != RMSNorm(x)."""
    x = rng.normal(size=(B, T, D)).astype("float32")
    rms, layer_norm = mt.RMSNormalization(), mt.LayerNormalization()
    np.testing.assert_allclose(layer_norm(x + 5.0), layer_norm(x), atol=1e-4)
    assert np.abs(numpy_of(rms(x + 5.0)) - numpy_of(rms(x))).max() > 0.5
    y = numpy_of(rms(x)).astype(np.float64)  # gamma = 1: unit root mean square, mean not zero
    np.testing.assert_allclose(np.sqrt(np.mean(y**2, axis=-1)), 1.0, atol=1e-5)


def test_rms_norm_has_gamma_only_no_beta():
    layer = mt.RMSNormalization()
    layer.build((None, None, D))
    assert [w.name for w in layer.weights] == ["gamma"]
    assert tuple(layer.gamma.shape) == (D,) and layer.count_params() == D
    np.testing.assert_array_equal(layer.gamma, np.ones(D))
    assert layer.epsilon == 1e-6
    assert mt.RMSNormalization(epsilon=1e-5).get_config()["epsilon"] == 1e-5


@pytest.mark.float16
def test_rms_norm_under_mixed_float16_keeps_float32_weights(rng):
    x = (rng.normal(size=(B, T, D)) * 100).astype("float32")  # mean(x^2) ~ 1e4: its sum overflows float16
    layer = mt.RMSNormalization(dtype="mixed_float16")
    y = layer(x)
    assert keras.backend.standardize_dtype(layer.gamma.dtype) == "float32"
    assert keras.backend.standardize_dtype(y.dtype) == "float16"
    x16 = x.astype(np.float16)
    np.testing.assert_allclose(numpy_of(y).astype(np.float64), numpy_rms_norm(x16, 1.0, 1e-6), atol=1e-2)


def test_make_norm_builds_either_norm_and_refuses_others():
    assert type(mt.layernorm.make_norm("layer")) is mt.LayerNormalization
    assert type(mt.layernorm.make_norm("rms", epsilon=1e-5)) is mt.RMSNormalization
    with pytest.raises(ValueError, match="norm='batch'"):
        mt.layernorm.make_norm("batch")
    with pytest.raises(ValueError, match="norm="):
        mt.MinGPT(1, D, H, 32, 11, 8, norm="RMS")


# --- the layer contract ------------------------------------------------------------------------
# tests/test_contract.py runs it for RMSNormalization, grouped rotary attention without biases, SwiGLU
# and the Llama-style MinGPT; here, the decoder layer with every switch on (and one key/value head).


def test_layer_contract_of_a_decoder_layer_with_every_switch(tmp_path):
    run_layer_contract(
        lambda: mt.DecoderLayer(D, H, 24, norm_first=True, cross_attention=False, norm="rms", activation="swiglu",
                                num_key_value_heads=1, rotary="interleaved", use_bias=False),
        lambda layer, t: layer(t[0], None), inputs=[Features(D, T)], tmp_path=tmp_path,
        expected_num_weights=4 + 3 + 2,  # W^Q, W^K, W^V, W^O; W_1, W_3, W_2; two gammas
        expected_num_params=D * D + 2 * D * D_K + D * D + 3 * D * 24 + 2 * D, expected_output_last_dim=D)


# --- 2. Rotary positions ------------------------------------------------------------------------
# Meta's released Llama code (github.com/meta-llama/llama, llama/model.py: precompute_freqs_cis,
# reshape_for_broadcast and apply_rotary_emb), written again in NumPy with its complex numbers, in
# float64: consecutive features (2i, 2i + 1) are the real and imaginary parts of one complex
# number, multiplied by exp(i m theta_i). Its x is (batch, seqlen, n_heads, head_dim).


def meta_precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (np.arange(0, dim, 2)[: (dim // 2)].astype(np.float64) / dim))
    t = np.arange(end)
    freqs = np.outer(t, freqs)
    return np.exp(1j * freqs)  # torch.polar(ones, freqs): (end, dim / 2), complex


def meta_apply_rotary_emb(x, freqs_cis):
    """x (bsz, seqlen, n_heads, head_dim) real; freqs_cis (seqlen, head_dim / 2)."""
    x_ = x.astype(np.float64).reshape(*x.shape[:-1], -1, 2)
    x_ = x_[..., 0] + 1j * x_[..., 1]  # torch.view_as_complex
    shape = [d if i == 1 or i == x_.ndim - 1 else 1 for i, d in enumerate(x_.shape)]  # reshape_for_broadcast
    out = x_ * freqs_cis.reshape(shape)
    return np.stack([out.real, out.imag], axis=-1).reshape(x.shape)  # view_as_real(...).flatten(3)


def heads_first(x):
    return np.swapaxes(x, 1, 2)  # (B, T, h, d) <-> (B, h, T, d)


def test_rotary_interleaved_equals_meta_llama_code(rng):
    x = rng.normal(size=(B, 40, H, 16)).astype("float32")  # (bsz, seqlen, n_heads, head_dim)
    expected = meta_apply_rotary_emb(x, meta_precompute_freqs_cis(16, 40))
    got = heads_first(numpy_of(mt.apply_rotary(heads_first(x), layout="interleaved")))  # ours: (..., T, d)
    np.testing.assert_allclose(got, expected, atol=1e-5)  # float32 rotation of values ~ 1, angles up to 39 rad
    assert not np.allclose(numpy_of(mt.apply_rotary(heads_first(x), layout="half")), heads_first(expected),
                           atol=1e-2)


@pytest.mark.parametrize("sequence_axis", [1, 2], ids=["(B, T, h, d)", "(B, h, T, d)"])
@pytest.mark.parametrize("base", [10000, 500000], ids=["base 1e4", "base 5e5 (Llama 3)"])
def test_rotary_half_equals_keras_hub_rotary_embedding(sequence_axis, base, rng):
    """KerasHub reads the sequence on ``sequence_axis`` and the features last; ours reads (..., T, d)."""
    shape = (B, 40, H, 16) if sequence_axis == 1 else (B, H, 40, 16)
    x = rng.normal(size=shape).astype("float32")
    theirs = keras_hub.layers.RotaryEmbedding(max_wavelength=base, sequence_axis=sequence_axis)
    expected = numpy_of(theirs(x))
    ours = mt.apply_rotary(heads_first(x) if sequence_axis == 1 else x, layout="half", base=base)
    got = heads_first(numpy_of(ours)) if sequence_axis == 1 else numpy_of(ours)
    np.testing.assert_allclose(got, expected, atol=1e-5)  # both float32; angles up to 39 rad
    # KerasHub's start_index (its cache) is our positions from an offset.
    later = numpy_of(theirs(x, start_index=100))
    positions = 100 + np.arange(40)
    ours = mt.apply_rotary(heads_first(x) if sequence_axis == 1 else x, positions, layout="half", base=base)
    got = heads_first(numpy_of(ours)) if sequence_axis == 1 else numpy_of(ours)
    np.testing.assert_allclose(got, later, atol=1e-4)  # angles up to 139 rad: float32 rounding of m theta
    assert np.abs(got - expected).max() > 0.1


def test_rotary_frequencies_are_the_sinusoids(rng):
    np.testing.assert_allclose(rotary_frequencies(8), 10000.0 ** (-np.arange(0, 8, 2) / 8), rtol=1e-6)
    np.testing.assert_allclose(rotary_frequencies(4, base=100.0), [1.0, 0.1], rtol=1e-6)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rotated_dot_products_depend_only_on_the_offset(layout, rng):
    q, k = rng.normal(size=(2, 16)).astype("float32")
    length = 24
    for first in (0, 7, 1000):  # the same offsets read from several starting positions
        positions = first + np.arange(length)
        rq = numpy_of(mt.apply_rotary(np.tile(q, (length, 1)), positions, layout)).astype(np.float64)
        rk = numpy_of(mt.apply_rotary(np.tile(k, (length, 1)), positions, layout)).astype(np.float64)
        dots = rq @ rk.T  # dots[m, n] = <R(m) q, R(n) k>
        np.testing.assert_allclose(dots[1:, 1:], dots[:-1, :-1], atol=1e-3)  # constant along each diagonal
        if first == 0:
            reference = dots
        np.testing.assert_allclose(dots, reference, atol=2e-3)  # the same for every starting position
    assert np.ptp([reference[s, 0] for s in (0, 1, 2, 5)]) > 0.1  # but different offsets give different products
    np.testing.assert_allclose(reference[0, 0], q.astype(np.float64) @ k, atol=1e-5)  # offset 0: plain q . k


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rotation_preserves_norms(layout, rng):
    x = rng.normal(size=(B, H, 50, 16)).astype("float32")
    y = numpy_of(mt.apply_rotary(x, layout=layout))
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5)
    np.testing.assert_allclose(y[..., 0, :], x[..., 0, :], atol=1e-7)  # position 0: no rotation


def test_interleaved_to_half_converts_between_layouts(rng):
    np.testing.assert_array_equal(mt.interleaved_to_half(8), [0, 2, 4, 6, 1, 3, 5, 7])
    p = mt.interleaved_to_half(16)
    x = rng.normal(size=(B, H, 9, 16)).astype("float32")
    interleaved = numpy_of(mt.apply_rotary(x, layout="interleaved"))
    np.testing.assert_allclose(numpy_of(mt.apply_rotary(x[..., p], layout="half")), interleaved[..., p], atol=1e-6)
    # Mixed up (features in one layout, rotation in the other): finite, plausible and wrong.
    mixed = numpy_of(mt.apply_rotary(x, layout="half"))
    assert np.all(np.isfinite(mixed)) and np.abs(mixed - interleaved).max() > 0.5
    # The dot products that attention reads: converted, equal; mixed up, not.
    q, k = x, x[:, :, ::-1, :]  # queries and keys: the same vectors at other positions

    def logits(a, b, layout):
        return numpy_of(mt.apply_rotary(a, layout=layout)) @ np.swapaxes(numpy_of(mt.apply_rotary(b, layout=layout)),
                                                                        -1, -2)
    np.testing.assert_allclose(logits(q[..., p], k[..., p], "half"), logits(q, k, "interleaved"), atol=1e-4)
    assert np.abs(logits(q, k, "half") - logits(q, k, "interleaved")).max() > 0.5


def test_positions_from_an_offset_equal_slicing_the_full_rotation(rng):
    x = rng.normal(size=(B, H, 12, 8)).astype("float32")
    full = numpy_of(mt.apply_rotary(x))
    for positions in (np.arange(5, 9), np.arange(5, 9, dtype=np.int64), tf.constant([5, 6, 7, 8]),
                      [5, 6, 7, 8]):
        np.testing.assert_allclose(numpy_of(mt.apply_rotary(x[..., 5:9, :], positions)), full[..., 5:9, :],
                                   atol=1e-6)
    rotate = three_ways(lambda x, first: mt.apply_rotary(x, first + tf.range(4)))
    for mode, run in rotate.items():  # the cache's way: a traced position
        np.testing.assert_allclose(numpy_of(run(x[..., 5:9, :], tf.constant(5))), full[..., 5:9, :], atol=1e-6,
                                   err_msg=mode)


@pytest.mark.parametrize("mode", ["eager", "tf.function", "XLA"])
def test_float_positions_are_refused(mode, rng):
    x = rng.normal(size=(B, 4, 8)).astype("float32")
    run = three_ways(lambda x, positions: mt.apply_rotary(x, positions))[mode]
    for positions in (tf.constant([0.0, 1.0, 2.0, 3.0]), np.arange(4.0, dtype="float32")):
        with pytest.raises(TypeError, match="positions must be integers"):
            run(x, positions)


def test_a_python_list_of_float_positions_is_refused(rng):
    x = rng.normal(size=(B, 4, 8)).astype("float32")
    with pytest.raises(TypeError, match="positions must be integers"):
        mt.apply_rotary(x, [0.5, 1.5, 2.5, 3.5])


def test_positions_of_another_length_are_refused(rng):
    x = rng.normal(size=(B, 4, 8)).astype("float32")
    with pytest.raises(ValueError, match="positions"):
        mt.apply_rotary(x, np.array([5]))


def test_odd_depths_and_unknown_layouts_are_refused():
    with pytest.raises(ValueError, match="even"):
        mt.apply_rotary(np.zeros((2, 3, 5), "float32"))
    with pytest.raises(ValueError, match="even"):
        rotary_frequencies(5)
    with pytest.raises(ValueError, match="even"):
        mt.interleaved_to_half(7)
    with pytest.raises(ValueError, match="layout='complex'"):
        mt.apply_rotary(np.zeros((2, 3, 4), "float32"), layout="complex")
    with pytest.raises(ValueError, match="even d_k"):
        mt.MultiHeadAttention(D, H, key_dim=5, rotary="half")
    with pytest.raises(ValueError, match="rotary="):
        mt.MultiHeadAttention(D, H, rotary=True)


# --- 3. Grouped-query attention -----------------------------------------------------------------


def keras_group_query_twin(ours, query, key):
    """keras.layers.GroupQueryAttention(head_dim, h, h_kv) with our weights copied into its EinsumDense kernels."""
    h, g, d_k, d = ours.num_heads, ours.num_kv_heads, ours.d_k, ours.d_model
    theirs = keras.layers.GroupQueryAttention(head_dim=d_k, num_query_heads=h, num_key_value_heads=g)
    theirs(query, key, key=key)  # build; Keras's order is (query, value, key)
    pairs = [(ours.wq, theirs._query_dense, h), (ours.wk, theirs._key_dense, g), (ours.wv, theirs._value_dense, g)]
    for mine, dense, heads in pairs:
        dense.kernel.assign(ops.reshape(mine.kernel, (d, heads, d_k)))  # (D, heads d_k) -> (D, heads, d_k)
        dense.bias.assign(ops.reshape(mine.bias, (heads, d_k)))
    theirs._output_dense.kernel.assign(ops.reshape(ours.wo.kernel, (h, d_k, d)))  # (h d_k, D) -> (h, d_k, D)
    theirs._output_dense.bias.assign(ours.wo.bias)
    assert theirs.count_params() == ours.count_params()
    return theirs


@pytest.mark.parametrize("groups", [H, 2, 1], ids=["g=h", "g=2", "g=1"])
def test_grouped_query_attention_equals_keras_group_query_attention(groups, rng):
    x = rng.normal(size=(B, T, D)).astype("float32")
    context = rng.normal(size=(B, T + 3, D)).astype("float32")
    ours = mt.MultiHeadAttention(D, H, num_key_value_heads=groups)
    ours(x, x, x)
    randomize(ours, rng)
    theirs = keras_group_query_twin(ours, x, x)
    # Self-attention, without a mask and with the causal mask.
    np.testing.assert_allclose(numpy_of(ours(x, x, x)), numpy_of(theirs(x, x)), atol=1e-5)
    causal = np.tril(np.ones((T, T), bool))
    np.testing.assert_allclose(numpy_of(ours(x, x, x, attention_mask=causal)),
                               numpy_of(theirs(x, x, use_causal_mask=True)), atol=1e-5)
    # Cross-attention with a padding mask, (B, T, S) as Keras takes it.
    keep = np.ones((B, T, T + 3), bool)
    keep[0, :, -2:] = False
    np.testing.assert_allclose(numpy_of(ours(x, context, context, attention_mask=keep)),
                               numpy_of(theirs(x, context, key=context, attention_mask=keep)), atol=1e-5)
    assert not np.allclose(numpy_of(ours(x, x, x, attention_mask=causal)), numpy_of(ours(x, x, x)), atol=1e-3)


def test_grouped_heads_read_consecutive_query_heads(rng):
    """Query head i reads key/value head i // (h / h_kv): with g=2, heads 0, 1 read 0 and heads 2, 3 read 1."""
    x = rng.normal(size=(1, T, D)).astype("float32")
    layer = mt.MultiHeadAttention(D, H, num_key_value_heads=2)
    layer(x, x, x)
    randomize(layer, rng)
    k, v = layer.project_key_value(x, x)
    assert tuple(k.shape) == (1, 2, T, D_K) and tuple(v.shape) == (1, 2, T, D_K)
    _, weights = layer.attend(x, k, v)
    q = numpy_of(mt.split_heads(layer.wq(x), H))
    k = numpy_of(k)
    for i in range(H):
        logits = q[0, i] @ k[0, i // 2].T / np.sqrt(D_K)
        expected = np.exp(logits - logits.max(-1, keepdims=True))
        np.testing.assert_allclose(numpy_of(weights)[0, i], expected / expected.sum(-1, keepdims=True), atol=1e-5)


@pytest.mark.parametrize("groups", [3, 0, -2, 8, 2.0, True, "2"])
def test_a_number_of_key_value_heads_that_does_not_divide_h_is_refused(groups):
    with pytest.raises(ValueError, match="num_key_value_heads"):
        mt.MultiHeadAttention(D, H, num_key_value_heads=groups)


def test_numpy_int_key_value_heads_are_saved_as_ints():
    config = mt.MultiHeadAttention(D, H, num_key_value_heads=np.int64(2)).get_config()
    assert type(config["num_key_value_heads"]) is int
    json.dumps(config)


@pytest.mark.parametrize("groups", [None, 4, 2, 1])
@pytest.mark.parametrize("use_bias", [True, False], ids=["bias", "no-bias"])
def test_grouped_query_attention_weights_count(groups, use_bias):
    layer = mt.MultiHeadAttention(D, H, num_key_value_heads=groups, use_bias=use_bias)
    layer.build((None, None, D))
    g = H if groups is None else groups
    shapes = {w.path.split("/", 1)[1]: tuple(w.shape) for w in layer.weights}
    expected = {"wq/kernel": (D, D), "wk/kernel": (D, g * D_K), "wv/kernel": (D, g * D_K), "wo/kernel": (D, D)}
    if use_bias:
        expected.update({"wq/bias": (D,), "wk/bias": (g * D_K,), "wv/bias": (g * D_K,), "wo/bias": (D,)})
    assert shapes == expected
    bias = 1 if use_bias else 0
    assert layer.count_params() == 2 * (D * D + bias * D) + 2 * (D * g * D_K + bias * g * D_K)


# --- 4. SwiGLU ----------------------------------------------------------------------------------


def numpy_swiglu(x, w1, w3, w2, b1=0.0, b3=0.0, b2=0.0):
    """(Swish(x W1 + b1) * (x W3 + b3)) W2 + b2, Swish(z) = z sigmoid(z) (Shazeer, 2020)."""
    x = np.asarray(x, np.float64)
    gate = x @ w1 + b1
    return (gate / (1 + np.exp(-gate)) * (x @ w3 + b3)) @ w2 + b2


@pytest.mark.parametrize("use_bias", [True, False], ids=["bias", "no-bias"])
def test_swiglu_equals_its_formula(use_bias, rng):
    x = rng.normal(size=(B, T, D)).astype("float32")
    ffn = mt.FeedForward(D, 24, dropout=0.5, activation="swiglu", use_bias=use_bias)
    ffn(x)
    randomize(ffn, rng)
    if use_bias:
        expected = numpy_swiglu(x, ffn.inner.kernel, ffn.up.kernel, ffn.outer.kernel, ffn.inner.bias, ffn.up.bias,
                                ffn.outer.bias)
    else:
        assert ffn.inner.bias is None and ffn.up.bias is None and ffn.outer.bias is None
        expected = numpy_swiglu(x, ffn.inner.kernel, ffn.up.kernel, ffn.outer.kernel)
    np.testing.assert_allclose(numpy_of(ffn(x, training=False)), expected, atol=1e-4)
    # Gate and linear branch are not interchangeable: swapping W1 and W3 changes the output.
    assert np.abs(numpy_swiglu(x, ffn.up.kernel, ffn.inner.kernel, ffn.outer.kernel)
                  - numpy_swiglu(x, ffn.inner.kernel, ffn.up.kernel, ffn.outer.kernel)).max() > 0.1


@pytest.mark.parametrize("use_bias", [True, False], ids=["bias", "no-bias"])
def test_swiglu_has_three_matrices(use_bias):
    dff = 24
    ffn = mt.FeedForward(D, dff, activation="swiglu", use_bias=use_bias)
    ffn.build((None, None, D))
    assert ffn.count_params() == 3 * D * dff + (2 * dff + D if use_bias else 0)
    # The ReLU network of width 3/2 dff has as many weights in its matrices: SwiGLU keeps the count at 2/3 the width.
    relu = mt.FeedForward(D, 3 * dff // 2, use_bias=use_bias)
    relu.build((None, None, D))
    assert relu.count_params() == 3 * D * dff + (3 * dff // 2 + D if use_bias else 0)


def test_relu_feed_forward_is_unchanged_by_default(rng):
    ffn = mt.FeedForward(D, 24)
    x = rng.normal(size=(B, T, D)).astype("float32")
    ffn(x)
    assert ffn.up is None and ffn.activation == "relu" and ffn.use_bias
    assert [w.path.split("/", 1)[1] for w in ffn.weights] == ["inner/kernel", "inner/bias", "outer/kernel",
                                                             "outer/bias"]
    h = np.maximum(x @ numpy_of(ffn.inner.kernel) + numpy_of(ffn.inner.bias), 0)
    np.testing.assert_allclose(numpy_of(ffn(x)), h @ numpy_of(ffn.outer.kernel) + numpy_of(ffn.outer.bias),
                               atol=1e-5)
    with pytest.raises(ValueError, match="activation='gelu'"):
        mt.FeedForward(D, 24, activation="gelu")


# --- 5. Tiled attention -------------------------------------------------------------------------

S = 13  # keys: block sizes 1, 5 (does not divide 13), 13 and 64 (>= S)


def attention_inputs(rng, dtype="float32", t=T, s=S):
    q, k, v = (rng.normal(size=(B, H, n, 8)).astype(dtype) for n in (t, s, s))
    return q, k, v


def masks(t=T, s=S):
    padding = np.ones((B, 1, 1, s), bool)
    padding[0, ..., -4:] = False
    causal = np.tril(np.ones((t, s), bool), k=s - t)  # lower-right triangle: query i sees keys <= i + s - t
    empty_row = np.broadcast_to(causal, (B, 1, t, s)).copy()
    empty_row[1, 0, 2] = False  # query 2 of the second sequence may attend to nothing
    return {"none": None, "padding": padding, "causal": causal, "empty row": empty_row}


def test_tiled_attention_equals_scaled_dot_product_attention(rng):
    q, k, v = attention_inputs(rng)
    for mask_name, mask in masks().items():
        expected = numpy_of(mt.scaled_dot_product_attention(q, k, v, mask)[0])
        for block_size in (1, 5, S, 64):
            got = numpy_of(mt.tiled_attention(q, k, v, mask, block_size=block_size))
            assert got.dtype == np.float32 and np.all(np.isfinite(got)), (mask_name, block_size)
            np.testing.assert_allclose(got, expected, atol=1e-5, err_msg=f"{mask_name}, block_size={block_size}")
    got = numpy_of(mt.tiled_attention(q, k, v, masks()["empty row"], block_size=5))
    np.testing.assert_array_equal(got[1, :, 2], 0.0)  # a query with no key: zero output, no NaN


@pytest.mark.parametrize("mode", ["tf.function", "XLA"])
def test_tiled_attention_traced_and_compiled(mode, rng):
    """The same inside a tf.function and under XLA: each mask given as a (B, 1, T, S) input (one trace per tile)."""
    q, k, v = attention_inputs(rng)
    for block_size in (1, 5):
        run = three_ways(lambda q, k, v, mask: mt.tiled_attention(q, k, v, mask, block_size=block_size))[mode]
        for mask_name, mask in masks().items():
            mask = np.broadcast_to(True if mask is None else mask, (B, 1, T, S))
            expected = numpy_of(mt.scaled_dot_product_attention(q, k, v, mask)[0])
            got = numpy_of(run(q, k, v, mask))
            assert np.all(np.isfinite(got)), (mask_name, block_size)
            np.testing.assert_allclose(got, expected, atol=1e-5, err_msg=f"{mask_name}, block_size={block_size}")
        np.testing.assert_array_equal(got[1, :, 2], 0.0)  # the last mask's empty row: zero output, no NaN
    run = three_ways(lambda q, k, v: mt.tiled_attention(q, k, v, block_size=64))[mode]  # no mask, one tile
    np.testing.assert_allclose(numpy_of(run(q, k, v)), numpy_of(mt.scaled_dot_product_attention(q, k, v)[0]),
                               atol=1e-5)


def test_tiled_attention_with_scale_and_a_tile_that_is_all_masked(rng):
    q, k, v = attention_inputs(rng)
    mask = np.ones((B, 1, T, S), bool)
    mask[..., :5] = False  # the whole first tile of 5 keys is masked: the running maximum starts at the fill value
    expected = numpy_of(mt.scaled_dot_product_attention(q, k, v, mask, scale=1.0)[0])
    np.testing.assert_allclose(numpy_of(mt.tiled_attention(q, k, v, mask, block_size=5, scale=1.0)), expected,
                               atol=1e-5)


@pytest.mark.float16
def test_tiled_attention_in_float16(rng):
    q, k, v = attention_inputs(rng, "float16")
    for mask_name, mask in masks().items():
        expected = numpy_of(mt.scaled_dot_product_attention(q, k, v, mask)[0]).astype(np.float64)
        for block_size in (1, 5, 64):
            got = numpy_of(mt.tiled_attention(q, k, v, mask, block_size=block_size))
            assert got.dtype == np.float16 and np.all(np.isfinite(got))
            # float16 inputs: the reference multiplies in float16, the tiles in float32; a few float16 units.
            np.testing.assert_allclose(got.astype(np.float64), expected, atol=1e-2, err_msg=mask_name)


@pytest.mark.parametrize("mode", ["eager", "tf.function", "XLA"])
def test_tiled_attention_guards(mode, rng):
    q, k, v = attention_inputs(rng)
    for block_size in (0, -3, 2.0, True, "4", None):
        run = three_ways(lambda q, k, v: mt.tiled_attention(q, k, v, block_size=block_size))[mode]
        with pytest.raises(ValueError, match="block_size"):
            run(q, k, v)
    float_mask = np.ones((B, 1, 1, S), "float32")
    run = three_ways(lambda q, k, v, mask: mt.tiled_attention(q, k, v, mask))[mode]
    with pytest.raises(ValueError, match="mask has dtype float32"):
        run(q, k, v, float_mask)
    with pytest.raises(ValueError, match="does not broadcast"):
        run(q, k, v, np.ones((B, 1, 1, S + 1), bool))
    with pytest.raises(ValueError, match="same depth"):
        run(q[..., :4], k, v, np.ones((B, 1, 1, S), bool))


def test_tiled_attention_needs_a_known_number_of_keys(rng):
    spec = tf.TensorSpec((B, H, None, 8), "float32")
    traced = tf.function(lambda q, k, v: mt.tiled_attention(q, k, v), input_signature=[spec] * 3)
    with pytest.raises(ValueError, match="number of keys S known"):
        traced.get_concrete_function()
    fixed = tf.TensorSpec((B, H, S, 8), "float32")  # a fixed S (queries of any length) is fine
    traced = tf.function(lambda q, k, v: mt.tiled_attention(q, k, v, block_size=4),
                         input_signature=[spec, fixed, fixed])
    q, k, v = attention_inputs(rng)
    np.testing.assert_allclose(numpy_of(traced(q, k, v)), numpy_of(mt.scaled_dot_product_attention(q, k, v)[0]),
                               atol=1e-5)


# --- 6. A Llama-style model against KerasHub's LlamaBackbone ------------------------------------

LLAMA = dict(num_layers=2, d_model=32, num_heads=4, dff=48, vocab_size=50, num_key_value_heads=2)


def logits_of(model, tokens):
    return numpy_of(model(np.asarray(tokens, "int32"), training=False))


def copy_llama_into(model, backbone):
    """KerasHub's Llama weights into a MinGPT with LLAMA_STYLE: EinsumDense kernels flattened to Dense ones."""
    d = model.d_model
    model.embedding.embedding.embeddings.assign(backbone.token_embedding.embeddings)
    for ours, theirs in zip(model.decoder.stack, backbone.transformer_layers):
        attention = theirs._self_attention_layer
        pairs = [(ours.self_attention.wq, attention._query_dense), (ours.self_attention.wk, attention._key_dense),
                 (ours.self_attention.wv, attention._value_dense)]
        for dense, einsum in pairs:
            dense.kernel.assign(ops.reshape(einsum.kernel, (d, -1)))  # (D, heads, d_k) -> (D, heads d_k)
        ours.self_attention.wo.kernel.assign(ops.reshape(attention._output_dense.kernel, (-1, d)))  # (h, d_k, D)
        ours.ffn.inner.kernel.assign(theirs._feedforward_gate_dense.kernel)  # W_1, through silu
        ours.ffn.up.kernel.assign(theirs._feedforward_intermediate_dense.kernel)  # W_3
        ours.ffn.outer.kernel.assign(theirs._feedforward_output_dense.kernel)  # W_2
        ours.norm1.gamma.assign(theirs._self_attention_layernorm.scale)
        ours.norm3.gamma.assign(theirs._feedforward_layernorm.scale)
    model.decoder.final_norm.gamma.assign(backbone.layer_norm.scale)
    model.final_layer.kernel.assign(backbone.token_embedding.reverse_embeddings)  # (D, V): untied in 0.32


@pytest.fixture(scope="module")
def llama():
    """(KerasHub's LlamaBackbone with random weights, the half-layout MinGPT with them copied in)."""
    keras.utils.set_random_seed(3)
    rng = np.random.default_rng(3)
    c = LLAMA
    backbone = keras_hub.models.LlamaBackbone(
        vocabulary_size=c["vocab_size"], num_layers=c["num_layers"], num_query_heads=c["num_heads"],
        hidden_dim=c["d_model"], intermediate_dim=c["dff"], num_key_value_heads=c["num_key_value_heads"],
        rope_max_wavelength=10000, layer_norm_epsilon=1e-5, dtype="float32")
    randomize(backbone, rng, std=0.2)  # larger than Llama's 0.02: every weight matters to the logits
    model = mt.MinGPT(**c, max_length=16, dropout=0.0, rotary_layout="half", **mt.LLAMA_STYLE)
    model.build((None, None))
    copy_llama_into(model, backbone)
    return backbone, model


def keras_hub_logits(backbone, tokens):
    tokens = np.asarray(tokens, "int32")
    hidden = backbone({"token_ids": tokens, "padding_mask": np.ones_like(tokens)}, training=False)
    return numpy_of(backbone.token_embedding(hidden, reverse=True))


def test_keras_hub_llama_backbone_unties_its_output_and_counts_as_ours(llama):
    backbone, model = llama
    assert backbone.token_embedding.tie_weights is False  # keras-hub 0.32's default, tie_word_embeddings=False
    assert tuple(backbone.token_embedding.reverse_embeddings.shape) == (32, 50)
    assert backbone.count_params() == model.count_params() == mt.parameter_count(**LLAMA, max_length=16,
                                                                                  **mt.LLAMA_STYLE)
    assert len(backbone.weights) == len(model.weights)


def test_llama_style_mingpt_equals_keras_hub_llama_backbone(llama, rng):
    backbone, model = llama
    tokens = rng.integers(0, 50, size=(3, 12))  # no padding mask in either: id 0 is a token
    expected = keras_hub_logits(backbone, tokens)
    assert expected.std() > 0.3  # logits of some size: every layer contributes
    # Both in float32: the largest difference we measured is 2e-6 on logits up to 4.6 in size.
    np.testing.assert_allclose(logits_of(model, tokens), expected, rtol=0, atol=1e-4)


def test_the_interleaved_model_with_permuted_query_and_key_weights_is_the_same_model(llama, rng):
    """Meta's checkpoint (interleaved) becomes Hugging Face's and KerasHub's (half) by permuting each head's
    output features of W^Q and W^K with ``interleaved_to_half``; loaded without the permutation it is wrong."""
    _, half = llama
    p = mt.interleaved_to_half(half.d_model // half.num_heads)
    meta = mt.MinGPT(**LLAMA, max_length=16, dropout=0.0, rotary_layout="interleaved", **mt.LLAMA_STYLE)
    meta.build((None, None))
    meta.set_weights(half.get_weights())
    tokens = rng.integers(0, 50, size=(2, 12))
    mixed_up = logits_of(meta, tokens)
    for ours, theirs in zip(meta.decoder.stack, half.decoder.stack):
        for dense, converted in [(ours.self_attention.wq, theirs.self_attention.wq),
                                 (ours.self_attention.wk, theirs.self_attention.wk)]:
            kernel = numpy_of(converted.kernel).reshape(32, -1, len(p))  # (D, heads, d_k)
            meta_kernel = kernel[..., np.argsort(p)]  # the checkpoint Meta would have released
            np.testing.assert_array_equal(meta_kernel[..., p], kernel)  # HF's conversion gives it back
            dense.kernel.assign(meta_kernel.reshape(32, -1))
    expected = logits_of(half, tokens)
    np.testing.assert_allclose(logits_of(meta, tokens), expected, atol=1e-4)
    assert np.all(np.isfinite(mixed_up)) and np.abs(mixed_up - expected).max() > 0.1


# --- 7. The cache with every switch -------------------------------------------------------------

SWITCHES = {
    "rms": dict(norm="rms"),
    "rotary interleaved": dict(positions="rotary"),
    "rotary half": dict(positions="rotary", rotary_layout="half"),
    "swiglu": dict(activation="swiglu"),
    "h_kv=2": dict(num_key_value_heads=2),
    "h_kv=1": dict(num_key_value_heads=1),
    "no bias": dict(use_bias=False),
    "llama, h_kv=2, half": dict(mt.LLAMA_STYLE, num_key_value_heads=2, rotary_layout="half"),
    "llama, h_kv=1, interleaved": dict(mt.LLAMA_STYLE, num_key_value_heads=1),
    "llama, post-norm, tied": dict(mt.LLAMA_STYLE, norm_first=False, share_embeddings=True, num_key_value_heads=2),
}


@pytest.mark.parametrize("switches", SWITCHES, ids=list(SWITCHES))
def test_cached_decoding_equals_the_full_pass(switches, rng):
    keras.utils.set_random_seed(5)
    model = mt.MinGPT(2, 16, 4, 24, 13, 12, dropout=0.1, **SWITCHES[switches])
    tokens = rng.integers(1, 13, size=(2, 9)).astype("int32")  # no id 0: the default pad_id masks it
    model(tokens[:, :1])
    randomize(model, rng, std=0.3)
    full = logits_of(model, tokens)
    caches = model.start_cache(2, 12)
    kv_heads = SWITCHES[switches].get("num_key_value_heads") or 4
    for cache in caches:  # the cache holds h_kv heads
        assert tuple(cache["keys"].shape) == tuple(cache["values"].shape) == (2, kv_heads, 12, 4)
    for t in range(9):  # one token at a time
        logits, caches = model.decode_step(tokens[:, t:t + 1], t, caches)
        np.testing.assert_allclose(numpy_of(logits), full[:, t], atol=1e-4, err_msg=f"step {t}")
    last, caches = model.decode_step(tokens[:, :6], 0, model.start_cache(2, 12))  # a prefill of 6
    np.testing.assert_allclose(numpy_of(last), full[:, 5], atol=1e-4)
    for t in (6, 7):
        logits, caches = model.decode_step(tokens[:, t:t + 1], t, caches)
        np.testing.assert_allclose(numpy_of(logits), full[:, t], atol=1e-4)


def test_a_cached_step_under_xla_with_rotary_positions(llama, rng):
    _, model = llama
    tokens = rng.integers(0, 50, size=(2, 8)).astype("int32")
    full = logits_of(model, tokens)
    _, caches = model.decode_step(tokens[:, :5], 0, model.start_cache(2, 10))
    step = tf.function(model.decode_step, jit_compile=True)
    logits, caches = step(tokens[:, 5:7], tf.constant(5), caches)  # positions 5 and 6, traced
    np.testing.assert_allclose(numpy_of(logits), full[:, 6], atol=1e-4)
    assert tuple(caches[0]["keys"].shape) == (2, 2, 10, 8)  # h_kv = 2 of the 4 heads


@pytest.mark.float16
def test_llama_style_model_under_mixed_float16(llama, rng):
    """dtype="mixed_float16": float16 compute in every switch's layer (RMSNorm, rotary, grouped heads, SwiGLU),
    float32 logits close to the float32 model's with the same weights, a float16 cache of h_kv heads."""
    _, reference = llama
    model = mt.MinGPT(**LLAMA, max_length=16, dropout=0.0, rotary_layout="half", dtype="mixed_float16",
                      **mt.LLAMA_STYLE)
    tokens = rng.integers(0, 50, size=(2, 10)).astype("int32")
    model(tokens)
    model.set_weights(reference.get_weights())
    logits = model(tokens, training=False)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert all(layer.compute_dtype == "float16" for layer in model._flatten_layers(include_self=False))
    difference = np.abs(numpy_of(logits) - logits_of(reference, tokens)).max()
    assert difference < 0.05, difference  # float16 rounding through two layers, logits up to ~5
    caches = model.start_cache(2, 10)
    assert keras.backend.standardize_dtype(caches[0]["keys"].dtype) == "float16"
    assert tuple(caches[0]["keys"].shape) == (2, 2, 10, 8)
    step, _ = model.decode_step(tokens, 0, caches)
    np.testing.assert_allclose(numpy_of(step), numpy_of(logits)[:, -1], atol=0.05)


# --- 8. The parameter count ---------------------------------------------------------------------

COUNT_CONFIGS = [
    dict(),
    dict(norm_first=False),
    dict(share_embeddings=False),
    dict(positions="sinusoidal"),
    dict(positions="none", use_bias=False),
    dict(positions="rotary", norm="rms"),
    dict(activation="swiglu"),
    dict(activation="gelu", norm_first=False, share_embeddings=False),
    dict(num_key_value_heads=1),
    dict(num_key_value_heads=2, use_bias=False, share_embeddings=False),
    dict(mt.LLAMA_STYLE, num_key_value_heads=2),
    dict(mt.LLAMA_STYLE, norm_first=False, num_heads=2, num_key_value_heads=1, share_embeddings=True),
    dict(norm="rms", activation="swiglu", positions="learned", use_bias=False, num_key_value_heads=4),
]


@pytest.mark.parametrize("config", COUNT_CONFIGS, ids=[str(i) for i in range(len(COUNT_CONFIGS))])
def test_parameter_count_equals_the_built_models(config):
    config = dict(dict(num_layers=2, d_model=16, num_heads=4, dff=24, vocab_size=13, max_length=10), **config)
    model = mt.MinGPT(**config)
    model.build((None, None))
    assert mt.parameter_count(**config) == model.count_params()


def test_llama_2_7b_has_6_738_415_616_parameters():
    """Llama 2 7B (Touvron et al., 2023): 32 layers, d_model 4096, 32 heads, SwiGLU of width 11008,
    32,000 tokens, no biases, an untied output: 6,738,415,616 weights, the count of the released model."""
    config = dict(num_layers=32, d_model=4096, num_heads=32, dff=11008, vocab_size=32000, max_length=4096)
    assert mt.parameter_count(**config, **mt.LLAMA_STYLE) == 6_738_415_616
    # With 8 key/value heads (Llama 2 70B's grouping), W^K and W^V keep a quarter of their columns in every layer.
    grouped = mt.parameter_count(**config, **dict(mt.LLAMA_STYLE, num_key_value_heads=8))
    assert grouped == 6_738_415_616 - 32 * 2 * (4096 * 4096 - 4096 * 1024)


def test_parameter_count_refuses_unknown_switch_values():
    for bad in (dict(norm="RMS"), dict(positions="rotari"), dict(activation="swish")):
        with pytest.raises(ValueError):
            mt.parameter_count(2, 16, 4, 24, 13, 10, **bad)


# --- 9. The defaults: the paper's model, as before the switches --------------------------------

# Computed with the package at commit 0044b03, before chapter 13's switches existed.
BEFORE = {
    "MinGPT": [("embedding/token_embedding/embeddings", (11, 8)), ("embedding/position_embedding/embeddings", (6, 8))]
    + [(f"decoder/layer_0/{name}", shape) for name, shape in [
        ("self_attention/wq/kernel", (8, 8)), ("self_attention/wq/bias", (8,)),
        ("self_attention/wk/kernel", (8, 8)), ("self_attention/wk/bias", (8,)),
        ("self_attention/wv/kernel", (8, 8)), ("self_attention/wv/bias", (8,)),
        ("self_attention/wo/kernel", (8, 8)), ("self_attention/wo/bias", (8,)),
        ("ffn/inner/kernel", (8, 12)), ("ffn/inner/bias", (12,)), ("ffn/outer/kernel", (12, 8)),
        ("ffn/outer/bias", (8,)), ("norm1/gamma", (8,)), ("norm1/beta", (8,)), ("norm3/gamma", (8,)),
        ("norm3/beta", (8,))]]
    + [("decoder/final_norm/gamma", (8,)), ("decoder/final_norm/beta", (8,))],
    "MultiHeadAttention": [(f"{w}/{p}", (8, 8) if p == "kernel" else (8,)) for w in ("wq", "wk", "wv", "wo")
                           for p in ("kernel", "bias")],
    "FeedForward": [("inner/kernel", (8, 12)), ("inner/bias", (12,)), ("outer/kernel", (12, 8)),
                    ("outer/bias", (8,))],
}
BEFORE["DecoderLayer"] = (
    [(f"self_attention/{n}", s) for n, s in BEFORE["MultiHeadAttention"]]
    + [(f"cross_attention/{n}", s) for n, s in BEFORE["MultiHeadAttention"]]
    + [(f"ffn/{n}", s) for n, s in BEFORE["FeedForward"]]
    + [(f"norm{i}/{p}", (8,)) for i in (1, 2, 3) for p in ("gamma", "beta")])

NEW_KEYS = {
    "MinGPT": dict(norm="layer", activation="relu", num_key_value_heads=None, rotary_layout="interleaved",
                   use_bias=True),
    "DecoderLayer": dict(norm="layer", activation="relu", num_key_value_heads=None, rotary=None, use_bias=True),
    "MultiHeadAttention": dict(num_key_value_heads=None, rotary=None, rotary_base=10000.0, use_bias=True),
    "FeedForward": dict(activation="relu", use_bias=True),
}


def default_layers():
    model = mt.MinGPT(1, 8, 2, 12, 11, 6)
    model.build((None, None))
    layer = mt.DecoderLayer(8, 2, 12)
    layer.build((None, None, 8), (None, None, 8))
    attention = mt.MultiHeadAttention(8, 2)
    attention.build((None, None, 8))
    ffn = mt.FeedForward(8, 12)
    ffn.build((None, None, 8))
    return {"MinGPT": model, "DecoderLayer": layer, "MultiHeadAttention": attention, "FeedForward": ffn}


def test_defaults_keep_the_weight_names_and_shapes_and_config_round_trips():
    for name, layer in default_layers().items():
        assert [(w.path.split("/", 1)[1], tuple(w.shape)) for w in layer.weights] == BEFORE[name], name
        config = layer.get_config()
        assert {key: config[key] for key in NEW_KEYS[name]} == NEW_KEYS[name], name
        clone = type(layer).from_config(config)
        assert clone.get_config() == config, name
    decoder = mt.Decoder(1, 8, 2, 12).get_config()
    assert {key: decoder[key] for key in NEW_KEYS["DecoderLayer"]} == NEW_KEYS["DecoderLayer"]


def test_a_default_mingpt_draws_the_same_initial_weights_as_before():
    keras.utils.set_random_seed(0)
    model = mt.MinGPT(2, 16, 4, 32, 13, 24)
    model.build((None, None))
    total = sum(np.abs(numpy_of(w)).astype(np.float64).sum() for w in model.weights)
    np.testing.assert_allclose(total, 1134.6023409534318, rtol=1e-12)  # the same sum, from the package at 0044b03


def test_mingpt_with_every_new_switch_saves_and_loads_identically(rng, tmp_path):
    model = mt.MinGPT(**dict(LLAMA, num_key_value_heads=1), max_length=16, rotary_layout="interleaved",
                      **mt.LLAMA_STYLE)
    tokens = rng.integers(0, 50, size=(2, 7)).astype("int32")
    model(tokens)
    randomize(model, rng, std=0.2)
    expected = logits_of(model, tokens)
    model.save(tmp_path / "llama.keras")
    loaded = keras.saving.load_model(tmp_path / "llama.keras")
    assert type(loaded) is mt.MinGPT and loaded.get_config() == model.get_config()
    config = loaded.get_config()
    assert (config["norm"], config["positions"], config["activation"], config["num_key_value_heads"],
            config["rotary_layout"], config["use_bias"]) == ("rms", "rotary", "swiglu", 1, "interleaved", False)
    np.testing.assert_array_equal(logits_of(loaded, tokens), expected)

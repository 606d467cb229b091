"""Sinusoidal positional encoding (paper section 3.5) and the scaled embedding (section 3.4)."""

import math

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops


def paper_formula(length, depth):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...), one element at a time."""
    pe = [[0.0] * depth for _ in range(length)]
    for pos in range(length):
        for i in range(depth // 2):
            angle = pos / 10000 ** (2 * i / depth)
            pe[pos][2 * i] = math.sin(angle)
            pe[pos][2 * i + 1] = math.cos(angle)
    return np.array(pe)


@pytest.mark.parametrize("length, depth", [(5, 8), (50, 16), (7, 512)])
def test_equals_the_paper_formula_element_by_element(length, depth):
    pe = mt.positional_encoding(length, depth)
    assert pe.shape == (length, depth)
    assert pe.dtype == np.float32
    np.testing.assert_allclose(pe, paper_formula(length, depth), atol=1e-6)


def test_literal_values():
    pe = mt.positional_encoding(3, 4)
    # pos 0: sin 0 = 0, cos 0 = 1 for every pair.
    np.testing.assert_array_equal(pe[0], [0.0, 1.0, 0.0, 1.0])
    # pos 1, i = 0: sin(1), cos(1); i = 1: 10000^(2/4) = 100, so sin(0.01), cos(0.01).
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
                               rtol=1e-6)


def test_is_interleaved_not_the_concatenated_layout():
    length, depth = 10, 8
    pe = mt.positional_encoding(length, depth)
    angles = paper_formula(length, depth)  # interleaved
    concatenated = np.concatenate([angles[:, 0::2], angles[:, 1::2]], axis=-1)  # [sin..., cos...]
    assert not np.allclose(pe, concatenated, atol=1e-3)
    np.testing.assert_allclose(pe[:, 0::2], np.sin(np.arange(length)[:, None]
                                                   / 10000 ** (np.arange(0, depth, 2) / depth)),
                               atol=1e-6)


def test_sin_cos_pairs_have_unit_norm():
    pe = mt.positional_encoding(20, 16).astype(np.float64)
    np.testing.assert_allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0, atol=1e-6)


def test_positional_embedding_is_scaled_embedding_plus_encoding(rng):
    vocab, d_model, max_length = 11, 8, 9
    tokens = rng.integers(0, vocab, size=(2, 5))
    layer = mt.PositionalEmbedding(vocab, d_model, max_length)
    out = ops.convert_to_numpy(layer(tokens))
    embeddings = ops.convert_to_numpy(layer.embedding.embeddings)  # (V, D), read from the layer
    assert embeddings.shape == (vocab, d_model)
    expected = embeddings[tokens] * math.sqrt(d_model) + paper_formula(5, d_model)[None]
    assert out.shape == (2, 5, d_model)
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_positional_embedding_accepts_exactly_max_length():
    layer = mt.PositionalEmbedding(11, 8, max_length=6)
    out = ops.convert_to_numpy(layer(np.zeros((1, 6), "int32")))
    embedding = ops.convert_to_numpy(layer.embedding.embeddings)[0]
    np.testing.assert_allclose(out[0], embedding * math.sqrt(8) + paper_formula(6, 8), atol=1e-6)


def test_same_token_at_different_positions_differs_only_by_the_encoding():
    layer = mt.PositionalEmbedding(11, 8, max_length=6)
    out = ops.convert_to_numpy(layer(np.full((1, 4), 5)))
    np.testing.assert_allclose(out[0, 3] - out[0, 1],
                               paper_formula(4, 8)[3] - paper_formula(4, 8)[1], atol=1e-6)


@pytest.mark.parametrize("d_model", [64, 512])
def test_embeddings_start_with_std_d_model_to_the_minus_half(d_model):
    """The reference implementation's initialisation: E ~ N(0, 1/d_model), so sqrt(d_model) E
    has entries of RMS 1 at every width (chapter 7)."""
    keras.utils.set_random_seed(0)
    layer = mt.PositionalEmbedding(2000, d_model, max_length=8)
    layer(np.ones((1, 2), "int32"))
    table = keras.ops.convert_to_numpy(layer.embedding.embeddings)
    assert abs(table.mean()) < 0.1 * d_model**-0.5
    np.testing.assert_allclose(table.std() * np.sqrt(d_model), 1.0, rtol=0.02)


# Positions past the table: a clear error in eager mode and in a graph, NaN (never a plausible
# vector) under XLA, where nothing can be raised. Each guard in the three modes, for each kind of
# `position` a caller passes.

MAX_LEN = 4
MODES = ["eager", "graph", "xla"]
PAST_THE_TABLE = r"past 3, the last of max_length=4"


def _layer(positions="sinusoidal"):
    layer = mt.PositionalEmbedding(11, 8, max_length=MAX_LEN, positions=positions, name="emb")
    layer(np.ones((1, 1), "int32"))  # build
    return layer


def _run_call(layer, tokens, mode):
    """layer(tokens), eagerly or in a tf.function traced with an unknown batch and length."""
    if mode == "eager":
        return ops.convert_to_numpy(layer(tokens))
    import tensorflow as tf
    spec = [tf.TensorSpec([None, None], tf.int32)]
    return ops.convert_to_numpy(tf.function(lambda t: layer(t), input_signature=spec,
                                            jit_compile=mode == "xla")(tokens))


def _run_step(layer, tokens, position, kind, mode):
    """layer.embed_step(tokens, position), position as a Python int, a NumPy int or a tensor."""
    import tensorflow as tf
    position = {"python": int, "numpy": np.int64, "tensor": lambda p: tf.constant(p, tf.int32)}[kind](position)
    if mode == "eager":
        return ops.convert_to_numpy(layer.embed_step(tokens, position))
    if kind == "tensor":  # traced with an unknown position and length
        spec = [tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32)]
        step = tf.function(lambda t, p: layer.embed_step(t, p), input_signature=spec, jit_compile=mode == "xla")
        return ops.convert_to_numpy(step(tokens, position))
    spec = [tf.TensorSpec([None, None], tf.int32)]  # the position a constant of the graph
    step = tf.function(lambda t: layer.embed_step(t, position), input_signature=spec, jit_compile=mode == "xla")
    return ops.convert_to_numpy(step(tokens))


def _refused(run, mode, match):
    """In eager mode a ValueError, in a graph an InvalidArgumentError, both with the message;
    under XLA the result, which the caller checks for NaN."""
    import tensorflow as tf
    if mode == "xla":
        return run()
    error = ValueError if mode == "eager" else tf.errors.InvalidArgumentError
    with pytest.raises(error, match=match):
        run()
    return None


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "none"])
@pytest.mark.parametrize("mode", MODES)
def test_call_accepts_up_to_max_length_in_every_mode(positions, mode, rng):
    layer = _layer(positions)
    tokens = rng.integers(0, 11, size=(2, MAX_LEN)).astype("int32")
    expected = ops.convert_to_numpy(layer(tokens))
    np.testing.assert_allclose(_run_call(layer, tokens, mode), expected, atol=1e-6)
    assert np.isfinite(expected).all()


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "none"])
@pytest.mark.parametrize("mode", MODES)
def test_call_refuses_a_sequence_longer_than_max_length(positions, mode, rng):
    layer = _layer(positions)
    tokens = rng.integers(0, 11, size=(2, MAX_LEN + 2)).astype("int32")
    match = r"length 6 is longer than max_length=4" if mode == "eager" else PAST_THE_TABLE
    out = _refused(lambda: _run_call(layer, tokens, mode), mode, match)
    if mode == "xla":  # XLA drops the assertion: the rows past the table are NaN, the others right
        assert out.shape == (2, MAX_LEN + 2, 8)
        assert np.isnan(out[:, MAX_LEN:]).all()
        np.testing.assert_allclose(out[:, :MAX_LEN], ops.convert_to_numpy(layer(tokens[:, :MAX_LEN])), atol=1e-6)


@pytest.mark.parametrize("kind", ["python", "numpy", "tensor"])
@pytest.mark.parametrize("mode", MODES)
def test_embed_step_equals_the_full_pass_inside_the_table(kind, mode, rng):
    layer = _layer()
    tokens = rng.integers(0, 11, size=(2, MAX_LEN)).astype("int32")
    full = ops.convert_to_numpy(layer(tokens))
    for position in range(MAX_LEN):  # one token a step, the last one at position max_length - 1
        out = _run_step(layer, tokens[:, position:position + 1], position, kind, mode)
        np.testing.assert_allclose(out[:, 0], full[:, position], atol=1e-6)
    out = _run_step(layer, tokens[:, 1:], 1, kind, mode)  # several tokens, up to the last row
    np.testing.assert_allclose(out, full[:, 1:], atol=1e-6)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned"])
@pytest.mark.parametrize("kind", ["python", "numpy", "tensor"])
@pytest.mark.parametrize("mode", MODES)
def test_embed_step_refuses_positions_past_the_table(positions, kind, mode, rng):
    layer = _layer(positions)
    one = rng.integers(0, 11, size=(2, 1)).astype("int32")
    two = rng.integers(0, 11, size=(2, 2)).astype("int32")
    eager_match = {MAX_LEN: r"Position 4 is outside 0 to 3", MAX_LEN - 1: r"Positions 3 to 4 are outside 0 to 3"}
    for tokens, position in [(one, MAX_LEN), (two, MAX_LEN - 1)]:  # one step past; two, the second past
        match = eager_match[position] if mode == "eager" else PAST_THE_TABLE
        out = _refused(lambda: _run_step(layer, tokens, position, kind, mode), mode, match)
        if mode == "xla":
            assert np.isnan(out[:, -1]).all()  # never row 3 again, as XLA's clamped gather would give
            assert np.isfinite(out[:, :-1]).all()


@pytest.mark.parametrize("kind", ["python", "numpy", "tensor"])
@pytest.mark.parametrize("mode", MODES)
def test_embed_step_refuses_a_negative_position(kind, mode, rng):
    layer = _layer()
    tokens = rng.integers(0, 11, size=(2, 1)).astype("int32")
    if kind != "tensor" or mode == "eager":  # known when traced: a ValueError in every mode
        with pytest.raises(ValueError, match=r"Position -1 is outside 0 to 3"):
            _run_step(layer, tokens, -1, kind, mode)
        return
    out = _refused(lambda: _run_step(layer, tokens, -1, kind, mode), mode, r"a position is negative")
    if mode == "xla":
        assert np.isnan(out).all()


@pytest.mark.parametrize("kind", ["python", "numpy", "tensor", "bool"])
@pytest.mark.parametrize("mode", MODES)
def test_embed_step_refuses_a_position_that_is_not_an_integer(kind, mode, rng):
    """A float position would be cut down to a row (2.7 to row 2) without a word: a TypeError instead."""
    import tensorflow as tf
    layer = _layer()
    tokens = rng.integers(0, 11, size=(2, 1)).astype("int32")
    position = {"python": 2.7, "numpy": np.float32(2.7), "tensor": tf.constant(2.7), "bool": True}[kind]
    with pytest.raises(TypeError, match=r"position must be an integer"):
        if mode == "eager":
            layer.embed_step(tokens, position)
        elif kind == "tensor":  # traced with an unknown float position
            spec = [tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.float32)]
            tf.function(lambda t, p: layer.embed_step(t, p), input_signature=spec,
                        jit_compile=mode == "xla")(tokens, position)
        else:
            tf.function(lambda t: layer.embed_step(t, position), jit_compile=mode == "xla")(tokens)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_a_graph_traced_with_a_known_length_raises_the_value_error(jit_compile):
    import tensorflow as tf
    layer = _layer()
    with pytest.raises(ValueError, match=r"length 6 is longer than max_length=4"):
        tf.function(lambda t: layer(t), jit_compile=jit_compile)(np.ones((2, 6), "int32"))
    with pytest.raises(ValueError, match=r"Position 4 is outside 0 to 3"):
        tf.function(lambda t: layer.embed_step(t, 4), jit_compile=jit_compile)(np.ones((2, 1), "int32"))


def test_a_functional_model_of_unknown_length_refuses_a_long_batch():
    """predict traces the first batch's shape, then, for another length, an unknown one."""
    import tensorflow as tf
    tokens = keras.Input((None,), dtype="int32")
    model = keras.Model(tokens, mt.PositionalEmbedding(11, 8, max_length=MAX_LEN, name="emb")(tokens))
    assert model.predict(np.ones((2, MAX_LEN), "int32"), verbose=0).shape == (2, MAX_LEN, 8)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match=r"max_length=4"):
        model.predict(np.ones((2, 6), "int32"), verbose=0)


@pytest.mark.float16
@pytest.mark.parametrize("positions", ["sinusoidal", "learned"])
def test_dtype_reaches_the_sub_layers(positions):
    layer = mt.PositionalEmbedding(11, 8, max_length=MAX_LEN, positions=positions, dtype="mixed_float16")
    out = layer(np.ones((2, 3), "int32"))
    subs = [layer.embedding] + ([layer.position_embedding] if positions == "learned" else [])
    for sub in subs:
        assert sub.dtype_policy.name == "mixed_float16"
        assert sub.embeddings.dtype == "float32"  # variables stay float32 under a mixed policy
    assert out.dtype == "float16"
    reference = mt.PositionalEmbedding(11, 8, max_length=MAX_LEN, positions=positions)
    reference(np.ones((2, 3), "int32"))
    reference.set_weights(layer.get_weights())
    np.testing.assert_allclose(ops.convert_to_numpy(out).astype("float32"),
                               ops.convert_to_numpy(reference(np.ones((2, 3), "int32"))), atol=1e-2)

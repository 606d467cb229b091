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

"""Layer normalization against Keras's ``LayerNormalization`` and the NumPy formula."""

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops

B, T, D = 2, 5, 8
EPS = 1e-6


def numpy_layer_norm(x, gamma, beta, eps=EPS):
    """gamma * (x - mu) / sqrt(var + eps) + beta, biased variance (divide by D)."""
    x = np.asarray(x, np.float64)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


def buggy_layer_norm(x, gamma, beta, eps=EPS):
    """The common mistake: (x - mu) / (sigma + eps), with sigma the (biased) std."""
    x = np.asarray(x, np.float64)
    mu = x.mean(-1, keepdims=True)
    return gamma * (x - mu) / (x.std(-1, keepdims=True) + eps) + beta


def layer_with_random_gamma_beta(rng, x):
    layer = mt.LayerNormalization()
    layer(x)
    gamma = rng.normal(1.0, 0.5, size=D).astype("float32")
    beta = rng.normal(0.0, 0.5, size=D).astype("float32")
    layer.gamma.assign(gamma)
    layer.beta.assign(beta)
    return layer, gamma, beta


def test_equals_keras_layer_normalization(rng):
    x = (rng.normal(size=(B, T, D)) * 3 + 2).astype("float32")
    ours, gamma, beta = layer_with_random_gamma_beta(rng, x)
    theirs = keras.layers.LayerNormalization(epsilon=1e-6)
    theirs(x)
    theirs.gamma.assign(gamma)
    theirs.beta.assign(beta)
    np.testing.assert_allclose(ours(x), theirs(x), atol=1e-5)


def test_equals_numpy_formula_with_biased_variance(rng):
    x = (rng.normal(size=(B, T, D)) * 3 + 2).astype("float32")
    layer, gamma, beta = layer_with_random_gamma_beta(rng, x)
    np.testing.assert_allclose(layer(x), numpy_layer_norm(x, gamma, beta), atol=1e-5)
    # The unbiased variance (divide by D - 1) would give a visibly different answer.
    unbiased = gamma * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, ddof=1, keepdims=True)
                                                                 + EPS) + beta
    assert not np.allclose(layer(x), unbiased, atol=1e-3)


def test_default_gamma_one_beta_zero_gives_zero_mean_unit_variance(rng):
    x = (rng.normal(size=(B, T, D)) * 5 - 3).astype("float32")
    y = ops.convert_to_numpy(mt.LayerNormalization()(x)).astype(np.float64)
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-6)
    np.testing.assert_allclose(y.var(-1), 1.0, atol=1e-4)


def test_differs_from_sigma_plus_epsilon_when_variance_is_small(rng):
    # Features spread by ~1e-4: var ~ 1e-8, far below epsilon = 1e-6, so epsilon dominates
    # inside the square root: sqrt(var + eps) ~ 1e-3 while sigma + eps ~ 1e-4.
    x = (1e-4 * rng.normal(size=(B, T, D))).astype("float32")
    layer, gamma, beta = layer_with_random_gamma_beta(rng, x)
    y = ops.convert_to_numpy(layer(x))
    np.testing.assert_allclose(y, numpy_layer_norm(x, gamma, beta), atol=1e-5)
    buggy = buggy_layer_norm(x, gamma, beta)
    assert np.max(np.abs(y - buggy)) > 0.5
    # ...while on well-spread features the two nearly agree (why the bug goes unnoticed).
    x = rng.normal(size=(B, T, D)).astype("float32")
    np.testing.assert_allclose(layer(x), buggy_layer_norm(x, gamma, beta), atol=1e-4)


@pytest.mark.float16
def test_mixed_float16_keeps_float16_output_and_float32_weights(rng):
    x = (rng.normal(size=(B, T, D)) * 3 + 100).astype("float32")
    layer = mt.LayerNormalization(dtype="mixed_float16")
    layer(x)
    gamma = rng.normal(1.0, 0.5, size=D).astype("float32")
    beta = rng.normal(0.0, 0.5, size=D).astype("float32")
    layer.gamma.assign(gamma)
    layer.beta.assign(beta)
    assert keras.backend.standardize_dtype(layer.gamma.dtype) == "float32"
    y = layer(x)
    assert keras.backend.standardize_dtype(y.dtype) == "float16"
    x16 = x.astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(ops.convert_to_numpy(y).astype(np.float64),
                               numpy_layer_norm(x16, gamma, beta), atol=2e-2)


def test_weights_are_gamma_and_beta_of_width_d():
    layer = mt.LayerNormalization()
    layer.build((None, None, D))
    assert [w.name for w in layer.weights] == ["gamma", "beta"]
    assert all(tuple(w.shape) == (D,) for w in layer.weights)
    np.testing.assert_array_equal(layer.gamma, np.ones(D))
    np.testing.assert_array_equal(layer.beta, np.zeros(D))
    assert layer.epsilon == 1e-6

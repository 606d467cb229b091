"""Layer normalization (Ba et al. 2016), written from its formula."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="mintransformer")
class LayerNormalization(keras.layers.Layer):
    """LN(x) = gamma * (x - mu) / sqrt(sigma^2 + epsilon) + beta, over the feature axis.

    mu and sigma^2 are the mean and the biased (divide by D) variance of each
    position's D features; gamma starts at 1, beta at 0. Statistics are computed in
    float32 even under mixed precision. Equals ``keras.layers.LayerNormalization`` up to
    float32 rounding (on a constant row Keras's rearranged formula returns beta only to ~1e-4;
    this layer returns beta exactly).

    Args:
        epsilon: added to the variance, inside the square root.
    """

    def __init__(self, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # position-wise: the output keeps the input's padding mask
        self.epsilon = epsilon

    def build(self, input_shape):
        d = input_shape[-1]
        self.gamma = self.add_weight(shape=(d,), initializer="ones", name="gamma")
        self.beta = self.add_weight(shape=(d,), initializer="zeros", name="beta")

    def call(self, x):
        x32 = ops.cast(x, "float32")
        mu = ops.mean(x32, axis=-1, keepdims=True)  # (..., 1)
        var = ops.mean(ops.square(x32 - mu), axis=-1, keepdims=True)  # biased, (..., 1)
        x_hat = (x32 - mu) / ops.sqrt(var + self.epsilon)  # not (x - mu) / (sigma + eps)
        return ops.cast(x_hat, x.dtype) * ops.cast(self.gamma, x.dtype) + ops.cast(self.beta, x.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(epsilon=self.epsilon)
        return config


NORMS = ("layer", "rms")


@keras.saving.register_keras_serializable(package="mintransformer")
class RMSNormalization(keras.layers.Layer):
    """RMSNorm(x) = gamma * x / sqrt(mean(x^2) + epsilon), over the feature axis (Zhang and Sennrich, 2019).

    Layer norm without its two centring steps: no mean is subtracted before the statistics, and
    no beta is added after. One statistic per position (the mean square) instead of two, and one
    weight vector instead of two. Statistics are computed in float32 even under mixed precision.
    Equals ``keras.layers.RMSNormalization`` with the same ``epsilon`` and its ``scale`` copied into
    ``gamma`` (``tests/test_modern.py``).

    Args:
        epsilon: added to the mean square, inside the square root (as in Llama's code and Keras's
            layer; outside the root, ``x / (rms + epsilon)``, is another function).
    """

    def __init__(self, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # position-wise: the output keeps the input's padding mask
        self.epsilon = epsilon

    def build(self, input_shape):
        self.gamma = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="gamma")

    def call(self, x):
        x32 = ops.cast(x, "float32")
        mean_square = ops.mean(ops.square(x32), axis=-1, keepdims=True)  # (..., 1)
        x_hat = x32 * ops.rsqrt(mean_square + self.epsilon)  # epsilon inside the root
        return ops.cast(x_hat, x.dtype) * ops.cast(self.gamma, x.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(epsilon=self.epsilon)
        return config


def make_norm(norm, epsilon=1e-6, **kwargs):
    """A norm layer by name: ``"layer"`` (the paper's, ``LayerNormalization``) or ``"rms"`` (``RMSNormalization``)."""
    if norm not in NORMS:
        raise ValueError(f"norm={norm!r} must be one of {NORMS}.")
    return (LayerNormalization if norm == "layer" else RMSNormalization)(epsilon=epsilon, **kwargs)

"""The position-wise feed-forward network (paper section 3.3, equation 2)."""

import keras

from ._util import build_once


@keras.saving.register_keras_serializable(package="mintransformer")
class FeedForward(keras.layers.Layer):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to every position alone.

    Args:
        d_model: input and output width.
        dff: inner width (Keras-hub calls it ``intermediate_dim``).
        dropout: dropout rate on the inner activations.
    """

    def __init__(self, d_model, dff, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # position-wise: the output keeps the input's padding mask
        self.d_model = d_model
        self.dff = dff
        self.dropout = dropout
        policy = dict(dtype=self.dtype_policy)  # mixed precision reaches every sub-layer
        self.inner = keras.layers.Dense(dff, activation="relu", name="inner", **policy)
        self.inner_dropout = keras.layers.Dropout(dropout, **policy)
        self.outer = keras.layers.Dense(d_model, name="outer", **policy)

    def build(self, input_shape):
        build_once(self.inner, input_shape)
        build_once(self.outer, tuple(input_shape[:-1]) + (self.dff,))

    def call(self, x, training=False):
        h = self.inner(x)  # (B, T, dff)
        return self.outer(self.inner_dropout(h, training=training))  # (B, T, D)

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, dff=self.dff, dropout=self.dropout)
        return config

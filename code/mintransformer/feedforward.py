"""The position-wise feed-forward network (paper section 3.3, equation 2)."""

import keras

from ._util import build_once

ACTIVATIONS = ("relu", "swiglu")


@keras.saving.register_keras_serializable(package="mintransformer")
class FeedForward(keras.layers.Layer):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to every position alone.

    With ``activation="swiglu"``, the gated network of Shazeer (2020) that Llama uses:
    FFN_SwiGLU(x) = (Swish(x W_1) * (x W_3)) W_2, Swish(z) = z sigmoid(z) (Keras's ``silu``) and
    ``*`` elementwise. A third matrix, ``up`` (W_3), multiplies the gate ``inner`` (W_1): at the same
    ``dff`` it has 3/2 the parameters, so a model that keeps the count takes dff = 2/3 of ReLU's.

    Args:
        d_model: input and output width.
        dff: inner width (Keras-hub calls it ``intermediate_dim``).
        dropout: dropout rate on the inner activations.
        activation: ``"relu"`` (the paper's, the default) or ``"swiglu"``.
        use_bias: False leaves out the biases (Llama has none).
    """

    def __init__(self, d_model, dff, dropout=0.1, activation="relu", use_bias=True, **kwargs):
        super().__init__(**kwargs)
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} must be one of {ACTIVATIONS}.")
        self.supports_masking = True  # position-wise: the output keeps the input's padding mask
        self.d_model = d_model
        self.dff = dff
        self.dropout = dropout
        self.activation, self.use_bias = activation, use_bias
        policy = dict(dtype=self.dtype_policy, use_bias=use_bias)  # mixed precision reaches every sub-layer
        gate = "relu" if activation == "relu" else "silu"
        self.inner = keras.layers.Dense(dff, activation=gate, name="inner", **policy)  # W_1
        self.up = keras.layers.Dense(dff, name="up", **policy) if activation == "swiglu" else None  # W_3
        self.inner_dropout = keras.layers.Dropout(dropout, dtype=self.dtype_policy)
        self.outer = keras.layers.Dense(d_model, name="outer", **policy)  # W_2

    def build(self, input_shape):
        build_once(self.inner, input_shape)
        if self.up is not None:
            build_once(self.up, input_shape)
        build_once(self.outer, tuple(input_shape[:-1]) + (self.dff,))

    def call(self, x, training=False):
        h = self.inner(x)  # (B, T, dff)
        if self.up is not None:
            h = h * self.up(x)  # the gate times the linear branch
        return self.outer(self.inner_dropout(h, training=training))  # (B, T, D)

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, dff=self.dff, dropout=self.dropout, activation=self.activation,
                      use_bias=self.use_bias)
        return config

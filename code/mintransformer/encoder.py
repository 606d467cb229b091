"""The encoder layer and the encoder stack (paper section 3.1, Figure 1 left)."""

import keras

from ._util import build_once
from .feedforward import FeedForward
from .layernorm import LayerNormalization
from .multihead import MultiHeadAttention


def residual(x, sublayer, norm, dropout, norm_first, training=False):
    """Run one sub-layer inside its residual connection (paper sections 3.1 and 5.4).

    Post-norm (the paper): x' = LayerNorm(x + Dropout(Sublayer(x))).
    Pre-norm:              x' = x + Dropout(Sublayer(LayerNorm(x))).

    The one place where the two orders differ: every sub-layer of the encoder and decoder
    layers goes through it. ``sublayer`` maps its input (B, T, D) to ``(y, extra)``, its output
    and whatever else it computed (attention weights, keys and values), returned with x'.
    """
    y, extra = sublayer(norm(x) if norm_first else x)
    y = dropout(y, training=training)
    return (x + y if norm_first else norm(x + y)), extra


@keras.saving.register_keras_serializable(package="mintransformer")
class EncoderLayer(keras.layers.Layer):
    """Self-attention then a feed-forward network, each wrapped in residual + layer norm.

    Args:
        d_model, num_heads, dff: widths, as in the paper.
        dropout: rate of the residual dropout (and inside attention and the FFN).
        norm_first: False = the paper's post-norm; True = pre-norm.
        key_dim, scale_attention: the attention's d_k and whether it divides by sqrt(d_k)
            (``MultiHeadAttention``'s ``key_dim`` and ``scaled``; chapter 10 varies them).

    Call:
        x (B, S, D), mask broadcastable to (B, h, S, S) -> (B, S, D)
        [, attention weights (B, h, S, S)].
    """

    def __init__(self, d_model, num_heads, dff, dropout=0.1, norm_first=False, key_dim=None,
                 scale_attention=True, **kwargs):
        super().__init__(**kwargs)
        # Masks are explicit `mask=` arguments, never Keras's implicit masks: declaring
        # support (and computing none) stops Keras from warning that it drops them.
        self.supports_masking = True
        self.d_model, self.num_heads, self.dff = d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.key_dim, self.scale_attention = key_dim, scale_attention
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout, key_dim, scale_attention,
                                                 name="self_attention")
        self.ffn = FeedForward(d_model, dff, dropout, name="ffn")
        self.norm1 = LayerNormalization(name="norm1")
        self.norm2 = LayerNormalization(name="norm2")
        self.residual_dropout = keras.layers.Dropout(dropout)

    def build(self, input_shape):
        build_once(self.self_attention, input_shape, input_shape, input_shape)
        build_once(self.ffn, input_shape)
        build_once(self.norm1, input_shape)
        build_once(self.norm2, input_shape)

    def call(self, x, mask=None, training=False, return_attention_scores=False):
        def self_attention(h):  # 1. every position attends to every (non-pad) position
            return self.self_attention(h, h, h, mask=mask, training=training, return_attention_scores=True)

        def feed_forward(h):  # 2. the position-wise feed-forward network
            return self.ffn(h, training=training), None

        x, weights = residual(x, self_attention, self.norm1, self.residual_dropout, self.norm_first, training)
        x, _ = residual(x, feed_forward, self.norm2, self.residual_dropout, self.norm_first, training)
        return (x, weights) if return_attention_scores else x  # (B, S, D) [, (B, h, S, S)]

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def get_config(self):
        config = super().get_config()
        config.update(
            d_model=self.d_model, num_heads=self.num_heads, dff=self.dff,
            dropout=self.dropout, norm_first=self.norm_first,
            key_dim=self.key_dim, scale_attention=self.scale_attention,
        )
        return config


@keras.saving.register_keras_serializable(package="mintransformer")
class Encoder(keras.layers.Layer):
    """A stack of ``num_layers`` encoder layers over embedded inputs.

    With ``norm_first=True`` a final layer norm closes the stack (pre-norm layers leave
    their output unnormalized).

    Call:
        x (B, S, D), mask -> (B, S, D) [, list of num_layers weights (B, h, S, S)].
    """

    def __init__(self, num_layers, d_model, num_heads, dff, dropout=0.1, norm_first=False, key_dim=None,
                 scale_attention=True, **kwargs):
        super().__init__(**kwargs)
        # Masks are explicit `mask=` arguments, never Keras's implicit masks: declaring
        # support (and computing none) stops Keras from warning that it drops them.
        self.supports_masking = True
        self.num_layers, self.d_model, self.num_heads, self.dff = num_layers, d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.key_dim, self.scale_attention = key_dim, scale_attention
        self.stack = [
            EncoderLayer(d_model, num_heads, dff, dropout, norm_first, key_dim, scale_attention, name=f"layer_{i}")
            for i in range(num_layers)
        ]
        self.final_norm = LayerNormalization(name="final_norm") if norm_first else None

    def build(self, input_shape):
        for layer in self.stack:
            build_once(layer, input_shape)
        if self.final_norm is not None:
            build_once(self.final_norm, input_shape)

    def call(self, x, mask=None, training=False, return_attention_scores=False):
        all_weights = []
        for layer in self.stack:
            x, weights = layer(x, mask=mask, training=training, return_attention_scores=True)
            all_weights.append(weights)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return (x, all_weights) if return_attention_scores else x

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers, d_model=self.d_model, num_heads=self.num_heads,
            dff=self.dff, dropout=self.dropout, norm_first=self.norm_first,
            key_dim=self.key_dim, scale_attention=self.scale_attention,
        )
        return config

"""The decoder layer and the decoder stack (paper section 3.1, Figure 1 right)."""

import keras

from .encoder import residual
from .feedforward import FeedForward
from .layernorm import LayerNormalization
from .multihead import MultiHeadAttention


@keras.saving.register_keras_serializable(package="mintransformer")
class DecoderLayer(keras.layers.Layer):
    """Masked self-attention, encoder-decoder (cross) attention, then a feed-forward network.

    Each sub-layer is wrapped in residual + layer norm. In cross-attention the queries
    come from the decoder and the keys and values from the encoder output ``context``.

    Args:
        d_model, num_heads, dff: widths, as in the paper.
        dropout: residual dropout rate (and inside attention and the FFN).
        norm_first: False = the paper's post-norm; True = pre-norm.

    Call:
        x (B, T, D), context (B, S, D), self_mask broadcastable to (B, h, T, T)
        (look-ahead AND target padding), cross_mask broadcastable to (B, h, T, S)
        (source padding) -> (B, T, D) [, (self weights (B, h, T, T), cross weights (B, h, T, S))].
    """

    def __init__(self, d_model, num_heads, dff, dropout=0.1, norm_first=False, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.num_heads, self.dff = d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout, name="self_attention")
        self.cross_attention = MultiHeadAttention(d_model, num_heads, dropout, name="cross_attention")
        self.ffn = FeedForward(d_model, dff, dropout, name="ffn")
        self.norm1 = LayerNormalization(name="norm1")
        self.norm2 = LayerNormalization(name="norm2")
        self.norm3 = LayerNormalization(name="norm3")
        self.residual_dropout = keras.layers.Dropout(dropout)

    def build(self, x_shape, context_shape):
        self.self_attention.build(x_shape, x_shape, x_shape)
        self.cross_attention.build(x_shape, context_shape, context_shape)
        self.ffn.build(x_shape)
        for norm in (self.norm1, self.norm2, self.norm3):
            norm.build(x_shape)

    def call(self, x, context, self_mask=None, cross_mask=None, training=False,
             return_attention_scores=False):
        # 1. Masked self-attention: position t sees target positions <= t only.
        h = self.norm1(x) if self.norm_first else x
        y, self_weights = self.self_attention(
            h, h, h, mask=self_mask, training=training, return_attention_scores=True
        )  # (B, T, D), (B, h, T, T)
        x = residual(x, y, self.norm1, self.residual_dropout, self.norm_first, training)
        # 2. Cross-attention: decoder queries, encoder keys and values.
        h = self.norm2(x) if self.norm_first else x
        y, cross_weights = self.cross_attention(
            h, context, context, mask=cross_mask, training=training, return_attention_scores=True
        )  # (B, T, D), (B, h, T, S)
        x = residual(x, y, self.norm2, self.residual_dropout, self.norm_first, training)
        # 3. Position-wise feed-forward network.
        h = self.norm3(x) if self.norm_first else x
        y = self.ffn(h, training=training)
        x = residual(x, y, self.norm3, self.residual_dropout, self.norm_first, training)
        return (x, (self_weights, cross_weights)) if return_attention_scores else x

    def get_config(self):
        config = super().get_config()
        config.update(
            d_model=self.d_model, num_heads=self.num_heads, dff=self.dff,
            dropout=self.dropout, norm_first=self.norm_first,
        )
        return config


@keras.saving.register_keras_serializable(package="mintransformer")
class Decoder(keras.layers.Layer):
    """A stack of ``num_layers`` decoder layers over embedded targets.

    With ``norm_first=True`` a final layer norm closes the stack.

    Call:
        x (B, T, D), context (B, S, D), self_mask, cross_mask -> (B, T, D)
        [, list of num_layers (self weights, cross weights)].
    """

    def __init__(self, num_layers, d_model, num_heads, dff, dropout=0.1, norm_first=False, **kwargs):
        super().__init__(**kwargs)
        self.num_layers, self.d_model, self.num_heads, self.dff = num_layers, d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.stack = [
            DecoderLayer(d_model, num_heads, dff, dropout, norm_first, name=f"layer_{i}")
            for i in range(num_layers)
        ]
        self.final_norm = LayerNormalization(name="final_norm") if norm_first else None

    def build(self, x_shape, context_shape):
        for layer in self.stack:
            layer.build(x_shape, context_shape)
        if self.final_norm is not None:
            self.final_norm.build(x_shape)

    def call(self, x, context, self_mask=None, cross_mask=None, training=False,
             return_attention_scores=False):
        all_weights = []
        for layer in self.stack:
            x, weights = layer(
                x, context, self_mask=self_mask, cross_mask=cross_mask, training=training,
                return_attention_scores=True,
            )
            all_weights.append(weights)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return (x, all_weights) if return_attention_scores else x

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers, d_model=self.d_model, num_heads=self.num_heads,
            dff=self.dff, dropout=self.dropout, norm_first=self.norm_first,
        )
        return config

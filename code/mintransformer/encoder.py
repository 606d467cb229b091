"""The encoder layer and the encoder stack (paper section 3.1, Figure 1 left)."""

import keras

from ._util import build_once
from .feedforward import FeedForward
from .layernorm import LayerNormalization
from .masks import keras_padding, merge_padding
from .multihead import MultiHeadAttention
from .sublayer import residual


@keras.saving.register_keras_serializable(package="mintransformer")
class EncoderLayer(keras.layers.Layer):
    """Self-attention then a feed-forward network, each wrapped in residual + layer norm.

    Args:
        d_model, num_heads, dff: widths, as in the paper.
        dropout: rate of the residual dropout (and inside attention and the FFN).
        norm_first: False = the paper's post-norm; True = pre-norm.
        key_dim, scale_attention: the attention's d_k and whether it divides by sqrt(d_k)
            (``MultiHeadAttention``'s own arguments; chapter 11 varies them).

    Call:
        x (B, S, D), attention_mask broadcastable to (B, h, S, S) -> (B, S, D)
        [, attention weights (B, h, S, S)].

        Masks follow Keras's convention (KerasHub's ``TransformerEncoder`` too):
        ``attention_mask`` is pairwise, ``True`` = may attend; ``padding_mask`` (B, S) says which
        positions hold a real token and masks the others as keys. Without ``padding_mask``, the
        mask Keras attached to ``x`` (from ``Embedding(mask_zero=True)``) is used.
    """

    def __init__(self, d_model, num_heads, dff, dropout=0.1, norm_first=False, key_dim=None,
                 scale_attention=True, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # the output keeps the input's padding mask
        self.d_model, self.num_heads, self.dff = d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.key_dim, self.scale_attention = key_dim, scale_attention
        policy = dict(dtype=self.dtype_policy)  # mixed precision reaches every sub-layer
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout, key_dim, scale_attention,
                                                 name="self_attention", **policy)
        self.ffn = FeedForward(d_model, dff, dropout, name="ffn", **policy)
        self.norm1 = LayerNormalization(name="norm1", **policy)
        self.norm2 = LayerNormalization(name="norm2", **policy)
        self.residual_dropout = keras.layers.Dropout(dropout, **policy)

    def build(self, input_shape):
        build_once(self.self_attention, input_shape, input_shape, input_shape)
        build_once(self.ffn, input_shape)
        build_once(self.norm1, input_shape)
        build_once(self.norm2, input_shape)

    def call(self, x, attention_mask=None, padding_mask=None, training=False, return_attention_scores=False):
        padding = keras_padding(x) if padding_mask is None else padding_mask  # (B, S) or None
        attention_mask = merge_padding(attention_mask, padding)

        def self_attention(h):  # 1. every position attends to every (non-pad) position
            return self.self_attention(h, h, h, attention_mask=attention_mask, training=training,
                                       return_attention_scores=True)

        def feed_forward(h):  # 2. the position-wise feed-forward network
            return self.ffn(h, training=training), None

        x, weights = residual(x, self_attention, self.norm1, self.residual_dropout, self.norm_first, training)
        x, _ = residual(x, feed_forward, self.norm2, self.residual_dropout, self.norm_first, training)
        return (x, weights) if return_attention_scores else x  # (B, S, D) [, (B, h, S, S)]

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
        x (B, S, D), attention_mask, padding_mask (as ``EncoderLayer``) -> (B, S, D)
        [, list of num_layers weights (B, h, S, S)].
    """

    def __init__(self, num_layers, d_model, num_heads, dff, dropout=0.1, norm_first=False, key_dim=None,
                 scale_attention=True, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # the output keeps the input's padding mask
        self.num_layers, self.d_model, self.num_heads, self.dff = num_layers, d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.key_dim, self.scale_attention = key_dim, scale_attention
        policy = dict(dtype=self.dtype_policy)  # mixed precision reaches every layer
        self.stack = [
            EncoderLayer(d_model, num_heads, dff, dropout, norm_first, key_dim, scale_attention, name=f"layer_{i}",
                         **policy)
            for i in range(num_layers)
        ]
        self.final_norm = LayerNormalization(name="final_norm", **policy) if norm_first else None

    def build(self, input_shape):
        for layer in self.stack:
            build_once(layer, input_shape)
        if self.final_norm is not None:
            build_once(self.final_norm, input_shape)

    def call(self, x, attention_mask=None, padding_mask=None, training=False, return_attention_scores=False):
        padding = keras_padding(x) if padding_mask is None else padding_mask  # (B, S) or None
        attention_mask = merge_padding(attention_mask, padding)
        all_weights = []
        for layer in self.stack:
            x, weights = layer(x, attention_mask=attention_mask, training=training, return_attention_scores=True)
            all_weights.append(weights)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return (x, all_weights) if return_attention_scores else x

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers, d_model=self.d_model, num_heads=self.num_heads,
            dff=self.dff, dropout=self.dropout, norm_first=self.norm_first,
            key_dim=self.key_dim, scale_attention=self.scale_attention,
        )
        return config

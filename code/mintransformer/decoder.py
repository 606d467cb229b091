"""The decoder layer and the decoder stack (paper section 3.1, Figure 1 right)."""

import keras
import tensorflow as tf
from keras import ops

from ._util import build_once
from .feedforward import FeedForward
from .layernorm import make_norm
from .masks import attends_causally, keras_padding, merge_padding
from .multihead import MultiHeadAttention
from .sublayer import residual


@keras.saving.register_keras_serializable(package="mintransformer")
class DecoderLayer(keras.layers.Layer):
    """Masked self-attention, encoder-decoder (cross) attention, then a feed-forward network.

    Each sub-layer is wrapped in residual + layer norm. In cross-attention the queries
    come from the decoder and the keys and values from the encoder output ``context``.

    Args:
        d_model, num_heads, dff: widths, as in the paper.
        dropout: residual dropout rate (and inside attention and the FFN).
        norm_first: False = the paper's post-norm; True = pre-norm.
        key_dim, scale_attention: both attentions' d_k and whether they divide by sqrt(d_k)
            (``MultiHeadAttention``'s own arguments; chapter 11 varies them).
        cross_attention: False leaves out sub-layer 2 (and its norm): the block of a
            decoder-only model such as GPT (``MinGPT``, chapter 12), which has no encoder.
            ``context`` and ``cross_mask`` are then ignored.
        norm: ``"layer"`` (the paper's ``LayerNormalization``, the default) or ``"rms"``
            (``RMSNormalization``), for every norm of the layer.
        activation, use_bias: the feed-forward network's (``FeedForward``); ``use_bias`` also
            for the attentions' projections.
        num_key_value_heads, rotary: self-attention's grouped keys and values and its rotary
            positions (``MultiHeadAttention``; chapter 13). Cross-attention keeps h key/value
            heads and no rotation.

    Call:
        x (B, T, D), context (B, S, D), self_mask broadcastable to (B, h, T, T)
        (look-ahead AND target padding), cross_mask broadcastable to (B, h, T, S)
        (source padding) -> (B, T, D) [, (self weights (B, h, T, T), cross weights (B, h, T, S))].
        Padding masks that Keras attached to ``x`` or ``context`` (from
        ``Embedding(mask_zero=True)``) also mask those key positions, as in KerasHub's
        ``TransformerDecoder``.
    """

    def __init__(self, d_model, num_heads, dff, dropout=0.1, norm_first=False, key_dim=None,
                 scale_attention=True, cross_attention=True, norm="layer", activation="relu",
                 num_key_value_heads=None, rotary=None, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.num_heads, self.dff = d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.key_dim, self.scale_attention = key_dim, scale_attention
        self.norm, self.activation, self.use_bias = norm, activation, use_bias
        self.num_key_value_heads, self.rotary = num_key_value_heads, rotary
        self.supports_masking = True  # the output keeps the input's padding mask
        policy = dict(dtype=self.dtype_policy)  # mixed precision reaches every sub-layer
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout, key_dim, scale_attention,
                                                 num_key_value_heads=num_key_value_heads, rotary=rotary,
                                                 use_bias=use_bias, name="self_attention", **policy)
        self.cross_attention = MultiHeadAttention(
            d_model, num_heads, dropout, key_dim, scale_attention, use_bias=use_bias, name="cross_attention",
            **policy
        ) if cross_attention else None
        self.ffn = FeedForward(d_model, dff, dropout, activation=activation, use_bias=use_bias, name="ffn", **policy)
        self.norm1 = make_norm(norm, name="norm1", **policy)
        self.norm2 = make_norm(norm, name="norm2", **policy) if cross_attention else None
        self.norm3 = make_norm(norm, name="norm3", **policy)
        self.residual_dropout = keras.layers.Dropout(dropout, **policy)

    def build(self, x_shape, context_shape=None):
        context_shape = x_shape if context_shape is None else context_shape  # a step has no context
        build_once(self.self_attention, x_shape, x_shape, x_shape)
        if self.cross_attention is not None:
            build_once(self.cross_attention, x_shape, context_shape, context_shape)
        build_once(self.ffn, x_shape)
        for norm in (self.norm1, self.norm2, self.norm3):
            if norm is not None:
                build_once(norm, x_shape)

    def call(self, x, context, self_mask=None, cross_mask=None, training=False,
             return_attention_scores=False, cache=None, position=None):
        """The full pass over all T positions, or, with ``cache``, a decoding step.

        With ``cache`` (see ``step``), ``x`` holds the new position(s) from ``position`` on:
        their keys and values are written into the cache's buffers, self-attention runs over
        the whole buffer (``self_mask`` says which slots to see), cross-attention uses the
        cached encoder keys and values (``context`` is not read), and the result is
        ``(x, updated cache)``. The same three sub-layers serve both.
        """
        if cache is None:  # Keras's own padding masks, if any, mask those keys too
            self_mask = merge_padding(self_mask, keras_padding(x))
            cross_mask = merge_padding(cross_mask, keras_padding(context))
        # The positions of x's rows (rotary attention rotates by them): 0 .. T - 1, or from ``position`` on.
        positions = None if cache is None else ops.cast(position, "int32") + ops.arange(ops.shape(x)[1])

        def self_attention(h):  # 1. masked self-attention: position t sees target positions <= t
            keys, values = self.self_attention.project_key_value(h, h, positions)  # (B, h_kv, T, d_k | d_v)
            if cache is not None:  # decoding: write them into their slots, attend to the buffer
                keys = ops.slice_update(cache["keys"], (0, 0, position, 0), keys)  # (B, h_kv, L, d_k)
                values = ops.slice_update(cache["values"], (0, 0, position, 0), values)
            y, weights = self.self_attention.attend(h, keys, values, attention_mask=self_mask, training=training,
                                                    positions=positions)
            return y, (weights, keys, values)  # (B, T, D), (B, h, T, T or L)

        def cross_attention(h):  # 2. decoder queries; encoder keys and values
            if cache is None:
                keys, values = self.cross_attention.project_key_value(context, context)  # (B, h, S, d_k | d_v)
            else:  # computed once per source (Decoder.start_cache)
                keys, values = cache["cross_keys"], cache["cross_values"]
            return self.cross_attention.attend(h, keys, values, attention_mask=cross_mask, training=training)

        def feed_forward(h):  # 3. the position-wise feed-forward network
            return self.ffn(h, training=training), None

        x, (self_weights, keys, values) = residual(
            x, self_attention, self.norm1, self.residual_dropout, self.norm_first, training)
        cross_weights = None
        if self.cross_attention is not None:
            x, cross_weights = residual(x, cross_attention, self.norm2, self.residual_dropout, self.norm_first,
                                        training)
        x, _ = residual(x, feed_forward, self.norm3, self.residual_dropout, self.norm_first, training)
        if cache is not None:
            return x, dict(cache, keys=keys, values=values)
        return (x, (self_weights, cross_weights)) if return_attention_scores else x

    def step(self, x, cache, position, cross_mask=None, is_token=None):
        """Decode new positions with a key/value cache (same result as the full ``call``).

        Usually one position; several at once process a prompt in one pass ("prefill").

        Args:
            x: the new positions' input, (B, n, D), standing at ``position``, ..., ``position + n - 1``.
            cache: dict with this layer's self-attention ``keys``/``values`` buffers
                (B, h, L, d_k)/(B, h, L, d_v) holding positions < ``position``, ``is_token``
                (B, L), which of those positions hold a real token rather than padding, and the
                cross-attention ``cross_keys``/``cross_values`` (B, h, S, d_k)/(B, h, S, d_v),
                computed once per source.
            position: index of the first new position (scalar).
            cross_mask: source padding mask, broadcastable to (B, h, n, S).
            is_token: (B, n) boolean, False where a new position is padding; None = all real.

        Returns:
            ``(output (B, n, D), new cache)``: the new keys/values written from ``position`` on.
            The self-attention mask is the same as ``decoder_self_mask`` in ``call``: the new
            position ``position + i`` sees the keys at positions <= ``position + i`` that are
            not padding.
        """
        if is_token is None:
            is_token = ops.ones(ops.shape(x)[:2], dtype="bool")
        tokens = ops.slice_update(cache["is_token"], (0, position), is_token)  # (B, L)
        slots = ops.arange(ops.shape(tokens)[1])  # (L,)
        queries = position + ops.arange(ops.shape(x)[1])  # (n,) positions of the new tokens
        causal = attends_causally(queries, slots)  # (n, L)
        seen = ops.logical_and(causal[None], tokens[:, None, :])  # (B, n, L)
        x, cache = self(x, None, self_mask=seen[:, None], cross_mask=cross_mask,
                        cache=cache, position=position)  # mask (B, 1, n, L)
        return x, dict(cache, is_token=tokens)

    def get_config(self):
        config = super().get_config()
        config.update(
            d_model=self.d_model, num_heads=self.num_heads, dff=self.dff,
            dropout=self.dropout, norm_first=self.norm_first,
            key_dim=self.key_dim, scale_attention=self.scale_attention,
            cross_attention=self.cross_attention is not None, norm=self.norm, activation=self.activation,
            num_key_value_heads=self.num_key_value_heads, rotary=self.rotary, use_bias=self.use_bias,
        )
        return config


@keras.saving.register_keras_serializable(package="mintransformer")
class Decoder(keras.layers.Layer):
    """A stack of ``num_layers`` decoder layers over embedded targets.

    With ``norm_first=True`` a final layer norm closes the stack. With
    ``cross_attention=False`` its layers have no cross-attention (a decoder-only model's stack),
    and ``context`` may be None.

    Call:
        x (B, T, D), context (B, S, D), self_mask, cross_mask -> (B, T, D)
        [, list of num_layers (self weights, cross weights or None)].
    """

    def __init__(self, num_layers, d_model, num_heads, dff, dropout=0.1, norm_first=False, key_dim=None,
                 scale_attention=True, cross_attention=True, norm="layer", activation="relu",
                 num_key_value_heads=None, rotary=None, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        self.num_layers, self.d_model, self.num_heads, self.dff = num_layers, d_model, num_heads, dff
        self.dropout, self.norm_first = dropout, norm_first
        self.key_dim, self.scale_attention, self.cross_attention = key_dim, scale_attention, cross_attention
        self.norm, self.activation, self.use_bias = norm, activation, use_bias
        self.num_key_value_heads, self.rotary = num_key_value_heads, rotary
        self.supports_masking = True  # the output keeps the input's padding mask
        policy = dict(dtype=self.dtype_policy)  # mixed precision reaches every layer
        self.stack = [
            DecoderLayer(d_model, num_heads, dff, dropout, norm_first, key_dim, scale_attention, cross_attention,
                         norm=norm, activation=activation, num_key_value_heads=num_key_value_heads, rotary=rotary,
                         use_bias=use_bias, name=f"layer_{i}", **policy)
            for i in range(num_layers)
        ]
        self.final_norm = make_norm(norm, name="final_norm", **policy) if norm_first else None

    def build(self, x_shape, context_shape=None):
        for layer in self.stack:
            build_once(layer, x_shape, context_shape)
        if self.final_norm is not None:
            build_once(self.final_norm, x_shape)

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

    def start_cache(self, context, max_length, batch_size=None):
        """Per-layer caches for decoding up to ``max_length`` positions against ``context`` (B, S, D).

        Cross-attention keys and values depend only on the source, so they are computed here,
        once; self-attention buffers start as zeros and fill one position per step, and
        ``is_token`` records which filled positions hold a real token (not padding). A stack
        without cross-attention has no ``context``: pass None and ``batch_size`` instead.
        """
        batch = ops.shape(context)[0] if context is not None else batch_size
        caches = []
        for layer in self.stack:
            attention, dtype = layer.self_attention, layer.self_attention.compute_dtype
            heads = attention.num_kv_heads  # h, or h_kv with grouped-query attention
            cache = dict(
                keys=ops.zeros((batch, heads, max_length, attention.d_k), dtype),  # (B, h_kv, L, d_k)
                values=ops.zeros((batch, heads, max_length, attention.d_v), dtype),  # (B, h_kv, L, d_v)
                is_token=ops.zeros((batch, max_length), dtype="bool"),  # (B, L)
            )
            if layer.cross_attention is not None:
                cache["cross_keys"], cache["cross_values"] = layer.cross_attention.project_key_value(context, context)
            caches.append(cache)
        return caches

    def step(self, x, caches, position, cross_mask=None, is_token=None):
        """One decoding step through every layer: x (B, n, D) -> (B, n, D), updated caches.

        ``is_token`` (B, n): False where a new position is padding (see ``DecoderLayer.step``).
        """
        slots, n = caches[0]["keys"].shape[2], x.shape[1]
        first = tf.get_static_value(position)  # a Python or NumPy int, an eager tensor: checked here
        first = None if first is None else int(first)  # None: traced in a graph, poisoned below
        if first is not None and slots is not None and n is not None and not 0 <= first <= slots - n:
            raise ValueError(f"positions {first} to {first + n - 1} do not fit: the cache holds {slots} "
                             "positions (0 to {}); make it longer with start_cache.".format(slots - 1))
        new_caches = []
        for layer, cache in zip(self.stack, caches):
            x, cache = layer.step(x, cache, position, cross_mask=cross_mask, is_token=is_token)
            new_caches.append(cache)
        if self.final_norm is not None:
            x = self.final_norm(x)
        if first is None:
            # Past the end the cache write is clamped to the last slots without an error, and a
            # compiled (XLA) graph cannot raise: the outputs become NaN rather than plausible.
            fits = ops.logical_and(ops.greater_equal(position, 0),
                                   ops.less_equal(position + ops.shape(x)[1], ops.shape(caches[0]["keys"])[2]))
            x = ops.where(fits, x, ops.cast(float("nan"), x.dtype))
        return x, new_caches

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers, d_model=self.d_model, num_heads=self.num_heads,
            dff=self.dff, dropout=self.dropout, norm_first=self.norm_first,
            key_dim=self.key_dim, scale_attention=self.scale_attention, cross_attention=self.cross_attention,
            norm=self.norm, activation=self.activation, num_key_value_heads=self.num_key_value_heads,
            rotary=self.rotary, use_bias=self.use_bias,
        )
        return config

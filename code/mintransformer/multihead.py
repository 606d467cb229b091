"""Multi-head attention (paper section 3.2.2) and the head split/merge reshapes."""

import keras
import numpy as np
from keras import ops

from ._util import build_once
from .attention import check_mask_broadcasts, scaled_dot_product_attention
from .masks import keras_padding, merge_padding, with_heads_axis
from .rotary import LAYOUTS, apply_rotary


def split_heads(x, num_heads):
    """Split the feature axis into heads: (B, T, D) -> (B, h, T, D/h).

    Head i gets features [i * d_k, (i + 1) * d_k) of each position.

    Args:
        x: tensor of shape (B, T, D), D divisible by ``num_heads``.
        num_heads: h.

    Returns:
        Tensor of shape (B, h, T, d_k) with d_k = D / h.
    """
    depth = x.shape[-1]
    if depth is not None and depth % num_heads:
        raise ValueError(
            f"Cannot split a feature axis of size {depth} into num_heads={num_heads} "
            "equal heads: it is not divisible."
        )
    batch, length = ops.shape(x)[0], ops.shape(x)[1]
    x = ops.reshape(x, (batch, length, num_heads, depth // num_heads))  # (B, T, h, d_k)
    return ops.transpose(x, (0, 2, 1, 3))  # (B, h, T, d_k)


def merge_heads(x):
    """Concatenate the heads again, the exact inverse of ``split_heads``.

    Args:
        x: tensor of shape (B, h, T, d_k).

    Returns:
        Tensor of shape (B, T, h * d_k).
    """
    num_heads, d_k = x.shape[1], x.shape[-1]
    x = ops.transpose(x, (0, 2, 1, 3))  # (B, T, h, d_k)
    batch, length = ops.shape(x)[0], ops.shape(x)[1]
    return ops.reshape(x, (batch, length, num_heads * d_k))  # (B, T, D)


def key_value_heads(num_heads, num_key_value_heads):
    """h_kv as an int: ``num_heads`` for None; a ValueError unless it is a whole number dividing ``num_heads``."""
    kv_heads = num_heads if num_key_value_heads is None else num_key_value_heads
    if (not isinstance(kv_heads, (int, np.integer)) or isinstance(kv_heads, bool) or kv_heads < 1
            or num_heads % kv_heads):
        raise ValueError(f"num_key_value_heads={num_key_value_heads!r} must be a whole number that divides "
                         f"num_heads={num_heads} (1 for multi-query attention, num_heads or None for "
                         "multi-head attention).")
    return int(kv_heads)


@keras.saving.register_keras_serializable(package="mintransformer")
class MultiHeadAttention(keras.layers.Layer):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    The h per-head projections of width d_k = d_model / h are computed together by one
    ``Dense(d_model)`` each (``wq``, ``wk``, ``wv``) and split afterwards, so the layer
    has as many parameters as one full-width head. Keras's ``MultiHeadAttention`` with
    ``key_dim=d_model // num_heads`` is the same layer.

    Args:
        d_model: width of inputs and outputs.
        num_heads: h; must divide ``d_model``.
        dropout: dropout rate on the attention weights.
        key_dim: d_k, the width of each head's queries and keys; None (the default) for
            d_model / h. The values keep d_v = d_model / h (paper Table 3, row B).
        scale_attention: False leaves out the 1 / sqrt(d_k) of equation 1 (chapter 11); the same
            name as in the layers and models that pass it on.
        num_key_value_heads: the number of key/value heads, h_kv; None (the default) for h, the
            paper's multi-head attention. Fewer is grouped-query attention (Ainslie et al., 2023):
            each key/value head serves h / h_kv consecutive query heads (query head i reads
            key/value head i // (h / h_kv), as in Keras's ``GroupQueryAttention`` and Llama's
            code); 1 is multi-query attention (Shazeer, 2019). ``wk`` and ``wv`` then have
            h_kv * d_k and h_kv * d_v outputs, and a decoding cache holds h_kv heads.
        rotary: None (the default) for no rotation; ``"interleaved"`` or ``"half"`` rotates the
            queries and keys of every head by their positions (RoPE, ``rotary.apply_rotary``,
            that layout). The keys are rotated when projected, so a cache holds rotated keys.
        rotary_base: the base of the rotation's frequencies.
        use_bias: False leaves the biases out of the four projections (Llama has none).
    """

    def __init__(self, d_model, num_heads, dropout=0.0, key_dim=None, scale_attention=True,
                 num_key_value_heads=None, rotary=None, rotary_base=10000.0, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        # Keras's implicit padding masks of ``key`` and ``value`` are merged into the attention
        # mask (see ``call``); the output keeps the query's, as Keras's own layer does.
        self.supports_masking = True
        if d_model % num_heads:
            raise ValueError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}: "
                f"each head needs d_k = d_model / num_heads features."
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_v = d_model // num_heads
        self.d_k = self.d_v if key_dim is None else key_dim
        self.key_dim, self.scale_attention = key_dim, scale_attention
        self.dropout = dropout
        kv_heads = key_value_heads(num_heads, num_key_value_heads)
        if rotary is not None and rotary not in LAYOUTS:
            raise ValueError(f"rotary={rotary!r} must be None or one of {LAYOUTS}.")
        if rotary is not None and self.d_k % 2:
            raise ValueError(f"rotary needs an even d_k (features rotate in pairs); d_k={self.d_k}.")
        self.num_kv_heads = int(kv_heads)
        self.num_key_value_heads = None if num_key_value_heads is None else self.num_kv_heads  # JSON: an int
        self.rotary, self.rotary_base, self.use_bias = rotary, rotary_base, use_bias
        policy = dict(dtype=self.dtype_policy)  # mixed precision reaches every sub-layer
        self.wq = keras.layers.Dense(num_heads * self.d_k, use_bias=use_bias, name="wq", **policy)
        self.wk = keras.layers.Dense(self.num_kv_heads * self.d_k, use_bias=use_bias, name="wk", **policy)
        self.wv = keras.layers.Dense(self.num_kv_heads * self.d_v, use_bias=use_bias, name="wv", **policy)
        self.wo = keras.layers.Dense(d_model, use_bias=use_bias, name="wo", **policy)
        self.attention_dropout = keras.layers.Dropout(dropout, **policy)

    def build(self, query_shape, key_shape=None, value_shape=None):
        key_shape = query_shape if key_shape is None else key_shape
        value_shape = key_shape if value_shape is None else value_shape
        build_once(self.wq, query_shape)
        build_once(self.wk, key_shape)
        build_once(self.wv, value_shape)
        build_once(self.wo, tuple(query_shape[:-1]) + (self.d_model,))

    def project_key_value(self, key, value, positions=None):
        """The heads' keys (B, h_kv, S, d_k) and values (B, h_kv, S, d_v): what a decoding cache stores.

        With ``rotary``, the keys are rotated by ``positions`` (S,), None for 0 .. S - 1.
        """
        k = split_heads(self.wk(key), self.num_kv_heads)  # (B, h_kv, S, d_k)
        v = split_heads(self.wv(value), self.num_kv_heads)  # (B, h_kv, S, d_v)
        if self.rotary is not None:
            k = apply_rotary(k, positions, self.rotary, self.rotary_base)
        return k, v

    def attend(self, query, k, v, attention_mask=None, training=False, positions=None):
        """Attention of ``query`` (B, T, D) over projected keys (B, h_kv, S, d_k) and values (B, h_kv, S, d_v).

        With ``rotary``, the queries are rotated by ``positions`` (T,), None for 0 .. T - 1.
        """
        q = split_heads(self.wq(query), self.num_heads)  # (B, h, T, d_k)
        if self.rotary is not None:
            q = apply_rotary(q, positions, self.rotary, self.rotary_base)
        mask = with_heads_axis(attention_mask)
        grouped = self.num_kv_heads != self.num_heads
        if grouped:  # each key/value head serves g = h / h_kv query heads: stack them, copy no key or value
            q, mask = self._group_queries(q, mask, k.shape[2])  # (B, h_kv, g T, d_k)
        heads, weights = scaled_dot_product_attention(
            q, k, v, mask=mask, dropout_layer=self.attention_dropout, training=training,
            scale=None if self.scale_attention else 1.0,
        )  # (B, h, T, d_v), (B, h, T, S); grouped: (B, h_kv, g T, d_v), (B, h_kv, g T, S)
        if grouped:
            batch, length = ops.shape(query)[0], ops.shape(query)[1]
            heads = ops.reshape(heads, (batch, self.num_heads, length, self.d_v))
            weights = ops.reshape(weights, (batch, self.num_heads, length, ops.shape(weights)[-1]))
        return self.wo(merge_heads(heads)), weights  # (B, T, D)

    def _group_queries(self, q, mask, num_keys):
        """Queries (B, h, T, d_k) as (B, h_kv, g T, d_k), and the mask (broadcastable to (B, h, T, S)) to match.

        Query head i = kv g + j reads key/value head kv; its T rows become rows j T .. j T + T - 1
        of that key/value head's block. The keys and values stay (B, h_kv, S, .): a decoding step
        reads the cache as it is, rather than a copy of it repeated g times.
        """
        group = self.num_heads // self.num_kv_heads
        batch, length = ops.shape(q)[0], ops.shape(q)[2]
        if mask is not None:  # checked against the heads' logits (B, h, T, S), before it is regrouped
            check_mask_broadcasts(tuple(mask.shape), (q.shape[0], self.num_heads, q.shape[2], num_keys))
        q = ops.reshape(q, (batch, self.num_kv_heads, group * length, self.d_k))
        if mask is None:
            return q, None
        mask = ops.convert_to_tensor(mask)
        while len(mask.shape) < 4:
            mask = mask[None]  # (T, S) -> (1, 1, T, S)
        if mask.shape[1] == 1 and mask.shape[2] == 1:  # one row for every query: it broadcasts as it is
            return q, mask
        if mask.shape[1] == 1:  # the same rows for every head: repeated for the g heads of a block
            return q, ops.tile(mask, (1, 1, group, 1))  # (B, 1, g T, S)
        shape = ops.shape(mask)  # a mask per query head: (B, h, T or 1, S) -> (B, h_kv, g T, S)
        mask = ops.broadcast_to(mask, (shape[0], self.num_heads, length, shape[3]))
        return q, ops.reshape(mask, (shape[0], self.num_kv_heads, group * length, shape[3]))

    def call(self, query, key, value, attention_mask=None, training=False, return_attention_scores=False):
        """Attend from ``query`` (B, T, D) to ``key``/``value`` (B, S, D).

        Args:
            attention_mask: boolean, ``True`` = may attend (Keras's name and convention):
                broadcastable to (B, h, T, S), or (B, T, S) as Keras's own layer takes it (a heads
                axis is then added; broadcast as it is, B would meet the heads axis).
            return_attention_scores: also return the weights, shape (B, h, T, S).

        A padding mask that Keras attached to ``key`` or ``value`` (for example from
        ``Embedding(mask_zero=True)``) also masks those key positions.

        Returns:
            Output (B, T, D), or ``(output, weights)``.
        """
        attention_mask = merge_padding(attention_mask, keras_padding(key))
        if value is not key:
            attention_mask = merge_padding(attention_mask, keras_padding(value))
        k, v = self.project_key_value(key, value)
        output, weights = self.attend(query, k, v, attention_mask=attention_mask, training=training)
        return (output, weights) if return_attention_scores else output

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, num_heads=self.num_heads, dropout=self.dropout,
                      key_dim=self.key_dim, scale_attention=self.scale_attention,
                      num_key_value_heads=self.num_key_value_heads, rotary=self.rotary,
                      rotary_base=self.rotary_base, use_bias=self.use_bias)
        return config

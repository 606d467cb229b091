"""Attention masks: boolean, ``True`` = may attend (Keras's convention).

Every mask here broadcasts against attention logits of shape (B, h, T, S):
B batch, h heads, T query positions, S key positions.
"""

from keras import ops

try:  # where Keras keeps a tensor's implicit mask (Keras 3.10 to 3.15)
    from keras.src.backend.common.masking import get_keras_mask
except ImportError:  # pragma: no cover
    def get_keras_mask(x):
        return getattr(x, "_keras_mask", None)


def padding_mask(tokens, pad_id=0):
    """Mask out the key positions that hold padding.

    For ``tokens = [[7, 4, 0]]`` with ``pad_id=0`` it returns, with shape (1, 1, 1, 3)::

        [[[[ True,  True, False]]]]

    Args:
        tokens: integer token ids, shape (B, S).
        pad_id: the id used for padding.

    Returns:
        Boolean tensor of shape (B, 1, 1, S): one row shared by every head and query.
    """
    keep = ops.not_equal(tokens, pad_id)  # (B, S)
    return keep[:, None, None, :]  # (B, 1, 1, S)


def attends_causally(query_positions, key_positions):
    """The look-ahead rule, written once: a query at position i may attend to a key at j <= i.

    ``causal_mask``, ``decoder_self_mask`` and the cached decoding step
    (``DecoderLayer.step``) all build their masks from it.

    Args:
        query_positions: integer positions, shape (..., T).
        key_positions: integer positions, shape (..., S).

    Returns:
        Boolean tensor of shape (..., T, S).
    """
    return ops.less_equal(key_positions[..., None, :], query_positions[..., :, None])  # j <= i


def causal_mask(length):
    """Look-ahead mask: query position i may attend to key positions j <= i.

    ``causal_mask(3)`` returns, with shape (3, 3)::

        [[ True, False, False],
         [ True,  True, False],
         [ True,  True,  True]]

    Args:
        length: the sequence length T (a Python int or a scalar tensor).

    Returns:
        Boolean tensor of shape (T, T), broadcastable to (B, h, T, T).
    """
    positions = ops.arange(length)  # (T,)
    return attends_causally(positions, positions)  # (T, T)


def decoder_self_mask(target_tokens, pad_id=0):
    """The decoder's self-attention mask: look-ahead AND target padding.

    Args:
        target_tokens: integer ids, shape (B, T).
        pad_id: the id used for padding.

    Returns:
        Boolean tensor of shape (B, 1, T, T).
    """
    # Positions 1..T counted from the tokens themselves (not from a length), so the mask
    # can also be built on a symbolic keras.Input whose length is still unknown.
    position = ops.cumsum(ops.ones_like(target_tokens, dtype="int32"), axis=1)  # (B, T)
    causal = attends_causally(position, position)  # (B, T, T): j <= i
    return ops.logical_and(causal[:, None], padding_mask(target_tokens, pad_id))  # (B, 1, T, T)


def with_heads_axis(attention_mask):
    """A pairwise mask as the attention layers read it: (B, T, S), Keras's layout, gets a heads axis.

    Keras's ``MultiHeadAttention`` takes ``attention_mask`` of shape (B, T, S); broadcast as it is
    against (B, h, T, S), its batch axis would meet the heads axis. (T, S), (B, 1, T, S) and
    (B, h, T, S) are returned unchanged.
    """
    if attention_mask is not None and len(attention_mask.shape) == 3:
        return attention_mask[:, None]  # (B, 1, T, S)
    return attention_mask


def merge_padding(attention_mask, padding):
    """Combine a pairwise attention mask with a padding mask of the keys.

    This is how the layers honour Keras's own masks (for example from
    ``keras.layers.Embedding(mask_zero=True)``), as KerasHub's Transformer layers do: a
    padding mask says which key positions hold a real token, and it is never read as a
    pairwise (T, S) mask.

    Args:
        attention_mask: None, or boolean, broadcastable to (B, h, T, S), or (B, T, S) as Keras's
            layers take it (``with_heads_axis``).
        padding: None, or boolean of shape (B, S), ``True`` = a real token; ``padding_mask``'s
            (B, 1, 1, S) is accepted too.

    Returns:
        None, or a boolean mask broadcastable to (B, h, T, S).
    """
    attention_mask = with_heads_axis(attention_mask)
    if padding is None:
        return attention_mask
    rank = len(padding.shape)
    if not (rank == 2 or (rank == 4 and tuple(padding.shape[1:3]) == (1, 1))):
        raise ValueError(
            f"A padding mask has shape (batch, length), one entry per key position (or (batch, 1, 1, "
            f"length), as padding_mask() returns it); got shape {tuple(padding.shape)}. Pass a pairwise "
            "mask as attention_mask= instead."
        )
    keys = ops.cast(padding, "bool")
    keys = keys[:, None, None, :] if rank == 2 else keys  # (B, 1, 1, S)
    return keys if attention_mask is None else ops.logical_and(ops.cast(attention_mask, "bool"), keys)


def keras_padding(x):
    """The padding mask (B, T) Keras attached to ``x`` (e.g. by ``Embedding(mask_zero=True)``), or None."""
    return None if x is None else get_keras_mask(x)

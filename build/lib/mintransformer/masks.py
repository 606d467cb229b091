"""Attention masks: boolean, ``True`` = may attend (Keras's convention).

Every mask here broadcasts against attention logits of shape (B, h, T, S):
B batch, h heads, T query positions, S key positions.
"""

from keras import ops


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
    i = ops.arange(length)[:, None]  # (T, 1) query positions
    j = ops.arange(length)[None, :]  # (1, T) key positions
    return ops.greater_equal(i, j)  # (T, T)


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
    causal = ops.greater_equal(position[:, :, None], position[:, None, :])  # (B, T, T): j <= i
    return ops.logical_and(causal[:, None], padding_mask(target_tokens, pad_id))  # (B, 1, T, T)

"""Sinusoidal positional encoding and the scaled token embedding (paper sections 3.4-3.5)."""

import math

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from ._util import build_once


def positional_encoding(length, depth):
    """The paper's sinusoidal encoding, sines and cosines interleaved.

    PE(pos, 2i)   = sin(pos / 10000^(2i / depth))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / depth))

    Args:
        length: number of positions.
        depth: d_model (an even number).

    Returns:
        float32 NumPy array of shape (length, depth).
    """
    if depth % 2:
        raise ValueError(f"depth={depth} must be even: features come in sin/cos pairs.")
    pos = np.arange(length, dtype=np.float64)[:, None]  # (length, 1)
    two_i = np.arange(0, depth, 2, dtype=np.float64)[None, :]  # (1, depth/2)
    angles = pos / np.power(10000.0, two_i / depth)  # (length, depth/2)
    pe = np.empty((length, depth), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)  # even features
    pe[:, 1::2] = np.cos(angles)  # odd features
    return pe.astype(np.float32)


POSITIONS = ("sinusoidal", "learned", "none")


def _check_integer(position, name):
    """Refuse a position that is not an integer (a float would otherwise be cut down to a row)."""
    dtype = getattr(position, "dtype", None)
    if dtype is not None:
        integer = "int" in keras.backend.standardize_dtype(dtype)
    else:
        integer = isinstance(position, (int, np.integer)) and not isinstance(position, bool)
    if not integer:
        raise TypeError(f"{name}: position must be an integer (a Python or NumPy int, or an integer tensor), "
                        f"not {type(position).__name__}"
                        + (f" of dtype {keras.backend.standardize_dtype(dtype)}" if dtype is not None else "")
                        + f": {position!r:.60}.")


@keras.saving.register_keras_serializable(package="mintransformer")
class PositionalEmbedding(keras.layers.Layer):
    """Token embedding scaled by sqrt(d_model), plus the positional encoding.

    Args:
        vocab_size: number of token ids.
        d_model: embedding width.
        max_length: longest sequence accepted; the encoding table has this many rows.
        positions: ``"sinusoidal"`` (the paper's, the default); ``"learned"``, a trained
            (max_length, d_model) table instead (paper Table 3, row E); or ``"none"``.
        scale: False leaves out the sqrt(d_model) factor (chapter 11 measures both).

    Call:
        tokens (B, T) integer ids -> (B, T, d_model), the tokens at positions 0 .. T - 1.
        ``embed_step(tokens, position)`` embeds tokens (B, n) at ``position`` .. ``position + n - 1``.

    Positions outside 0 .. max_length - 1 have no row in the table. They are refused:
        - with a ValueError when the length and ``position`` are known while tracing (eager
          mode, Python or NumPy ints, a graph traced with a fixed length);
        - inside a ``tf.function`` traced with an unknown length or a tensor ``position``,
          by an assertion that raises an InvalidArgumentError when the graph runs;
        - under XLA (``jit_compile=True``) nothing can be raised from inside the compiled
          function (XLA drops assertions, and its gather clamps an index past the table to
          the last row); so every embedding vector at a position past the table is NaN.
          The NaN spreads through everything computed from it (in a whole model, every
          logit), but an argmax turns NaN logits back into a valid token id, so a compiled
          decoder would still return plausible tokens. Check the length outside compiled
          code, as the package's decoders do before their loops, or test for NaN before
          an argmax.
    ``position`` must be an integer (a Python or NumPy int, or an integer tensor): a float is
    refused with a TypeError rather than rounded down.
    """

    def __init__(self, vocab_size, d_model, max_length, positions="sinusoidal", scale=True, **kwargs):
        super().__init__(**kwargs)
        if positions not in POSITIONS:
            raise ValueError(f"positions={positions!r} must be one of {POSITIONS}.")
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.max_length = max_length
        self.positions, self.scale = positions, scale
        # Entries ~ N(0, 1/d_model), as in the paper's reference code: with the sqrt(d_model)
        # factor below the embedding enters with entries of size 1, like the encoding, and as
        # the tied output matrix it gives logits of size 1 (chapter 7).
        self.embedding = keras.layers.Embedding(
            vocab_size, d_model, name="token_embedding", dtype=self.dtype_policy,
            embeddings_initializer=keras.initializers.RandomNormal(stddev=d_model**-0.5),
        )
        self.encoding = positional_encoding(max_length, d_model)  # (max_length, D) constant
        # Learned positions start at the size of the encoding's entries (root mean square 1/sqrt(2)).
        self.position_embedding = None if positions != "learned" else keras.layers.Embedding(
            max_length, d_model, name="position_embedding", dtype=self.dtype_policy,
            embeddings_initializer=keras.initializers.RandomNormal(stddev=0.5**0.5),
        )

    def build(self, input_shape):
        build_once(self.embedding, input_shape)
        if self.position_embedding is not None:
            build_once(self.position_embedding, (self.max_length,))

    def call(self, tokens):
        length = ops.shape(tokens)[1]  # a number, or a tensor inside a graph of unknown length
        self._check_positions(0, length)
        return self.embed(tokens, ops.arange(length))  # (B, T, D)

    def embed_step(self, tokens, position):
        """Embed tokens (B, n) standing at ``position``, ..., ``position + n - 1``, for cached decoding."""
        _check_integer(position, self.name)
        n = ops.shape(tokens)[1]
        self._check_positions(position, n)
        return self.embed(tokens, ops.cast(position, "int32") + ops.arange(n))  # (B, n, D)

    def _check_positions(self, first, n):
        """Refuse positions first .. first + n - 1 outside 0 .. max_length - 1 (see the class docstring)."""
        first_value, n_value = tf.get_static_value(first), tf.get_static_value(n)
        where = f"outside 0 to {self.max_length - 1}, the max_length={self.max_length} positions of {self.name}"
        if first_value is not None and int(first_value) < 0:
            raise ValueError(f"Position {int(first_value)} is {where}.")
        if first_value is not None and n_value is not None:  # known now: a ValueError
            first_value, n_value = int(first_value), int(n_value)
            if first_value == 0 and n_value > self.max_length:
                raise ValueError(
                    f"Sequence length {n_value} is longer than max_length={self.max_length} "
                    f"of {self.name}; build the model with a larger max_length."
                )
            if first_value + n_value > self.max_length:
                which = (f"Position {first_value} is" if n_value == 1
                         else f"Positions {first_value} to {first_value + n_value - 1} are")
                raise ValueError(f"{which} {where}.")
            return
        # Known only when the graph runs: assertions (which XLA drops; embed's NaN rows remain).
        first = ops.cast(first, "int32")
        last = first + ops.cast(n, "int32") - 1  # the last position
        if first_value is None:
            tf.debugging.assert_greater_equal(
                first, 0, message=f"{self.name}: a position is negative (max_length={self.max_length})")
        tf.debugging.assert_less(
            last, self.max_length,
            message=f"{self.name}: a position is past {self.max_length - 1}, the last of "
                    f"max_length={self.max_length} (a sequence too long?); build the model with a larger max_length")

    def embed(self, tokens, positions):
        """Tokens (B, T) standing at ``positions`` (T,) -> (B, T, D); NaN at positions past the table."""
        x = self.embedding(tokens)  # (B, T, D)
        if self.scale:
            # Entries of size 1/sqrt(D) become entries of size 1, the size of the encoding's.
            x = x * ops.cast(math.sqrt(self.d_model), x.dtype)
        inside = ops.logical_and(positions >= 0, positions < self.max_length)[:, None]  # (T, 1)
        rows = ops.where(inside[:, 0], positions, 0)  # (T,): a row of the table for every position
        if self.positions == "sinusoidal":
            pe = ops.take(ops.cast(self.encoding, x.dtype), rows, axis=0)  # (T, D)
        elif self.positions == "learned":
            pe = ops.cast(self.position_embedding(rows), x.dtype)  # (T, D)
        else:
            pe = ops.zeros((1, 1), x.dtype)
        # Past the table, NaN rather than a row that is not theirs (the check above raises first,
        # except under XLA, where nothing can be raised).
        pe = ops.where(inside, pe, ops.cast(float("nan"), x.dtype))  # (T, D) or (T, 1)
        return x + pe[None]  # (B, T, D)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, d_model=self.d_model, max_length=self.max_length,
                      positions=self.positions, scale=self.scale)
        return config

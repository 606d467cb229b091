"""Sinusoidal positional encoding and the scaled token embedding (paper sections 3.4-3.5)."""

import math

import keras
import numpy as np
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


@keras.saving.register_keras_serializable(package="mintransformer")
class PositionalEmbedding(keras.layers.Layer):
    """Token embedding scaled by sqrt(d_model), plus the positional encoding.

    Args:
        vocab_size: number of token ids.
        d_model: embedding width.
        max_length: longest sequence accepted; the encoding table has this many rows.
        positions: ``"sinusoidal"`` (the paper's, the default); ``"learned"``, a trained
            (max_length, d_model) table instead (paper Table 3, row E); or ``"none"``.
        scale: False leaves out the sqrt(d_model) factor (chapter 10 measures both).

    Call:
        tokens (B, T) integer ids -> (B, T, d_model). A T longer than ``max_length`` raises a
        ValueError whenever T is known; inside a graph traced with unknown T, TensorFlow's
        own shape error is all that can be raised.
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
            vocab_size, d_model, name="token_embedding",
            embeddings_initializer=keras.initializers.RandomNormal(stddev=d_model**-0.5),
        )
        self.encoding = positional_encoding(max_length, d_model)  # (max_length, D) constant
        # Learned positions start at the size of the encoding's entries (root mean square 1/sqrt(2)).
        self.position_embedding = None if positions != "learned" else keras.layers.Embedding(
            max_length, d_model, name="position_embedding",
            embeddings_initializer=keras.initializers.RandomNormal(stddev=0.5**0.5),
        )

    def build(self, input_shape):
        build_once(self.embedding, input_shape)
        if self.position_embedding is not None:
            build_once(self.position_embedding, (self.max_length,))

    def call(self, tokens):
        length = tokens.shape[1]
        if length is not None and length > self.max_length:
            raise ValueError(
                f"Sequence length {length} is longer than max_length={self.max_length} "
                f"of {self.name}; build the model with a larger max_length."
            )
        return self.embed(tokens, ops.arange(ops.shape(tokens)[1]))  # (B, T, D)

    def embed_step(self, tokens, position):
        """Embed tokens (B, n) standing at ``position``, ..., ``position + n - 1``, for cached decoding."""
        return self.embed(tokens, position + ops.arange(ops.shape(tokens)[1]))  # (B, n, D)

    def embed(self, tokens, positions):
        """Tokens (B, T) standing at ``positions`` (T,) -> (B, T, D)."""
        x = self.embedding(tokens)  # (B, T, D)
        if self.scale:
            # Entries of size 1/sqrt(D) become entries of size 1, the size of the encoding's.
            x = x * ops.cast(math.sqrt(self.d_model), x.dtype)
        if self.positions == "sinusoidal":
            pe = ops.take(ops.cast(self.encoding, x.dtype), positions, axis=0)  # (T, D)
        elif self.positions == "learned":
            pe = ops.cast(self.position_embedding(positions), x.dtype)  # (T, D)
        else:
            return x
        return x + pe[None]  # (B, T, D)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, d_model=self.d_model, max_length=self.max_length,
                      positions=self.positions, scale=self.scale)
        return config

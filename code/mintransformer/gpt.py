"""A decoder-only language model, GPT-style (chapter 11), from the layers of the encoder-decoder."""

import keras
from keras import ops

from ._util import build_once
from .decoder import Decoder
from .masks import decoder_self_mask
from .positional import PositionalEmbedding


@keras.saving.register_keras_serializable(package="mintransformer")
class MinGPT(keras.Model):
    """A decoder-only Transformer language model: the decoder stack without cross-attention.

    tokens -> embedding + positions -> dropout -> N x [masked self-attention, FFN] -> x E^T -> logits

    It reads one sequence and predicts, at every position t, the token at t + 1 (Radford et al.,
    2018 and 2019). The layers are the encoder-decoder's: ``PositionalEmbedding``, a ``Decoder``
    whose ``DecoderLayer``s leave out cross-attention, and the output projection tied to the
    token embedding. The defaults are GPT-2's choices, which differ from the paper's: pre-norm
    with a final layer norm, learned positions, and no sqrt(d_model) on the embeddings.

    Args:
        num_layers, d_model, num_heads, dff: sizes, as in ``MinTransformer``.
        vocab_size: number of token ids.
        max_length: the context: the longest sequence the model reads.
        dropout: P_drop.
        norm_first: True = pre-norm (GPT-2, the default); False = the paper's post-norm.
        pad_id: the padding id; padded positions are never attended to.
        positions, scale_embeddings: as in ``PositionalEmbedding``; the defaults are GPT-2's.
        share_embeddings: tie the output projection to the token embedding (GPT-2 does); False
            adds a separate ``Dense(vocab_size)``.

    Call:
        ``model(tokens (B, T), training=False)`` -> logits (B, T, vocab_size), float32. With
        ``return_attention_scores=True`` also a dict ``layer_i/self_attention`` -> (B, h, T, T).
    """

    def __init__(self, num_layers, d_model, num_heads, dff, vocab_size, max_length, dropout=0.1,
                 norm_first=True, pad_id=0, positions="learned", scale_embeddings=False,
                 share_embeddings=True, **kwargs):
        super().__init__(**kwargs)
        self.num_layers, self.d_model, self.num_heads, self.dff = num_layers, d_model, num_heads, dff
        self.vocab_size, self.max_length, self.dropout = vocab_size, max_length, dropout
        self.norm_first, self.pad_id = norm_first, pad_id
        self.positions, self.scale_embeddings = positions, scale_embeddings
        self.share_embeddings = share_embeddings
        self.embedding = PositionalEmbedding(vocab_size, d_model, max_length, positions, scale_embeddings,
                                             name="embedding")
        self.embedding_dropout = keras.layers.Dropout(dropout)
        self.decoder = Decoder(num_layers, d_model, num_heads, dff, dropout, norm_first, cross_attention=False,
                               name="decoder")
        self.final_layer = None if share_embeddings else keras.layers.Dense(vocab_size, name="final_layer")

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        build_once(self.embedding, input_shape)
        build_once(self.decoder, input_shape + (self.d_model,))
        if self.final_layer is not None:
            build_once(self.final_layer, input_shape + (self.d_model,))

    def call(self, tokens, training=False, return_attention_scores=False):
        x = self.embedding_dropout(self.embedding(tokens), training=training)  # (B, T, D)
        self_mask = decoder_self_mask(tokens, self.pad_id)  # (B, 1, T, T): look-ahead AND padding
        x, weights = self.decoder(x, None, self_mask=self_mask, training=training, return_attention_scores=True)
        logits = ops.cast(self.output_projection(x), "float32")  # (B, T, V)
        if not return_attention_scores:
            return logits
        return logits, {f"layer_{i}/self_attention": w for i, (w, _) in enumerate(weights)}  # (B, h, T, T)

    def output_projection(self, x):
        """(B, T, D) -> (B, T, V): x E^T with the token embedding E, or the separate Dense."""
        if self.final_layer is not None:
            return self.final_layer(x)
        embeddings = ops.cast(self.embedding.embedding.embeddings, x.dtype)  # (V, D)
        return ops.matmul(x, ops.transpose(embeddings))

    def start_cache(self, batch_size, max_length):
        """Every layer's empty key/value cache, for ``max_length`` positions of ``batch_size`` rows."""
        return self.decoder.start_cache(None, max_length, batch_size=batch_size)

    def decode_step(self, tokens, position, caches):
        """Feed ``tokens`` at ``position`` on, through the cache; the logits of the token after them.

        Args:
            tokens: (B, n), the tokens at ``position``, ..., ``position + n - 1``: one new token
                per step, or a whole prompt at once (the "prefill").
            position: the index of the first of them (scalar).
            caches: from ``start_cache`` or the previous step.

        Returns:
            ``(logits (B, V), updated caches)``: the logits at the last position fed, equal (up
            to rounding) to ``self(sequence)[:, position + n - 1]`` when the sequence's first
            ``position + n`` tokens have been fed.
        """
        n = tokens.shape[1]
        if isinstance(position, int) and n is not None and position + n > self.max_length:
            raise ValueError(f"positions {position} to {position + n - 1} are past the context, "
                             f"max_length={self.max_length}.")
        x = self.embedding.embed_step(tokens, position)  # (B, n, D)
        is_token = ops.not_equal(tokens, self.pad_id)  # (B, n)
        x, caches = self.decoder.step(x, caches, position, is_token=is_token)
        logits = ops.cast(self.output_projection(x[:, -1:]), "float32")  # (B, 1, V): the last position only
        return logits[:, 0], caches

    def attention_scores(self, tokens):
        """Every layer's self-attention weights, ``layer_i/self_attention`` -> NumPy (B, h, T, T)."""
        _, scores = self(tokens, training=False, return_attention_scores=True)
        return {name: ops.convert_to_numpy(w) for name, w in scores.items()}

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers, d_model=self.d_model, num_heads=self.num_heads, dff=self.dff,
            vocab_size=self.vocab_size, max_length=self.max_length, dropout=self.dropout,
            norm_first=self.norm_first, pad_id=self.pad_id, positions=self.positions,
            scale_embeddings=self.scale_embeddings, share_embeddings=self.share_embeddings,
        )
        return config

"""The full encoder-decoder Transformer (paper section 3, Figure 1)."""

import keras
from keras import ops

from ._util import build_once
from .decoder import Decoder
from .encoder import Encoder
from .masks import decoder_self_mask, padding_mask
from .positional import PositionalEmbedding


@keras.saving.register_keras_serializable(package="mintransformer")
class MinTransformer(keras.Model):
    """The Transformer of "Attention Is All You Need".

    source tokens -> embedding * sqrt(D) + PE -> dropout -> encoder ─┐
    target tokens -> embedding * sqrt(D) + PE -> dropout -> decoder <┘ -> linear -> logits

    The model builds its masks from ``pad_id``: the source padding mask for encoder
    self-attention and cross-attention, and look-ahead AND target padding for decoder
    self-attention.

    Args:
        num_layers: N, layers in each stack.
        d_model, num_heads, dff: widths, as in the paper.
        input_vocab_size, target_vocab_size: vocabulary sizes.
        max_length: longest source or target sequence.
        dropout: P_drop.
        share_embeddings: tie the source embedding, the target embedding and the
            pre-softmax projection into one matrix (paper section 3.4); needs equal
            vocabulary sizes.
        norm_first: False = the paper's post-norm; True = pre-norm.
        pad_id: the padding token id of both vocabularies.
        key_dim, scale_attention: every attention's d_k (None: d_model / num_heads) and
            whether it divides by sqrt(d_k) (see ``MultiHeadAttention``).
        positions, scale_embeddings: ``"sinusoidal"``, ``"learned"`` or ``"none"``, and
            whether the embeddings are multiplied by sqrt(d_model) (see ``PositionalEmbedding``).
            Chapter 11 measures what each of these four choices is worth.

    Call:
        ``model((source_tokens (B, S), target_tokens (B, T)), training=False)``
        -> logits (B, T, target_vocab_size). With ``return_attention_scores=True``
        also a dict of every layer's attention weights (see ``attention_scores``).
    """

    def __init__(self, num_layers, d_model, num_heads, dff, input_vocab_size, target_vocab_size,
                 max_length, dropout=0.1, share_embeddings=False, norm_first=False, pad_id=0,
                 key_dim=None, scale_attention=True, positions="sinusoidal", scale_embeddings=True,
                 **kwargs):
        super().__init__(**kwargs)
        if share_embeddings and input_vocab_size != target_vocab_size:
            raise ValueError(
                "share_embeddings=True ties one matrix across both vocabularies, but "
                f"input_vocab_size={input_vocab_size} != target_vocab_size={target_vocab_size}."
            )
        self.num_layers, self.d_model, self.num_heads, self.dff = num_layers, d_model, num_heads, dff
        self.input_vocab_size, self.target_vocab_size = input_vocab_size, target_vocab_size
        self.max_length, self.dropout = max_length, dropout
        self.share_embeddings, self.norm_first, self.pad_id = share_embeddings, norm_first, pad_id
        self.key_dim, self.scale_attention = key_dim, scale_attention
        self.positions, self.scale_embeddings = positions, scale_embeddings

        policy = dict(dtype=self.dtype_policy)  # e.g. "mixed_float16" reaches every layer
        self.source_embedding = PositionalEmbedding(
            input_vocab_size, d_model, max_length, positions, scale_embeddings, name="source_embedding", **policy
        )
        self.target_embedding = self.source_embedding if share_embeddings else PositionalEmbedding(
            target_vocab_size, d_model, max_length, positions, scale_embeddings, name="target_embedding", **policy
        )
        self.embedding_dropout = keras.layers.Dropout(dropout, **policy)
        attention = dict(key_dim=key_dim, scale_attention=scale_attention, **policy)
        self.encoder = Encoder(num_layers, d_model, num_heads, dff, dropout, norm_first, **attention, name="encoder")
        self.decoder = Decoder(num_layers, d_model, num_heads, dff, dropout, norm_first, **attention, name="decoder")
        # Tied: logits = x E^T with the shared embedding E, no extra weights.
        self.final_layer = None if share_embeddings else keras.layers.Dense(
            target_vocab_size, name="final_layer", **policy)

    def build(self, input_shape):
        source_shape, target_shape = (tuple(s) for s in input_shape)
        build_once(self.source_embedding, source_shape)
        build_once(self.target_embedding, target_shape)
        build_once(self.encoder, source_shape + (self.d_model,))
        build_once(self.decoder, target_shape + (self.d_model,), source_shape + (self.d_model,))
        if self.final_layer is not None:
            build_once(self.final_layer, target_shape + (self.d_model,))

    def encode(self, source_tokens, training=False, return_attention_scores=False):
        """Source tokens (B, S) -> encoder output (B, S, D) [, per-layer weights]."""
        x = self.embedding_dropout(self.source_embedding(source_tokens), training=training)
        mask = padding_mask(source_tokens, self.pad_id)  # (B, 1, 1, S)
        return self.encoder(x, attention_mask=mask, training=training, return_attention_scores=return_attention_scores)

    def decode(self, target_tokens, context, source_tokens, training=False, return_attention_scores=False):
        """Target tokens (B, T) and encoder output (B, S, D) -> logits (B, T, V) [, weights]."""
        x = self.embedding_dropout(self.target_embedding(target_tokens), training=training)
        result = self.decoder(
            x, context,
            self_mask=decoder_self_mask(target_tokens, self.pad_id),  # (B, 1, T, T)
            cross_mask=padding_mask(source_tokens, self.pad_id),  # (B, 1, 1, S)
            training=training, return_attention_scores=return_attention_scores,
        )
        x, weights = result if return_attention_scores else (result, None)
        # float32 logits even under mixed precision, for a stable softmax and loss.
        logits = ops.cast(self.output_projection(x), "float32")  # (B, T, V)
        return (logits, weights) if return_attention_scores else logits

    def output_projection(self, x):
        """The pre-softmax linear layer: (B, T, D) -> (B, T, V)."""
        if self.final_layer is not None:
            return self.final_layer(x)
        embeddings = ops.cast(self.source_embedding.embedding.embeddings, x.dtype)  # (V, D)
        return ops.matmul(x, ops.transpose(embeddings))

    def start_cache(self, source_tokens, max_length):
        """Encode the source once; return every decoder layer's key/value cache.

        Args:
            source_tokens: (B, S) ids.
            max_length: the most target positions the cache will hold.
        """
        context = self.encode(source_tokens)  # (B, S, D)
        return self.decoder.start_cache(context, max_length)

    def decode_step(self, tokens, position, caches, source_tokens):
        """Next-token logits after the newest target token, reusing the cache.

        Args:
            tokens: the tokens standing at ``position``, ..., ``position + n - 1`` of each
                sequence, (B, n); usually n = 1.
            position: the index of the first of them in the target (scalar).
            caches: from ``start_cache`` or the previous step.
            source_tokens: (B, S) ids, for the cross-attention padding mask.

        Returns:
            ``(logits (B, V), updated caches)``: the logits at the LAST fed position, those that
            predict the next token (as ``MinGPT.decode_step``); equal (up to rounding) to
            ``self((source, target))[:, position + n - 1]`` when ``target[:, :position + n]``
            are the tokens fed so far, padding included: a fed-back pad is masked as in the
            full pass.
        """
        x = self.target_embedding.embed_step(tokens, position)  # (B, n, D)
        cross_mask = padding_mask(source_tokens, self.pad_id)  # (B, 1, 1, S)
        is_token = ops.not_equal(tokens, self.pad_id)  # (B, n)
        x, caches = self.decoder.step(x, caches, position, cross_mask=cross_mask, is_token=is_token)
        logits = ops.cast(self.output_projection(x[:, -1:]), "float32")  # (B, 1, V)
        return logits[:, 0], caches

    def call(self, inputs, training=False, return_attention_scores=False):
        source_tokens, target_tokens = inputs
        if not return_attention_scores:
            context = self.encode(source_tokens, training=training)
            return self.decode(target_tokens, context, source_tokens, training=training)
        context, encoder_weights = self.encode(source_tokens, training=training, return_attention_scores=True)
        logits, decoder_weights = self.decode(
            target_tokens, context, source_tokens, training=training, return_attention_scores=True
        )
        scores = {}
        for i, weights in enumerate(encoder_weights):
            scores[f"encoder/layer_{i}/self_attention"] = weights  # (B, h, S, S)
        for i, (self_weights, cross_weights) in enumerate(decoder_weights):
            scores[f"decoder/layer_{i}/self_attention"] = self_weights  # (B, h, T, T)
            scores[f"decoder/layer_{i}/cross_attention"] = cross_weights  # (B, h, T, S)
        return logits, scores

    def attention_scores(self, source_tokens, target_tokens):
        """Every attention layer's weights as a dict of NumPy arrays (inference mode).

        Keys: ``encoder/layer_i/self_attention`` (B, h, S, S),
        ``decoder/layer_i/self_attention`` (B, h, T, T) and
        ``decoder/layer_i/cross_attention`` (B, h, T, S).
        """
        _, scores = self((source_tokens, target_tokens), training=False, return_attention_scores=True)
        return {name: ops.convert_to_numpy(w) for name, w in scores.items()}

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers, d_model=self.d_model, num_heads=self.num_heads,
            dff=self.dff, input_vocab_size=self.input_vocab_size,
            target_vocab_size=self.target_vocab_size, max_length=self.max_length,
            dropout=self.dropout, share_embeddings=self.share_embeddings,
            norm_first=self.norm_first, pad_id=self.pad_id, key_dim=self.key_dim,
            scale_attention=self.scale_attention, positions=self.positions,
            scale_embeddings=self.scale_embeddings,
        )
        return config

"""The book's Transformer shape built from KerasHub's layers: the benchmarks' third party.

Both benchmarks import it (``python benchmarks/<script>.py`` puts this folder on the path); it
needs KerasHub, a benchmark dependency only (benchmarks/requirements.txt).

Post-norm encoder-decoder, as the paper and ``mt.MinTransformer``: token embeddings scaled by
sqrt(d_model) plus sinusoidal positions (``keras_hub.layers.SinePositionEncoding``), N
``keras_hub.layers.TransformerEncoder`` and N ``keras_hub.layers.TransformerDecoder`` (with
cross-attention), a Dense output layer. The weights count as ours does: the same matrices and
biases, the positional encoding computed, not stored.

The class is a ``keras_hub.models.Seq2SeqLM`` without a backbone or preprocessor, so that
``generate()`` runs KerasHub's own machinery: ``make_generate_function`` wraps ``generate_step``
in ``tf.function(jit_compile=model.jit_compile)``, and the sampler runs the whole loop as one
``ops.while_loop`` inside it. ``call_decoder_with_cache``, ``_build_cache`` and
``generate_step`` follow ``keras_hub.models.BartSeq2SeqLM`` (KerasHub 0.32) line for line, less
BART's learned positions, embedding layer norm and tied output matrix.
"""

import math

import keras
import keras_hub
import numpy as np
from keras import ops


class KerasHubTransformer(keras_hub.models.Seq2SeqLM):
    """Encoder-decoder Transformer from KerasHub layers, with KerasHub's cached ``generate``.

    Args:
        num_layers: N, layers in each stack.
        d_model, num_heads, dff: widths (KerasHub: ``hidden_dim``, ``num_heads``,
            ``intermediate_dim``).
        vocab_size: source and target vocabulary size.
        dropout: P_drop.
        pad_id: the padding id of both vocabularies.

    Call:
        ``model((source (B, S), target (B, T)))`` -> logits (B, T, V), for ``fit``.
    """

    def __init__(self, num_layers, d_model, num_heads, dff, vocab_size, dropout=0.1, pad_id=0, **kwargs):
        super().__init__(**kwargs)
        self.num_layers, self.d_model, self.num_heads, self.pad_id = num_layers, d_model, num_heads, pad_id
        init = keras.initializers.RandomNormal(stddev=d_model**-0.5)  # as mt.PositionalEmbedding
        self.source_embedding = keras.layers.Embedding(vocab_size, d_model, embeddings_initializer=init,
                                                       name="source_embedding")
        self.target_embedding = keras.layers.Embedding(vocab_size, d_model, embeddings_initializer=init,
                                                       name="target_embedding")
        self.positions = keras_hub.layers.SinePositionEncoding(name="positions")
        self.embedding_dropout = keras.layers.Dropout(dropout)
        self.encoder_layers = [
            keras_hub.layers.TransformerEncoder(dff, num_heads, dropout=dropout, layer_norm_epsilon=1e-6,
                                                name=f"encoder_{i}")
            for i in range(num_layers)
        ]
        self.decoder_layers = [
            keras_hub.layers.TransformerDecoder(dff, num_heads, dropout=dropout, layer_norm_epsilon=1e-6,
                                                name=f"decoder_{i}")
            for i in range(num_layers)
        ]
        self.final_layer = keras.layers.Dense(vocab_size, name="final_layer")

    def embed(self, layer, tokens, start_index=0, training=None):
        """Tokens (B, T) -> embedding * sqrt(D) + sinusoid at positions start_index... (B, T, D)."""
        x = layer(tokens) * math.sqrt(self.d_model)
        return self.embedding_dropout(x + self.positions(x, start_index=start_index), training=training)

    def call_encoder(self, token_ids, padding_mask, training=None):
        """Source (B, S) and its keep mask (B, S) -> encoder output (B, S, D)."""
        x = self.embed(self.source_embedding, token_ids, training=training)
        for layer in self.encoder_layers:
            x = layer(x, padding_mask=padding_mask, training=training)
        return x

    def call(self, inputs, training=None):
        source, target = inputs
        source_mask = ops.not_equal(source, self.pad_id)  # (B, S)
        context = self.call_encoder(source, source_mask, training=training)
        x = self.embed(self.target_embedding, target, training=training)
        for layer in self.decoder_layers:  # causal mask by default, AND the target padding
            x = layer(x, context, decoder_padding_mask=ops.not_equal(target, self.pad_id),
                      encoder_padding_mask=source_mask, training=training)
        return self.final_layer(x)  # (B, T, V)

    # Cached generation, as BartSeq2SeqLM: caches (B, N, 2, T or S, h, d_k), keys and values.
    def call_decoder_with_cache(self, encoder_hidden_states, encoder_padding_mask, decoder_token_ids,
                                self_attention_cache=None, self_attention_cache_update_index=None,
                                cross_attention_cache=None, cross_attention_cache_update_index=None):
        x = self.embed(self.target_embedding, decoder_token_ids,
                       start_index=0 if self_attention_cache_update_index is None
                       else self_attention_cache_update_index)
        self_caches, cross_caches = [], []
        for i, layer in enumerate(self.decoder_layers):
            x, next_self, next_cross = layer(
                decoder_sequence=x,
                encoder_sequence=encoder_hidden_states,
                encoder_padding_mask=encoder_padding_mask,
                self_attention_cache=self_attention_cache[:, i, ...],
                self_attention_cache_update_index=self_attention_cache_update_index,
                cross_attention_cache=cross_attention_cache[:, i, ...],
                cross_attention_cache_update_index=cross_attention_cache_update_index,
            )
            if self_attention_cache_update_index is not None:
                self_caches.append(next_self)
            if cross_attention_cache_update_index is not None:
                cross_caches.append(next_cross)
        if self_attention_cache_update_index is not None:
            self_attention_cache = ops.stack(self_caches, axis=1)
        if cross_attention_cache_update_index is not None:
            cross_attention_cache = ops.stack(cross_caches, axis=1)
        return self.final_layer(x), x, self_attention_cache, cross_attention_cache

    def _build_cache(self, encoder_token_ids, encoder_padding_mask, decoder_token_ids):
        """Encode once; seed both caches with one pass of the decoder over the whole prompt."""
        encoder_hidden_states = self.call_encoder(encoder_token_ids, encoder_padding_mask)
        batch, source_length = ops.shape(encoder_token_ids)[0], ops.shape(encoder_token_ids)[1]
        shape = [batch, self.num_layers, 2, ops.shape(decoder_token_ids)[1], self.num_heads,
                 self.d_model // self.num_heads]
        self_attention_cache = ops.zeros(shape, dtype=self.compute_dtype)
        shape[3] = source_length
        cross_attention_cache = ops.zeros(shape, dtype=self.compute_dtype)
        _, hidden_states, self_attention_cache, cross_attention_cache = self.call_decoder_with_cache(
            encoder_hidden_states, encoder_padding_mask, decoder_token_ids,
            self_attention_cache=self_attention_cache, self_attention_cache_update_index=0,
            cross_attention_cache=cross_attention_cache, cross_attention_cache_update_index=0,
        )
        return hidden_states, encoder_hidden_states, self_attention_cache, cross_attention_cache

    def generate_step(self, inputs, stop_token_ids=None):
        """One batch, compiled by ``make_generate_function``: BartSeq2SeqLM.generate_step."""
        encoder_token_ids, encoder_padding_mask = inputs["encoder_token_ids"], inputs["encoder_padding_mask"]
        decoder_token_ids, decoder_padding_mask = inputs["decoder_token_ids"], inputs["decoder_padding_mask"]
        hidden_states, encoder_hidden_states, self_attention_cache, cross_attention_cache = (
            self._build_cache(encoder_token_ids, encoder_padding_mask, decoder_token_ids)
        )
        index = ops.min(ops.sum(ops.cast(decoder_padding_mask, "int32"), axis=-1))  # first free slot

        def next(prompt, cache, index):
            cache_index = index - 1  # the previous token's slot
            prompt = ops.slice(prompt, [0, cache_index], [ops.shape(prompt)[0], 1])  # (B, 1)
            self_cache, context, context_mask, cross_cache = cache
            logits, hidden, self_cache, _ = self.call_decoder_with_cache(
                context, context_mask, prompt,
                self_attention_cache=self_cache, self_attention_cache_update_index=cache_index,
                cross_attention_cache=cross_cache, cross_attention_cache_update_index=None,
            )
            return ops.squeeze(logits, axis=1), ops.squeeze(hidden, axis=1), (
                self_cache, context, context_mask, cross_cache)

        decoder_token_ids = self.sampler(
            next=next, prompt=decoder_token_ids,
            cache=(self_attention_cache, encoder_hidden_states, encoder_padding_mask, cross_attention_cache),
            index=index, mask=decoder_padding_mask, stop_token_ids=stop_token_ids,
            hidden_states=hidden_states, model=self,
        )
        return {"decoder_token_ids": decoder_token_ids}


def keras_hub_greedy_decode(model, source_tokens, start_id, end_id, max_length):
    """Greedy decoding through ``model.generate``: (B, S) -> int32 NumPy (B, max_length).

    The model must be compiled with ``sampler=keras_hub.samplers.GreedySampler()``. The prompt
    is the start id followed by ``max_length`` free slots; the returned ids drop the start id.
    ``generate`` stops early only when every row has emitted ``end_id``.
    """
    source = np.asarray(source_tokens, dtype=np.int32)
    prompt = np.full((source.shape[0], max_length + 1), model.pad_id, dtype=np.int32)
    prompt[:, 0] = start_id
    inputs = dict(encoder_token_ids=source, encoder_padding_mask=source != model.pad_id,
                  decoder_token_ids=prompt, decoder_padding_mask=prompt != model.pad_id)
    return model.generate(inputs, stop_token_ids=(end_id,))["decoder_token_ids"][:, 1:]

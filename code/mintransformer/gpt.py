"""A decoder-only language model, GPT-style (chapter 12), from the layers of the encoder-decoder."""

import math

import keras
import numpy as np
from keras import ops

from ._util import build_once
from .decoder import Decoder
from .layernorm import NORMS
from .masks import decoder_self_mask
from .multihead import key_value_heads
from .positional import PositionalEmbedding
from .rotary import LAYOUTS

ACTIVATIONS = ("relu", "gelu", "swiglu")
POSITIONS = ("learned", "sinusoidal", "none", "rotary")
INITIALIZATIONS = ("default", "gpt2")


@keras.saving.register_keras_serializable(package="mintransformer")
def gelu(x):
    """GELU as GPT and GPT-2 compute it: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).

    The tanh approximation of x * Phi(x) (Hendrycks and Gimpel, 2016), the ``gelu`` of OpenAI's
    released GPT-2 code; Keras's ``gelu`` defaults to the exact form, with the error function.
    """
    return keras.activations.gelu(x, approximate=True)


def _check_switches(positions, activation, norm, num_heads, num_key_value_heads, rotary_layout):
    """MinGPT's and parameter_count's checks of chapter 13's switches: a ValueError naming the wrong one."""
    for name, value, allowed in [("positions", positions, POSITIONS), ("activation", activation, ACTIVATIONS),
                                 ("norm", norm, NORMS), ("rotary_layout", rotary_layout, LAYOUTS)]:
        if value not in allowed:
            raise ValueError(f"{name}={value!r} must be one of {allowed}.")
    key_value_heads(num_heads, num_key_value_heads)


@keras.saving.register_keras_serializable(package="mintransformer")
class MinGPT(keras.Model):
    """A decoder-only Transformer language model: the decoder stack without cross-attention.

    tokens -> embedding + positions -> dropout -> N x [masked self-attention, FFN] -> x E^T -> logits

    It reads one sequence and predicts, at every position t, the token at t + 1 (Radford et al.,
    2018 and 2019). The layers are the encoder-decoder's: ``PositionalEmbedding``, a ``Decoder``
    whose ``DecoderLayer``s leave out cross-attention, and the output projection tied to the
    token embedding. The defaults of the architecture are GPT-2's choices, which differ from the
    paper's: pre-norm with a final layer norm, learned positions, no sqrt(d_model) on the
    embeddings, the tied output. Those of the activation, the norms' epsilon and the initial
    weights are the package's (chapter 12's addition model was trained with them); GPT-2's
    are one switch each.

    Args:
        num_layers, d_model, num_heads, dff: sizes, as in ``MinTransformer``.
        vocab_size: number of token ids.
        max_length: the context: the longest sequence the model reads.
        dropout: P_drop.
        norm_first: True = pre-norm (GPT-2, the default); False = the paper's post-norm.
        pad_id: the padding id; padded positions are never attended to. ``-1`` (no id is -1):
            no padding mask, every token is attended to, as in GPT-2, which has none and whose
            id 0 is a token ("!"). With ``pad_id=-1`` the decoding functions cannot ban a pad
            token (there is none) and fill the slots after ``end_id`` with -1.
        positions, scale_embeddings: as in ``PositionalEmbedding``; the defaults are GPT-2's.
        share_embeddings: tie the output projection to the token embedding (GPT-2 does); False
            adds a separate ``Dense(vocab_size)``.
        activation: the feed-forward network's, ``"relu"`` (the paper's, the default),
            ``"gelu"`` (GPT's and GPT-2's, in their tanh form: ``gelu`` above) or ``"swiglu"``
            (Llama's gated network, ``FeedForward``; chapter 13).
        norm_epsilon: every layer norm's epsilon: 1e-6 (the default, the package's) or 1e-5 (GPT-2's).
        initialization: ``"default"``, the package's: Glorot-uniform kernels (Keras's), a token
            embedding of standard deviation 1/sqrt(d_model) and learned positions of 1/sqrt(2),
            the sinusoids' size; without ``scale_embeddings`` the positions then start
            sqrt(d_model / 2) times as large as the token embedding. ``"gpt2"``, GPT-2's: every
            kernel and the token embedding normal with standard deviation 0.02, learned
            positions 0.01 (OpenAI's released code), and the residual projections, attention's
            W^O and the FFN's second layer, 0.02 / sqrt(2 num_layers): GPT-2's paper scales the
            residual layers' weights by 1/sqrt(N), N the number of residual layers, two per
            block (nanoGPT's reading; the released code is for inference and does not show it).
            Biases start at zero and layer norms at gamma = 1, beta = 0 in both.
        norm: ``"layer"`` (layer norm, the default) or ``"rms"`` (RMSNorm), every norm of the model.
        num_key_value_heads: self-attention's key/value heads, None for ``num_heads`` (grouped-query
            attention when fewer, ``MultiHeadAttention``).
        rotary_layout: with ``positions="rotary"`` (no position is added to the embeddings; the
            queries and keys of every layer are rotated instead, RoPE), which features pair up:
            ``"interleaved"`` (the default, Meta's Llama code) or ``"half"`` (KerasHub's and
            Hugging Face's).
        use_bias: False leaves out every bias of the attentions and the feed-forward networks.
        ``LLAMA_STYLE`` below holds the switches of a Llama-style model (chapter 13).

    With ``norm_first=True``, ``positions="learned"``, ``scale_embeddings=False``,
    ``share_embeddings=True``, ``activation="gelu"``, ``norm_epsilon=1e-5`` and ``pad_id=-1`` the
    model computes GPT-2's forward pass on every text, id 0 included (``tests/test_gpt.py`` checks
    it against a NumPy transcription of the released code, weights copied in); with the default
    ``pad_id=0`` the id 0 in a text would be masked as padding. ``initialization="gpt2"`` also
    draws GPT-2's initial weights.

    Call:
        ``model(tokens (B, T), training=False)`` -> logits (B, T, vocab_size), float32. With
        ``return_attention_scores=True`` also a dict ``layer_i/self_attention`` -> (B, h, T, T).
        Under ``dtype="mixed_float16"`` every sub-layer computes in float16; the logits are float32.
    """

    def __init__(self, num_layers, d_model, num_heads, dff, vocab_size, max_length, dropout=0.1,
                 norm_first=True, pad_id=0, positions="learned", scale_embeddings=False,
                 share_embeddings=True, activation="relu", norm_epsilon=1e-6, initialization="default",
                 norm="layer", num_key_value_heads=None, rotary_layout="interleaved", use_bias=True, **kwargs):
        super().__init__(**kwargs)
        _check_switches(positions, activation, norm, num_heads, num_key_value_heads, rotary_layout)
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} must be one of {ACTIVATIONS}.")
        if initialization not in INITIALIZATIONS:
            raise ValueError(f"initialization={initialization!r} must be one of {INITIALIZATIONS}.")
        if (not isinstance(pad_id, (int, np.integer)) or isinstance(pad_id, bool)
                or not -1 <= pad_id < vocab_size):
            raise ValueError(f"pad_id={pad_id!r} must be a token id, 0 <= pad_id < vocab_size={vocab_size}, "
                             "or -1 for no padding mask (GPT-2's).")
        pad_id = int(pad_id)
        self.num_layers, self.d_model, self.num_heads, self.dff = num_layers, d_model, num_heads, dff
        self.vocab_size, self.max_length, self.dropout = vocab_size, max_length, dropout
        self.norm_first, self.pad_id = norm_first, pad_id
        self.positions, self.scale_embeddings = positions, scale_embeddings
        self.share_embeddings = share_embeddings
        self.activation, self.norm_epsilon, self.initialization = activation, norm_epsilon, initialization
        self.norm, self.num_key_value_heads, self.use_bias = norm, num_key_value_heads, use_bias
        self.rotary_layout = rotary_layout
        rotary = rotary_layout if positions == "rotary" else None
        policy = dict(dtype=self.dtype_policy)  # mixed precision reaches every sub-layer
        self.embedding = PositionalEmbedding(vocab_size, d_model, max_length,
                                             "none" if positions == "rotary" else positions, scale_embeddings,
                                             name="embedding", **policy)
        self.embedding_dropout = keras.layers.Dropout(dropout, **policy)
        self.decoder = Decoder(num_layers, d_model, num_heads, dff, dropout, norm_first, cross_attention=False,
                               norm=norm, activation="swiglu" if activation == "swiglu" else "relu",
                               num_key_value_heads=num_key_value_heads, rotary=rotary, use_bias=use_bias,
                               name="decoder", **policy)
        self.final_layer = None if share_embeddings else keras.layers.Dense(vocab_size, use_bias=use_bias,
                                                                            name="final_layer",
                                                                            **policy)
        self._set_gpt2_choices()

    def _set_gpt2_choices(self):
        """Set the activation, the norms' epsilon and the initializers on the (not yet built) sub-layers.

        The shared layers take no such options: the choices are GPT-2's alone. The defaults change
        nothing, so a default model draws the same initial weights as before these options existed.
        """
        layers = self.decoder.stack
        norms = [n for layer in layers for n in (layer.norm1, layer.norm3)] + [self.decoder.final_norm]
        for norm in norms:
            if norm is not None:
                norm.epsilon = self.norm_epsilon
        if self.activation == "gelu":
            for layer in layers:
                layer.ffn.inner.activation = gelu
        if self.initialization != "gpt2":
            return

        def normal(stddev):  # a new initializer per weight: one instance would draw the same values
            return keras.initializers.RandomNormal(stddev=stddev)

        self.embedding.embedding.embeddings_initializer = normal(0.02)  # GPT-2's wte
        if self.embedding.position_embedding is not None:
            self.embedding.position_embedding.embeddings_initializer = normal(0.01)  # GPT-2's wpe
        residual = 0.02 / math.sqrt(2 * self.num_layers)  # the 2N residual layers' projections
        for layer in layers:
            attention, ffn = layer.self_attention, layer.ffn
            denses = [(attention.wq, 0.02), (attention.wk, 0.02), (attention.wv, 0.02),
                      (attention.wo, residual), (ffn.inner, 0.02), (ffn.up, 0.02), (ffn.outer, residual)]
            for dense, stddev in [(d, s) for d, s in denses if d is not None]:
                dense.kernel_initializer = normal(stddev)  # the biases stay zeros, Dense's default
        if self.final_layer is not None:
            self.final_layer.kernel_initializer = normal(0.02)

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
            ``(logits (B, V), updated caches)``: the logits at the LAST position fed,
            ``position + n - 1`` (they predict the token after it), equal (up to rounding) to
            ``self(sequence)[:, position + n - 1]`` when the sequence's first ``position + n``
            tokens have been fed. The logits of the earlier positions fed are not returned (a
            prefill needs only the last), as in ``MinTransformer.decode_step``.
        """
        n = tokens.shape[1]
        if isinstance(position, (int, np.integer)) and n is not None and position + n > self.max_length:
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
            activation=self.activation, norm_epsilon=self.norm_epsilon, initialization=self.initialization,
            norm=self.norm, num_key_value_heads=self.num_key_value_heads, rotary_layout=self.rotary_layout,
            use_bias=self.use_bias,
        )
        return config


# The switches of a Llama-style model (Touvron et al., 2023): pre-norm with RMSNorm (epsilon 1e-5,
# Llama 2's), rotary positions and nothing added to the embeddings, SwiGLU, no biases, an output
# projection of its own, and no padding mask (pass ``pad_id`` to mask one). Sizes, the number of
# key/value heads (grouped-query attention) and dropout are the caller's.
LLAMA_STYLE = dict(norm_first=True, norm="rms", norm_epsilon=1e-5, positions="rotary", scale_embeddings=False,
                   activation="swiglu", use_bias=False, share_embeddings=False, pad_id=-1)


def parameter_count(num_layers, d_model, num_heads, dff, vocab_size, max_length, norm_first=True,
                    positions="learned", share_embeddings=True, activation="relu", norm="layer",
                    num_key_value_heads=None, use_bias=True, rotary_layout="interleaved", **unused):
    """The number of weights of ``MinGPT(**config)``, counted from its configuration alone.

    It builds nothing, so it counts a model too large to build here: Llama 2 7B's configuration
    (``num_layers=32, d_model=4096, num_heads=32, dff=11008, vocab_size=32000`` with
    ``LLAMA_STYLE``) gives 6,738,415,616, the count Meta reports for it. ``tests/test_modern.py``
    checks the formula against ``count_params()`` of built models. Other keyword arguments of
    ``MinGPT`` (dropout, epsilon, ...) change no count and are accepted and ignored.
    """
    _check_switches(positions, activation, norm, num_heads, num_key_value_heads, rotary_layout)
    kv_heads = key_value_heads(num_heads, num_key_value_heads)
    d_k = d_v = d_model // num_heads
    bias = 1 if use_bias else 0
    attention = (d_model * num_heads * d_k + bias * num_heads * d_k  # W^Q
                 + d_model * kv_heads * d_k + bias * kv_heads * d_k  # W^K
                 + d_model * kv_heads * d_v + bias * kv_heads * d_v  # W^V
                 + num_heads * d_v * d_model + bias * d_model)  # W^O
    matrices = 3 if activation == "swiglu" else 2
    ffn = (matrices - 1) * (d_model * dff + bias * dff) + dff * d_model + bias * d_model
    one_norm = d_model * (2 if norm == "layer" else 1)  # gamma (and beta)
    layer = attention + ffn + 2 * one_norm
    total = num_layers * layer + vocab_size * d_model  # the token embedding
    total += one_norm if norm_first else 0  # the final norm
    total += max_length * d_model if positions == "learned" else 0
    total += 0 if share_embeddings else d_model * vocab_size + bias * vocab_size  # the separate output Dense
    return total

"""The Keras layer contract (tests/layer_contract.py), checked once for every layer."""

import keras
import mintransformer as mt
import numpy as np
import pytest
from layer_contract import Features, Tokens, run_layer_contract

D, H, DFF, N, V, MAX_LEN = 8, 2, 16, 2, 11, 20
T, S = 5, 7

# Parameters of the building blocks, counted from the architecture.
MHA_PARAMS = 4 * (D * D + D)
FFN_PARAMS = D * DFF + DFF + DFF * D + D
LN_PARAMS = 2 * D
ENC_LAYER_PARAMS = MHA_PARAMS + FFN_PARAMS + 2 * LN_PARAMS
DEC_LAYER_PARAMS = 2 * MHA_PARAMS + FFN_PARAMS + 3 * LN_PARAMS
# Chapter 13's switches: one key/value head of d_k = D / H, no biases; SwiGLU's third matrix.
MQA_PARAMS = D * D + 2 * D * (D // H) + D * D
SWIGLU_PARAMS = 2 * (D * DFF + DFF) + DFF * D + D
LLAMA_LAYER_PARAMS = MQA_PARAMS + 3 * D * DFF + 2 * D


def source_mask(tokens):
    return mt.padding_mask(tokens)  # works on symbolic tokens as well


# name: (factory, call_args_fn, inputs, weight tensors, parameters, output width)
CASES = {
    "MultiHeadAttention/self": (
        lambda: mt.MultiHeadAttention(D, H),
        lambda layer, t: layer(t[0], t[0], t[0]),
        [Features(D, T)], 8, MHA_PARAMS, D),
    "MultiHeadAttention/cross+mask+scores": (
        lambda: mt.MultiHeadAttention(D, H, dropout=0.1),
        lambda layer, t: layer(t[0], t[1], t[1], attention_mask=source_mask(t[2]),
                               return_attention_scores=True),
        [Features(D, T), Features(D, S), Tokens(V, S)], 8, MHA_PARAMS, D),
    "MultiHeadAttention/grouped+rotary+no bias": (
        lambda: mt.MultiHeadAttention(D, H, num_key_value_heads=1, rotary="half", use_bias=False),
        lambda layer, t: layer(t[0], t[0], t[0]),
        [Features(D, T)], 4, MQA_PARAMS, D),
    "PositionalEmbedding": (
        lambda: mt.PositionalEmbedding(V, D, MAX_LEN),
        lambda layer, t: layer(t[0]),
        [Tokens(V, T)], 1, V * D, D),
    "LayerNormalization": (
        lambda: mt.LayerNormalization(),
        lambda layer, t: layer(t[0]),
        [Features(D, T)], 2, LN_PARAMS, D),
    "RMSNormalization": (
        lambda: mt.RMSNormalization(),
        lambda layer, t: layer(t[0]),
        [Features(D, T)], 1, D, D),
    "FeedForward": (
        lambda: mt.FeedForward(D, DFF),
        lambda layer, t: layer(t[0]),
        [Features(D, T)], 4, FFN_PARAMS, D),
    "FeedForward/swiglu": (
        lambda: mt.FeedForward(D, DFF, activation="swiglu"),
        lambda layer, t: layer(t[0]),
        [Features(D, T)], 6, SWIGLU_PARAMS, D),
    "EncoderLayer": (
        lambda: mt.EncoderLayer(D, H, DFF),
        lambda layer, t: layer(t[0], attention_mask=source_mask(t[1])),
        [Features(D, S), Tokens(V, S)], 16, ENC_LAYER_PARAMS, D),
    "DecoderLayer": (
        lambda: mt.DecoderLayer(D, H, DFF),
        # (mt.decoder_self_mask cannot be built on symbolic tokens of unknown length: see
        # test_masks.py::test_decoder_self_mask_on_symbolic_tokens_of_unknown_length.)
        lambda layer, t: layer(t[0], t[1], self_mask=mt.padding_mask(t[2]),
                               cross_mask=source_mask(t[3])),
        [Features(D, T), Features(D, S), Tokens(V, T), Tokens(V, S)], 26, DEC_LAYER_PARAMS, D),
    "DecoderLayer/no cross-attention": (
        lambda: mt.DecoderLayer(D, H, DFF, cross_attention=False),
        lambda layer, t: layer(t[0], None, self_mask=mt.padding_mask(t[1])),
        [Features(D, T), Tokens(V, T)], 16, ENC_LAYER_PARAMS, D),
    "Encoder": (
        lambda: mt.Encoder(N, D, H, DFF),
        lambda layer, t: layer(t[0], attention_mask=source_mask(t[1]), return_attention_scores=True),
        [Features(D, S), Tokens(V, S)], 16 * N, N * ENC_LAYER_PARAMS, D),
    "Decoder": (
        lambda: mt.Decoder(N, D, H, DFF),
        lambda layer, t: layer(t[0], t[1], cross_mask=source_mask(t[2])),
        [Features(D, T), Features(D, S), Tokens(V, S)], 26 * N, N * DEC_LAYER_PARAMS, D),
    # One layer per stack keeps the whole model's symbolic tracing cheap; the stacks of two
    # are covered above. Pre-norm (final norms) is covered here.
    "MinTransformer/tied": (
        lambda: mt.MinTransformer(1, D, H, DFF, V, V, MAX_LEN, share_embeddings=True),
        lambda layer, t: layer((t[0], t[1])),
        [Tokens(V, S), Tokens(V, T)], 1 + 16 + 26,
        V * D + ENC_LAYER_PARAMS + DEC_LAYER_PARAMS, V),
    "MinTransformer/untied+pre-norm": (
        lambda: mt.MinTransformer(1, D, H, DFF, V, V + 2, MAX_LEN, norm_first=True),
        lambda layer, t: layer((t[0], t[1])),
        [Tokens(V, S), Tokens(V, T)], 2 + 16 + 26 + 2 * 2 + 2,
        V * D + (V + 2) * D + ENC_LAYER_PARAMS + DEC_LAYER_PARAMS + 2 * LN_PARAMS
        + D * (V + 2) + (V + 2), V + 2),
    # The decoder-only model: no cross-attention (16 weights a layer, not 26), learned positions,
    # tied output, pre-norm (a final norm); and post-norm with an untied output layer.
    "MinGPT/pre-norm": (
        lambda: mt.MinGPT(N, D, H, DFF, V, MAX_LEN),
        lambda layer, t: layer(t[0]),
        [Tokens(V, T)], 2 + 16 * N + 2,
        V * D + MAX_LEN * D + N * (ENC_LAYER_PARAMS) + LN_PARAMS, V),
    "MinGPT/post-norm+untied": (
        lambda: mt.MinGPT(1, D, H, DFF, V, MAX_LEN, norm_first=False, share_embeddings=False,
                          positions="sinusoidal", scale_embeddings=True),
        lambda layer, t: layer(t[0]),
        [Tokens(V, T)], 1 + 16 + 2, V * D + ENC_LAYER_PARAMS + D * V + V, V),
    # Chapter 13's Llama-style model: RMSNorm (gamma only), rotary positions (no table), SwiGLU,
    # one key/value head, no biases, an untied output layer without bias.
    "MinGPT/llama-style": (
        lambda: mt.MinGPT(N, D, H, DFF, V, MAX_LEN, num_key_value_heads=1, **mt.LLAMA_STYLE),
        lambda layer, t: layer(t[0]),
        [Tokens(V, T)], 1 + 9 * N + 1 + 1, V * D + N * LLAMA_LAYER_PARAMS + D + D * V, V),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_layer_contract(case, tmp_path):
    factory, call_args_fn, inputs, num_weights, num_params, width = CASES[case]
    run_layer_contract(factory, call_args_fn, inputs=inputs, tmp_path=tmp_path,
                       expected_num_weights=num_weights, expected_num_params=num_params,
                       expected_output_last_dim=width,
                       output_input=1 if case.startswith("MinTransformer") else 0)


def test_every_public_layer_is_covered_by_the_contract():
    layers = {name for name in mt.__all__
              if isinstance(getattr(mt, name), type) and issubclass(getattr(mt, name),
                                                                    keras.layers.Layer)}
    covered = {case.split("/")[0] for case in CASES}
    assert layers == covered


@pytest.mark.parametrize("name", ["MultiHeadAttention", "PositionalEmbedding",
                                  "LayerNormalization", "RMSNormalization", "FeedForward", "EncoderLayer",
                                  "DecoderLayer", "Encoder", "Decoder", "MinTransformer", "MinGPT",
                                  "TransformerSchedule", "MaskedLoss", "masked_loss",
                                  "masked_accuracy"])
def test_registered_for_serialization(name):
    assert keras.saving.get_registered_object(f"mintransformer>{name}") is getattr(mt, name)


@pytest.mark.parametrize("overrides", [dict(share_embeddings=True), dict(norm_first=True)],
                         ids=["tied", "pre-norm"])
def test_subclassed_model_saves_and_loads_identically(overrides, tmp_path, rng):
    model = mt.MinTransformer(1, D, H, DFF, V, V, MAX_LEN, **overrides)
    source = rng.integers(1, V, size=(2, S))
    target = rng.integers(1, V, size=(2, T))
    source[1, -3:] = 0
    expected = model((source, target))
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert type(loaded) is mt.MinTransformer
    assert loaded.get_config() == model.get_config()
    assert len(loaded.weights) == len(model.weights)
    assert loaded.count_params() == model.count_params()
    np.testing.assert_array_equal(loaded((source, target)), expected)
    if overrides.get("share_embeddings"):
        assert loaded.target_embedding is loaded.source_embedding

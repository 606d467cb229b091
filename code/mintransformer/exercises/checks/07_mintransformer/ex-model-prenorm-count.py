"""Exercise: the model's parameter count as a formula, checked against count_params()."""

import contextlib
from unittest import mock

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-model-prenorm-count"
points = 3

KEYS = ("num_layers", "d_model", "num_heads", "dff", "input_vocab_size", "target_vocab_size",
        "share_embeddings", "norm_first")
# The paper's base model (Table 3) with a shared vocabulary of 37,000: the chapter's table counts
# 63,082,496 post-norm; pre-norm adds two final layer norms.
BASE = (6, 512, 8, 2048, 37000, 37000, True)
# count_params() of mt.MinTransformer for every configuration the check uses (in the order of KEYS).
# tests/test_exercises_07_mintransformer.py builds each of these models to confirm its number; the
# check builds none, so that it runs in a moment.
COUNTS = {
    (1, 16, 2, 32, 20, 20, True, False): 5_888,
    (2, 24, 3, 40, 25, 25, True, False): 23_416,
    (1, 16, 2, 32, 20, 13, False, False): 6_317,
    (2, 24, 3, 40, 25, 17, False, False): 24_249,
    (1, 16, 4, 24, 11, 11, True, True): 5_280,
    (2, 24, 3, 40, 25, 17, False, True): 24_345,
    BASE + (False,): 63_082_496,
    BASE + (True,): 63_084_544,
}


def _formula(N, D, h, dff, Vi, Vt, share, norm_first, *, attention_bias=True, heads_multiply=False,
             cross=True, norm=2, ffn_bias=True, final_norms="pre", output="dense", tied_copies=1,
             tied_bias=False):
    """The count, and the count with one known mistake (the keyword arguments)."""
    attention = 4 * (D * D + D) if attention_bias else 4 * D * D
    if heads_multiply:  # keras.layers.MultiHeadAttention(h, key_dim=D)
        attention = 4 * D * h * D + 3 * h * D + D
    ffn = 2 * D * dff + dff + D if ffn_bias else 2 * D * dff
    encoder_layer = attention + ffn + 2 * norm * D
    decoder_layer = (2 * attention + ffn + 3 * norm * D) if cross else (attention + ffn + 2 * norm * D)
    if share:
        embeddings = tied_copies * Vi * D + (Vi if tied_bias else 0)
    else:
        embeddings = Vi * D + Vt * D + {"dense": D * Vt + Vt, "no bias": D * Vt, "none": 0,
                                        "input vocab": D * Vi + Vi}[output]
    has_final = {"pre": norm_first, "never": False, "always": True}[final_norms]
    return embeddings + N * (encoder_layer + decoder_layer) + (2 * 2 * D if has_final else 0)


MISTAKES = [
    (dict(attention_bias=False),
     "Your count matches attention layers without biases: each of W^Q, W^K, W^V, W^O is a Dense "
     "layer with a bias, 4(D^2 + D) parameters per attention layer."),
    (dict(heads_multiply=True),
     "Your attention count grows with num_heads (as Keras's MultiHeadAttention(h, key_dim=d_model) "
     "would): the package's heads split D, so an attention layer has 4(D^2 + D) parameters whatever h."),
    (dict(cross=False),
     "Your decoder layers have a single attention and two norms: each has masked self-attention AND "
     "cross-attention (8(D^2 + D)) and three layer norms."),
    (dict(norm=1),
     "Your layer norms have D parameters: each has a gain and a bias, 2D."),
    (dict(ffn_bias=False),
     "Your FFN has no biases: it has 2 D d_ff + d_ff + D parameters."),
    (dict(final_norms="never"),
     "With norm_first=True each stack ends with a final layer norm: 2 x 2D more than post-norm."),
    (dict(final_norms="always"),
     "Only pre-norm stacks end with a final layer norm; the paper's post-norm model has none."),
    (dict(output="no bias"),
     "Untied, the output layer is a Dense layer with a bias: D x V_target + V_target."),
    (dict(output="none"),
     "Untied, the output projection has its own D x V_target matrix and a bias of V_target; you "
     "counted only the two embeddings."),
    (dict(output="input vocab"),
     "Untied, the output layer maps to the TARGET vocabulary: D x target_vocab_size + target_vocab_size."),
    (dict(tied_copies=2),
     "Tied, the source embedding, the target embedding and the output projection are ONE V x D "
     "matrix: count it once."),
    (dict(tied_copies=3),
     "Tied, the source embedding, the target embedding and the output projection are ONE V x D "
     "matrix: count it once."),
    (dict(tied_bias=True),
     "Tied, the output projection is x E^T with the shared matrix E and no bias: the tied model "
     "has no bias of V entries (only the untied output layer has one)."),
]

# The classes the student's function may not build: a model, its layers, or Keras's attention.
REFUSED = (mt.MinTransformer, mt.Encoder, mt.Decoder, mt.EncoderLayer, mt.DecoderLayer,
           mt.MultiHeadAttention, mt.PositionalEmbedding, keras.layers.MultiHeadAttention)


@contextlib.contextmanager
def _refused():
    """While the student's function runs, building any of REFUSED fails and is recorded."""
    used = []

    def refuse(self, *args, **kwargs):
        used.append(type(self).__name__)
        raise RuntimeError("this exercise asks you to count without building a model or its layers")

    with contextlib.ExitStack() as stack:
        for cls in REFUSED:
            stack.enter_context(mock.patch.object(cls, "__init__", refuse))
        yield used


def _student(param_count, config):
    with _refused() as used:
        try:
            got = call(param_count, "param_count", **dict(zip(KEYS, config)))
        except AssertionError:
            if not used:
                raise
    if used:
        raise AssertionError(
            f"`param_count` builds {used[0]}: count the parameters with a formula, without building "
            "a model or any of its layers."
        )
    try:
        value = float(got)
    except Exception:
        raise AssertionError(f"`param_count` must return a number, not {type(got).__name__}.") from None
    return value


def _compare(configs, got, expected):
    for mistake, message in MISTAKES:
        wrong = [_formula(*c, **mistake) for c in configs]
        if np.allclose(got, wrong, rtol=0, atol=0.5) and not np.allclose(wrong, expected, rtol=0, atol=0.5):
            raise AssertionError(message)
    for config, g, e in zip(configs, got, expected):
        if abs(g - e) > 0.5:
            arguments = ", ".join(f"{k}={v}" for k, v in zip(KEYS, config))
            raise AssertionError(
                f"param_count({arguments}) returns {g:,.0f}: that is {'too many' if g > e else 'too few'} "
                "for the package's model. "
                "Add up: embeddings, N encoder layers (attention, FFN, 2 norms), N decoder layers "
                "(2 attentions, FFN, 3 norms), and for pre-norm a final norm per stack."
            )


def _check(param_count, configs, norm_first=None):
    """Small models first; the base model only once they agree (a function that builds it is slow)."""
    _compare(configs, [_student(param_count, c) for c in configs], [COUNTS[c] for c in configs])
    if norm_first is not None:
        base = BASE + (norm_first,)
        _compare([base], [_student(param_count, base)], [COUNTS[base]])


@test_case(points=1)
def tied_post_norm(param_count):
    _check(param_count, [(1, 16, 2, 32, 20, 20, True, False), (2, 24, 3, 40, 25, 25, True, False)],
           norm_first=False)


@test_case(points=1)
def untied(param_count):
    _check(param_count, [(1, 16, 2, 32, 20, 13, False, False), (2, 24, 3, 40, 25, 17, False, False)])


@test_case(points=1)
def pre_norm(param_count):
    _check(param_count, [(1, 16, 4, 24, 11, 11, True, True), (2, 24, 3, 40, 25, 17, False, True)],
           norm_first=True)

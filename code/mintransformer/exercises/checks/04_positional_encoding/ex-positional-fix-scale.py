"""Exercise: find and fix the bug of the MinTransformer course chapter, sqrt(512) with d_model 128; the factor
that its own initialiser (uniform) would need.

The check compares the fixed embedding with the package's; for the factor it catches known mistakes, and the
factor itself is a hidden test case (grading/hidden/), checked when the notebook is graded.
"""

import math

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-positional-fix-scale"
points = 4


def _case(seed, d_model, vocab_size=30, shape=(2, 6)):
    rng = np.random.default_rng(seed)
    embeddings = rng.normal(scale=d_model**-0.5, size=(vocab_size, d_model)).astype("float32")
    tokens = rng.integers(0, vocab_size, size=shape)
    return tokens, embeddings


def _reference(tokens, embeddings):
    """The package's input layer, with these embeddings as its weights."""
    vocab_size, d_model = embeddings.shape
    layer = mt.PositionalEmbedding(vocab_size, d_model, max_length=tokens.shape[1], name="reference")
    layer.build(tokens.shape)
    layer.embedding.embeddings.assign(embeddings)
    return to_numpy(layer(tokens), "")


def _check(fixed_embed, d_model, seed):
    tokens, embeddings = _case(seed, d_model)
    case = f"With d_model = {d_model}"
    out = to_numpy(call(fixed_embed, "fixed_embed", tokens, embeddings), f"{case}: the result")
    expected = _reference(tokens, embeddings)
    e = embeddings[tokens].astype(np.float64)
    pe = mt.positional_encoding(tokens.shape[1], d_model)[None]
    wrong = [
        (math.sqrt(512) * e + pe,
         "still the bug: the embedding is scaled by sqrt(512) = 22.6 whatever the width. The factor "
         "is sqrt(d_model) of the model at hand: compute it from the embeddings' width, "
         "embeddings.shape[1], never type it."),
        (e + pe,
         "the embedding is not scaled at all (the from-scratch TensorFlow tutorial's mistake): "
         "multiply it by sqrt(d_model) before adding the encoding."),
        (math.sqrt(d_model) * (e + pe),
         "you scaled the encoding too. Only the embedding is multiplied by sqrt(d_model); the "
         "encoding is added as it is."),
        (d_model * e + pe, "the factor is d_model; it is its square root, sqrt(d_model)."),
        (e / math.sqrt(d_model) + pe, "you divided the embedding by sqrt(d_model); multiply it."),
    ]
    for table, message in wrong:
        if like(out, table, atol=1e-4) and not np.allclose(table, expected, atol=1e-4):
            raise AssertionError(f"{case}: {message}")
    close(out, expected, f"{case}: the result", atol=1e-4,
          hint="The model's input is sqrt(d_model) * E[tokens] + PE[:T], as mt.PositionalEmbedding computes it.")


@test_case(points=1)
def the_course_width(fixed_embed):
    _check(fixed_embed, 128, 0)


@test_case(points=1)
def the_paper_width(fixed_embed):
    _check(fixed_embed, 512, 1)


@test_case(points=1)
def a_small_width(fixed_embed):
    _check(fixed_embed, 16, 2)


LIMITS = (0.05, 0.1, 0.01)


def _factor(unit_rms_factor, limit, what):
    value = to_numpy(call(unit_rms_factor, "unit_rms_factor", limit), what)
    if value.size != 1:
        raise AssertionError(f"{what} has shape {value.shape}: it is one number, a factor.")
    return float(value.reshape(()))


@test_case(points=1)
def the_factor_for_a_uniform_initialiser(unit_rms_factor):
    for limit in LIMITS:
        what = f"unit_rms_factor({limit})"
        value = _factor(unit_rms_factor, limit, what)
        for wrong, message in [
            (1 / limit, "brings the LIMIT of the entries to 1, not their root mean square: compute the mean "
                        "square of the uniform distribution on [-limit, limit]"),
            (np.sqrt(2) / limit, "treats the entries like a sinusoid of amplitude `limit` (RMS limit / sqrt(2)); "
                                 "entries uniform in [-limit, limit] have another mean square"),
            (np.sqrt(128), "is sqrt(d_model) of the course's model: that factor suits entries of RMS "
                           "1/sqrt(d_model), which uniform entries in [-limit, limit] do not have"),
            (np.sqrt(512), "is the course's sqrt(512): it suits neither the width nor this initialiser"),
        ]:
            if np.isclose(value, wrong, rtol=1e-3):
                raise AssertionError(f"{what} {message}.")
        if not (np.isfinite(value) and value > 0):
            raise AssertionError(f"{what} is {value:g}: a factor that brings entries to an RMS of 1 is positive.")

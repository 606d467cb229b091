"""Exercise: the model's input, sqrt(d_model) E[tokens] + PE, written from its equation."""

import contextlib
from unittest import mock

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-model-embed"
points = 3


def _layer(vocab_size, d_model, init):
    """The package's layer with a fixed E, drawn from a NumPy generator numbered ``init``.

    (Not keras.utils.set_random_seed: the check runs in the student's kernel, whose random
    generators it would reset.)
    """
    layer = mt.PositionalEmbedding(vocab_size, d_model, max_length=16)
    layer.build((None, None))
    E = np.random.default_rng(init).normal(0, d_model**-0.5, (vocab_size, d_model))  # the layer's own scale
    layer.embedding.embeddings.assign(E.astype("float32"))
    return layer, to_numpy(layer.embedding.embeddings, "")  # E (V, D)


@contextlib.contextmanager
def _refused():
    """While the student's function runs, mt.PositionalEmbedding (and a model) refuse to be used."""
    used = []

    def refuse(self, *args, **kwargs):
        used.append(type(self).__name__)
        raise RuntimeError("this exercise asks you not to use mt.PositionalEmbedding")

    with contextlib.ExitStack() as stack:
        for cls, method in [(mt.PositionalEmbedding, "__init__"), (mt.PositionalEmbedding, "call"),
                            (mt.MinTransformer, "__init__")]:
            stack.enter_context(mock.patch.object(cls, method, refuse))
        yield used


def _student(my_embedding, E, tokens):
    with _refused() as used:
        try:
            got = call(my_embedding, "my_embedding", E, tokens)
        except AssertionError:
            if not used:
                raise
    if used:
        raise AssertionError(
            f"`my_embedding` uses {used[0]}: write the embedding from its equation, with E[tokens], "
            "sqrt(d_model) and mt.positional_encoding, without mt.PositionalEmbedding."
        )
    return to_numpy(got, "Your embedding")


def _concatenated_pe(length, depth):
    """All sines, then all cosines: the Keras functional-API tutorial's layout."""
    pe = mt.positional_encoding(length, depth)
    return np.concatenate([pe[:, 0::2], pe[:, 1::2]], axis=-1)


def _check(my_embedding, vocab_size, d_model, tokens, init, case):
    layer, E = _layer(vocab_size, d_model, init)
    expected = to_numpy(layer(tokens), "")
    got = _student(my_embedding, E.astype("float32"), tokens)
    T = tokens.shape[1]
    looked_up = E[tokens]  # (B, T, D) E[tokens], unscaled
    pe = mt.positional_encoding(T, d_model)
    wrong = [
        (np.sqrt(512) * looked_up + pe,
         f"You multiply by sqrt(512) = {np.sqrt(512):.1f}, but d_model is {d_model} here: that is the bug "
         "of the MinTransformer course chapter. Compute the factor from the width, "
         "sqrt(d_model) with d_model = E.shape[1]."),
        (looked_up + pe,
         "You add the positional encoding to E[tokens] without the factor sqrt(d_model) (the from-scratch "
         "TensorFlow tutorial's bug): the token then has entries of size 1/sqrt(d_model), a ripple on PE."),
        (looked_up / np.sqrt(d_model) + pe,
         "You divide E[tokens] by sqrt(d_model): multiply by it."),
        (np.sqrt(d_model) * (looked_up + pe),
         "You scale the positional encoding too: only the embedding is multiplied by sqrt(d_model), "
         "then PE is added as it is."),
        (np.sqrt(d_model) * looked_up,
         "The positional encoding is missing: add PE, the first T rows of mt.positional_encoding."),
        (np.sqrt(d_model) * looked_up + _concatenated_pe(T, d_model),
         "Your positional encoding has all sines, then all cosines (the Keras functional-API tutorial's "
         "layout): the paper interleaves them, sin in the even features and cos in the odd ones."),
        (np.sqrt(d_model) * looked_up + mt.positional_encoding(T + 1, d_model)[1:],
         "Your positions start at 1: the first token stands at position 0, so add rows 0 to T-1 of PE."),
    ]
    for answer, message in wrong:
        if like(got, answer, atol=1e-4) and not like(expected, answer, atol=1e-4):
            raise AssertionError(f"{case}: {message}")
    close(got, expected, f"{case}: your embedding (B, T, D)", atol=1e-4, rtol=1e-5,
          hint="x_t = sqrt(d_model) * E[token at t] + PE_t, with PE_t row t of mt.positional_encoding(T, d_model).")


@test_case(points=1)
def width_128(my_embedding):
    tokens = np.array([[5, 8, 3, 9, 12, 0], [7, 2, 6, 1, 0, 0]])
    _check(my_embedding, 40, 128, tokens, 0, "At d_model = 128")


@test_case(points=1)
def other_widths(my_embedding):
    rng = np.random.default_rng(1)
    for d_model in (8, 32, 512):
        tokens = rng.integers(0, 30, size=(3, 7))
        _check(my_embedding, 30, d_model, tokens, d_model, f"At d_model = {d_model}")


@test_case(points=1)
def one_token(my_embedding):
    _check(my_embedding, 10, 16, np.array([[4], [9]]), 2, "For sequences of one token (T = 1)")

"""Exercise: combine the look-ahead and padding masks in the book's convention."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy

OK_FORMAT = False
name = "ex-attention-combine-masks"
points = 2


def _diagnose(g, tokens):
    """Name the mistake of a mask ``g`` that broadcasts to (B, 1, T, T) but is wrong, if it is a known one."""
    B, T = tokens.shape
    expected = to_numpy(mt.decoder_self_mask(tokens), "") > 0  # (B, 1, T, T)
    allowed = np.broadcast_to(g, expected.shape) != 0
    if np.array_equal(allowed, expected):
        return
    causal = np.broadcast_to(np.tril(np.ones((T, T), bool)), expected.shape)  # key s <= query t
    real = np.broadcast_to((tokens != 0)[:, None, None, :], expected.shape)  # key s is not padding
    if np.array_equal(allowed, ~expected):
        raise AssertionError(
            "Your mask is the opposite one: True (or 1) where a key is blocked, the additive convention. "
            "In the book's convention True = may attend: combine mt.causal_mask(T) and "
            "mt.padding_mask(tokens) as they are, without inverting them."
        )
    either = causal | real
    if np.array_equal(allowed, either) and not np.array_equal(either, causal) and not np.array_equal(either, real):
        raise AssertionError(
            "You allowed a key that only one of the masks allows (an OR). With True = may attend, "
            "a key is allowed only if both masks allow it: combine them with AND."
        )
    real_query = np.broadcast_to((tokens != 0)[:, None, :, None], expected.shape)
    if np.array_equal(allowed, expected & real_query):
        raise AssertionError(
            "You also blocked every key for the padding queries (their rows are all False). "
            "mt.decoder_self_mask masks padding keys only: combine mt.causal_mask(T) with "
            "mt.padding_mask(tokens), which has shape (B, 1, 1, T)."
        )
    future, padding = allowed & ~causal, allowed & causal & ~real
    if future.any() and padding.any():
        raise AssertionError(
            "Your mask lets queries see later keys and padding keys: it must be True only where "
            "both mt.causal_mask(T) and mt.padding_mask(tokens) are True."
        )
    if padding.any():
        b, _, t, s = (int(i) for i in np.argwhere(padding)[0])
        raise AssertionError(
            f"Your mask ignores the padding: in sentence {b}, query {t} may attend to key {s}, which is "
            "padding. Combine the look-ahead mask with mt.padding_mask(tokens) (AND)."
        )
    if future.any():
        b, _, t, s = (int(i) for i in np.argwhere(future)[0])
        raise AssertionError(
            f"Your mask ignores the look-ahead: in sentence {b}, query {t} may attend to the later key {s}. "
            "Combine mt.padding_mask(tokens) with mt.causal_mask(T) (AND)."
        )


def _check(my_decoder_mask, tokens):
    got = call(my_decoder_mask, "my_decoder_mask", tokens)
    expected = to_numpy(mt.decoder_self_mask(tokens), "")
    g = to_numpy(got, "Your mask")
    try:
        np.broadcast_shapes(g.shape, expected.shape)
        broadcasts = np.broadcast_shapes(g.shape, expected.shape) == expected.shape
    except ValueError:
        broadcasts = False
    if broadcasts:
        _diagnose(g, tokens)
    close(g, expected, "Your mask (True = may attend, shape (B, 1, T, T))", atol=0,
          hint="Combine mt.causal_mask(T) and mt.padding_mask(tokens).")


@test_case(points=1)
def one_padded_batch(my_decoder_mask):
    _check(my_decoder_mask, np.array([[7, 8, 9, 0, 0], [7, 8, 9, 10, 11]]))


@test_case(points=1)
def random_batches(my_decoder_mask):
    rng = np.random.default_rng(0)
    for length in (2, 4, 6):
        lengths = rng.integers(1, length, size=4)  # padded sentences ...
        lengths[0] = length  # ... and a full one
        tokens = np.where(np.arange(length)[None] < lengths[:, None], rng.integers(3, 9, size=(4, length)), 0)
        _check(my_decoder_mask, tokens)

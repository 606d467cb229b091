"""Exercise: combine the look-ahead and padding masks in the book's convention."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy

OK_FORMAT = False
name = "ex-attention-combine-masks"
points = 2


def _check(my_decoder_mask, tokens):
    got = call(my_decoder_mask, "my_decoder_mask", tokens)
    expected = to_numpy(mt.decoder_self_mask(tokens), "")
    g = to_numpy(got, "Your mask")
    either = np.logical_or(to_numpy(mt.causal_mask(tokens.shape[1]), "") > 0,
                           to_numpy(mt.padding_mask(tokens), "") > 0)
    if g.shape == either.shape and np.array_equal(g > 0, either) and not np.array_equal(either, expected > 0):
        raise AssertionError(
            "You allowed a key that only one of the masks allows (an OR). With True = may attend, "
            "a key is allowed only if both masks allow it: combine them with AND."
        )
    close(g, expected, "Your mask (True = may attend, shape (B, 1, T, T))", atol=0,
          hint="Combine mt.causal_mask(T) and mt.padding_mask(tokens).")


@test_case(points=1)
def one_padded_batch(my_decoder_mask):
    _check(my_decoder_mask, np.array([[7, 8, 9, 0, 0], [7, 8, 9, 10, 11]]))


@test_case(points=1)
def random_batches(my_decoder_mask):
    rng = np.random.default_rng(0)
    for length in (1, 3, 6):
        lengths = rng.integers(1, length + 1, size=4)
        tokens = np.where(np.arange(length)[None] < lengths[:, None], rng.integers(3, 9, size=(4, length)), 0)
        _check(my_decoder_mask, tokens)

"""Exercise: fix a language model's self-attention mask (look-ahead AND padding)."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, refusing, to_numpy

OK_FORMAT = False
name = "ex-gpt-fix-mask"
points = 2


def _tokens():
    tokens = np.array([[5, 3, 8, 4, 7], [6, 2, 9, 0, 0], [4, 0, 0, 0, 0]], "int32")  # right padding
    return tokens


RULE = ("Write the mask yourself, from the buggy code: do not call the package's decoder_self_mask, "
        "causal_mask or padding_mask.")


def _check(lm_mask, tokens, what):
    expected = np.asarray(mt.decoder_self_mask(tokens, 0)).astype("float64")  # (B, 1, T, T), outside the block
    with refusing([mt.decoder_self_mask, mt.causal_mask, mt.padding_mask, mt.attends_causally], lm_mask, RULE):
        got = to_numpy(call(lm_mask, "lm_mask", tokens, 0), "lm_mask(...)")
    try:
        got = np.broadcast_to(got, expected.shape)
    except ValueError:
        raise AssertionError(f"lm_mask({what}) has shape {got.shape}; it must broadcast to (B, 1, T, T) "
                             f"= {expected.shape}.") from None
    if np.array_equal(got != 0, expected != 0):
        return
    T = tokens.shape[1]
    if np.array_equal(got != 0, np.transpose(expected, (0, 1, 3, 2)) != 0) or np.any(np.triu(got[0, 0], 1)):
        raise AssertionError(f"lm_mask({what}) lets a query position see key positions after its own.")
    if np.array_equal(got != 0, np.broadcast_to(np.tril(np.ones((T, T))), expected.shape) != 0):
        raise AssertionError(f"lm_mask({what}) is causal but lets real tokens attend to padding: AND it with "
                             "the padding mask.")
    raise AssertionError(f"lm_mask({what}) differs from the look-ahead AND padding mask "
                         "(True where query t may see key s: s <= t and token s is not padding).")


@test_case(points=1)
def without_padding(lm_mask):
    _check(lm_mask, _tokens()[:1], "one sequence, no padding")


@test_case(points=1)
def with_padding(lm_mask):
    _check(lm_mask, _tokens(), "three sequences, padded")

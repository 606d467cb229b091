"""Exercise: the decoder's self-attention mask for a packed batch (look-ahead AND padding AND same sentence)."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, refusing, to_numpy

OK_FORMAT = False
name = "ex-attention-combine-masks"
points = 2

RULE = ("`my_decoder_mask` calls mt.decoder_self_mask: build the mask from mt.causal_mask and "
        "mt.padding_mask (or from the tokens and segments directly), as the exercise asks.")


def _rules(tokens, segments):
    """The three rules, each broadcast to (B, 1, T, T): look-ahead, key not padding, same sentence."""
    B, T = tokens.shape
    shape = (B, 1, T, T)
    causal = np.broadcast_to(np.tril(np.ones((T, T), bool)), shape)  # key s <= query t
    real = np.broadcast_to((tokens != 0)[:, None, None, :], shape)  # key s is not padding
    same = np.broadcast_to((segments[:, :, None] == segments[:, None, :])[:, None], shape)
    return causal, real, same


def _diagnose(allowed, tokens, segments):
    """Name the mistake of a mask that broadcasts to (B, 1, T, T) but is wrong, if it is a known one."""
    causal, real, same = _rules(tokens, segments)
    expected = causal & real & same
    if np.array_equal(allowed, expected):
        return
    if np.array_equal(allowed, ~expected):
        raise AssertionError(
            "Your mask is the opposite one: True (or 1) where a key is blocked, the additive convention. "
            "In the book's convention True = may attend."
        )
    missing = {"same sentence": causal & real, "look-ahead": real & same, "padding": causal & same}
    missing = [rule for rule, mask in missing.items() if np.array_equal(allowed, mask)]
    if not missing and any(np.array_equal(allowed, m) for m in (
            causal | real | same, (causal & real) | same, (causal | real) & same, causal & (real | same),
            (causal & same) | real, (real & same) | causal)):
        raise AssertionError(
            "Your mask allows a key that one of the rules blocks: a key is allowed only if every rule "
            "allows it (look-ahead, padding and same sentence)."
        )
    other_sentence = allowed & ~same & (segments != 0)[:, None, :, None] & real
    if other_sentence.any() and missing in ([], ["same sentence"]):
        b, _, t, s = (int(i) for i in np.argwhere(other_sentence)[0])
        raise AssertionError(
            f"In row {b} of the batch, query {t} may attend to key {s}, which belongs to the other sentence "
            "packed in the same row: a query may see only its own sentence (compare the segments of the "
            "query and of the key)."
        )
    future = allowed & ~causal
    if future.any() and missing in ([], ["look-ahead"]):
        b, _, t, s = (int(i) for i in np.argwhere(future)[0])
        raise AssertionError(
            f"In row {b} of the batch, query {t} may attend to the later key {s}: the look-ahead rule is "
            "missing."
        )
    padding = allowed & ~real
    if padding.any() and missing in ([], ["padding"]):
        b, _, t, s = (int(i) for i in np.argwhere(padding)[0])
        raise AssertionError(
            f"In row {b} of the batch, query {t} may attend to key {s}, which is padding (segment 0 is "
            "not a sentence: two padding positions share it). Add the padding rule."
        )


def _check(my_decoder_mask, tokens, segments):
    with refusing([mt.decoder_self_mask], my_decoder_mask, RULE):
        got = call(my_decoder_mask, "my_decoder_mask", tokens.copy(), segments.copy())
    B, T = tokens.shape
    causal, real, same = _rules(tokens, segments)
    expected = (causal & real & same).astype("float64")
    g = to_numpy(got, "Your mask")
    try:
        broadcasts = np.broadcast_shapes(g.shape, expected.shape) == expected.shape
    except ValueError:
        broadcasts = False
    if g.shape == (B, T, T) and B != 1:
        raise AssertionError(f"Your mask has shape {g.shape}: it needs the head axis, (B, 1, T, T), to "
                             "broadcast against logits of shape (B, h, T, T).")
    if broadcasts:
        _diagnose(np.broadcast_to(g, expected.shape) != 0, tokens, segments)
    close(g, expected, "Your mask (True = may attend, shape (B, 1, T, T))", atol=0,
          hint="A key is allowed when it is not in the future, not padding, and in the query's sentence.")


@test_case(points=1)
def one_packed_batch(my_decoder_mask):
    tokens = np.array([[5, 6, 7, 8, 9, 0], [4, 3, 0, 0, 0, 0], [7, 7, 7, 7, 7, 7]])
    segments = np.array([[1, 1, 1, 2, 2, 0], [1, 1, 0, 0, 0, 0], [1, 2, 2, 3, 3, 3]])
    _check(my_decoder_mask, tokens, segments)


@test_case(points=1)
def random_packed_batches(my_decoder_mask):
    rng = np.random.default_rng(0)
    for length in (3, 5, 8):
        segments = np.zeros((4, length), dtype="int64")
        for row in segments:
            used = rng.integers(1, length + 1)  # the real tokens of the row, then padding
            cuts = np.sort(rng.choice(np.arange(1, used), size=min(2, used - 1), replace=False)) if used > 1 else []
            row[:used] = 1 + np.searchsorted(cuts, np.arange(used), side="right")
        tokens = np.where(segments > 0, rng.integers(3, 9, size=segments.shape), 0)
        _check(my_decoder_mask, tokens, segments)

"""Exercise: which output positions a change at position 1 can reach, with and without masks.

The answers are about the second sentence of the batch, which ends in padding (target
[1, 5, 9, 3, 0], source [4, 6, 1, 7, 0, 0]). The public cases check the form of the answers and
name the known mistakes; the lists themselves are compared by hidden cases, when the notebook is
graded.
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered

OK_FORMAT = False
name = "ex-layers-which-positions"
points = 3


def _positions(value, name, length):
    answered(value, name)
    try:
        positions = sorted({int(p) for p in value})
    except (TypeError, ValueError):
        raise AssertionError(f"`{name}` must be a list of positions (integers), e.g. [0, 2].") from None
    if any(p < 0 or p >= length for p in positions):
        raise AssertionError(f"`{name}` holds {positions}: positions run from 0 to {length - 1}.")
    if 1 not in positions:
        raise AssertionError(f"`{name}` = {positions} leaves out position 1: its own token changed, and its "
                             "output reads it through the residual connection.")
    return positions


_PAD_QUERY = ("{got}: look at the pads again. The padding mask hides padding keys, not padding queries: "
              "a pad's output is still computed, from the keys its query may read.")


def _decoder_masked(changed_decoder_masked):
    got = _positions(changed_decoder_masked, "changed_decoder_masked", 5)
    if got == [1]:
        raise AssertionError("[1]: attention mixes positions. Which outputs' queries may read the key "
                             "at position 1?")
    if got == [1, 2, 3]:
        raise AssertionError(_PAD_QUERY.format(got=got))
    if 0 in got:
        raise AssertionError(f"{got}: with the look-ahead mask, can output 0 read position 1?")
    return got


def _decoder_unmasked(changed_decoder_unmasked):
    got = _positions(changed_decoder_unmasked, "changed_decoder_unmasked", 5)
    if got == [0, 1, 2, 3]:
        raise AssertionError(_PAD_QUERY.format(got=got))
    return got


def _encoder(changed_encoder):
    got = _positions(changed_encoder, "changed_encoder", 6)
    if got == [0, 1, 2, 3]:
        raise AssertionError(_PAD_QUERY.format(got=got))
    if got == [1, 2, 3, 4, 5]:
        raise AssertionError(f"{got}: the encoder has no look-ahead mask. Which queries may read position 1?")
    return got


@test_case(points=1)
def decoder_with_the_look_ahead_mask(changed_decoder_masked):
    _decoder_masked(changed_decoder_masked)


@test_case(points=1)
def decoder_without_a_mask(changed_decoder_unmasked):
    _decoder_unmasked(changed_decoder_unmasked)


@test_case(points=1)
def encoder(changed_encoder):
    _encoder(changed_encoder)

"""Exercise: which output positions a change at position 1 can reach, with and without masks.

The answers are about the second sentence of the batch, which ends in padding (target
[1, 5, 9, 3, 0], source [4, 6, 1, 7, 0, 0]): the padding positions' outputs change too.
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
    return positions


_PAD_QUERY = ("{what}: the padding mask hides padding keys, not padding queries, so a pad's query "
              "still reads {reads}.")
_DECODER_PAD = "Position 4 of the second target sentence is a pad, and its output changes too"


@test_case(points=1)
def decoder_with_the_look_ahead_mask(changed_decoder_masked):
    got = _positions(changed_decoder_masked, "changed_decoder_masked", 5)
    if got == [1, 2, 3, 4]:
        return
    if got == [1]:
        raise AssertionError("Attention mixes positions: output t reads every position <= t, so a "
                             "change at position 1 reaches outputs 1 to 4, not only output 1.")
    if got == [1, 2, 3]:
        raise AssertionError(_PAD_QUERY.format(what=_DECODER_PAD, reads="positions 0 to 3"))
    if 0 in got:
        raise AssertionError("Output 0 may see position 0 only: with the look-ahead mask it cannot change.")
    raise AssertionError(f"{got}: output t reads the target positions <= t. Which t have 1 <= t?")


@test_case(points=1)
def decoder_without_a_mask(changed_decoder_unmasked):
    got = _positions(changed_decoder_unmasked, "changed_decoder_unmasked", 5)
    if got == [0, 1, 2, 3, 4]:
        return
    if got == [0, 1, 2, 3]:
        raise AssertionError(_PAD_QUERY.format(what=_DECODER_PAD, reads="every position"))
    raise AssertionError(f"{got}: without a mask every query attends to every key, so a change at "
                         "position 1 reaches every output, those before it included (the future leaks).")


@test_case(points=1)
def encoder(changed_encoder):
    got = _positions(changed_encoder, "changed_encoder", 6)
    if got == [0, 1, 2, 3, 4, 5]:
        return
    if got == [0, 1, 2, 3]:
        raise AssertionError(_PAD_QUERY.format(
            what="Positions 4 and 5 of the second source sentence are pads, and their outputs change too",
            reads="the real tokens 0 to 3"))
    if got == [1, 2, 3, 4, 5]:
        raise AssertionError("The encoder has no look-ahead mask: position 0 sees position 1 too.")
    raise AssertionError(f"{got}: the encoder sees the whole source sentence at once.")

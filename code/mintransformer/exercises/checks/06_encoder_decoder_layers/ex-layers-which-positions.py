"""Exercise: which output positions a change at position t (target) or s (source) can reach, with and
without masks.

The sentences and the changed positions are the student's own (mt.exercises.parameters, drawn from
STUDENT_ID); in the book, the second sentences of the set-up cell (target [1, 5, 9, 3, 0], source
[4, 6, 1, 7, 0, 0]), both changed at position 1. The public cases check the form of the answers and
name the known mistakes; the lists themselves are compared by hidden cases, when the notebook is
graded.
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-layers-which-positions"
points = 3


def _sentence(STUDENT_ID, positions_numbers, which):
    """(length, the number of real tokens, the changed position) of the student's target or source."""
    n = student_numbers(name, STUDENT_ID, positions_numbers)
    tokens, changed = (n["target"], n["t"]) if which == "target" else (n["source"], n["s"])
    return len(tokens), sum(1 for token in tokens if token != 0), changed


def _positions(value, name, length, changed):
    answered(value, name)
    try:
        positions = sorted({int(p) for p in value})
    except (TypeError, ValueError):
        raise AssertionError(f"`{name}` must be a list of positions (integers), e.g. [0, 2].") from None
    if any(p < 0 or p >= length for p in positions):
        raise AssertionError(f"`{name}` holds {positions}: positions run from 0 to {length - 1}.")
    if changed not in positions:
        raise AssertionError(f"`{name}` = {positions} leaves out position {changed}: its own token changed, and "
                             "its output reads it through the residual connection.")
    return positions


_PAD_QUERY = ("{got}: look at the pads again. The padding mask hides padding keys, not padding queries: "
              "a pad's output is still computed, from the keys its query may read.")


def _decoder_masked(changed_decoder_masked, STUDENT_ID, positions_numbers):
    length, real, t = _sentence(STUDENT_ID, positions_numbers, "target")
    got = _positions(changed_decoder_masked, "changed_decoder_masked", length, t)
    if got == [t]:
        raise AssertionError(f"[{t}]: attention mixes positions. Which outputs' queries may read the key "
                             f"at position {t}?")
    if got == list(range(t, real)):
        raise AssertionError(_PAD_QUERY.format(got=got))
    if min(got) < t:
        raise AssertionError(f"{got}: with the look-ahead mask, can output {min(got)} read position {t}?")
    return got


def _decoder_unmasked(changed_decoder_unmasked, STUDENT_ID, positions_numbers):
    length, real, t = _sentence(STUDENT_ID, positions_numbers, "target")
    got = _positions(changed_decoder_unmasked, "changed_decoder_unmasked", length, t)
    if got == list(range(real)):
        raise AssertionError(_PAD_QUERY.format(got=got))
    return got


def _encoder(changed_encoder, STUDENT_ID, positions_numbers):
    length, real, s = _sentence(STUDENT_ID, positions_numbers, "source")
    got = _positions(changed_encoder, "changed_encoder", length, s)
    if got == list(range(real)):
        raise AssertionError(_PAD_QUERY.format(got=got))
    if got == list(range(s, length)):
        raise AssertionError(f"{got}: the encoder has no look-ahead mask. Which queries may read position {s}?")
    return got


@test_case(points=1)
def decoder_with_the_look_ahead_mask(changed_decoder_masked, STUDENT_ID, positions_numbers):
    _decoder_masked(changed_decoder_masked, STUDENT_ID, positions_numbers)


@test_case(points=1)
def decoder_without_a_mask(changed_decoder_unmasked, STUDENT_ID, positions_numbers):
    _decoder_unmasked(changed_decoder_unmasked, STUDENT_ID, positions_numbers)


@test_case(points=1)
def encoder(changed_encoder, STUDENT_ID, positions_numbers):
    _encoder(changed_encoder, STUDENT_ID, positions_numbers)

"""Hidden cases of ex-layers-which-positions: the lists themselves, for the student's sentences.

Merged after the public check (mt.exercises.merged_source), so its helpers (_sentence,
_decoder_masked, _decoder_unmasked, _encoder) are in scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_decoder_with_the_look_ahead_mask(changed_decoder_masked, STUDENT_ID, positions_numbers):
    got = _decoder_masked(changed_decoder_masked, STUDENT_ID, positions_numbers)  # noqa: F821 (the public check's)
    length, _, t = _sentence(STUDENT_ID, positions_numbers, "target")  # noqa: F821
    expected = list(range(t, length))
    if got != expected:
        raise AssertionError(f"{got}: which outputs' queries may read the key at position {t} under the "
                             "look-ahead mask, the pads' included?")


@test_case(points=1, hidden=True)
def hidden_decoder_without_a_mask(changed_decoder_unmasked, STUDENT_ID, positions_numbers):
    got = _decoder_unmasked(changed_decoder_unmasked, STUDENT_ID, positions_numbers)  # noqa: F821
    length, _, t = _sentence(STUDENT_ID, positions_numbers, "target")  # noqa: F821
    expected = list(range(length))
    if got != expected:
        raise AssertionError(f"{got}: without a mask, which keys may each query read? Count the outputs "
                             f"whose query can read position {t}.")


@test_case(points=1, hidden=True)
def hidden_encoder(changed_encoder, STUDENT_ID, positions_numbers):
    got = _encoder(changed_encoder, STUDENT_ID, positions_numbers)  # noqa: F821
    length, _, _ = _sentence(STUDENT_ID, positions_numbers, "source")  # noqa: F821
    expected = list(range(length))
    if got != expected:
        raise AssertionError(f"{got}: the encoder sees the whole source sentence at once.")

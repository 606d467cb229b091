"""Hidden cases of ex-layers-which-positions: the lists themselves.

Merged after the public check (mt.exercises.merged_source), so its helpers (_decoder_masked,
_decoder_unmasked, _encoder) are in scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_decoder_with_the_look_ahead_mask(changed_decoder_masked):
    got = _decoder_masked(changed_decoder_masked)  # noqa: F821 (the public check's)
    if got != [1, 2, 3, 4]:
        raise AssertionError(f"{got}: which outputs' queries may read the key at position 1 under the "
                             "look-ahead mask, the pads' included?")


@test_case(points=1, hidden=True)
def hidden_decoder_without_a_mask(changed_decoder_unmasked):
    got = _decoder_unmasked(changed_decoder_unmasked)  # noqa: F821
    if got != [0, 1, 2, 3, 4]:
        raise AssertionError(f"{got}: without a mask, which keys may each query read? Count the outputs "
                             "whose query can read position 1.")


@test_case(points=1, hidden=True)
def hidden_encoder(changed_encoder):
    got = _encoder(changed_encoder)  # noqa: F821
    if got != [0, 1, 2, 3, 4, 5]:
        raise AssertionError(f"{got}: the encoder sees the whole source sentence at once.")

"""Exercise: the start token given the padding id, predicted by hand and checked on a model.

The target sequence is the student's own (mt.exercises.parameters, drawn from STUDENT_ID): the book's
of 4 tokens, or one of 4 to 8 tokens, maybe ending in pads; it begins with the padding id 0. The
public cases check the form of the predictions and name the known mistakes, each recognized by a
feature that is not the answer; the mask and the weights themselves are compared by hidden cases,
when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, like, student_numbers, to_numpy

OK_FORMAT = False
name = "ex-model-start-token"
points = 2


def _target(STUDENT_ID, start_numbers):
    """The student's target sequence, a tuple of ids that begins with 0."""
    return student_numbers(name, STUDENT_ID, start_numbers)["target"]


def _mask(start_mask_by_hand, target):
    length = len(target)
    answered(start_mask_by_hand, "start_mask_by_hand")
    got = to_numpy(start_mask_by_hand, "start_mask_by_hand")
    if got.shape != (length, length):
        raise AssertionError(f"start_mask_by_hand has shape {got.shape}: give the ({length}, {length}) mask, a row "
                             "per query and a column per key.")
    if not np.all((got == 0) | (got == 1)):
        raise AssertionError("start_mask_by_hand must hold 0 and 1 only (1 = may attend).")
    causal = np.tril(np.ones((length, length)))
    not_padding = np.array([token != 0 for token in target], dtype="float64")  # (keys,)
    if like(got, causal, atol=0):
        raise AssertionError(
            "That is the look-ahead mask alone. The mask is look-ahead AND target padding, and the start "
            "token 0 is the padding id: which columns does the padding mask block?"
        )
    if like(got, np.tile(not_padding, (length, 1)), atol=0):
        raise AssertionError(
            "That is the padding mask alone. The decoder's self-attention mask is look-ahead AND padding: "
            "query t may not see the keys after t either."
        )
    row_blocked = causal * np.where(np.arange(length) == 0, 1.0, not_padding)  # key 0 seen ...
    row_blocked[0] = 0  # ... and query 0 blocked instead
    if like(got, row_blocked, atol=0):
        raise AssertionError(
            "You block row 0, query 0's row, and let the other queries see key 0. The padding mask blocks "
            "a KEY: the start token 0 is hidden from every query, in its column."
        )
    if not_padding[1:].min() == 0:  # pads at the end: blocking key 0 alone forgets them
        start_only = causal.copy()
        start_only[:, 0] = 0
        if like(got, start_only, atol=0):
            raise AssertionError(
                "You block key 0 but not the pads at the end of the sequence: the padding mask blocks every "
                "key that holds the padding id 0."
            )
    if np.any(np.triu(got, 1)):
        raise AssertionError("Row t is query t and column s is key s: query t may see keys s <= t only, and your "
                             "mask lets a query see a later key.")
    return got


@test_case(points=1)
def the_mask(start_mask_by_hand, STUDENT_ID, start_numbers):
    # The form and the known mistakes: the mask itself is for the hidden case.
    _mask(start_mask_by_hand, _target(STUDENT_ID, start_numbers))


def _weights(query_0_weights, target):
    length = len(target)
    answered(query_0_weights, "query_0_weights")
    got = to_numpy(query_0_weights, "query_0_weights")
    if got.shape != (length,):
        raise AssertionError(f"query_0_weights has shape {got.shape}: give query 0's {length} weights over the "
                             "keys.")
    if np.any(np.isnan(got)):
        raise AssertionError(
            "Your weights hold a NaN. Query 0 has no key it may attend to: what does the package's attention "
            "return for such a row? (Chapter 2: a row with nothing to attend to.)"
        )
    if np.any(got < 0) or np.any(got > 1):
        raise AssertionError("Attention weights lie between 0 and 1.")
    if like(got, np.eye(length)[0], atol=1e-6):
        raise AssertionError(
            "Query 0 may see only key 0, but key 0 holds the padding id: it is blocked too. "
            "What is left for query 0 to attend to?"
        )
    if like(got, np.full(length, 1 / length), atol=1e-6):
        raise AssertionError(
            "Uniform weights would let query 0 read the padding and the future, the keys its mask blocks. "
            "What does the package's attention return for a row in which every key is blocked? (Chapter 2: a "
            "row with nothing to attend to.)"
        )
    if np.any(got[1:] > 0):
        raise AssertionError("Your weights give query 0 a key after position 0: the look-ahead mask blocks them.")
    return got


@test_case(points=1)
def the_weights_of_query_0(query_0_weights, STUDENT_ID, start_numbers):
    # The form and the known mistakes: the weights themselves are for the hidden case.
    _weights(query_0_weights, _target(STUDENT_ID, start_numbers))

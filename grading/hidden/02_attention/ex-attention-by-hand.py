"""Hidden cases of ex-attention-by-hand: the values themselves, for the student's numbers.

Merged after the public check (mt.exercises.merged_source): _two_by_two and _matrices are its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close


def _hidden_weights(STUDENT_ID, by_hand_numbers):
    queries, keys, _ = _matrices(STUDENT_ID, by_hand_numbers)  # noqa: F821 (the public check's)
    logits = queries @ keys.T / np.sqrt(queries.shape[-1])
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@test_case(points=1, hidden=True)
def hidden_the_weights(weights_by_hand, STUDENT_ID, by_hand_numbers):
    w = _two_by_two(weights_by_hand, "weights_by_hand")  # noqa: F821 (the public check's)
    close(w, _hidden_weights(STUDENT_ID, by_hand_numbers), "weights_by_hand", atol=1e-3,
          hint="Row t holds query t's weights over the two keys: softmax(q_t . k_s / sqrt(d_k)).")


@test_case(points=1, hidden=True)
def hidden_the_outputs(outputs_by_hand, STUDENT_ID, by_hand_numbers):
    o = _two_by_two(outputs_by_hand, "outputs_by_hand")  # noqa: F821
    _, _, values = _matrices(STUDENT_ID, by_hand_numbers)  # noqa: F821
    # (atol 5e-3: outputs worked from weights rounded to 3 decimals, values up to 8, then rounded.)
    close(o, _hidden_weights(STUDENT_ID, by_hand_numbers) @ values, "outputs_by_hand", atol=5e-3,
          hint="Output t is the weighted average of the values: sum over s of weight[t, s] * v_s.")

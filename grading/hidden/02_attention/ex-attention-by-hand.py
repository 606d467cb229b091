"""Hidden cases of ex-attention-by-hand: the values themselves (the public check confirms the format).

Merged after the public check (mt.exercises.merged_source): _two_by_two and VALUES are its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close


@test_case(points=1, hidden=True)
def hidden_the_weights(weights_by_hand):
    w = _two_by_two(weights_by_hand, "weights_by_hand")  # noqa: F821 (the public check's)
    expected = np.array([[np.e / (np.e + 1), 1 / (np.e + 1)], [0.5, 0.5]])
    close(w, expected, "weights_by_hand", atol=1e-3,
          hint="Row t holds query t's weights over the two keys: softmax(q_t . k_s / sqrt(d_k)).")


@test_case(points=1, hidden=True)
def hidden_the_outputs(outputs_by_hand):
    o = _two_by_two(outputs_by_hand, "outputs_by_hand")  # noqa: F821
    weights = np.array([[np.e / (np.e + 1), 1 / (np.e + 1)], [0.5, 0.5]])
    expected = weights @ VALUES  # noqa: F821
    close(o, expected, "outputs_by_hand", atol=1e-3,
          hint="Output t is the weighted average of the values: sum over s of weight[t, s] * v_s.")

"""Exercise: the attention of two queries over two keys, computed by hand."""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, close, like

OK_FORMAT = False
name = "ex-attention-by-hand"
points = 2

WEIGHTS = np.array([[np.e / (np.e + 1), 1 / (np.e + 1)], [0.5, 0.5]])
OUTPUTS = WEIGHTS @ np.array([[4.0, 0.0], [0.0, 4.0]])
UNSCALED = np.array([[np.e**2 / (np.e**2 + 1), 1 / (np.e**2 + 1)], [0.5, 0.5]])


@test_case(points=1)
def weights(weights_by_hand):
    answered(weights_by_hand, "weights_by_hand")
    if like(weights_by_hand, UNSCALED, atol=1e-3):
        raise AssertionError(
            "These are the weights without the scale: divide the logits by sqrt(d_k) = 2 "
            "before the softmax."
        )
    close(weights_by_hand, WEIGHTS, "weights_by_hand", atol=1e-3,
          hint="Row t holds query t's weights over the two keys; each row sums to 1.")


@test_case(points=1)
def outputs(outputs_by_hand):
    answered(outputs_by_hand, "outputs_by_hand")
    close(outputs_by_hand, OUTPUTS, "outputs_by_hand", atol=1e-3,
          hint="Output t is the weighted average of the values: sum over s of weight[t, s] * v_s.")

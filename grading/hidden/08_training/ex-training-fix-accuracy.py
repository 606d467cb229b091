"""Hidden case of ex-training-fix-accuracy: longer sequences, a larger vocabulary, three batches.

Merged after the public check (mt.exercises.merged_source), so its helpers (_metric, _update,
_result, _name_the_mistake) are in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_longer_sequences_and_three_batches(SequenceAccuracy):
    rng = np.random.default_rng(8080)
    V, T = 13, 9
    batches = []
    for lengths in ([9, 3, 0, 5, 1], [2, 2], [0, 7, 9]):  # rows of padding only among them
        lengths = np.array(lengths)
        labels = np.where(np.arange(T)[None] < lengths[:, None], rng.integers(1, V, size=(len(lengths), T)), 0)
        logits = rng.normal(size=(len(lengths), T, V)).astype("float32")
        logits += 5.0 * np.eye(V, dtype="float32")[labels] * (rng.random((len(lengths), T, 1)) < 0.9)
        batches.append((labels, logits))
    metric = _metric(SequenceAccuracy)  # noqa: F821 (the public check's)
    for labels, logits in batches:
        _update(metric, labels, logits)  # noqa: F821
    _name_the_mistake(_result(metric), batches,  # noqa: F821
                      "Hidden case, three batches of sequences of up to 9 tokens, V = 13")

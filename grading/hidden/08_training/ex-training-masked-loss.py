"""Hidden case of ex-training-masked-loss: another vocabulary, pad id, smoothing and shape.

Merged after the public check (mt.exercises.merged_source), so its helpers (_batch, _check) are in
scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_last_id_as_the_pad(my_masked_loss):
    labels, logits = _batch(808, V=5, pad_id=4, lengths=(8, 1, 3))  # noqa: F821 (the public check's)
    _check(my_masked_loss, labels, logits, 0.2, 4,  # noqa: F821
           "Hidden case, V = 5 with pad_id=4 and label_smoothing=0.2")
    labels, logits = _batch(809, V=13, pad_id=7, lengths=(2, 9))  # noqa: F821
    _check(my_masked_loss, labels, logits, 0.0, 7,  # noqa: F821
           "Hidden case, V = 13 with pad_id=7, without smoothing")

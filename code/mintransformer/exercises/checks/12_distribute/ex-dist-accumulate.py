"""Exercise: fix gradient accumulation that averages the micro-batches' means."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-dist-accumulate"
points = 2


def _micro_batches(seed, cuts):
    """Micro-batches of different lengths and numbers of real tokens, and the whole batch padded."""
    rng = np.random.default_rng(seed)
    batches = []
    for rows_cuts in cuts:
        length = max(rows_cuts) + 1
        source = rng.integers(3, 12, (len(rows_cuts), length)).astype("int32")
        target = rng.integers(3, 12, (len(rows_cuts), length + 1)).astype("int32")
        for row, cut in enumerate(rows_cuts):
            source[row, cut:] = 0
            target[row, cut + 1:] = 0
        batches.append(((source, target[:, :-1]), target[:, 1:]))
    width = max(b[1].shape[1] for b in batches)
    pad = lambda a: np.pad(a, ((0, 0), (0, width - a.shape[1])))  # noqa: E731  (right padding changes nothing)
    whole = ((np.concatenate([pad(b[0][0]) for b in batches]), np.concatenate([pad(b[0][1]) for b in batches])),
             np.concatenate([pad(b[1]) for b in batches]))
    return batches, whole


def _flat(arrays):
    return np.concatenate([np.ravel(np.asarray(a, "float64")) for a in arrays])


def _check(accumulated_gradient, seed, cuts):
    keras.utils.set_random_seed(seed)
    model = mt.MinTransformer(1, 16, 2, 32, 12, 12, max_length=16, dropout=0.0, share_embeddings=True)
    micro, (inputs, labels) = _micro_batches(seed, cuts)
    model(inputs)
    expected = _flat(mt.distribute.gradients(model, mt.masked_loss, inputs, labels))
    got = _flat(call(accumulated_gradient, "accumulated_gradient", model, micro))
    error = np.linalg.norm(got - expected) / np.linalg.norm(expected)
    if error < 1e-4:
        return
    means = [mt.distribute.gradients(model, mt.masked_loss, x, y) for x, y in micro]
    mean_of_means = _flat([sum(g) / len(micro) for g in zip(*means)])
    if np.linalg.norm(got - mean_of_means) / np.linalg.norm(mean_of_means) < 1e-4:
        raise AssertionError(f"accumulated_gradient still averages the {len(micro)} micro-batches' means, "
                             f"{error:.1%} away from the whole batch's gradient: a micro-batch with few real "
                             "tokens weighs as much as a full one (the mistake of Keras's own "
                             "gradient_accumulation_steps). Weight each by its real tokens.")
    raise AssertionError(f"accumulated_gradient is {error:.1%} away (relative norm) from the gradient of the whole "
                         "batch's mean token loss.")


@test_case(points=1)
def three_ragged_micro_batches(accumulated_gradient):
    _check(accumulated_gradient, 0, [[6, 2, 5], [1, 2], [6, 6, 6, 4]])


@test_case(points=1)
def micro_batches_of_equal_tokens(accumulated_gradient):
    _check(accumulated_gradient, 1, [[3, 3], [2, 4], [5, 1]])

"""Exercise: data parallelism by hand: R slices of a batch, their gradients summed, the batch's gradient."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-dist-by-hand"
points = 3


def _model_and_batch(seed):
    keras.utils.set_random_seed(seed)
    model = mt.MinTransformer(1, 16, 2, 32, 12, 12, max_length=16, dropout=0.0, share_embeddings=True)
    rng = np.random.default_rng(seed)
    rows, length = 6, 7
    source = rng.integers(3, 12, (rows, length)).astype("int32")
    target = rng.integers(3, 12, (rows, length + 1)).astype("int32")
    for row, cut in enumerate([7, 2, 5, 3, 7, 4]):  # ragged: the slices hold different numbers of tokens
        source[row, cut:] = 0
        target[row, cut + 1:] = 0
    inputs, labels = (source, target[:, :-1]), target[:, 1:]
    model(inputs)
    return model, inputs, labels


def _flat(arrays):
    return np.concatenate([np.ravel(np.asarray(a, "float64")) for a in arrays])


def _check(data_parallel_gradient, replicas, seed):
    model, inputs, labels = _model_and_batch(seed)
    expected = _flat(mt.distribute.gradients(model, mt.masked_loss, inputs, labels))
    got = call(data_parallel_gradient, "data_parallel_gradient", model, inputs, labels, replicas)
    try:
        got = _flat(got)
    except (TypeError, ValueError):
        raise AssertionError("data_parallel_gradient must return a list of arrays, one per weight, in the order of "
                             "model.trainable_weights.") from None
    if got.shape != expected.shape:
        raise AssertionError(f"data_parallel_gradient returned {got.size} numbers in all; the model's weights have "
                             f"{expected.size}: one gradient per weight of model.trainable_weights.")
    error = np.linalg.norm(got - expected) / np.linalg.norm(expected)
    if error < 1e-4:
        return
    if np.linalg.norm(got - replicas * expected) / np.linalg.norm(replicas * expected) < 0.2:
        raise AssertionError(f"With {replicas} replicas the result is about {replicas} times the batch's gradient: "
                             "each slice's loss is a mean over the slice's tokens, and the sum of R means is not "
                             "one mean. Divide each slice's summed token loss by the tokens of the whole batch.")
    raise AssertionError(f"With {replicas} replicas the summed gradients differ from the batch's gradient by "
                         f"{error:.1%} (relative norm). A mean of the slices' means weights every slice alike, "
                         "however many real tokens it holds; weight each token alike: sum of token losses / n, "
                         "n the real tokens of the whole batch.")


@test_case(points=1)
def two_replicas(data_parallel_gradient):
    _check(data_parallel_gradient, 2, 0)


@test_case(points=1)
def three_replicas(data_parallel_gradient):
    _check(data_parallel_gradient, 3, 1)


@test_case(points=1)
def one_replica_is_the_plain_gradient(data_parallel_gradient):
    _check(data_parallel_gradient, 1, 2)

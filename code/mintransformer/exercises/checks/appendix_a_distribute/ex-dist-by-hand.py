"""Exercise: data parallelism by hand: R slices of a batch, their gradients summed, the batch's gradient."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-dist-by-hand"
points = 3


def _model_and_batch(seed, source_cuts=(3, 7, 2, 6, 5, 4), target_cuts=(7, 2, 6, 1, 3, 2)):
    keras.utils.set_random_seed(seed)
    model = mt.MinTransformer(1, 16, 2, 32, 12, 12, max_length=16, dropout=0.0, share_embeddings=True)
    rng = np.random.default_rng(seed)
    rows, length = len(source_cuts), max(max(source_cuts), max(target_cuts))
    source = rng.integers(3, 12, (rows, length)).astype("int32")
    target = rng.integers(3, 12, (rows, length + 1)).astype("int32")
    # Ragged, and each row's source as long as its target in no row: the labels hold 15 and 6 tokens in
    # 2 slices (9, 7 and 5 in 3), the sources 12 and 15 (10, 8 and 9), so a weight by the source's tokens
    # is not the weight by the labels' tokens.
    for row, (source_cut, target_cut) in enumerate(zip(source_cuts, target_cuts)):
        source[row, source_cut:] = 0
        target[row, target_cut + 1:] = 0
    inputs, labels = (source, target[:, :-1]), target[:, 1:]
    model(inputs)
    return model, inputs, labels


def _flat(arrays):
    return np.concatenate([np.ravel(np.asarray(a, "float64")) for a in arrays])


def _check(data_parallel_gradient, replicas, seed, **cuts):
    model, inputs, labels = _model_and_batch(seed, **cuts)
    expected = _flat(mt.distribute.gradients(model, mt.masked_loss, inputs, labels))
    rows, gradients = [], mt.distribute.gradients

    def counting(model, loss_fn, inputs, labels):  # the rows of every batch the answer takes a gradient of
        rows.append(len(labels))
        return gradients(model, loss_fn, inputs, labels)

    mt.distribute.gradients = counting
    try:
        got = call(data_parallel_gradient, "data_parallel_gradient", model, inputs, labels, replicas)
    finally:
        mt.distribute.gradients = gradients
    slices = [len(s) for s in np.array_split(labels, replicas)]
    if rows != slices:
        raise AssertionError(f"With {replicas} replicas data_parallel_gradient took gradients of batches of {rows} "
                             f"rows; each replica takes its slice's: call mt.distribute.gradients once per slice "
                             f"of np.array_split, here {slices} rows.")
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
    means = [gradients(model, mt.masked_loss, (source, target_in), target_out)
             for source, target_in, target_out in zip(*(np.array_split(a, replicas) for a in (*inputs, labels)))]
    sum_of_means = _flat([sum(g) for g in zip(*means)])
    near = lambda a, b: np.linalg.norm(a - b) / np.linalg.norm(b) < 1e-4  # noqa: E731
    if near(got, sum_of_means):
        raise AssertionError(f"With {replicas} replicas the result is the sum of the slices' mean losses' gradients, "
                             f"{error:.0%} away from the batch's gradient: the sum of R means is not one mean. Divide "
                             "each slice's summed token loss by the tokens of the whole batch.")
    source_tokens = [np.count_nonzero(s) for s in np.array_split(inputs[0], replicas)]
    by_source = _flat([sum(g * (t / sum(source_tokens)) for g, t in zip(per_weight, source_tokens))
                       for per_weight in zip(*means)])
    if replicas > 1 and near(got, by_source):
        raise AssertionError(f"With {replicas} replicas the result weights each slice by its share of the batch's "
                             "SOURCE tokens: the loss is a mean over the target tokens (the labels), and a slice's "
                             "source and target hold different numbers of real tokens.")
    if near(got, sum_of_means / replicas):
        raise AssertionError(f"With {replicas} replicas the result is the mean of the slices' means, {error:.1%} away "
                             "from the batch's gradient: it weights every slice alike, however many real tokens it "
                             "holds. Weight each token alike: sum of token losses / n, n the real tokens of the "
                             "whole batch.")
    raise AssertionError(f"With {replicas} replicas the summed gradients differ from the batch's gradient by "
                         f"{error:.1%} (relative norm). Each slice's share is its summed token loss / n, n the real "
                         "tokens of the whole batch.")


@test_case(points=1)
def two_replicas(data_parallel_gradient):
    _check(data_parallel_gradient, 2, 0)


@test_case(points=1)
def three_replicas(data_parallel_gradient):
    _check(data_parallel_gradient, 3, 1)


@test_case(points=1)
def one_replica_is_the_plain_gradient(data_parallel_gradient):
    _check(data_parallel_gradient, 1, 2)

"""Exercise: fix gradient accumulation over a stream of micro-batches that averages their means."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-dist-accumulate"
points = 2


def _micro_batches(seed, source_cuts, target_cuts):
    """Micro-batches of different lengths and numbers of real tokens, and the whole batch padded.

    ``source_cuts`` and ``target_cuts`` give each row's real source and target tokens, per
    micro-batch; they differ, so that a weight by the source's tokens is not the weight by the labels'.
    """
    rng = np.random.default_rng(seed)
    batches = []
    for rows_source, rows_target in zip(source_cuts, target_cuts):
        source = rng.integers(3, 12, (len(rows_source), max(rows_source) + 1)).astype("int32")
        target = rng.integers(3, 12, (len(rows_target), max(rows_target) + 2)).astype("int32")
        for row, (source_cut, target_cut) in enumerate(zip(rows_source, rows_target)):
            source[row, source_cut:] = 0
            target[row, target_cut + 1:] = 0
        batches.append(((source, target[:, :-1]), target[:, 1:]))

    def stacked(arrays):  # right padding changes nothing
        width = max(a.shape[1] for a in arrays)
        return np.concatenate([np.pad(a, ((0, 0), (0, width - a.shape[1]))) for a in arrays])

    whole = ((stacked([b[0][0] for b in batches]), stacked([b[0][1] for b in batches])),
             stacked([b[1] for b in batches]))
    return batches, whole


def _flat(arrays):
    return np.concatenate([np.ravel(np.asarray(a, "float64")) for a in arrays])


class _Stream:
    """The micro-batches one at a time, each only after the previous one's gradient was taken."""

    def __init__(self, micro, calls):
        self.micro, self.calls, self.looked_ahead = micro, calls, None

    def __iter__(self):
        for i, batch in enumerate(self.micro):
            if len(self.calls) < i:
                self.looked_ahead = i
                raise RuntimeError(f"this stream gives micro-batch {i + 1} only after the gradient of micro-batch {i}")
            yield batch


def _check(accumulated_gradient, seed, source_cuts, target_cuts):
    keras.utils.set_random_seed(seed)
    model = mt.MinTransformer(1, 16, 2, 32, 12, 12, max_length=16, dropout=0.0, share_embeddings=True)
    micro, (inputs, labels) = _micro_batches(seed, source_cuts, target_cuts)
    model(inputs)
    expected = _flat(mt.distribute.gradients(model, mt.masked_loss, inputs, labels))
    calls, gradients = [], mt.distribute.gradients

    def counting(model, loss_fn, inputs, labels):  # the rows of every batch the answer takes a gradient of
        calls.append(len(labels))
        return gradients(model, loss_fn, inputs, labels)

    stream = _Stream(micro, calls)
    mt.distribute.gradients = counting
    try:
        got = call(accumulated_gradient, "accumulated_gradient", model, iter(stream))
    except AssertionError:
        if stream.looked_ahead is None:
            raise
        raise AssertionError(f"accumulated_gradient asked for micro-batch {stream.looked_ahead + 1} before it had "
                             f"taken the gradient of micro-batch {stream.looked_ahead}: the micro-batches come one at "
                             "a time from a stream that holds only the current one, so how many there are and how "
                             "many tokens they hold is known only after the last. Read each micro-batch once, and "
                             "take its gradient before reading the next.") from None
    finally:
        mt.distribute.gradients = gradients
    rows = [len(y) for _, y in micro]
    if calls != rows:
        raise AssertionError(f"accumulated_gradient took gradients of batches of {calls} rows, in this order; "
                             f"accumulation takes one gradient per micro-batch, of that micro-batch's rows, here "
                             f"{rows} (a micro-batch is what fits in the device's memory).")
    try:
        got = _flat(got)
    except (TypeError, ValueError):
        raise AssertionError("accumulated_gradient must return a list of arrays, one per weight, in the order of "
                             "model.trainable_weights.") from None
    if got.shape != expected.shape:
        raise AssertionError(f"accumulated_gradient returned {got.size} numbers in all; the model's weights have "
                             f"{expected.size}: one gradient per weight of model.trainable_weights.")
    error = np.linalg.norm(got - expected) / np.linalg.norm(expected)
    if error < 1e-4:
        return
    means = [gradients(model, mt.masked_loss, x, y) for x, y in micro]
    near = lambda a, b: np.linalg.norm(a - b) / np.linalg.norm(b) < 1e-4  # noqa: E731
    if near(got, _flat([sum(g) / len(micro) for g in zip(*means)])):
        raise AssertionError(f"accumulated_gradient still averages the {len(micro)} micro-batches' means: a "
                             "micro-batch with few real tokens weighs as much as a full one (the mistake of Keras's "
                             "own gradient_accumulation_steps), so the result is not the gradient of the whole "
                             "batch's mean token loss.")
    source = [np.count_nonzero(x[0]) for x, _ in micro]
    if near(got, _flat([sum(g * (t / sum(source)) for g, t in zip(per_weight, source)) for per_weight in zip(*means)])):
        raise AssertionError("accumulated_gradient weights each micro-batch by its share of the SOURCE tokens: the "
                             "loss is a mean over the target tokens (the labels), and a micro-batch's source and "
                             "target hold different numbers of real tokens.")
    raise AssertionError("accumulated_gradient is not the gradient of the whole batch's mean token loss (every real "
                         "target token of every micro-batch weighs the same in it).")


@test_case(points=1)
def three_ragged_micro_batches(accumulated_gradient):
    _check(accumulated_gradient, 0, [[2, 6, 3], [5, 6], [1, 2, 3, 2]], [[6, 2, 5], [1, 2], [6, 6, 6, 4]])


@test_case(points=1)
def micro_batches_of_equal_target_tokens(accumulated_gradient):
    _check(accumulated_gradient, 1, [[1, 2], [6, 6], [4, 1]], [[3, 3], [2, 4], [5, 1]])

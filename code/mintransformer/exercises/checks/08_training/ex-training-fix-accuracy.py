"""Exercise: implement the masked accuracy as a metric, not the mean of batch accuracies of TensorFlow's tutorial."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import Unanswered, answered, call, close, to_numpy

OK_FORMAT = False
name = "ex-training-fix-accuracy"
points = 3

V = 8
FULL = np.array([[5, 6, 7, 3, 4, 5, 6, 2],
                 [3, 4, 5, 6, 7, 3, 4, 2]])  # 16 real tokens
GUESS_FULL = FULL.copy()
GUESS_FULL[0, 0] = 7  # 15 of 16 right
SHORT = np.array([[4, 2, 0, 0, 0, 0, 0, 0],
                  [0, 0, 0, 0, 0, 0, 0, 0]])  # 2 real tokens, the rest padding
GUESS_SHORT = np.array([[5, 3, 0, 0, 0, 0, 0, 0],
                        [0, 0, 0, 0, 0, 0, 0, 0]])  # 0 of 2 right; the pads "predicted" as pads
BATCHES = [(FULL, np.eye(V, dtype="float32")[GUESS_FULL]), (SHORT, np.eye(V, dtype="float32")[GUESS_SHORT])]


def _metric(FixedMaskedAccuracy):
    answered(FixedMaskedAccuracy, "FixedMaskedAccuracy")
    metric = call(FixedMaskedAccuracy, "FixedMaskedAccuracy")
    if not isinstance(metric, keras.metrics.Metric):
        raise AssertionError(
            "`FixedMaskedAccuracy()` must make a keras.metrics.Metric (subclass it), so that compile "
            f"can use it; it made a {type(metric).__name__}.")
    return metric


def _result(metric):
    value = to_numpy(call(metric.result, "FixedMaskedAccuracy.result"), "result()")
    if value.size != 1:
        raise AssertionError(f"result() must be one number; it has shape {value.shape}.")
    return float(value.reshape(()))


def _name_the_mistake(got, batches, case):
    per_batch = np.mean([float(mt.masked_accuracy(y, p)) for y, p in batches])
    pads = (sum(float(np.sum(np.argmax(p, -1) == y)) for y, p in batches) / sum(y.size for y, _ in batches))
    pads_per_batch = np.mean([np.mean(np.argmax(p, -1) == y) for y, p in batches])
    per_sequence = []  # each sequence's accuracy, for the sequences with a real token
    for y, p in batches:
        for row, guess in zip(y, np.argmax(p, -1)):
            if np.any(row != 0):
                per_sequence.append(np.sum((guess == row) & (row != 0)) / np.sum(row != 0))
    last_batch = float(mt.masked_accuracy(*batches[-1]))
    counted = mt.MaskedAccuracy()
    for y, p in batches:
        counted.update_state(y, p)
    expected = float(counted.result())
    if np.isclose(got, per_batch) and not np.isclose(expected, per_batch):
        raise AssertionError(
            f"{case}: still the bug. Your metric is the mean of the batches' accuracies, each batch counting "
            "once: a batch with a few real tokens weighs as much as a full one. Keep two running totals across "
            "batches, right tokens and real tokens, and divide them in result().")
    if np.isclose(got, pads) or np.isclose(got, pads_per_batch):
        raise AssertionError(
            f"{case}: you count the pad positions (label 0) as tokens, and a predicted pad there as right. "
            "Count only the positions whose label is not 0, in the numerator and in the denominator.")
    if np.isclose(got, np.mean(per_sequence)) and not np.isclose(expected, np.mean(per_sequence)):
        raise AssertionError(
            f"{case}: your metric is {got:.4f}, the mean of each sequence's accuracy: you average each sequence, "
            "then the sequences, so a short sequence weighs as much as a long one. Count right tokens and "
            f"real tokens over all the sequences of all the batches, and divide once: {expected:.4f}.")
    if np.isclose(got, last_batch) and not np.isclose(expected, last_batch):
        raise AssertionError(
            f"{case}: your metric is {got:.4f}, the accuracy of the last batch alone: you keep only the last batch. "
            "Each update_state must ADD to the running totals (variable.assign_add(...)), not replace them "
            "(assign(...) or =).")
    close(got, expected, f"{case}: your accuracy", atol=1e-6,
          hint="It should be (right real tokens, all batches) / (real tokens, all batches).")


def _graph_error(error):
    message = str(error)
    if len(message) > 600:  # TensorFlow puts whole tensors in some messages
        message = message[:600] + " [...]"
    return AssertionError(
        f"model.evaluate with your metric in compile raised {type(error).__name__}: {message.rstrip('.')}. "
        "Inside fit and evaluate, update_state runs as a TensorFlow graph: use keras.ops on the "
        "tensors and assign_add on variables, not NumPy or Python numbers.")


@test_case(points=1)
def two_batches(FixedMaskedAccuracy):
    metric = _metric(FixedMaskedAccuracy)
    for labels, logits in BATCHES:
        call(metric.update_state, "FixedMaskedAccuracy.update_state", labels, logits)
    _name_the_mistake(_result(metric), BATCHES,
                      "A batch of 16 real tokens (15 right) and one of 2 (both wrong)")


@test_case(points=1)
def reset_between_epochs(FixedMaskedAccuracy):
    metric = _metric(FixedMaskedAccuracy)
    call(metric.update_state, "FixedMaskedAccuracy.update_state", *BATCHES[0])
    call(metric.reset_state, "FixedMaskedAccuracy.reset_state")
    call(metric.update_state, "FixedMaskedAccuracy.update_state", *BATCHES[1])
    got = _result(metric)
    if np.isclose(got, 15 / 18):
        raise AssertionError(
            "After reset_state() your metric still counts the batch before it: Keras resets metrics at the "
            "start of every epoch and evaluate. Make the totals with self.add_variable(...) so that the "
            "default reset_state() sets them to 0 (or write reset_state yourself).")
    close(got, 0.0, "Your accuracy after reset_state() and one batch of 2 real tokens, both wrong", atol=1e-6)


@test_case(points=1)
def in_evaluate(FixedMaskedAccuracy):
    metric = _metric(FixedMaskedAccuracy)
    rng = np.random.default_rng(0)
    N, T = 10, 6
    lengths = np.array([6, 6, 5, 6, 1, 2, 1, 3, 6, 2])  # batches of 4, 4 and 2 with different padding
    labels = np.where(np.arange(T)[None] < lengths[:, None], rng.integers(1, V, size=(N, T)), 0)
    logits = rng.normal(size=(N, T, V)).astype("float32")
    logits += 3.0 * np.eye(V, dtype="float32")[labels] * (rng.random((N, T, 1)) < 0.6)  # about 60% right
    model = keras.Sequential([keras.Input((T, V)), keras.layers.Identity()])
    model.compile(loss=mt.masked_loss, metrics=[metric], jit_compile=False)
    try:
        with mt.quiet_stderr():  # TensorFlow's C++ log about its tf.data graph, which depends on the set-up
            model.evaluate(logits, labels, batch_size=4, verbose=0)
    except NotImplementedError as error:
        if not str(error):  # a stub's bare NotImplementedError (TensorFlow's own come with a message)
            raise Unanswered("`FixedMaskedAccuracy` still raises NotImplementedError: write update_state and "
                             "result.") from None
        raise _graph_error(error) from error
    except Exception as error:
        raise _graph_error(error) from error
    got = _result(metric)
    batches = [(labels[i:i + 4], logits[i:i + 4]) for i in range(0, N, 4)]
    _name_the_mistake(got, batches, "In model.evaluate, 3 batches with different padding")

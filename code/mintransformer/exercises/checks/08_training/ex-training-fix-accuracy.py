"""Exercise: the teacher-forced sequence accuracy as a metric that counts across batches, not the mean of
batch values that compile makes of a function (the bug of TensorFlow's tutorial, one step further)."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import Unanswered, answered, call, close, refusing, to_numpy

OK_FORMAT = False
name = "ex-training-fix-accuracy"
points = 3

V = 8
# Two batches unlike the chapter's: right sequences, a wrong one, predictions that are not <pad> at pad
# positions, and in the second batch a row of padding only (no sequence at all).
LABELS_A = np.array([[5, 6, 7, 2, 0, 0],
                     [3, 4, 2, 0, 0, 0],
                     [6, 6, 6, 6, 6, 2]])
GUESS_A = np.array([[5, 6, 7, 2, 4, 1],  # right on its 4 real tokens; not <pad> where the label is
                    [3, 5, 2, 0, 0, 0],  # one wrong token
                    [6, 6, 6, 6, 6, 2]])  # right
LABELS_B = np.array([[4, 2, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0, 0]])  # a row of padding only
GUESS_B = np.array([[4, 3, 0, 0, 0, 0],  # wrong <end>
                    [0, 0, 0, 0, 0, 3]])
BATCHES = [(LABELS_A, np.eye(V, dtype="float32")[GUESS_A]), (LABELS_B, np.eye(V, dtype="float32")[GUESS_B])]
RULE = "Write the metric yourself: do not use mt.MaskedAccuracy (it counts tokens, not sequences)."


def _rows(batches):
    """Per batch: (labels, predicted ids) as NumPy arrays."""
    return [(np.asarray(y), np.argmax(np.asarray(p), -1)) for y, p in batches]


def _variants(batches):
    """The right value and known wrong ones, with what to tell the student."""
    rows = _rows(batches)

    def count(y, g, compare_pads=False, empty="skip"):
        real = y != 0
        ok = np.all((g == y) | (~real if not compare_pads else False), axis=-1)
        has = real.any(-1)
        if empty == "all":  # every position compared, every row counted
            return float(np.sum(np.all(g == y, axis=-1))), float(len(y))
        if empty == "skip":
            return float(np.sum(ok & has)), float(np.sum(has))
        if empty == "right":
            return float(np.sum(ok | ~has)), float(len(y))
        return float(np.sum(ok & has)), float(len(y))  # "wrong": counted, never right

    def across(**kwargs):
        right = total = 0.0
        for y, g in rows:
            r, t = count(y, g, **kwargs)
            right, total = right + r, total + t
        return right / max(total, 1.0)

    def per_batch(**kwargs):
        values = []
        for y, g in rows:
            r, t = count(y, g, **kwargs)
            values.append(r / max(t, 1.0))
        return float(np.mean(values))

    tokens = sum(float(np.sum((g == y) & (y != 0))) for y, g in rows) / max(sum(float(np.sum(y != 0)) for y, _ in rows), 1)
    r, t = count(*rows[-1])
    return across(), [
        (per_batch(), "still the bug. Your metric is the mean of the batches' values, each batch counting once: "
                      "a batch with few sequences weighs as much as a full one. Keep two running totals across "
                      "batches, right sequences and sequences, and divide them in result()"),
        (tokens, "you count tokens: that is the chapter's MaskedAccuracy. A sequence counts as right only if ALL "
                 "its real tokens are right, and it counts once, however long it is"),
        (across(empty="right"), "a row of padding only counts as a right sequence: it has no real token to get "
                                "wrong, but it is no sequence either. Count only the rows with a real token"),
        (across(empty="wrong"), "a row of padding only counts as a sequence (a wrong one): count only the rows "
                                "with a real token, in the numerator and in the denominator"),
        (across(compare_pads=True), "you compare the pad positions too: what the model predicts where the label is "
                                    "<pad> does not count. Compare the real tokens only"),
        (across(empty="all"), "you compare every position, pads included, and count rows "
                                                   "of padding only: compare the real tokens, count the rows that "
                                                   "have one"),
        (r / max(t, 1.0), "you keep only the last batch. Each update_state must ADD to the running totals "
                          "(variable.assign_add(...)), not replace them (assign(...) or =)"),
    ]


def _metric(SequenceAccuracy):
    answered(SequenceAccuracy, "SequenceAccuracy")
    metric = call(SequenceAccuracy, "SequenceAccuracy")
    if isinstance(metric, mt.MaskedAccuracy):
        raise AssertionError(RULE)
    if not isinstance(metric, keras.metrics.Metric):
        raise AssertionError(
            "`SequenceAccuracy()` must make a keras.metrics.Metric (subclass it), so that compile "
            f"can use it; it made a {type(metric).__name__}.")
    return metric


def _result(metric):
    value = to_numpy(call(metric.result, "SequenceAccuracy.result"), "result()")
    if value.size != 1:
        raise AssertionError(f"result() must be one number; it has shape {value.shape}.")
    return float(value.reshape(()))


def _name_the_mistake(got, batches, case):
    expected, wrong = _variants(batches)
    for value, message in wrong:
        if np.isclose(got, value) and not np.isclose(expected, value):
            raise AssertionError(f"{case}: {message}.")
    close(got, expected, f"{case}: your accuracy", atol=1e-6,
          hint="It should be (right sequences, all batches) / (sequences with a real token, all batches).")


def _graph_error(error):
    message = str(error)
    if len(message) > 600:  # TensorFlow puts whole tensors in some messages
        message = message[:600] + " [...]"
    return AssertionError(
        f"model.evaluate with your metric in compile raised {type(error).__name__}: {message.rstrip('.')}. "
        "Inside fit and evaluate, update_state runs as a TensorFlow graph: use keras.ops on the "
        "tensors and assign_add on variables, not NumPy or Python numbers.")


def _update(metric, labels, logits):
    with refusing([mt.masked_accuracy, mt.training._hits], [metric.update_state], RULE):
        call(metric.update_state, "SequenceAccuracy.update_state", labels, logits)


@test_case(points=1)
def two_batches(SequenceAccuracy):
    metric = _metric(SequenceAccuracy)
    for labels, logits in BATCHES:
        _update(metric, labels, logits)
    _name_the_mistake(_result(metric), BATCHES,
                      "A batch of 3 sequences (2 right) and one of 1 sequence (wrong) and a row of padding")


@test_case(points=1)
def reset_between_epochs(SequenceAccuracy):
    metric = _metric(SequenceAccuracy)
    _update(metric, *BATCHES[1])
    call(metric.reset_state, "SequenceAccuracy.reset_state")
    _update(metric, *BATCHES[0])
    got = _result(metric)
    if np.isclose(got, _variants(BATCHES[::-1])[0]) and not np.isclose(got, _variants(BATCHES[:1])[0]):
        raise AssertionError(
            "After reset_state() your metric still counts the batch before it: Keras resets metrics at the "
            "start of every epoch and evaluate. Make the totals with self.add_variable(...) so that the "
            "default reset_state() sets them to 0 (or write reset_state yourself).")
    _name_the_mistake(got, BATCHES[:1], "After reset_state() and the first batch alone")


@test_case(points=1)
def in_evaluate(SequenceAccuracy):
    metric = _metric(SequenceAccuracy)
    rng = np.random.default_rng(0)
    N, T = 10, 6
    lengths = np.array([6, 6, 5, 0, 1, 2, 1, 3, 6, 0])  # batches of 4, 4 and 2, rows of padding among them
    labels = np.where(np.arange(T)[None] < lengths[:, None], rng.integers(1, V, size=(N, T)), 0)
    logits = rng.normal(size=(N, T, V)).astype("float32")
    logits += 4.0 * np.eye(V, dtype="float32")[labels] * (rng.random((N, T, 1)) < 0.85)  # most tokens right
    model = keras.Sequential([keras.Input((T, V)), keras.layers.Identity()])
    model.compile(loss=mt.masked_loss, metrics=[metric], jit_compile=False)
    try:
        with mt.quiet_stderr():  # TensorFlow's C++ log about its tf.data graph, which depends on the set-up
            model.evaluate(logits, labels, batch_size=4, verbose=0)
    except NotImplementedError as error:
        if not str(error):  # a stub's bare NotImplementedError (TensorFlow's own come with a message)
            raise Unanswered("`SequenceAccuracy` still raises NotImplementedError: write update_state and "
                             "result.") from None
        raise _graph_error(error) from error
    except Exception as error:
        raise _graph_error(error) from error
    got = _result(metric)
    batches = [(labels[i:i + 4], logits[i:i + 4]) for i in range(0, N, 4)]
    _name_the_mistake(got, batches, "In model.evaluate, 3 batches with different padding")

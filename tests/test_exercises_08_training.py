"""Chapter 8's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import pathlib
import re
import types

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught

CHAPTER = "08_training"
HIDDEN = pathlib.Path(__file__).resolve().parents[1] / "grading" / "hidden" / CHAPTER


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-training-base-schedule has per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def graded(label, **env):
    """The check as the instructor grades it: public and hidden cases."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=HIDDEN / f"{label}.py")
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


class StubMetric(keras.metrics.Metric):
    def update_state(self, y_true, y_pred, sample_weight=None):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError


BLANKS = {
    "ex-training-base-schedule": dict(base_peak=..., base_half_step=..., base_last_rate=...),
    "ex-training-schedule": dict(my_schedule=stub),
    "ex-training-floor": dict(smoothing_floor=stub, logit_gap=stub),
    "ex-training-masked-loss": dict(my_masked_loss=stub),
    "ex-training-fix-train-step": dict(fixed_train_step=stub),
    "ex-training-fix-accuracy": dict(SequenceAccuracy=StubMetric),
    "ex-training-backup": dict(first_model=..., resumed_history=..., resumed_model=..., second_call_epochs=...,
                               second_call_final_step=...),
    "ex-training-exact-vs-token": dict(predicted_exact_match=..., measured_exact_match=...,
                                       greedy_token_accuracy=stub, first_wrong_field=stub),
}


def test_every_check_is_tested():
    assert sorted(BLANKS) == mt.exercises.labels(CHAPTER)


@pytest.mark.parametrize("label", sorted(BLANKS))
def test_blank_answers_fail_and_say_so(label):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    passed, text = check(label, **BLANKS[label], **DATES)
    assert not passed and ("still `...`" in text or "NotImplementedError" in text), text
    result = mt.exercises.run_check(CHAPTER, label, {**BLANKS[label], **DATES})
    assert result.score == 0, text


# ex-training-base-schedule ----------------------------------------------------------------------

RIGHT_BASE = dict(base_peak=(512 * 4000) ** -0.5, base_half_step=16_000, base_last_rate=(512 * 100_000) ** -0.5)


def test_base_schedule_accepts_three_significant_digits():
    for run in (check, graded):
        passed, text = run("ex-training-base-schedule", base_peak=6.99e-4, base_half_step=16000,
                           base_last_rate=1.40e-4)
        assert passed, text


@pytest.mark.parametrize("name,value,message", [
    ("base_peak", 4000**-0.5, "the factor in front of the min, which multiplies the whole schedule, is missing"),
    ("base_peak", 512**-0.5, "what is the min at step = warmup_steps"),
    ("base_half_step", 8000, "falls as step^-0.5, not as 1 / step"),
    ("base_half_step", 2000, "on its way UP"),
    ("base_half_step", 12_000, "too early"),
    ("base_half_step", 30_000, "too late"),
    ("base_last_rate", 100_000**-0.5, "is the min term alone"),
    ("base_last_rate", 512**-0.5 * 100_000 * 4000**-1.5, "uses the warm-up term"),
])
def test_base_schedule_names_the_mistakes(name, value, message):
    passed, text = graded("ex-training-base-schedule", **{**RIGHT_BASE, name: value})
    assert not passed and message in text, text
    assert_hides(text, RIGHT_BASE[name])
    for formula in ("4 times", "512^-0.5", "= warmup_steps^-0.5 / 2"):  # nor how to get it in one step
        assert formula not in text, text


@pytest.mark.parametrize("name,value,side", [
    ("base_peak", 7.5e-4, "too large"),
    ("base_peak", 6.0e-4, "too small"),
    ("base_last_rate", 2.0e-4, "too large"),
    ("base_last_rate", 1.2e-4, "too small"),
])
def test_base_schedule_never_prints_the_answer(name, value, side):
    passed, text = graded("ex-training-base-schedule", **{**RIGHT_BASE, name: value})
    assert not passed and side in text, text
    for answer in (RIGHT_BASE[name], 6.988e-4, 1.398e-4):
        assert f"{answer:.4g}" not in text and f"{answer:.3g}" not in text, text


def test_base_schedule_for_a_drawn_id():
    # A student's own numbers: the right answers for them pass, the book's fail, and a known mistake
    # is named with the student's warm-up.
    numbers = mt.exercises.parameters("ex-training-base-schedule", "s001")
    d_model, warmup, train_steps = numbers["d_model"], numbers["warmup_steps"], numbers["train_steps"]
    assert (d_model, warmup, train_steps) != (512, 4000, 100_000)
    right = dict(base_peak=(d_model * warmup) ** -0.5, base_half_step=4 * warmup,
                 base_last_rate=(d_model * train_steps) ** -0.5)
    env = dict(STUDENT_ID="s001", base_schedule_numbers=numbers)
    passed, text = graded("ex-training-base-schedule", **env, **right)
    assert passed, text
    passed, text = graded("ex-training-base-schedule", **env, **RIGHT_BASE)
    assert not passed and ("too large" in text or "too small" in text or "too early" in text
                           or "too late" in text), text
    passed, text = graded("ex-training-base-schedule", **env, **{**right, "base_half_step": 2 * warmup})
    assert not passed and "falls as step^-0.5, not as 1 / step" in text, text
    passed, text = check("ex-training-base-schedule", **env, **{**right, "base_half_step": warmup // 2})
    assert not passed and f"At step {warmup / 2:g} the rate passes half the peak on its way UP" in text, text
    passed, text = check("ex-training-base-schedule", **env,
                         **{**right, "base_last_rate": d_model**-0.5 * train_steps * warmup**-1.5})
    assert not passed and "uses the warm-up term" in text, text
    assert_hides(text, right["base_last_rate"])


# ex-training-schedule ---------------------------------------------------------------------------

def tutorial_schedule(step, d_model, warmup_steps):
    """TensorFlow's Transformer tutorial's CustomSchedule: 0 at Keras's step 0."""
    step = tf.cast(step, tf.float32)
    return tf.math.rsqrt(float(d_model)) * tf.math.minimum(tf.math.rsqrt(step), step * warmup_steps**-1.5)


def schedule(factor=lambda d: d**-0.5, combine=min, warmup_power=-1.5, shift=0):
    def my_schedule(step, d_model, warmup_steps):
        s = max(step, 1) + shift
        return factor(d_model) * combine(s**-0.5, s * warmup_steps**warmup_power)
    return my_schedule


@pytest.mark.parametrize("wrong,message", [
    (tutorial_schedule, "the TensorFlow tutorial's CustomSchedule"),
    (schedule(factor=lambda d: 1.0), "the factor d_model^-0.5 in front of the min is missing"),
    (schedule(factor=lambda d: 512**-0.5), "512^-0.5 whatever the model's width"),
    (schedule(combine=max), "take the max"),
    (schedule(combine=lambda a, b: a), "there is no warm-up"),
    (schedule(warmup_power=-0.5), "the warm-up term is step * warmup_steps^-1.5"),
    (schedule(shift=1), "shifted by one step"),
    (schedule(shift=1), "the other faithful convention"),
])
def test_schedule_names_the_mistakes(wrong, message):
    passed, text = check("ex-training-schedule", my_schedule=wrong)
    assert not passed and message.lower() in text.lower(), text


def test_schedule_without_the_step_zero_guard_says_it_divides_by_zero():
    def numpy_schedule(step, d_model, warmup_steps):  # np.float64(0) ** -0.5 is inf, min(inf, 0) = 0
        step = np.float64(step)
        with np.errstate(divide="ignore"):
            return d_model**-0.5 * np.minimum(step**-0.5, step * warmup_steps**-1.5)
    passed, text = check("ex-training-schedule", my_schedule=numpy_schedule)
    assert not passed and "first update would be wasted" in text
    passed, text = check("ex-training-schedule", my_schedule=lambda s, d, w: d**-0.5 * min(s**-0.5, s * w**-1.5))
    assert not passed and "ZeroDivisionError" in text
    passed, text = check("ex-training-schedule", my_schedule=lambda s, d, w: float("nan") if s == 0 else 1.0)
    assert not passed and "divides by zero at step 0" in text


def test_schedule_accepts_keras_ops():
    def with_ops(step, d_model, warmup_steps):
        step = ops.maximum(ops.cast(step, "float32"), 1.0)
        return ops.rsqrt(float(d_model)) * ops.minimum(ops.rsqrt(step), step * warmup_steps**-1.5)
    passed, text = check("ex-training-schedule", my_schedule=with_ops)
    assert passed, text


# ex-training-floor ------------------------------------------------------------------------------

def floor(a_of, b_of, others=lambda V: V - 1, log=np.log):
    def smoothing_floor(V, epsilon):
        a, b = a_of(V, epsilon), b_of(V, epsilon)
        return -a * log(a) - others(V) * b * log(b)
    return smoothing_floor


def right_gap(V, epsilon):
    return np.log((1 - epsilon + epsilon / V) / (epsilon / V))


@pytest.mark.parametrize("wrong,message", [
    (floor(lambda V, e: 1 - e, lambda V, e: e / (V - 1)), "spread eps over the V - 1 others"),
    (floor(lambda V, e: 1 - e, lambda V, e: e / V), "it also receives its share eps/V"),
    (floor(lambda V, e: 1.0, lambda V, e: e / V), "keep the one-hot 1"),
    (floor(lambda V, e: 1 - e + e / V, lambda V, e: e / V, others=lambda V: 1), "You count one other token"),
    (floor(lambda V, e: 1 - e + e / V, lambda V, e: e / V, log=np.log2), "log base 2"),
    (lambda V, epsilon: 0.0, "the floor is not 0"),
])
def test_floor_names_the_mistakes(wrong, message):
    passed, text = check("ex-training-floor", smoothing_floor=wrong, logit_gap=right_gap)
    assert not passed and message in text, text


@pytest.mark.parametrize("wrong,message", [
    (lambda V, e: np.log((1 - e) * V / e), "it also receives its share eps/V of the smoothing"),
    (lambda V, e: np.log((1 - e) * (V - 1) / e), "spread eps over the V - 1 other tokens"),
    (lambda V, e: (1 - e + e / V) / (e / V), "is not the ratio of the two probabilities"),
    (lambda V, e: np.log10((1 - e + e / V) / (e / V)), "natural logarithm"),
])
def test_gap_names_the_mistakes(wrong, message):
    right_floor = floor(lambda V, e: 1 - e + e / V, lambda V, e: e / V)
    passed, text = check("ex-training-floor", smoothing_floor=right_floor, logit_gap=wrong)
    assert not passed and message in text, text
    assert "log(a / b)" not in text and "log q'(y) - log q'(k)" not in text, text  # never the formula


@pytest.mark.parametrize("wrong_floor,wrong_gap", [
    (lambda V, e: 0.5, lambda V, e: 3.0),
    (lambda V, e: np.log(V), lambda V, e: np.log(V)),
])
def test_floor_and_gap_messages_give_no_formula(wrong_floor, wrong_gap):
    passed, text = check("ex-training-floor", smoothing_floor=wrong_floor, logit_gap=wrong_gap)
    assert not passed, text
    for formula in ("-a log a", "(V - 1) b log b", "log(a / b)", "z_y - z_k = log", "1 - eps + eps/V"):
        assert formula not in text, text
    cases = [(61, 0.1), (29, 0.1), (8, 0.3), (37_000, 0.1)]
    assert_hides(text, *[floor(lambda V, e: 1 - e + e / V, lambda V, e: e / V)(V, e) for V, e in cases],
                 *[right_gap(V, e) for V, e in cases])


# ex-training-masked-loss ------------------------------------------------------------------------

def masked_loss(target="annotated", reduce="masked", pad="pad_id"):
    """A loss with one or more known mistakes."""
    def my_masked_loss(labels, logits, label_smoothing=0.0, pad_id=0):
        labels, z = np.asarray(labels), np.asarray(logits, "float64")
        log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
        V, eps = z.shape[-1], label_smoothing
        nll = -np.take_along_axis(log_p, labels[..., None], -1)[..., 0]
        total = -log_p.sum(-1)
        pad_column = -log_p[..., pad_id if pad == "pad_id" else 0]
        per_token = {
            "annotated": (1 - eps) * nll + eps * (total - nll - pad_column) / (V - 2),
            "package": (1 - eps) * nll + eps * total / V,  # the paper's q': eps/V on every token
            "pad kept": (1 - eps) * nll + eps * (total - nll) / (V - 1),
            "label kept": (1 - eps) * nll + eps * (total - pad_column) / (V - 1),
            "over V": (1 - eps) * nll + eps * (total - nll - pad_column) / V,
            "over V - 1": (1 - eps) * nll + eps * (total - nll - pad_column) / (V - 1),
            "unnormalized": nll + eps * (total - nll - pad_column) / (V - 2),
            "none": nll,
            "no smoothing term": (1 - eps) * nll,
        }[target]
        keep = labels != (pad_id if pad == "pad_id" else 0)
        if reduce == "all":
            return per_token.mean()
        if reduce == "per sequence":
            return ((per_token * keep).sum(1) / np.maximum(keep.sum(1), 1)).mean()
        if reduce == "sum":
            return (per_token * keep).sum()
        if reduce == "0/0":
            with np.errstate(invalid="ignore"):
                return (per_token * keep).sum() / keep.sum()
        return (per_token * keep).sum() / max(keep.sum(), 1)
    return my_masked_loss


def test_masked_loss_accepts_the_right_one_and_keras_ops():
    passed, text = check("ex-training-masked-loss", my_masked_loss=masked_loss())
    assert passed, text

    def with_ops(labels, logits, label_smoothing=0.0, pad_id=0):
        log_p = ops.log_softmax(ops.convert_to_tensor(logits, "float32"), axis=-1)
        ids = ops.convert_to_tensor(labels, "int32")
        nll = -ops.take_along_axis(log_p, ids[..., None], axis=-1)[..., 0]
        others = -ops.sum(log_p, axis=-1) - nll + log_p[..., pad_id]
        per_token = (1 - label_smoothing) * nll + label_smoothing * others / (log_p.shape[-1] - 2)
        keep = ops.cast(ids != pad_id, "float32")
        return ops.sum(per_token * keep) / ops.maximum(ops.sum(keep), 1.0)
    passed, text = check("ex-training-masked-loss", my_masked_loss=with_ops)
    assert passed, text


def test_masked_loss_accepts_the_dense_target():
    def dense(labels, logits, label_smoothing=0.0, pad_id=0):  # the Annotated Transformer's way, (B, T, V)
        labels, z = np.asarray(labels), np.asarray(logits, "float64")
        log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
        target = np.full(z.shape, label_smoothing / (z.shape[-1] - 2))
        np.put_along_axis(target, labels[..., None], 1 - label_smoothing, -1)
        target[..., pad_id] = 0.0
        keep = labels != pad_id
        return (-(target * log_p).sum(-1) * keep).sum() / max(keep.sum(), 1)
    passed, text = check("ex-training-masked-loss", my_masked_loss=dense)
    assert passed, text


def test_masked_loss_refuses_the_package():
    def package(labels, logits, label_smoothing=0.0, pad_id=0):
        return mt.masked_loss(labels, logits, label_smoothing=label_smoothing, pad_id=pad_id)
    passed, text = check("ex-training-masked-loss", my_masked_loss=package)
    assert not passed and "do not call mt.masked_loss" in text, text


@pytest.mark.parametrize("wrong,messages", [
    (masked_loss(reduce="all"), ["pads included"]),
    (masked_loss(reduce="per sequence"), ["average each sequence, then the sequences"]),
    (masked_loss(reduce="sum"), ["you return the sum"]),
    (masked_loss(target="package"), ["this is the package's q'"]),
    (masked_loss(target="pad kept"), ["leave the label out of the smoothing but not the pad"]),
    (masked_loss(target="label kept"), ["leave the pad out of the smoothing but not the label"]),
    (masked_loss(target="over V"), ["you divide the smoothing by V:"]),
    (masked_loss(target="over V - 1"), ["you divide the smoothing by V - 1"]),
    (masked_loss(target="unnormalized"), ["the label's weight is 1 - eps"]),
    (masked_loss(target="none"), ["label_smoothing is ignored"]),
    (masked_loss(target="no smoothing term"), ["the smoothing term is missing"]),
    (masked_loss(pad=0), ["the pad id here is 3"]),
    (masked_loss(reduce="0/0"), ["0 / 0"]),
    (masked_loss(target="package", reduce="all"), ["this is the package's q'", "pads included"]),
])
def test_masked_loss_names_the_mistakes(wrong, messages):
    passed, text = check("ex-training-masked-loss", my_masked_loss=wrong)
    assert not passed and all(m.lower() in text.lower() for m in messages), text


def test_masked_loss_rejects_keras_default_reduction():
    def keras_default(labels, logits, label_smoothing=0.0, pad_id=0):  # the pitfall: pads averaged in
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    passed, text = check("ex-training-masked-loss", my_masked_loss=keras_default)
    assert not passed and "pads included" in text


# ex-training-fix-train-step ---------------------------------------------------------------------

def train_step(training="keyword", updates=1, smoothing=0.1, gradients_of=None):
    """The hand-written step of the exercise, with `training` passed in one of several ways."""
    def step(model, batch):
        (source, target_in), target_out = batch
        with tf.GradientTape() as tape:
            if training == "keyword":
                logits = model((source, target_in), training=True)
            elif training == "position":  # the sources' style: Keras 3 refuses it
                logits = model((source, target_in), True)
            elif training == "left out":
                logits = model((source, target_in))
            else:
                logits = model((source, target_in), training=False)
            loss = mt.masked_loss(target_out, logits, label_smoothing=smoothing)
            other = None if gradients_of is None else mt.masked_loss(target_out, logits, label_smoothing=gradients_of)
        gradients = tape.gradient(loss if other is None else other, model.trainable_variables)
        for _ in range(updates):
            model.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss
    return step


def zero_gradient_step(model, batch):
    """The reviewer's loophole: the right loss, training=True, one optimizer step that changes nothing."""
    (source, target_in), target_out = batch
    loss = mt.masked_loss(target_out, model((source, target_in), training=True), label_smoothing=0.1)
    model.optimizer.apply_gradients([(tf.zeros_like(v), v) for v in model.trainable_variables])
    return loss


def test_fix_train_step_accepts_training_by_keyword():
    passed, text = check("ex-training-fix-train-step", fixed_train_step=train_step())
    assert passed, text


def test_fix_train_step_accepts_the_compiled_loss_and_a_float():
    def with_model_loss(model, batch):
        (source, target_in), target_out = batch
        with tf.GradientTape() as tape:
            loss = model.loss(target_out, model([source, target_in], training=True))  # MaskedLoss(0.1)
        model.optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
        return float(loss)
    passed, text = check("ex-training-fix-train-step", fixed_train_step=with_model_loss)
    assert passed, text


@pytest.mark.parametrize("wrong,messages", [
    (train_step(training="position"), ["still passes `training` by position", "training=True"]),
    (train_step(training="left out"), ["the loss with dropout OFF", "you left `training` out"]),
    (train_step(training="False"), ["the loss with dropout OFF"]),
    (train_step(updates=0), ["has made no update"]),
    (train_step(updates=2), ["has made 2 updates"]),
    (train_step(smoothing=0.0), ["Keep everything else as it is"]),
    (zero_gradient_step, ["no weight of the model changed"]),
    (train_step(gradients_of=0.0), ["moves the weights differently from one update of the given step"]),
])
def test_fix_train_step_names_the_mistakes(wrong, messages):
    passed, text = check("ex-training-fix-train-step", fixed_train_step=wrong)
    assert not passed and all(m in text for m in messages), text


def test_fix_train_step_messages_never_print_a_loss():
    for wrong in (train_step(training="left out"), train_step(smoothing=0.0)):
        passed, text = check("ex-training-fix-train-step", fixed_train_step=wrong)
        assert not passed and not re.search(r"\d\.\d{3}", text.split("AssertionError:")[-1]), text


def test_fix_train_step_given_code_scores_zero():
    result = mt.exercises.run_check(CHAPTER, "ex-training-fix-train-step",
                                    {"fixed_train_step": train_step(training="position")})
    assert result.score == 0, result.summary()


# ex-training-fix-accuracy ----------------------------------------------------------------------

def sequence_counts(y_true, y_pred, compare_pads=False, empty="skip"):
    """(right sequences, sequences) of one batch, right or with one of the known mistakes."""
    y_true = ops.cast(y_true, "int32")
    predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
    real = ops.not_equal(y_true, 0)
    same = ops.equal(predicted, y_true)
    all_right = ops.all(same if compare_pads else ops.logical_or(same, ops.logical_not(real)), axis=-1)
    is_sequence = ops.any(real, axis=-1)
    if empty == "all":  # every position compared, every row counted
        return ops.sum(ops.cast(ops.all(same, axis=-1), "float32")), ops.cast(ops.shape(y_true)[0], "float32")
    if empty == "right":
        return ops.sum(ops.cast(ops.logical_or(all_right, ops.logical_not(is_sequence)), "float32")), \
            ops.cast(ops.shape(y_true)[0], "float32")
    right = ops.sum(ops.cast(ops.logical_and(all_right, is_sequence), "float32"))
    if empty == "wrong":
        return right, ops.cast(ops.shape(y_true)[0], "float32")
    return right, ops.sum(ops.cast(is_sequence, "float32"))


def sequence_metric(assign=False, **mistake):
    class Sequences(keras.metrics.Metric):
        def __init__(self, name="sequence_accuracy", **kwargs):
            super().__init__(name=name, **kwargs)
            self.right = self.add_variable(shape=(), initializer="zeros", name="right")
            self.total = self.add_variable(shape=(), initializer="zeros", name="total")

        def update_state(self, y_true, y_pred, sample_weight=None):
            right, total = sequence_counts(y_true, y_pred, **mistake)
            (self.right.assign if assign else self.right.assign_add)(right)
            (self.total.assign if assign else self.total.assign_add)(total)

        def result(self):
            return self.right / ops.maximum(self.total, 1.0)
    return Sequences


def batch_function(y_true, y_pred):
    right, total = sequence_counts(y_true, y_pred)
    return right / ops.maximum(total, 1.0)


class PythonTotals(keras.metrics.Metric):
    """Totals in Python numbers: right eagerly, but reset_state does not see them."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.right = self.total = 0.0

    def update_state(self, y_true, y_pred, sample_weight=None):
        right, total = sequence_counts(y_true, y_pred)
        self.right += float(right)
        self.total += float(total)

    def result(self):
        return self.right / max(self.total, 1.0)


class UsesThePackage(keras.metrics.Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.value = self.add_variable(shape=(), initializer="zeros", name="value")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.value.assign(mt.masked_accuracy(y_true, y_pred))

    def result(self):
        return self.value


def test_fix_accuracy_accepts_the_right_metric():
    passed, text = check("ex-training-fix-accuracy", SequenceAccuracy=sequence_metric())
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (lambda: keras.metrics.MeanMetricWrapper(batch_function), "still the bug"),
    (mt.MaskedAccuracy, "do not use mt.MaskedAccuracy"),
    (UsesThePackage, "do not use mt.MaskedAccuracy"),
    (sequence_metric(empty="right"), "a row of padding only counts as a right sequence"),
    (sequence_metric(empty="wrong"), "a row of padding only counts as a sequence (a wrong one)"),
    (sequence_metric(compare_pads=True), "you compare the pad positions too"),
    (sequence_metric(empty="all"), "you compare every position, pads included"),
    (sequence_metric(assign=True), "you keep only the last batch"),
    (PythonTotals, "After reset_state() your metric still counts the batch before it"),
    (PythonTotals, "runs as a TensorFlow graph"),
    (lambda: batch_function, "must make a keras.metrics.Metric"),
])
def test_fix_accuracy_names_the_mistakes(wrong, message):
    passed, text = check("ex-training-fix-accuracy", SequenceAccuracy=wrong)
    assert not passed and message in text, text


class TokenTotals(mt.MaskedAccuracy.__bases__[0]):
    """The chapter's MaskedAccuracy written out (tokens, not sequences), not a subclass of it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.right = self.add_variable(shape=(), initializer="zeros", name="right")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        real = ops.not_equal(y_true, 0)
        hits = ops.logical_and(ops.equal(ops.cast(ops.argmax(y_pred, axis=-1), "int32"), y_true), real)
        self.right.assign_add(ops.sum(ops.cast(hits, "float32")))
        self.total.assign_add(ops.sum(ops.cast(real, "float32")))

    def result(self):
        return self.right / ops.maximum(self.total, 1.0)


def test_fix_accuracy_names_the_chapters_token_accuracy():
    passed, text = check("ex-training-fix-accuracy", SequenceAccuracy=TokenTotals)
    assert not passed and "you count tokens" in text, text


def test_fix_accuracy_blank_metric_says_so_in_evaluate_too():
    class Blank(keras.metrics.Metric):  # the work cell's starting point
        ...

    for metric in (Blank, StubMetric):
        result = mt.exercises.run_check(CHAPTER, "ex-training-fix-accuracy", {"SequenceAccuracy": metric})
        text = result.summary()
        assert result.score == 0 and text.count("Unanswered: `") == 3, text
        assert "Inside fit" not in text, text


# ex-training-backup -----------------------------------------------------------------------------

def history(epochs):
    return types.SimpleNamespace(epoch=list(epochs), history={"loss": [1.0] * len(epochs)})


def model_at(step):
    return types.SimpleNamespace(optimizer=types.SimpleNamespace(iterations=np.int64(step)))


RIGHT_BACKUP = dict(first_model=model_at(6), resumed_history=history([2, 3]), resumed_model=model_at(12),
                    second_call_epochs=2, second_call_final_step=12)


def test_backup_accepts_the_right_run():
    for run in (check, graded):
        passed, text = run("ex-training-backup", **RIGHT_BACKUP)
        assert passed, text


@pytest.mark.parametrize("name,value,message", [
    ("resumed_history", history([0, 1, 2, 3]), "nothing was restored"),
    ("resumed_history", history([1, 2, 3]), "trained the epochs [2, 3, 4]"),
    ("resumed_history", history([1, 2, 3]), "list BackupAndRestore before your interrupting callback"),
    ("resumed_history", "done", "must be what the second `fit` call returns"),
    ("resumed_model", model_at(6), "started again from step 0"),
    ("resumed_model", model_at(9), "the step count of an uninterrupted run"),
    ("first_model", model_at(12), "the first call was never interrupted"),
    ("first_model", model_at(3), "not the end of an epoch where the exercise interrupts the run"),
    ("first_model", "a model", "must be the model of the first `fit` call"),
    ("second_call_epochs", 4, "the whole run"),
    ("second_call_epochs", 3, "interrupted after epoch 2 of 4"),
    ("second_call_final_step", 6, "as if the optimizer had started from 0"),
    ("second_call_final_step", 2.5, "must be a whole number"),
])
def test_backup_names_the_mistakes(name, value, message):
    passed, text = graded("ex-training-backup", **{**RIGHT_BACKUP, name: value})
    assert not passed and message in text, text


def test_backup_rejects_one_model_without_a_restart():
    # The reviewer's loophole: fit(epochs=2), then fit(initial_epoch=2, epochs=4) on the same model, no
    # BackupAndRestore, no exception: the history, the step and the answers all look right.
    model = model_at(12)
    passed, text = check("ex-training-backup", **{**RIGHT_BACKUP, "first_model": model, "resumed_model": model})
    assert not passed and "are the same object" in text, text


def test_backup_messages_never_give_the_answers():
    for name, value in [("resumed_model", model_at(9)), ("second_call_final_step", 6), ("resumed_history", history([1, 3]))]:
        passed, text = graded("ex-training-backup", **{**RIGHT_BACKUP, name: value})
        message = text.split("AssertionError:")[-1]
        assert not passed and "12" not in message and "[3, 4]" not in message, text


# ex-training-exact-vs-token ---------------------------------------------------------------------

DATE_TEST = [("3 Mar 1998", "1998-03-03"), ("Wednesday, 25 September 2024", "2024-09-25"),
             ("10/2/2003", "2003-10-02"), ("june 11th, 87", "1987-06-11")]
DATES = dict(date_forced_accuracy=0.9996590614318848, date_test=DATE_TEST,
             date_outputs=["1998-03-03", "2042-09-25", "2003-10-22", "1987-06-11"])
FIELDS = ["year"] * 4 + ["separator"] + ["month"] * 2 + ["separator"] + ["day"] * 2 + ["end"]


def token_accuracy(outputs, targets):
    said = [list(o) + ["<end>"] for o in outputs]
    wanted = [list(t) + ["<end>"] for t in targets]
    right = sum(i < len(s) and s[i] == w[i] for s, w in zip(said, wanted) for i in range(len(w)))
    return right / sum(len(w) for w in wanted)


def first_wrong_field(output, target):
    if output == target:
        return None
    return FIELDS[next(i for i in range(len(target) + 1) if output[i:i + 1] != target[i:i + 1])]


RIGHT_DATES = dict(predicted_exact_match=0.9996590614318848**11, measured_exact_match=0.5,
                   greedy_token_accuracy=token_accuracy, first_wrong_field=first_wrong_field, **DATES)


def test_exact_vs_token_accepts_the_right_answers():
    for run in (check, graded):
        passed, text = run("ex-training-exact-vs-token", **RIGHT_DATES)
        assert passed, text


def zipped_field(output, target):
    for i, (a, b) in enumerate(zip(output, target)):
        if a != b:
            return FIELDS[i]
    return None


@pytest.mark.parametrize("name,value,message", [
    ("predicted_exact_match", 0.9996590614318848**10, "is a^10"),
    ("predicted_exact_match", 0.9997**11, "comes from a rounded accuracy"),
    ("predicted_exact_match", 0.99966**11, "you used 0.99966 (the printed value)"),
    ("predicted_exact_match", 0.99626, "is a^11 rounded to 5 decimals"),
    ("predicted_exact_match", 0.9996590614318848, "the token accuracy itself"),
    ("measured_exact_match", 0.75 - 0.25, None),  # 0.5 is right here: 2 of 4
    ("measured_exact_match", 2, "is a count"),
    ("greedy_token_accuracy",
     lambda outputs, targets: np.mean([o[i:i + 1] == t[i] for o, t in zip(outputs, targets) for i in range(10)]),
     "the 10 characters only"),
    ("greedy_token_accuracy",
     lambda outputs, targets: np.mean([a == b for o, t in zip(outputs, targets) for a, b in zip(o, t)]),
     "zip stops at the shorter string"),
    ("greedy_token_accuracy", lambda outputs, targets: np.mean([o == t for o, t in zip(outputs, targets)]),
     "this is the exact match"),
    ("first_wrong_field", zipped_field, "zip stops at the shorter string"),
    ("first_wrong_field", lambda o, t: None if o == t else "day", "Positions 0-3 of YYYY-MM-DD are the year"),
])
def test_exact_vs_token_names_the_mistakes(name, value, message):
    passed, text = check("ex-training-exact-vs-token", **{**RIGHT_DATES, name: value})
    if message is None:
        assert passed, text
    else:
        assert not passed and message in text, text


@pytest.mark.parametrize("name,value", [
    ("predicted_exact_match", 0.99),
    ("predicted_exact_match", round(0.9996590614318848**11, 3)),
    ("measured_exact_match", 0.6),
    ("greedy_token_accuracy", lambda outputs, targets: 0.25),
    ("first_wrong_field", lambda o, t: None if o == t else "month"),
])
def test_exact_vs_token_never_prints_the_answer(name, value):
    passed, text = graded("ex-training-exact-vs-token", **{**RIGHT_DATES, name: value})
    message = text.split("AssertionError:")[-1]
    answers = [f"{0.9996590614318848**11:.6f}", f"{0.9996590614318848**11:.5f}", "0.500000", "0.5000", "it should be",
               f"{token_accuracy(['1998-03-03', '2042-09-25', '2003-10-0', '1987-06-111', ''], ['1998-03-03', '2024-09-25', '2003-10-02', '1987-06-11', '1966-11-02']):.4f}"]
    assert not passed and not any(a in message for a in answers), text


def test_exact_vs_token_rejects_the_error_rate():
    dates = {**RIGHT_DATES, "date_outputs": ["1998-03-03", "2042-09-25", "2003-10-02", "1987-06-11"]}
    passed, text = graded("ex-training-exact-vs-token", **{**dates, "measured_exact_match": 0.25})
    assert not passed and "fraction of WRONG outputs" in text, text


# ---------------------------------------------------------------- "without calling mt.TransformerSchedule"
@pytest.mark.parametrize("wrong", [
    lambda step, d_model, warmup_steps: float(mt.TransformerSchedule(d_model, warmup_steps)(step)),
    lambda step, d_model, warmup_steps: mt.training.TransformerSchedule(d_model, warmup_steps)(step),
])
def test_schedule_refuses_the_packages_schedule(wrong):
    result = mt.exercises.run_check(CHAPTER, "ex-training-schedule", {"my_schedule": wrong})
    text = result.summary()
    assert result.score == 0 and "calls mt.TransformerSchedule" in text, text
    assert float(mt.TransformerSchedule(64, 400)(400)) > 0  # restored afterwards


def test_schedule_refuses_the_schedule_bound_by_name_in_the_notebook():
    namespace = {}
    exec("from mintransformer import TransformerSchedule\n"
         "def my_schedule(step, d_model, warmup_steps):\n"
         "    return float(TransformerSchedule(d_model, warmup_steps)(step))\n", namespace)
    passed, text = check("ex-training-schedule", my_schedule=namespace["my_schedule"])
    assert not passed and "calls mt.TransformerSchedule" in text, text
    assert namespace["TransformerSchedule"] is mt.TransformerSchedule


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden/08_training)
def test_every_exercise_with_one_right_answer_has_hidden_cases():
    assert sorted(p.stem for p in HIDDEN.glob("*.py")) == sorted(mt.exercises.labels(CHAPTER))


def _tuned_schedule(step, d_model, warmup_steps):
    """Right for the public widths only: the warm-up looked up from d_model."""
    warmup = {64: 400, 128: 3000, 512: 4000}.get(d_model, 4000)
    step = max(float(step), 1.0)
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


_PUBLIC_FLOOR_CASES = [(61, 0.1), (29, 0.1), (8, 0.3), (37_000, 0.1)]


def _tuned_masked_loss(labels, logits, label_smoothing=0.0, pad_id=0):
    """Right for the public pad ids, 0 and 3, only: the column without smoothing looked up."""
    right = masked_loss()
    return right(labels, logits, label_smoothing, pad_id) if pad_id in (0, 3) else masked_loss(pad="0")(
        labels, logits, label_smoothing, pad_id)


def _tuned_train_step(model, batch):
    """Right on the public batch of 8 only: the update applied for a batch of that size."""
    (source, target_in), target_out = batch
    with tf.GradientTape() as tape:
        logits = model((source, target_in), training=True)
        loss = mt.masked_loss(target_out, logits, label_smoothing=0.1)
    if source.shape[0] == 8:
        gradients = tape.gradient(loss, model.trainable_variables)
        model.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


class _TunedSequences(sequence_metric()):
    """Right for the public sequence length, 6, only: the labels reshaped to rows of 6."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.reshape(y_true, (-1, 6))
        y_pred = ops.reshape(y_pred, (-1, 6, ops.shape(y_pred)[-1]))
        super().update_state(y_true, y_pred, sample_weight)


_PUBLIC_OUTPUTS = ["1998-03-03", "2042-09-25", "2003-10-0", "1987-06-111", ""]
_PUBLIC_FIELDS = {("1998-03-03", "1998-03-03"): None, ("2042-09-25", "2024-09-25"): "year",
                  ("1994-11-22", "1994-11-02"): "day", ("1987-16-11", "1987-06-11"): "month",
                  ("1987/06/11", "1987-06-11"): "separator", ("2001-01-3", "2001-01-31"): "day",
                  ("1987-06-111", "1987-06-11"): "end", ("", "1966-11-02"): "year", ("1966-11-0", "1966-11-02"): "day"}


@pytest.mark.parametrize("label,env", [
    ("ex-training-base-schedule", dict(base_peak=6.0e-4, base_half_step=12_000, base_last_rate=2.0e-4)),  # the form
    ("ex-training-schedule", {"my_schedule": _tuned_schedule}),
    ("ex-training-floor", {"smoothing_floor": floor(lambda V, e: 1 - e + e / V, lambda V, e: e / V),
                           "logit_gap": lambda V, e: right_gap(V, e) if (V, e) in _PUBLIC_FLOOR_CASES else 1.0}),
    ("ex-training-masked-loss", {"my_masked_loss": _tuned_masked_loss}),
    ("ex-training-fix-train-step", {"fixed_train_step": _tuned_train_step}),
    ("ex-training-fix-accuracy", {"SequenceAccuracy": _TunedSequences}),
    ("ex-training-exact-vs-token", {**RIGHT_DATES, "predicted_exact_match": 0.99, "measured_exact_match": 0.6}),
    ("ex-training-exact-vs-token", {**RIGHT_DATES, "greedy_token_accuracy": lambda outputs, targets: (
        39 / 55 if list(outputs) == _PUBLIC_OUTPUTS else 0.5)}),
    ("ex-training-exact-vs-token", {**RIGHT_DATES,
                                    "first_wrong_field": lambda o, t: _PUBLIC_FIELDS.get((o, t), "day")}),
])
def test_answers_tuned_to_the_public_cases_fail_the_hidden_ones(label, env):
    assert_tuned_answer_caught(CHAPTER, label, **env)


def test_backup_answers_are_compared_only_by_the_hidden_case():
    # Numbers that agree with the student's own run pass the public case, whatever the run; the hidden
    # case compares them with the exercise's.
    env = {**RIGHT_BACKUP, "resumed_history": history([1, 2, 3]), "resumed_model": model_at(9),
           "second_call_epochs": 3, "second_call_final_step": 9}
    public = mt.exercises.run_check(CHAPTER, "ex-training-backup", env)
    assert public.test_case_results[2].passed, public.summary()  # the_answers
    merged = mt.exercises.run_check(CHAPTER, "ex-training-backup", env, hidden=HIDDEN / "ex-training-backup.py")
    assert not merged.test_case_results[-1].passed, merged.summary()


def test_public_checks_no_longer_hold_the_fixed_answers():
    assert_public_check_hides(CHAPTER, "ex-training-base-schedule", *RIGHT_BASE.values(),
                              spelled=("4 * WARMUP", "TransformerSchedule"))
    assert_public_check_hides(CHAPTER, "ex-training-backup", spelled=("def the_answers(second_call_epochs, "
                                                                      "second_call_final_step):",))
    assert_public_check_hides(CHAPTER, "ex-training-exact-vs-token",
                              spelled=("def _token_accuracy", "def _first_wrong_field", "p == t for p, t"))

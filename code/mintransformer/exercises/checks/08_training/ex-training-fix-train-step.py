"""Exercise: find and fix the bug of a hand-written training step that passes `training` by position."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer import data, recipes
from mintransformer.exercises.checking import Unanswered, answered, call, to_numpy

OK_FORMAT = False
name = "ex-training-fix-train-step"
points = 2

_RUNS = {}  # the student's step, run once per function for both test cases


def _model(tokenizer, num_layers=1, d_model=16, dropout=0.1):
    """A small date-sized model with the recipe's dropout, the same for every call (fixed seed)."""
    keras.utils.set_random_seed(0)  # the same weights and the same dropout seeds every time
    model = mt.MinTransformer(num_layers=num_layers, d_model=d_model, num_heads=2, dff=2 * d_model,
                              input_vocab_size=tokenizer.vocab_size, target_vocab_size=tokenizer.vocab_size,
                              max_length=32, dropout=dropout, share_embeddings=True, pad_id=tokenizer.pad_id)
    recipes.compile_model(model, warmup_steps=400)
    return model


def _reference_step(model, batch):
    import tensorflow as tf

    (source, target_in), target_out = batch
    with tf.GradientTape() as tape:
        logits = model((source, target_in), training=True)
        loss = mt.masked_loss(target_out, logits, label_smoothing=0.1)
    gradients = tape.gradient(loss, model.trainable_variables)
    model.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return float(loss)


def _run(fixed_train_step):
    answered(fixed_train_step, "fixed_train_step")
    if fixed_train_step in _RUNS:
        return _RUNS[fixed_train_step]
    tokenizer = data.CharTokenizer(data.DATE_ALPHABET)
    batch = next(iter(data.make_dataset(data.date_pairs(8, seed=1), tokenizer, batch_size=8)))
    reference = _model(tokenizer)
    (source, target_in), target_out = batch
    dropout_off = float(mt.masked_loss(target_out, reference((source, target_in), training=False), label_smoothing=0.1))
    before = [np.array(v) for v in reference.trainable_variables]
    dropout_on = _reference_step(reference, batch)
    reference_update = [np.array(v) - b for v, b in zip(reference.trainable_variables, before)]
    model = _model(tokenizer)  # the same weights and dropout seeds as the reference had
    model((source, target_in), training=False)  # built as the reference was (no dropout, no seed drawn)
    before = [np.array(v) for v in model.trainable_variables]
    try:
        loss = call(fixed_train_step, "fixed_train_step", model, batch)
    except Unanswered:
        raise
    except AssertionError as error:
        cause = error.__cause__
        if isinstance(cause, ValueError) and "positional argument" in str(cause):
            raise AssertionError(
                "`fixed_train_step` still passes `training` by position: Keras 3 takes only input tensors "
                "positionally, so model((source, target_in), True) raises ValueError (Only input tensors may be "
                "passed as positional arguments). Pass it by keyword: model((source, target_in), training=True)."
            ) from None
        raise
    value = to_numpy(loss, "what fixed_train_step returns")
    if value.size != 1:
        raise AssertionError(f"`fixed_train_step` must return the loss of the batch, one number; it returned "
                             f"shape {value.shape}.")
    update = [np.array(v) - b for v, b in zip(model.trainable_variables, before)]
    _RUNS[fixed_train_step] = (float(value.reshape(())), int(np.asarray(model.optimizer.iterations)),
                               dropout_on, dropout_off, _agreement(update, reference_update))
    return _RUNS[fixed_train_step]


def _agreement(update, reference_update):
    """How the student's update of the weights compares with the reference step's: "same", "none" or "other".

    Adam's first update moves each weight by about lrate * sign(gradient), so two steps whose losses
    agree to the last bits move almost every weight the same way; a step that applies no gradient
    (or zeros) moves none.
    """
    if len(update) != len(reference_update):
        return "other"
    moved = sum(int(np.count_nonzero(u)) for u in update)
    if moved == 0:
        return "none"
    scale = max(float(np.max(np.abs(r))) for r in reference_update)  # about one learning rate
    same = sum(int(np.sum(np.isclose(u, r, rtol=0, atol=1e-3 * scale))) for u, r in zip(update, reference_update))
    return "same" if same >= 0.999 * sum(r.size for r in reference_update) else "other"


@test_case(points=1)
def one_update_with_training_by_keyword(fixed_train_step):
    _, steps, _, _, agreement = _run(fixed_train_step)
    if steps == 0:
        raise AssertionError(
            "After fixed_train_step(model, batch), model.optimizer has made no update: compute the gradients "
            "of the loss and apply them with model.optimizer.apply_gradients(zip(gradients, "
            "model.trainable_variables)), as the given step does.")
    if steps != 1:
        raise AssertionError(f"After one call of fixed_train_step(model, batch), model.optimizer has made {steps} "
                             "updates; one step makes one.")
    if agreement == "none":
        raise AssertionError(
            "Your step counts as an update, but no weight of the model changed: the gradients you apply are zero "
            "(or not those of the loss). Take them from the tape, tape.gradient(loss, model.trainable_variables), "
            "with the forward pass inside the `with tf.GradientTape()` block.")


@test_case(points=1)
def dropout_is_on(fixed_train_step):
    loss, _, dropout_on, dropout_off, agreement = _run(fixed_train_step)
    if np.isclose(loss, dropout_off, rtol=0, atol=1e-5):
        raise AssertionError(
            "Your step's loss is the loss with dropout OFF: you left `training` out (or passed training=False), "
            "and MinTransformer.call defaults to training=False, so the step trains without dropout, silently. "
            "Pass training=True by keyword, as model.fit does.")
    if not np.isclose(loss, dropout_on, rtol=0, atol=1e-4):
        raise AssertionError(
            "Your step's loss is neither the loss of the given step with training=True nor the one with dropout "
            "off. Keep everything else as it is: one forward pass with training=True, the loss "
            "mt.masked_loss(target_out, logits, label_smoothing=0.1), returned.")
    if agreement == "other":
        raise AssertionError(
            "Your step returns the right loss, but it moves the weights differently from one update of the given "
            "step: apply the gradients of that same loss, from the same forward pass (training=True), once, "
            "with model.optimizer.")

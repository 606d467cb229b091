"""Exercise: an interrupted run completed by keras.callbacks.BackupAndRestore.

The public cases check the run (the history and the optimizers of the two calls) and that the two
numbers are whole and read from that run; the two numbers themselves are compared by a hidden case,
when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered

OK_FORMAT = False
name = "ex-training-backup"
points = 3

EPOCHS, STEPS_PER_EPOCH, INTERRUPTED_AFTER = 4, 3, 2  # the set-up cell's short run


def _int(value, what):
    answered(value, what)
    try:
        number = float(np.asarray(value, dtype="float64").reshape(()))
    except Exception:
        raise AssertionError(f"`{what}` must be one number, not {type(value).__name__}.") from None
    if number != int(number):
        raise AssertionError(f"`{what}` must be a whole number; it is {number}.")
    return int(number)


@test_case(points=1)
def the_second_call_resumes(resumed_history):
    answered(resumed_history, "resumed_history")
    epochs = getattr(resumed_history, "epoch", None)
    if epochs is None:
        raise AssertionError(
            "`resumed_history` must be what the second `fit` call returns (a keras.callbacks.History), "
            f"not a {type(resumed_history).__name__}.")
    epochs = list(epochs)
    expected = list(range(INTERRUPTED_AFTER, EPOCHS))
    if epochs == list(range(EPOCHS)):
        raise AssertionError(
            f"Your second call trained all {EPOCHS} epochs from the first: nothing was restored. Pass "
            "keras.callbacks.BackupAndRestore(backup_dir) with the SAME directory to both calls, and make "
            "sure the first call is interrupted (a run that completes deletes its backup).")
    if epochs != expected:
        raise AssertionError(
            f"Your second call trained the epochs {[e + 1 for e in epochs]} (counting from 1). Interrupted "
            f"at the end of epoch {INTERRUPTED_AFTER} of {EPOCHS}, it should train only the epochs that the "
            "first call did not finish: raise the exception in on_epoch_end at the end of the second epoch "
            "(Keras counts epochs from 0)"
            + (f", or your exception is raised before BackupAndRestore writes its backup of epoch "
               f"{INTERRUPTED_AFTER}: Keras calls the callbacks in list order, so list BackupAndRestore before "
               "your interrupting callback." if epochs == list(range(INTERRUPTED_AFTER - 1, EPOCHS)) else "."))


def _step(model, what):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or getattr(optimizer, "iterations", None) is None:
        raise AssertionError(f"`{what}` must be the model of the {'first' if what == 'first_model' else 'second'} "
                             "`fit` call, compiled, after it ran.")
    return int(np.asarray(optimizer.iterations))


@test_case(points=1)
def the_optimizer_step_is_restored(first_model, resumed_model):
    answered(first_model, "first_model")
    answered(resumed_model, "resumed_model")
    if first_model is resumed_model:
        raise AssertionError(
            "`first_model` and `resumed_model` are the same object: the second call went on with the model that "
            "was still in memory, so nothing had to be restored. After a restart that model is gone: build a new "
            "one, and let BackupAndRestore bring back its weights and its optimizer's state.")
    first_step = _step(first_model, "first_model")
    if first_step == EPOCHS * STEPS_PER_EPOCH:
        raise AssertionError(
            "`first_model`'s optimizer made the updates of the whole run: the first call was never interrupted. "
            "Raise an exception from a callback at the end of the second epoch, listed after BackupAndRestore.")
    if first_step != INTERRUPTED_AFTER * STEPS_PER_EPOCH:
        raise AssertionError(
            f"`first_model`'s optimizer is at step {first_step}, which is not the end of an epoch where the "
            f"exercise interrupts the run (after epoch {INTERRUPTED_AFTER} of {EPOCHS}, {STEPS_PER_EPOCH} "
            "batches per epoch).")
    step = _step(resumed_model, "resumed_model")
    total = EPOCHS * STEPS_PER_EPOCH
    if step == (EPOCHS - INTERRUPTED_AFTER) * STEPS_PER_EPOCH:
        raise AssertionError(
            f"The resumed model's optimizer is at step {step}: it started again from step 0, so the schedule "
            "restarted its warm-up and Adam its moments. fit(initial_epoch=...) alone only renumbers the "
            "epochs; BackupAndRestore restores the weights AND the optimizer's state.")
    if step != total:
        raise AssertionError(
            f"The resumed model's optimizer is at step {step}: after the whole run it should have the step count "
            "of an uninterrupted run, every batch of every epoch counted once.")


@test_case(points=1)
def the_answers(second_call_epochs, second_call_final_step, resumed_history, resumed_model):
    epochs = _int(second_call_epochs, "second_call_epochs")
    step = _int(second_call_final_step, "second_call_final_step")
    trained = getattr(resumed_history, "epoch", None)
    if trained is not None and epochs != len(list(trained)):
        raise AssertionError(
            "`second_call_epochs` is not the number of epochs in your second call's history "
            "(`resumed_history`): read len(history.history['loss']) of your second call.")
    optimizer = getattr(resumed_model, "optimizer", None)
    if getattr(optimizer, "iterations", None) is not None and step != int(np.asarray(optimizer.iterations)):
        raise AssertionError(
            "`second_call_final_step` is not the step of your resumed model's optimizer "
            "(`resumed_model`): read int(model.optimizer.iterations) after the second call.")

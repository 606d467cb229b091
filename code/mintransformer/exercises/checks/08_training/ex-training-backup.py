"""Exercise: an interrupted run completed by keras.callbacks.BackupAndRestore."""

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
            f"at the end of epoch {INTERRUPTED_AFTER} of {EPOCHS}, it should train epochs "
            f"{[e + 1 for e in expected]} only: raise the exception in on_epoch_end when epoch == "
            f"{INTERRUPTED_AFTER - 1} (Keras counts epochs from 0)"
            + (f", or your exception is raised before BackupAndRestore writes its backup of epoch "
               f"{INTERRUPTED_AFTER}: Keras calls the callbacks in list order, so list BackupAndRestore before "
               "your interrupting callback." if epochs == list(range(INTERRUPTED_AFTER - 1, EPOCHS)) else "."))


@test_case(points=1)
def the_optimizer_step_is_restored(resumed_model):
    answered(resumed_model, "resumed_model")
    optimizer = getattr(resumed_model, "optimizer", None)
    if optimizer is None or getattr(optimizer, "iterations", None) is None:
        raise AssertionError("`resumed_model` must be the model of the second `fit` call, compiled, after it ran.")
    step = int(np.asarray(optimizer.iterations))
    total = EPOCHS * STEPS_PER_EPOCH
    if step == (EPOCHS - INTERRUPTED_AFTER) * STEPS_PER_EPOCH:
        raise AssertionError(
            f"The resumed model's optimizer is at step {step}: it started again from step 0, so the schedule "
            "restarted its warm-up and Adam its moments. fit(initial_epoch=...) alone only renumbers the "
            "epochs; BackupAndRestore restores the weights AND the optimizer's state.")
    if step != total:
        raise AssertionError(
            f"The resumed model's optimizer is at step {step}; after the whole run it should be at "
            f"{EPOCHS} epochs x {STEPS_PER_EPOCH} steps = {total}, the step count of an uninterrupted run.")


@test_case(points=1)
def the_answers(second_call_epochs, second_call_final_step):
    epochs = _int(second_call_epochs, "second_call_epochs")
    step = _int(second_call_final_step, "second_call_final_step")
    remaining, total = EPOCHS - INTERRUPTED_AFTER, EPOCHS * STEPS_PER_EPOCH
    if epochs == EPOCHS:
        raise AssertionError(
            f"`second_call_epochs` is {EPOCHS}, the whole run: the second call skips the {INTERRUPTED_AFTER} "
            "epochs that the backup holds. Read len(history.history['loss']) of your second call.")
    if epochs != remaining:
        raise AssertionError(f"`second_call_epochs` is {epochs}; the run was interrupted after epoch "
                             f"{INTERRUPTED_AFTER} of {EPOCHS}.")
    if step == remaining * STEPS_PER_EPOCH:
        raise AssertionError(
            f"`second_call_final_step` is {step}, as if the optimizer had started from 0: the backup holds its "
            f"step counter, {INTERRUPTED_AFTER * STEPS_PER_EPOCH}, and the second call continues from there.")
    if step != total:
        raise AssertionError(
            f"`second_call_final_step` is {step}; read int(model.optimizer.iterations) after the second call.")

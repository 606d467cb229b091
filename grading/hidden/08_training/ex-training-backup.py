"""Hidden case of ex-training-backup: the two numbers themselves.

Merged after the public check (mt.exercises.merged_source), so its helpers (_int, EPOCHS,
STEPS_PER_EPOCH, INTERRUPTED_AFTER) are in scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_the_answers(second_call_epochs, second_call_final_step):
    epochs = _int(second_call_epochs, "second_call_epochs")  # noqa: F821 (the public check's)
    step = _int(second_call_final_step, "second_call_final_step")  # noqa: F821
    remaining = EPOCHS - INTERRUPTED_AFTER  # noqa: F821
    total = EPOCHS * STEPS_PER_EPOCH  # noqa: F821
    if epochs == EPOCHS:  # noqa: F821
        raise AssertionError(
            f"`second_call_epochs` is {EPOCHS}, the whole run: the second call skips "  # noqa: F821
            f"the {INTERRUPTED_AFTER} epochs that the backup holds. Read len(history.history['loss']) of your "
            "second call.")
    if epochs != remaining:
        raise AssertionError(f"`second_call_epochs` is {epochs}; the run was interrupted after epoch "
                             f"{INTERRUPTED_AFTER} of {EPOCHS}.")  # noqa: F821
    if step == remaining * STEPS_PER_EPOCH:  # noqa: F821
        raise AssertionError(
            f"`second_call_final_step` is {step}, as if the optimizer had started from 0: the backup holds its "
            "step counter, and the second call continues from there.")
    if step != total:
        raise AssertionError(
            f"`second_call_final_step` is {step}; read int(model.optimizer.iterations) after the second call.")

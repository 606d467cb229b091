"""Appendix A's recipe: chapter 8's reversal model trained with ``model.fit`` under any strategy.

The same function trains on one device (``tf.distribute.get_strategy()``, the default strategy),
on the two logical CPUs of ``mt.distribute.split_cpu`` (``MirroredStrategy``), on several GPUs or
machines, or on a TPU: only the strategy passed in changes.
"""

import keras

from .. import data
from ..training import StepLossHistory
from .optimizer import compile_model
from .tasks import TASKS, build_model, task_data

TASK = "reversal"  # ragged lengths (3 to 10 letters), and no dropout: runs can agree to rounding
BATCH_SIZE = TASKS[TASK]["batch_size"]  # the global batch: every replica gets BATCH_SIZE / replicas rows
WARMUP_STEPS = 100  # not chapter 8's 3,000: a run of a few hundred steps should move the weights


def dataset(steps, batch_size=BATCH_SIZE):
    """The first ``steps`` batches of reversal's training pairs, in order, as a ``tf.data`` pipeline."""
    tokenizer, (train, _, _) = task_data(TASK)
    return data.make_dataset(train[: steps * batch_size], tokenizer, batch_size=batch_size)


def build(strategy, seed=0):
    """The reversal model, built and compiled in ``strategy``'s scope (chapter 8's optimizer and
    schedule, with a warm-up of ``WARMUP_STEPS``): its weights and the optimizer's slots are then
    mirrored on every replica."""
    tokenizer, _ = task_data(TASK)
    with strategy.scope():
        keras.utils.set_random_seed(seed)
        model = build_model(TASK, tokenizer)
        compile_model(model, warmup_steps=WARMUP_STEPS)
    return model


def train(strategy, batches, seed=0, checkpoint=None, batch_size=BATCH_SIZE, callbacks=()):
    """Build, compile and train the reversal model under ``strategy``, one epoch over ``batches``.

    Args:
        strategy: a ``tf.distribute.Strategy``; the model and its optimizer are made in its scope.
        batches: a ``tf.data`` pipeline of global batches (``dataset``).
        seed: fixes the initial weights.
        checkpoint: a ``.weights.h5`` path that ``keras.callbacks.ModelCheckpoint`` writes after
            the epoch, or None.
        batch_size: the global batch size of ``batches``, for the per-step losses.
        callbacks: more Keras callbacks for ``fit``.

    Returns:
        ``(model, losses)``: the trained model and the loss of every step.
    """
    model = build(strategy, seed)
    history = StepLossHistory(batch_size)
    callbacks = [history, *callbacks]
    if checkpoint:
        callbacks.append(keras.callbacks.ModelCheckpoint(checkpoint, save_weights_only=True))
    model.fit(batches, epochs=1, callbacks=callbacks, verbose=0, shuffle=False)  # the pipeline sets the order
    return model, history.losses

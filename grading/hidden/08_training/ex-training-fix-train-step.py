"""Hidden case of ex-training-fix-train-step: two steps in a row, on another model and other batches.

Merged after the public check (mt.exercises.merged_source), so its helpers (_model,
_reference_step, _agreement) are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer import data
from mintransformer.exercises.checking import call, to_numpy


@test_case(points=1, hidden=True)
def hidden_two_steps_on_another_model(fixed_train_step):
    tokenizer = data.CharTokenizer(data.DATE_ALPHABET)
    batches = [next(iter(data.make_dataset(data.date_pairs(5, seed=seed), tokenizer, batch_size=5)))
               for seed in (81, 82)]  # two batches of 5 other dates
    config = dict(num_layers=2, d_model=24, dropout=0.3)
    (source, target_in), _ = batches[0]
    reference = _model(tokenizer, **config)  # noqa: F821 (the public check's)
    reference((source, target_in), training=False)  # built as the student's model is (no seed drawn)
    start = [np.array(v) for v in reference.trainable_variables]
    expected = [_reference_step(reference, batch) for batch in batches]  # noqa: F821
    reference_update = [np.array(v) - b for v, b in zip(reference.trainable_variables, start)]
    model = _model(tokenizer, **config)  # noqa: F821 (the same weights and dropout seeds)
    model((source, target_in), training=False)
    start = [np.array(v) for v in model.trainable_variables]
    losses = [float(to_numpy(call(fixed_train_step, "fixed_train_step", model, batch), "the loss").reshape(()))
              for batch in batches]
    steps = int(np.asarray(model.optimizer.iterations))
    if steps != 2:
        raise AssertionError(f"Hidden case: after two calls of fixed_train_step, model.optimizer has made {steps} "
                             "updates; each call makes one.")
    if not np.allclose(losses, expected, rtol=0, atol=1e-4):
        raise AssertionError(
            "Hidden case, two steps on a model of 2 layers with dropout 0.3 and batches of 5: your losses are not "
            "those of the given step with training=True. Use the model and the batch you are given, dropout on.")
    update = [np.array(v) - b for v, b in zip(model.trainable_variables, start)]
    if _agreement(update, reference_update) != "same":  # noqa: F821
        raise AssertionError(
            "Hidden case: your two steps move the weights differently from two updates of the given step: apply "
            "the gradients of the loss of each batch, from its forward pass (training=True), with model.optimizer.")

"""Hidden cases of ex-inference-position: the two numbers, which the public check no longer holds.

Merged after the public check (mt.exercises.merged_source), so its helpers (_date_model, _number) are in scope.
"""

import sys

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer import data, recipes
from mintransformer.exercises.checking import close


def _exercise_numbers():
    """(largest difference, argmax agreement) of the exercise's loop, computed once per process."""
    store = sys.modules["_mintransformer_checks_09_inference"]
    if not hasattr(store, "position_numbers"):
        model, tokenizer = _date_model()  # noqa: F821 (the public check's)
        _, (_, _, pairs) = recipes.task_data("dates")
        source = data.pad([tokenizer.encode(s) for s, _ in pairs[:16]])
        target_in = data.pad([tokenizer.encode(t, add_start=True) for _, t in pairs[:16]])
        caches, logits = model.start_cache(source, 11), []
        for t in range(11):
            x, caches = model.decoder.step(model.target_embedding(target_in[:, t:t + 1]), caches, t,
                                           cross_mask=mt.padding_mask(source, model.pad_id))
            logits.append(ops.convert_to_numpy(model.output_projection(x))[:, 0])
        full, cached = ops.convert_to_numpy(model((source, target_in), training=False)), np.stack(logits, axis=1)
        store.position_numbers = (float(np.abs(full - cached).max()),
                                  float(np.mean(full.argmax(-1) == cached.argmax(-1))))
    return store.position_numbers


@test_case(points=1, hidden=True)
def hidden_the_largest_difference(largest_difference):
    got = _number(largest_difference, "largest_difference")  # noqa: F821
    expected = _exercise_numbers()[0]
    close(got, expected, "largest_difference", atol=0.01, rtol=1e-3,
          hint="The largest absolute difference between the logits of the full pass and those of the broken "
               "steps, over the 16 test dates and every position.")


@test_case(points=1, hidden=True)
def hidden_the_argmax_agreement(argmax_agreement):
    got = _number(argmax_agreement, "argmax_agreement")  # noqa: F821
    expected = _exercise_numbers()[1]
    close(got, expected, "argmax_agreement", atol=0.003, rtol=0.0,
          hint="The fraction of (date, position) pairs whose argmax token is the same in both, to at least "
               "3 decimals: the mean of full.argmax(-1) == cached.argmax(-1) over the (16, 11) pairs.")

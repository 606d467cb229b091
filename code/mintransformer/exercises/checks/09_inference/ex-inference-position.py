"""Exercise: cached decoding with every token embedded at position 0, against the full pass."""

import sys
import types

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer import data, recipes
from mintransformer.exercises.checking import answered, close, to_numpy

OK_FORMAT = False
name = "ex-inference-position"
points = 2


def _date_model():
    """The shipped date model, loaded once per Python process: this chapter's checks share it."""
    store = sys.modules.setdefault("_mintransformer_checks_09_inference", types.ModuleType("store"))
    if not hasattr(store, "date_model"):
        store.date_model = recipes.load_pretrained_date_model()
    return store.date_model


def _full_and_position_zero():
    """Logits (16, T, V) of the full pass and of the cached steps with position 0 at every step."""
    model, tokenizer = _date_model()
    store = sys.modules["_mintransformer_checks_09_inference"]
    if not hasattr(store, "position_zero"):
        store.position_zero = _compute(model, tokenizer)
    return store.position_zero


def _compute(model, tokenizer):
    _, (_, _, test_pairs) = recipes.task_data("dates")
    batch = test_pairs[:16]
    source = data.pad([tokenizer.encode(s) for s, _ in batch])
    target_in = data.pad([tokenizer.encode(t, add_start=True) for _, t in batch])
    full = ops.convert_to_numpy(model((source, target_in), training=False))
    caches = model.start_cache(source, target_in.shape[1])
    cross_mask = mt.padding_mask(source, model.pad_id)
    wrong = []
    for t in range(target_in.shape[1]):
        x = model.target_embedding(target_in[:, t:t + 1])  # position 0 every time
        x, caches = model.decoder.step(x, caches, t, cross_mask=cross_mask)
        wrong.append(ops.convert_to_numpy(model.output_projection(x))[:, 0])
    return full, np.stack(wrong, axis=1)


def _number(value, name):
    answered(value, name)
    got = to_numpy(value, name).reshape(-1)
    if got.size != 1:
        raise AssertionError(f"`{name}` must be one number.")
    return float(got[0])


@test_case(points=1)
def the_largest_difference(largest_difference):
    got = _number(largest_difference, "largest_difference")
    full, wrong = _full_and_position_zero()
    expected = float(np.abs(full - wrong).max())
    if got < 1e-3:
        raise AssertionError(
            f"largest_difference = {got:.3g} is rounding only: that is the correct cached step. Embed each "
            "token with model.target_embedding(tokens), which puts it at position 0, as the exercise asks."
        )
    close(got, expected, "largest_difference", atol=0.01, rtol=1e-3,
          hint="The largest absolute difference between the logits of the full pass and those of the broken "
               "steps, over the 16 test dates and every position.")


@test_case(points=1)
def the_argmax_agreement(argmax_agreement):
    got = _number(argmax_agreement, "argmax_agreement")
    full, wrong = _full_and_position_zero()
    expected = float(np.mean(full.argmax(-1) == wrong.argmax(-1)))
    if got > 1 and abs(got / 100 - expected) < 0.01:
        raise AssertionError("Give argmax_agreement as a fraction between 0 and 1, not a percentage.")
    if got > 0.99:
        raise AssertionError(
            f"argmax_agreement = {got:.3g}: almost every token agrees, as with the correct step. Embed each "
            "token with model.target_embedding(tokens) (position 0), as the exercise asks."
        )
    close(got, expected, "argmax_agreement", atol=0.01,
          hint="The fraction of (date, position) pairs whose argmax token is the same in both.")

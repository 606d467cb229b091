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


CROSS_MASK = ("pass cross_mask=mt.padding_mask(source, PAD) to model.decoder.step: without it the new position "
              "reads the source's pads (the course chapter's None mask again).")
END = ("target_in holds <start> and the 10 characters of each date, without <end>: "
       "data.pad([tokenizer.encode(t, add_start=True) for _, t in test_pairs[:16]]), shape (16, 11).")
# The known mistakes: what the exercise's loop computes with one of them (or two).
MISTAKES = {
    "no cross mask": (dict(cross_mask=False), CROSS_MASK),
    "with <end>": (dict(add_end=True), END),
    "with <end>, no cross mask": (dict(add_end=True, cross_mask=False), f"{END} And {CROSS_MASK}"),
    "embed_step, no cross mask": (
        dict(position_zero=False, cross_mask=False),
        "that is the correct position (embed_step) without the cross mask. Embed each token with "
        "model.target_embedding(tokens), which puts it at position 0, as the exercise asks, and " + CROSS_MASK),
}


def _results():
    """{name: (largest difference, argmax agreement)}: "right" and each of MISTAKES, computed once."""
    model, tokenizer = _date_model()
    store = sys.modules["_mintransformer_checks_09_inference"]
    if not hasattr(store, "position_zero"):
        store.position_zero = {"right": _compute(model, tokenizer)}
        for key, (options, _) in MISTAKES.items():
            store.position_zero[key] = _compute(model, tokenizer, **options)
    return store.position_zero


def _compute(model, tokenizer, position_zero=True, cross_mask=True, add_end=False):
    """The largest |difference| and the argmax agreement of the full pass and the cached steps."""
    _, (_, _, test_pairs) = recipes.task_data("dates")
    batch = test_pairs[:16]
    source = data.pad([tokenizer.encode(s) for s, _ in batch])
    target_in = data.pad([tokenizer.encode(t, add_start=True, add_end=add_end) for _, t in batch])
    full = ops.convert_to_numpy(model((source, target_in), training=False))
    caches = model.start_cache(source, target_in.shape[1])
    mask = mt.padding_mask(source, model.pad_id) if cross_mask else None
    wrong = []
    for t in range(target_in.shape[1]):
        tokens = target_in[:, t:t + 1]
        # position 0 every time: the bug the exercise asks for
        x = model.target_embedding(tokens) if position_zero else model.target_embedding.embed_step(tokens, t)
        x, caches = model.decoder.step(x, caches, t, cross_mask=mask)
        wrong.append(ops.convert_to_numpy(model.output_projection(x))[:, 0])
    wrong = np.stack(wrong, axis=1)
    return float(np.abs(full - wrong).max()), float(np.mean(full.argmax(-1) == wrong.argmax(-1)))


def _number(value, name):
    answered(value, name)
    got = to_numpy(value, name).reshape(-1)
    if got.size != 1:
        raise AssertionError(f"`{name}` must be one number.")
    return float(got[0])


def _name_mistake(got, index, name, atol, rtol=0.0):
    """Fail with the message of the known mistake whose value ``got`` is (and the right one is not)."""
    results = _results()
    right = results["right"][index]
    for key, (_, message) in MISTAKES.items():
        value = results[key][index]
        if not np.isclose(value, right, atol=atol, rtol=rtol) and np.isclose(got, value, atol=atol, rtol=rtol):
            raise AssertionError(f"{name} = {got:.4g}: {message}")


@test_case(points=1)
def the_largest_difference(largest_difference):
    got = _number(largest_difference, "largest_difference")
    expected = _results()["right"][0]
    if got < 1e-3:
        raise AssertionError(
            f"largest_difference = {got:.3g} is rounding only: that is the correct cached step. Embed each "
            "token with model.target_embedding(tokens), which puts it at position 0, as the exercise asks."
        )
    _name_mistake(got, 0, "largest_difference", atol=0.01, rtol=1e-3)
    close(got, expected, "largest_difference", atol=0.01, rtol=1e-3,
          hint="The largest absolute difference between the logits of the full pass and those of the broken "
               "steps, over the 16 test dates and every position.")


@test_case(points=1)
def the_argmax_agreement(argmax_agreement):
    got = _number(argmax_agreement, "argmax_agreement")
    expected = _results()["right"][1]
    if got > 1 and abs(got / 100 - expected) < 0.01:
        raise AssertionError("Give argmax_agreement as a fraction between 0 and 1, not a percentage.")
    if got > 0.99:
        raise AssertionError(
            f"argmax_agreement = {got:.3g}: almost every token agrees, as with the correct step. Embed each "
            "token with model.target_embedding(tokens) (position 0), as the exercise asks."
        )
    _name_mistake(got, 1, "argmax_agreement", atol=0.003)
    close(got, expected, "argmax_agreement", atol=0.003, rtol=0.0,
          hint="The fraction of (date, position) pairs whose argmax token is the same in both, to at least "
               "3 decimals: the mean of full.argmax(-1) == cached.argmax(-1) over the (16, 11) pairs.")

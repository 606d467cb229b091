"""Exercise: cached decoding with every token embedded at position 0, against the full pass."""

import sys
import types

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer import data, recipes
from mintransformer.exercises.checking import answered, to_numpy

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
# The known mistakes: what the exercise's loop computes with one of them (or two), and for which of the two
# numbers each is told apart from the right one (<end> adds a last position, which leaves the largest
# difference as it is).
MISTAKES = {
    "no cross mask": (dict(cross_mask=False), CROSS_MASK, (0, 1)),
    "with <end>": (dict(add_end=True), END, (1,)),
    "with <end>, no cross mask": (dict(add_end=True, cross_mask=False), f"{END} And {CROSS_MASK}", (1,)),
    "embed_step, no cross mask": (
        dict(position_zero=False, cross_mask=False),
        "that is the correct position (embed_step) without the cross mask. Embed each token with "
        "model.target_embedding(tokens), which puts it at position 0, as the exercise asks, and " + CROSS_MASK,
        (0, 1)),
}


def _mistakes():
    """{name: (largest difference, argmax agreement)} of each known mistake, computed once per process."""
    model, tokenizer = _date_model()
    store = sys.modules["_mintransformer_checks_09_inference"]
    if not hasattr(store, "position_mistakes"):
        store.position_mistakes = {key: _compute(model, tokenizer, key) for key in MISTAKES}
    return store.position_mistakes


def _compute(model, tokenizer, mistake):
    """The largest |difference| and the argmax agreement of the full pass and the cached steps, with the
    known ``mistake`` (a key of MISTAKES)."""
    options = dict(dict(position_zero=True, cross_mask=True, add_end=False), **MISTAKES[mistake][0])
    _, (_, _, test_pairs) = recipes.task_data("dates")
    batch = test_pairs[:16]
    source = data.pad([tokenizer.encode(s) for s, _ in batch])
    target_in = data.pad([tokenizer.encode(t, add_start=True, add_end=options["add_end"]) for _, t in batch])
    full = ops.convert_to_numpy(model((source, target_in), training=False))
    caches = model.start_cache(source, target_in.shape[1])
    mask = mt.padding_mask(source, model.pad_id) if options["cross_mask"] else None
    wrong = []
    for t in range(target_in.shape[1]):
        tokens = target_in[:, t:t + 1]
        # position 0 every time: the bug the exercise asks for
        x = (model.target_embedding(tokens) if options["position_zero"]
             else model.target_embedding.embed_step(tokens, t))
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
    """Fail with the message of the known mistake whose value ``got`` is."""
    for key, (_, message, told_apart) in MISTAKES.items():
        if index in told_apart and np.isclose(got, _mistakes()[key][index], atol=atol, rtol=rtol):
            raise AssertionError(f"{name} = {got:.4g}: {message}")


# Only the form and the known mistakes here: the two numbers are checked when your notebook is graded.
@test_case(points=1)
def the_largest_difference(largest_difference):
    got = _number(largest_difference, "largest_difference")
    if got < 1e-3:
        raise AssertionError(
            f"largest_difference = {got:.3g} is rounding only: that is the correct cached step. Embed each "
            "token with model.target_embedding(tokens), which puts it at position 0, as the exercise asks."
        )
    _name_mistake(got, 0, "largest_difference", atol=0.01, rtol=1e-3)


@test_case(points=1)
def the_argmax_agreement(argmax_agreement):
    got = _number(argmax_agreement, "argmax_agreement")
    if got > 1:
        raise AssertionError("Give argmax_agreement as a fraction between 0 and 1, not a percentage.")
    if got > 0.99:
        raise AssertionError(
            f"argmax_agreement = {got:.3g}: almost every token agrees, as with the correct step. Embed each "
            "token with model.target_embedding(tokens) (position 0), as the exercise asks."
        )
    if got < 0:
        raise AssertionError(f"argmax_agreement = {got:.3g}: a fraction of pairs lies between 0 and 1.")
    _name_mistake(got, 1, "argmax_agreement", atol=0.003)

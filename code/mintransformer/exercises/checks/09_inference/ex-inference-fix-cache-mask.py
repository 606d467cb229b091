"""Exercise: find and fix the bug of a cached decoder step that attends with mask=None."""

import sys
import types

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer import data, recipes
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-inference-fix-cache-mask"
points = 2


def _date_model():
    """The shipped date model, loaded once per Python process: this chapter's checks share it."""
    store = sys.modules.setdefault("_mintransformer_checks_09_inference", types.ModuleType("store"))
    if not hasattr(store, "date_model"):
        store.date_model = recipes.load_pretrained_date_model()
    return store.date_model


def _known_step(mask):
    """A post-norm cached step whose self-attention mask is ``mask``: None, "causal" or "strict"."""
    def step(layer, x, cache, position, cross_mask=None, is_token=None):
        k_new, v_new = layer.self_attention.project_key_value(x, x)
        slots = ops.arange(ops.shape(cache["keys"])[2])
        write = ops.equal(slots, position)
        keys = ops.where(write[:, None], k_new, cache["keys"])
        values = ops.where(write[:, None], v_new, cache["values"])
        if is_token is None:
            is_token = ops.ones((ops.shape(x)[0], 1), dtype="bool")
        tokens = ops.where(write[None, :], is_token, cache["is_token"])
        seen = {None: None,
                "causal": ops.less_equal(slots, position)[None, None, None, :],  # pads not masked
                "strict": ops.logical_and(ops.less(slots, position)[None, :], tokens)[:, None, None, :],
                }[mask]
        y, _ = layer.self_attention.attend(x, keys, values, attention_mask=seen)
        x = layer.norm1(x + y)
        y, _ = layer.cross_attention.attend(x, cache["cross_keys"], cache["cross_values"],
                                            attention_mask=cross_mask)
        x = layer.norm2(x + y)
        x = layer.norm3(x + layer.ffn(x))
        return x, dict(cache, keys=keys, values=values, is_token=tokens)
    return step


# <pad> fed back at a different position in each row, and in one row nowhere: (row, position).
PADS = [(0, 5), (1, 2), (3, 8), (4, 10)]
# A (B, 1, L) mask, without the head axis, broadcasts against the logits (B, h, 1, L) only when B = 1
# or B = h (4 here): the check uses 5 dates, so that it fails, and names it.
FEW_AXES = ("your self-attention mask has shape {shape}: its first axis is the batch, but it has fewer axes "
            "than the attention logits (B, h, 1, L), and broadcasting lines up the last axes, so its B axis "
            "falls on the heads (a (B, 1, L) mask works only by chance, when B = h). Give it the shape "
            "(B, 1, 1, L), one axis for the heads and one for the query: seen[:, None, None, :].")
CALLS_STEP = ("`fixed_step` calls layer.step, the package's DecoderLayer.step: write the step yourself, from "
              "course_step, without calling layer.step (nor model.decoder.step).")


class _CalledStep(Exception):
    """Raised by layer.step while the student's fixed_step runs."""


class _Spy:
    """While the student's step runs: DecoderLayer.step raises, and the self-attention masks are recorded."""

    def __init__(self, layer):
        self.layer, self.masks, self.called_step = layer, [], False

    def __enter__(self):
        spy, layer = self, self.layer
        self.step_owner = next(k for k in type(layer).__mro__ if "step" in vars(k))
        self.attend_owner = next(k for k in type(layer.self_attention).__mro__ if "attend" in vars(k))
        self.step, self.attend = vars(self.step_owner)["step"], vars(self.attend_owner)["attend"]
        original_attend = self.attend

        def step(*args, **kwargs):
            spy.called_step = True
            raise _CalledStep("layer.step")

        def attend(attention, query, k, v, attention_mask=None, training=False):
            if attention is layer.self_attention and attention_mask is not None:
                spy.masks.append(tuple(ops.shape(attention_mask)))
            return original_attend(attention, query, k, v, attention_mask=attention_mask, training=training)

        self.step_owner.step = step
        self.attend_owner.attend = attend
        return self

    def __exit__(self, *exc):
        self.step_owner.step = self.step
        self.attend_owner.attend = self.attend
        return False


def _student_step(step, layer, x, cache, t, cross_mask, is_token):
    """The student's fixed_step on one layer, with layer.step forbidden and its masks' shapes named."""
    with _Spy(layer) as spy:
        try:
            result = call(step, "fixed_step", layer, x, cache, t, cross_mask=cross_mask, is_token=is_token)
            error = None
        except AssertionError as failure:
            result, error = None, failure
    if spy.called_step:
        raise AssertionError(CALLS_STEP)
    batch = ops.shape(x)[0]
    for shape in spy.masks:
        if batch > 1 and len(shape) < 4 and shape[0] == batch:
            raise AssertionError(FEW_AXES.format(shape=shape))
    if error is not None:
        raise error
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
        raise AssertionError("`fixed_step` must return (x, cache), as `course_step` does.")
    return result


def _stepped(step, model, source, target_in, student=False):
    """Logits (B, T, V): the decoder run position by position, with ``step`` in every layer."""
    caches = model.start_cache(source, target_in.shape[1])
    cross_mask = mt.padding_mask(source, model.pad_id)
    logits = []
    for t in range(target_in.shape[1]):
        tokens = target_in[:, t:t + 1]
        x = model.target_embedding.embed_step(tokens, t)
        is_token = ops.not_equal(tokens, model.pad_id)
        new_caches = []
        for layer, cache in zip(model.decoder.stack, caches):
            if student:
                x, cache = _student_step(step, layer, x, cache, t, cross_mask, is_token)
            else:
                x, cache = step(layer, x, cache, t, cross_mask=cross_mask, is_token=is_token)
            new_caches.append(cache)
        caches = new_caches
        logits.append(to_numpy(model.output_projection(x), "the logits")[:, 0])
    return np.stack(logits, axis=1)


def _check(fixed_step, with_pad, rows=(0, 5), pads=PADS, case=None):
    """The test dates test_pairs[rows[0]:rows[1]] (by default 5: B = 5, not the h = 4 heads), teacher-forced,
    with <pad> at the (row, position) of ``pads`` if ``with_pad``."""
    model, tokenizer = _date_model()
    _, (_, _, test_pairs) = recipes.task_data("dates")
    pairs = test_pairs[rows[0]:rows[1]]
    source = data.pad([tokenizer.encode(s) for s, _ in pairs])
    target_in = data.pad([tokenizer.encode(t, add_start=True) for _, t in pairs])  # (B, 11)
    case = case or "Five teacher-forced test dates"
    if with_pad:
        for row, position in pads:  # as if the decoder had written <pad> there and fed it back
            target_in[row, position] = model.pad_id
        case = case if case != "Five teacher-forced test dates" else (
            "Five test dates with <pad> fed back at positions 5, 2, none, 8 and 10")
    full = ops.convert_to_numpy(model((source, target_in), training=False))  # the full pass, masked
    got = _stepped(fixed_step, model, source, target_in, student=True)
    if got.shape == full.shape and np.allclose(got, full, atol=1e-4):
        return
    known = {
        None: "still the bug: the new position attends to every slot of the cache, the empty slots of the "
              "positions not yet written (zeros) among them. Allow slot s only if s <= position, as the "
              "look-ahead mask does in the full pass.",
        "causal": "a <pad> fed back into the decoder is attended like a token. The full pass masks it "
                  "(decoder_self_mask: look-ahead AND padding); the cache records it in cache['is_token'] "
                  "(the `tokens` of course_step): allow a slot only if it is <= position AND holds a token.",
        "strict": "the new position cannot see itself. Slot `position` holds its own key and value, "
                  "written just before: allow slots <= position, not < position.",
    }
    for mask, message in known.items():
        wrong = _stepped(_known_step(mask), model, source, target_in)
        if not np.allclose(wrong, full, atol=1e-2) and like(got, wrong, atol=1e-4):
            raise AssertionError(f"{case}: {message}")
    close(got, full, f"{case}: your cached logits (B, T, V) against the full pass", atol=1e-4,
          hint="The self-attention mask of the step must be (B, 1, 1, L), True where slot s <= position "
               "and holds a token.")


@test_case(points=1)
def teacher_forced_dates(fixed_step):
    _check(fixed_step, with_pad=False)


@test_case(points=1)
def a_pad_fed_back(fixed_step):
    _check(fixed_step, with_pad=True)

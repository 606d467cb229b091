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
        y, _ = layer.self_attention.attend(x, keys, values, mask=seen)
        x = layer.norm1(x + y)
        y, _ = layer.cross_attention.attend(x, cache["cross_keys"], cache["cross_values"], mask=cross_mask)
        x = layer.norm2(x + y)
        x = layer.norm3(x + layer.ffn(x))
        return x, dict(cache, keys=keys, values=values, is_token=tokens)
    return step


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
                result = call(step, "fixed_step", layer, x, cache, t, cross_mask=cross_mask, is_token=is_token)
                if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
                    raise AssertionError("`fixed_step` must return (x, cache), as `course_step` does.")
            else:
                result = step(layer, x, cache, t, cross_mask=cross_mask, is_token=is_token)
            x, cache = result
            new_caches.append(cache)
        caches = new_caches
        logits.append(to_numpy(model.output_projection(x), "the logits")[:, 0])
    return np.stack(logits, axis=1)


def _check(fixed_step, with_pad):
    model, tokenizer = _date_model()
    _, (_, _, test_pairs) = recipes.task_data("dates")
    pairs = test_pairs[:4]
    source = data.pad([tokenizer.encode(s) for s, _ in pairs])
    target_in = data.pad([tokenizer.encode(t, add_start=True) for _, t in pairs])  # (4, 11)
    case = "Teacher-forced test dates"
    if with_pad:
        target_in[:, 5] = model.pad_id  # as if the decoder had written <pad> at step 5 and fed it back
        case = "Test dates with <pad> fed back at position 5"
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

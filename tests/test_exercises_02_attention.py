"""Chapter 2's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import numpy as np
import pytest
from keras import ops

import mintransformer as mt

CHAPTER = "02_attention"


def check(label, **env):
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,name", [
    ("ex-attention-by-hand", "weights_by_hand"),
    ("ex-attention-implement", "my_attention"),
    ("ex-attention-identical-keys", "predict_identical_keys"),
    ("ex-attention-fix-additive-mask", "fixed_attention"),
    ("ex-attention-combine-masks", "my_decoder_mask"),
])
def test_blank_answers_fail_and_say_so(label, name):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    placeholder = ... if name.endswith("hand") else stub
    passed, text = check(label, **{name: placeholder, "outputs_by_hand": ...})
    assert not passed and ("still `...`" in text or "NotImplementedError" in text)


def test_by_hand_rejects_the_unscaled_weights():
    unscaled = np.array([[np.e**2 / (np.e**2 + 1), 1 / (np.e**2 + 1)], [0.5, 0.5]])
    passed, text = check("ex-attention-by-hand", weights_by_hand=unscaled,
                         outputs_by_hand=unscaled @ np.array([[4, 0], [0, 4]]))
    assert not passed and "without the scale" in text


def _attention(scale=True, additive=False, nan_rows=False):
    """Wrong attentions: unscaled, the tutorials' `mask * -1e9`, or NaN for an empty row."""
    def attention(q, k, v, mask=None):
        q, k, v = (ops.convert_to_tensor(t, dtype="float32") for t in (q, k, v))
        logits = ops.matmul(q, ops.swapaxes(k, -1, -2))
        if scale:
            logits = logits / np.sqrt(q.shape[-1])
        if mask is not None:
            mask = ops.cast(ops.convert_to_tensor(mask), "float32")
            if additive:
                logits = logits + mask * -1e9  # the sources' convention, with the book's mask
            else:
                logits = ops.where(mask > 0, logits, -np.inf if nan_rows else -1e9)
        return ops.matmul(ops.softmax(logits, axis=-1), v), ops.softmax(logits, axis=-1)
    return attention


@pytest.mark.parametrize("wrong,message", [
    (_attention(scale=False), "unscaled"),
    (_attention(additive=True), "True where a query MAY attend"),
    (_attention(nan_rows=True), "NaN"),
    (_attention(), "not uniform weights"),  # -1e9 fill: an empty row is uniform
])
def test_implement_rejects_the_known_wrong_attentions(wrong, message):
    passed, text = check("ex-attention-implement", my_attention=wrong)
    assert not passed and message in text, text


def test_fix_rejects_the_tutorial_and_the_half_fix():
    passed, text = check("ex-attention-fix-additive-mask", fixed_attention=_attention(additive=True))
    assert not passed and "still the bug" in text

    def half_fix(q, k, v, mask):  # (1 - mask) * -1e9: right convention, uniform empty rows
        logits = ops.matmul(q, ops.swapaxes(k, -1, -2)) / np.sqrt(k.shape[-1])
        logits += (1.0 - ops.cast(mask, "float32")) * -1e9
        weights = ops.softmax(logits, axis=-1)
        return ops.matmul(weights, v), weights

    passed, text = check("ex-attention-fix-additive-mask", fixed_attention=half_fix)
    assert not passed and "no allowed key becomes uniform" in text


def test_identical_keys_rejects_the_mean_over_all_keys_under_a_mask():
    passed, text = check("ex-attention-identical-keys",
                         predict_identical_keys=lambda v, mask: np.tile(np.mean(v, 0), (3, 1)))
    assert not passed and "uniform over the keys that query t may see" in text


def test_combine_rejects_or():
    def with_or(tokens):
        return ops.logical_or(mt.causal_mask(np.shape(tokens)[1]), mt.padding_mask(tokens))
    passed, text = check("ex-attention-combine-masks", my_decoder_mask=with_or)
    assert not passed and "combine them with AND" in text

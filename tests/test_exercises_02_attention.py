"""Chapter 2's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import numpy as np
import pytest
from keras import ops

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught, hidden_path

CHAPTER = "02_attention"


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-attention-by-hand has per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def graded(label, **env):
    """The check as the instructor grades it: public and hidden cases (grading/hidden/)."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=hidden_path(CHAPTER, label))
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,name", [
    ("ex-attention-by-hand", "weights_by_hand"),
    ("ex-attention-implement", "my_attention"),
    ("ex-attention-identical-keys", "predict_identical_keys"),
    ("ex-attention-fix-additive-mask", "fixed_attention"),
    ("ex-attention-combine-masks", "my_decoder_mask"),
    ("ex-attention-causal-independence", "unchanged"),
])
def test_blank_answers_fail_and_say_so(label, name):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    placeholder = ... if name.endswith("hand") or name == "unchanged" else stub
    passed, text = check(label, **{name: placeholder, "outputs_by_hand": ...})
    assert not passed and ("still `...`" in text or "NotImplementedError" in text)


def test_by_hand_rejects_the_unscaled_weights():
    unscaled = np.array([[np.e**2 / (np.e**2 + 1), 1 / (np.e**2 + 1)], [0.5, 0.5]])
    passed, text = check("ex-attention-by-hand", weights_by_hand=unscaled,
                         outputs_by_hand=unscaled @ np.array([[4, 0], [0, 4]]))
    assert not passed and "without the scale" in text


@pytest.mark.parametrize("weights,outputs", [
    ([[0.7, 0.3], [0.5, 0.5]], [[2.8, 1.2], [2.0, 2.0]]),
    ([[0.7311, 0.2689], [1.0, 0.0]], [[2.9242, 1.0758], [4.0, 0.0]]),
])
def test_by_hand_messages_give_no_value_away(weights, outputs):
    # Review of chapter 2, item 1: the messages say where and in which direction, never the answer.
    passed, text = graded("ex-attention-by-hand", weights_by_hand=np.array(weights), outputs_by_hand=np.array(outputs))
    assert not passed and ("too large" in text or "too small" in text), text
    for value in ("0.731", "0.269", "2.924", "1.076", "0.5:", " 2.0"):
        assert value not in text, text


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
    assert not passed and "you returned the mean of all the values" in text
    passed, text = check("ex-attention-identical-keys", predict_identical_keys=lambda v, mask: np.mean(v, 0))
    assert not passed and "you returned the mean of all the values" in text


def _tutorial_attention_of_the_work_cell():
    """`tutorial_attention` exactly as the fix exercise's work cell gives it to the student."""
    import pathlib

    import nbformat

    path = pathlib.Path(__file__).resolve().parents[1] / "chapters" / f"{CHAPTER}.ipynb"
    sources = [c.source for c in nbformat.read(path, as_version=4).cells
               if "exercise-work" in c.metadata.get("tags", []) and "def tutorial_attention" in c.source]
    assert len(sources) == 1
    env = {"np": np, "ops": ops, "mt": mt}
    exec(sources[0], env)
    return env["tutorial_attention"]


def test_fix_names_the_bug_of_the_work_cells_tutorial_attention_in_every_case():
    # Review of chapter 2, items 1-2: the work cell's code runs with the book's boolean masks, and
    # the check says "still the bug" in all three cases, rows whose keys are all allowed included.
    passed, text = check("ex-attention-fix-additive-mask", fixed_attention=_tutorial_attention_of_the_work_cell())
    assert not passed and text.count("still the bug") == 3, text


def test_fix_rejects_a_fix_without_the_scale_and_swapped_results():
    def unscaled(q, k, v, mask):
        logits = ops.where(mask, ops.matmul(q, ops.swapaxes(k, -1, -2)), mt.MASK_FILL_VALUE)
        weights = ops.where(mask, ops.softmax(logits, axis=-1), 0.0)
        return ops.matmul(weights, v), weights

    passed, text = check("ex-attention-fix-additive-mask", fixed_attention=unscaled)
    assert not passed and text.count("these weights are unscaled") == 2, text  # case 3's weights are 1 or 0
    assert "Blocked keys" not in text

    def swapped(q, k, v, mask):
        logits = ops.where(mask, ops.matmul(q, ops.swapaxes(k, -1, -2)) / np.sqrt(k.shape[-1]), mt.MASK_FILL_VALUE)
        weights = ops.where(mask, ops.softmax(logits, axis=-1), 0.0)
        return weights, ops.matmul(weights, v)

    passed, text = check("ex-attention-fix-additive-mask", fixed_attention=swapped)
    assert not passed and text.count("return (output, weights), in that order") == 3, text


def _with_causal(mask, T, S, causal, first=False):
    """``mask`` AND the look-ahead rule for T queries that are the last T (or, wrongly, the first T) of S."""
    if not causal:
        return mask
    queries = np.arange(T) if first else np.arange(S - T, S)
    allowed = np.arange(S)[None, :] <= queries[:, None]
    return allowed if mask is None else np.logical_and(np.asarray(ops.convert_to_numpy(mask), bool), allowed)


def _implement_variant(kind):
    """Attentions that are wrong in one named way (or right, for the alternatives)."""
    def attention(q, k, v, mask=None, causal=False):
        mask = _with_causal(mask, np.shape(q)[-2], np.shape(k)[-2], causal)
        q, k, v = (np.asarray(t, dtype="float64") for t in (q, k, v))
        d = v.shape[-1] if kind == "sqrt(d_v)" else q.shape[-1]
        logits = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
        keep = None if mask is None else np.broadcast_to(np.asarray(ops.convert_to_numpy(mask), bool), logits.shape)
        if keep is not None and kind in ("sqrt(d_v)", "-inf then nan_to_num"):
            logits = np.where(keep, logits, -np.inf)
        if keep is not None and kind == "logits - 16":
            logits = np.where(keep, logits, logits - 16)  # blocked weights small, not 0
        with np.errstate(invalid="ignore"):
            e = np.exp(logits - logits.max(axis=-1, keepdims=True))
            weights = np.nan_to_num(e / e.sum(axis=-1, keepdims=True))
        if keep is not None and kind in ("zeroed after, not renormalised", "logits - 16"):
            weights = np.where(keep if kind != "logits - 16" else keep.any(-1, keepdims=True), weights, 0.0)
        output = weights @ v
        return (weights, output) if kind == "swapped" else (output, weights)
    return attention


@pytest.mark.parametrize("kind,message,count", [
    ("sqrt(d_v)", "you divided the logits by sqrt(d_v)", 5),
    ("zeroed after, not renormalised", "the allowed weights of a row no longer sum to 1", 4),
    ("logits - 16", "the blocked weights must be exactly 0", 4),
    ("swapped", "return (output, weights), in that order", 5),
])
def test_implement_names_more_wrong_attentions(kind, message, count):
    passed, text = check("ex-attention-implement", my_attention=_implement_variant(kind))
    assert not passed and text.count(message) == count, text
    assert "not uniform weights" not in text  # the empty-row hint only for an empty row's error
    assert "the weights is" not in text and "the weights has" not in text


def test_implement_names_the_inverted_mask_in_both_masked_cases():
    passed, text = check("ex-attention-implement", my_attention=_attention(additive=True))
    assert not passed and text.count("True where a query MAY attend") == 3, text


def test_implement_and_fix_accept_the_alternative_correct_answers():
    from keras import layers

    def keras_softmax(q, k, v, mask=None, causal=False):
        mask = _with_causal(mask, q.shape[-2], k.shape[-2], causal)
        logits = ops.matmul(ops.convert_to_tensor(q), ops.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
        m = None if mask is None else ops.broadcast_to(ops.convert_to_tensor(mask), ops.shape(logits))
        weights = layers.Softmax()(logits, mask=m)
        return ops.matmul(weights, v), weights

    for answer in (_implement_variant("-inf then nan_to_num"), keras_softmax):
        assert graded("ex-attention-implement", my_attention=answer)[0]
        assert graded("ex-attention-fix-additive-mask", fixed_attention=answer)[0]


def test_identical_keys_accepts_any_number_of_equal_rows_and_explains_the_shape():
    def mean_rows(n):
        def predict(v, mask):
            if mask is None:
                return np.tile(np.mean(v, 0), (n, 1))
            allowed = np.asarray(mask, float)
            return allowed @ v / allowed.sum(-1, keepdims=True)
        return predict

    assert check("ex-attention-identical-keys", predict_identical_keys=mean_rows(5))[0]  # S rows
    assert check("ex-attention-identical-keys", predict_identical_keys=mean_rows(1))[0]
    passed, text = check("ex-attention-identical-keys", predict_identical_keys=lambda v, mask: np.mean(v, 0)[:, None])
    assert not passed and "you cannot know the number of queries T: return one row" in text


def packed(tokens, segments):  # the reference answer
    T = np.shape(tokens)[1]
    same = ops.equal(segments[:, :, None], segments[:, None, :])[:, None]  # (B, 1, T, T)
    return ops.logical_and(ops.logical_and(mt.causal_mask(T), mt.padding_mask(tokens)), same)


def _same(segments):
    return (segments[:, :, None] == segments[:, None, :])[:, None]


def test_combine_accepts_the_packed_masks():
    passed, text = graded("ex-attention-combine-masks", my_decoder_mask=packed)
    assert passed, text
    passed, text = graded("ex-attention-combine-masks", my_decoder_mask=lambda tokens, segments: ops.cast(
        packed(tokens, segments), "float32"))
    assert passed, text


@pytest.mark.parametrize("wrong,message,count", [
    (lambda tokens, segments: ops.logical_and(mt.causal_mask(np.shape(tokens)[1]), mt.padding_mask(tokens)),
     "which belongs to the other sentence packed in the same row", 2),
    (lambda tokens, segments: ops.logical_and(mt.causal_mask(np.shape(tokens)[1]), _same(segments)),
     "which is padding", 2),
    (lambda tokens, segments: ops.logical_and(mt.padding_mask(tokens), _same(segments)),
     "the look-ahead rule is missing", 2),
    (lambda tokens, segments: np.logical_or(np.logical_or(
        ops.convert_to_numpy(mt.causal_mask(np.shape(tokens)[1])), ops.convert_to_numpy(mt.padding_mask(tokens))),
        _same(segments)),
     "a key is allowed only if every rule allows it", 2),
    (lambda tokens, segments: 1 - ops.cast(packed(tokens, segments), "float32"), "the opposite one", 2),
    (lambda tokens, segments: ops.convert_to_numpy(packed(tokens, segments))[:, 0], "it needs the head axis", 2),
    (lambda tokens, segments: mt.decoder_self_mask(tokens), "calls mt.decoder_self_mask", 2),
    (lambda tokens, segments: ops.logical_and(mt.decoder_self_mask(tokens), _same(segments)),
     "calls mt.decoder_self_mask", 2),
])
def test_combine_names_each_wrong_mask_in_both_cases(wrong, message, count):
    passed, text = check("ex-attention-combine-masks", my_decoder_mask=wrong)
    assert not passed and text.count(message) == count, text
    assert "max" not in text and "OR" not in text  # the hand-graded part (the additive convention) stays open


@pytest.mark.parametrize("answer,passes,message", [
    ([0, 1, 2, 3], True, ""),
    ((3, 2, 1, 0), True, ""),
    (np.array([True, True, True, True, False, False]), True, ""),
    ([0, 1, 2, 3, 4], False, "have outputs that do change"),
    (list(range(6)), False, "have outputs that do change"),
    ([4, 5], False, "have outputs that do change"),
    ([], False, "misses some outputs that stay exactly equal"),
    ([0, 1, 2], False, "misses some outputs that stay exactly equal"),
    ([0, 1, 2, 3, 6], False, "list each output position once, from 0 to 5"),
    ("0123", False, "must be a list of output positions"),
])
def test_causal_independence(answer, passes, message):
    passed, text = graded("ex-attention-causal-independence", unchanged=answer)
    assert passed == passes and message in text, text
    if not passes and "list each" not in text and "must be a list" not in text:
        message_shown = text.split("AssertionError:")[-1]
        assert not any(ch.isdigit() for ch in message_shown.replace("0 to t", "")), text  # no position named


def _transposed_for_four_axes(q, k, v, mask=None):
    """Right for (B, h, T, d_k) only: a fixed permutation instead of the last two axes."""
    q, k, v = (ops.convert_to_tensor(t, dtype="float32") for t in (q, k, v))
    logits = ops.matmul(q / np.sqrt(q.shape[-1]), ops.transpose(k, (0, 1, 3, 2)))
    if mask is not None:
        logits = ops.where(mask, logits, mt.MASK_FILL_VALUE)
    weights = ops.softmax(logits, axis=-1)
    if mask is not None:
        weights = ops.where(mask, weights, 0.0)
    return ops.matmul(weights, v), weights


def test_implement_needs_any_number_of_leading_axes():
    result = mt.exercises.run_check(CHAPTER, "ex-attention-implement", {"my_attention": _transposed_for_four_axes})
    text = result.summary()
    assert result.score == 3 and "transpose only the last two axes" in text, text


@pytest.mark.parametrize("label,name,wrong", [
    ("ex-attention-implement", "my_attention", mt.scaled_dot_product_attention),
    ("ex-attention-implement", "my_attention",
     lambda q, k, v, mask=None: mt.scaled_dot_product_attention(q, k, v, mask)),
    ("ex-attention-fix-additive-mask", "fixed_attention",
     lambda q, k, v, mask: mt.scaled_dot_product_attention(q, k, v, mask=mask)),
])
def test_implement_and_fix_refuse_the_packages_attention(label, name, wrong):
    passed, text = check(label, **{name: wrong})
    assert not passed and "calls the package's scaled_dot_product_attention" in text, text
    assert "Test case passed" not in text, text


def _causal_variant(kind):
    """The chapter's solution, right or wrong in one way with causal=True."""
    def attention(q, k, v, mask=None, causal=False):
        T, S = np.shape(q)[-2], np.shape(k)[-2]
        if kind == "right" or not causal:
            mask = _with_causal(mask, T, S, causal)
        elif kind == "first T":
            mask = _with_causal(mask, T, S, causal, first=True)
        elif kind == "mask ignored":
            mask = _with_causal(None, T, S, causal)
        elif kind == "causal ignored":
            pass
        q, k, v = (ops.convert_to_tensor(t, dtype="float32") for t in (q, k, v))
        logits = ops.matmul(q / np.sqrt(q.shape[-1]), ops.swapaxes(k, -1, -2))
        if mask is not None:
            logits = ops.where(mask, logits, mt.MASK_FILL_VALUE)
        weights = ops.softmax(logits, axis=-1)
        if mask is not None:
            weights = ops.where(mask, weights, 0.0)
        return ops.matmul(weights, v), weights
    return attention


@pytest.mark.parametrize("kind,message", [
    ("right", ""),
    ("first T", "your look-ahead puts the T queries at positions 0 to T - 1"),
    ("mask ignored", "with causal=True you ignored `mask`"),
    ("causal ignored", "your weights are those without any mask"),
])
def test_implement_checks_causal_with_fewer_queries_than_keys(kind, message):
    result = mt.exercises.run_check(CHAPTER, "ex-attention-implement", {"my_attention": _causal_variant(kind)})
    text = result.summary()
    assert result.score == (5 if kind == "right" else 4) and message in text, text


def test_implement_names_a_missing_causal_argument():
    passed, text = check("ex-attention-implement", my_attention=_attention())
    assert not passed and "unexpected keyword argument 'causal'" in text, text


# ---------------------------------------------------------------- no message hands out the answer
WEIGHTS_BY_HAND = np.array([[np.e / (np.e + 1), 1 / (np.e + 1)], [0.5, 0.5]])


@pytest.mark.parametrize("label,env,answers", [
    ("ex-attention-by-hand", dict(weights_by_hand=np.array([[0.6, 0.4], [0.5, 0.5]]),
                                  outputs_by_hand=np.array([[2.4, 1.6], [2.0, 2.0]])),
     [WEIGHTS_BY_HAND[0], WEIGHTS_BY_HAND[0] * 4]),
    ("ex-attention-by-hand", dict(weights_by_hand=WEIGHTS_BY_HAND, outputs_by_hand=np.array([[3.0, 1.0], [2.0, 2.0]])),
     [WEIGHTS_BY_HAND[0] * 4]),
    ("ex-attention-causal-independence", dict(unchanged=[0, 1]), [[0, 1, 2, 3]]),
    ("ex-attention-causal-independence", dict(unchanged=[0, 1, 2, 3, 4]), [[0, 1, 2, 3]]),
    ("ex-attention-causal-independence", dict(unchanged=[2, 3, 4, 5]), [[0, 1, 2, 3]]),
    ("ex-attention-identical-keys", dict(predict_identical_keys=lambda v, mask: np.zeros(v.shape[-1])), []),
    ("ex-attention-combine-masks", dict(my_decoder_mask=lambda tokens, segments: mt.padding_mask(tokens)), []),
])
def test_no_message_hands_out_the_answer(label, env, answers):
    passed, text = graded(label, **env)
    assert not passed, text
    expected = list(answers)
    if label == "ex-attention-identical-keys":  # the mean of the check's values: the answer without a mask
        rng = np.random.default_rng(0)
        rng.normal(size=(3, 4)), rng.normal(size=(1, 4))
        expected.append(rng.normal(size=(5, 2)).astype("float32").mean(axis=0))
    assert_hides(text, *expected)


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden/)
def _tuned_attention(q, k, v, mask=None, causal=False):
    """Right for the public cases only: the scale looked up for their d_k (4 in one case, 8 in the others)."""
    d_k = np.shape(q)[-1]
    looked_up = 2.0 if d_k == 4 else np.sqrt(8)
    return _causal_variant("right")(np.asarray(q) * np.sqrt(d_k) / looked_up, k, v, mask=mask, causal=causal)


def _tuned_fix(q, k, v, mask):
    """The tutorial fixed, with the public cases' d_k = 8 typed in."""
    logits = ops.where(mask, ops.matmul(q, ops.swapaxes(k, -1, -2)) / np.sqrt(8), mt.MASK_FILL_VALUE)
    return ops.matmul(ops.where(mask, ops.softmax(logits, axis=-1), 0.0), v), ops.where(
        mask, ops.softmax(logits, axis=-1), 0.0)


def _mean_of_allowed_values(v, mask):
    """Right unless a query may see no key: 0 / 0 there (the public cases have no such query)."""
    if mask is None:
        return np.mean(v, axis=0)
    allowed = np.asarray(mask, dtype="float64")
    with np.errstate(all="ignore"):
        return allowed @ v / allowed.sum(axis=-1, keepdims=True)


def _three_sentences_at_most(tokens, segments):
    """Right while a row packs at most three sentences (segment ids 0 to 3), as in the public cases."""
    tokens, segments = np.asarray(tokens), np.asarray(segments)
    T = tokens.shape[1]
    one_hot = np.eye(4)[segments][..., 1:]  # (B, T, 3): fails past segment 3
    same = one_hot @ np.swapaxes(one_hot, -1, -2) > 0
    return (np.tril(np.ones((T, T), bool)) & (tokens != 0)[:, None, :] & same)[:, None]


@pytest.mark.parametrize("label,env", [
    ("ex-attention-by-hand", dict(weights_by_hand=np.array([[0.7, 0.3], [0.5, 0.5]]),
                                  outputs_by_hand=np.array([[2.8, 1.2], [2.0, 2.0]]))),
    ("ex-attention-causal-independence", dict(unchanged=[0, 1])),
    ("ex-attention-causal-independence", dict(unchanged=[0, 1, 2])),
    ("ex-attention-implement", dict(my_attention=_tuned_attention)),
    ("ex-attention-fix-additive-mask", dict(fixed_attention=_tuned_fix)),
    ("ex-attention-identical-keys", dict(predict_identical_keys=_mean_of_allowed_values)),
    ("ex-attention-combine-masks", dict(my_decoder_mask=_three_sentences_at_most)),
])
def test_hidden_cases_catch_answers_tuned_to_the_public_ones(label, env):
    assert_tuned_answer_caught(CHAPTER, label, **env)


def test_public_checks_no_longer_hold_the_values_they_hid():
    weights = np.array([[np.e / (np.e + 1), 1 / (np.e + 1)], [0.5, 0.5]])
    assert_public_check_hides(CHAPTER, "ex-attention-by-hand", weights, weights @ np.array([[4, 0], [0, 4]]),
                              weights[0], spelled=["np.e / (np.e + 1)", "WEIGHTS", "OUTPUTS"])
    assert_public_check_hides(CHAPTER, "ex-attention-causal-independence", [0, 1, 2, 3],
                              spelled=["scaled_dot_product_attention", "_truth"])


@pytest.mark.parametrize("label,env,message", [
    ("ex-attention-by-hand", dict(weights_by_hand=np.array([[0.7, 0.2], [0.5, 0.5]]),
                                  outputs_by_hand=np.array([[2.8, 0.8], [2.0, 2.0]])), "sum to 1"),
    ("ex-attention-by-hand", dict(weights_by_hand=np.array([[0.7, 0.3], [0.5, 0.5]]),
                                  outputs_by_hand=np.array([[2.8, 1.2], [2.5, 1.5]])), "weighted average"),
    ("ex-attention-by-hand", dict(weights_by_hand=np.array([0.7, 0.3]), outputs_by_hand=np.zeros((2, 2))),
     "must be (2, 2)"),
    ("ex-attention-causal-independence", dict(unchanged=[0, 1, 4]), "whose own input changed"),
])
def test_public_checks_still_catch_what_they_can_without_the_values(label, env, message):
    passed, text = check(label, **env)
    assert not passed and message in text, text

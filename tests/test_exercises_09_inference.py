"""Chapter 9's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import datetime
import functools

import numpy as np
import pytest
from keras import ops

import mintransformer as mt
from mintransformer import data, recipes
from exercise_messages import assert_hides, assert_same_message, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught, hidden_path

CHAPTER = "09_inference"


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (two exercises have per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def check_merged(label, **env):
    """The check with its hidden cases, as the instructor grades."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=hidden_path(CHAPTER, label))
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,names", [
    ("ex-inference-greedy", ["my_greedy_decode"]),
    ("ex-inference-length-penalty", ["my_length_penalty", "winners", "tie_alpha"]),
    ("ex-inference-cache-memory", ["cache_numbers", "base_cache_megabytes"]),
    ("ex-inference-position", ["largest_difference", "argmax_agreement"]),
    ("ex-inference-fix-cache-mask", ["fixed_step"]),
    ("ex-inference-intervention", ["weekday_outputs", "month_outputs", "november_outputs"]),
    ("ex-inference-slices", ["error_table", "failing_months"]),
])
def test_blank_answers_fail_and_say_so(label, names):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    functions = {"my_greedy_decode", "my_length_penalty", "cache_numbers", "fixed_step", "error_table"}
    passed, text = check(label, **{name: stub if name in functions else ... for name in names})
    assert not passed and ("still `...`" in text or "NotImplementedError" in text)


# Greedy decoding.

def _greedy(first=None, row=-1, ban=True, pad_after_end=True, keep_end=True, with_start=False, shape=None,
            steps=0, banned=None):
    """Greedy decoding with one known mistake (``steps``: how many steps fewer than max_length)."""
    def decode(model, source_tokens, start_id, end_id, max_length):
        source = np.asarray(source_tokens, "int32")
        target = np.full((len(source), 1), start_id if first is None else first, "int32")
        output = np.full((len(source), max_length), model.pad_id, "int32")
        done = np.zeros(len(source), bool)
        for t in range(max_length - steps):
            logits = ops.convert_to_numpy(model((source, target), training=False))[:, row]
            if ban:
                logits[:, [model.pad_id, start_id if banned is None else banned]] = -np.inf
            next_ids = logits.argmax(-1)
            output[:, t] = np.where(done, model.pad_id, next_ids) if pad_after_end else next_ids
            if not keep_end:
                output[:, t] = np.where(next_ids == end_id, model.pad_id, output[:, t])
            done |= next_ids == end_id
            if done.all() and pad_after_end:
                break
            target = np.concatenate([target, next_ids[:, None].astype("int32")], axis=1)
        if with_start:
            output = np.concatenate([np.full((len(source), 1), start_id), output[:, :-1]], axis=1)
        return output if shape is None else output[:, :shape]
    return decode


@pytest.mark.parametrize("wrong,message", [
    (_greedy(pad_after_end=False), "goes on with more tokens"),
    (_greedy(keep_end=False), "where end_id belongs"),
    (_greedy(first=0), "start with model.pad_id"),
    (_greedy(first=1), "does not start from start_id"),
    (_greedy(row=0), "logits of the first position"),
    (_greedy(ban=False), "chose <pad> or <start>"),
    (_greedy(with_start=True), "begin with start_id"),
    (_greedy(shape=5), "should have (4, 12)"),
    (_greedy(steps=1), "you generate only max_length - 1 tokens"),  # not "keep the end token"
    (_greedy(banned=1), "ban the argument start_id, not the set-up cell's START"),
])
def test_greedy_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-inference-greedy", my_greedy_decode=wrong)
    assert not passed and message in text, text


def test_greedy_accepts_a_correct_loop_and_its_reference_is_the_package():
    passed, text = check("ex-inference-greedy", my_greedy_decode=_greedy())
    assert passed, text


# The length penalty.

def test_length_penalty_rejects_the_wrong_formulas_and_answers():
    right = dict(my_length_penalty=lambda n, a: ((5.0 + np.asarray(n, float)) / 6.0) ** a,
                 winners={0.0: "A", 0.6: "A", 1.0: "B"},
                 tie_alpha=np.log(1.3) / np.log(1.4))
    passed, text = check("ex-inference-length-penalty", **right)
    assert passed, text
    for wrong, message in [
        (lambda n, a: (5.0 + np.asarray(n)) ** a, "without the division by (5 + 1)^alpha"),
        (lambda n, a: np.asarray(n, float) ** a, "Wu et al. add 5"),
        (lambda n, a: ((5.0 + np.asarray(n)) / 6) ** -a, "the inverse"),
    ]:
        passed, text = check("ex-inference-length-penalty", **dict(right, my_length_penalty=wrong))
        assert not passed and message in text, text
    assert check_merged("ex-inference-length-penalty", **right)[0]
    # The public check holds no winner nor tie: wrong values pass it, and the graded check names them.
    for wrong, message in [(dict(winners={0.0: "A", 0.6: "A", 1.0: "A"}), "divide by the penalty"),
                           (dict(tie_alpha=np.log(1.4) / np.log(1.3)), "You inverted one of the two ratios"),
                           (dict(tie_alpha=0.9), "tie_alpha is not the alpha for which s(A) = s(B)")]:
        assert check("ex-inference-length-penalty", **dict(right, **wrong))[0]
        passed, text = check_merged("ex-inference-length-penalty", **dict(right, **wrong))
        assert not passed and message in text, text
    passed, text = check("ex-inference-length-penalty", **dict(right, tie_alpha=np.log(1.3) / np.log(1.8)))
    assert not passed and "lp = |Y|^alpha" in text
    for tie, message in [(-0.5, "the tie is at a positive alpha"), (0.0, "the tie is at a positive alpha"),
                         ([0.7, 0.8], "must be one number")]:
        passed, text = check("ex-inference-length-penalty", **dict(right, tie_alpha=tie))
        assert not passed and message in text, text
    passed, text = check("ex-inference-length-penalty", **dict(right, winners={0.0: "A", 0.6: "C", 1.0: "B"}))
    assert not passed and 'write "A" or "B"' in text, text
    for tie in (0.9, 0.5, np.log(1.3) / np.log(1.8), np.log(1.4) / np.log(1.3)):
        for checked in (check, check_merged):
            passed, text = checked("ex-inference-length-penalty", **dict(right, tie_alpha=tie))
            assert_hides(text, np.log(1.3) / np.log(1.4))
            assert "14 / 10" not in text and "(5 + 9) / (5 + 5)" not in text and "= 2.6" not in text, text


def test_length_penalty_says_the_same_whichever_winner_is_wrong():
    """Each winner is "A" or "B": naming the alpha whose winner is wrong would name the right one."""
    right = {0.0: "A", 0.6: "A", 1.0: "B"}
    swap = {"A": "B", "B": "A"}
    texts = []
    for wrong in ([0.0], [0.6], [1.0], [0.0, 1.0], [0.0, 0.6, 1.0]):
        winners = {alpha: swap[w] if alpha in wrong else w for alpha, w in right.items()}
        passed, text = check_merged("ex-inference-length-penalty", winners=winners,
                                    tie_alpha=np.log(1.3) / np.log(1.4),
                                    my_length_penalty=lambda n, a: ((5.0 + np.asarray(n)) / 6) ** a)
        assert not passed and "At least one of the three winners is wrong" in text, text
        texts.append("\n".join(line for line in text.splitlines() if "winners" in line))
    assert_same_message(texts)


def test_length_penalty_for_a_drawn_id():
    # A student's own hypotheses: the winners follow from where they tie (B from the tie on), the tie is
    # the student's; the book's tie fails, and the tie of |Y|^alpha is named with the student's numbers.
    numbers = mt.exercises.parameters("ex-inference-length-penalty", "s001")
    la, pa, lb, pb = (numbers[key] for key in ("length_a", "log_p_a", "length_b", "log_p_b"))
    assert (la, pa, lb, pb) != (5, -2.0, 9, -2.6)
    tie = np.log(pb / pa) / np.log((5 + lb) / (5 + la))
    right = dict(my_length_penalty=lambda n, a: ((5.0 + np.asarray(n, float)) / 6.0) ** a,
                 winners={alpha: "B" if alpha > tie else "A" for alpha in (0.0, 0.6, 1.0)}, tie_alpha=tie,
                 STUDENT_ID="s001",
                 length_penalty_numbers=numbers)
    assert check_merged("ex-inference-length-penalty", **right)[0]
    # The winners vary too: over 200 ids, each of A A A, A A B and A B B (alpha = 0, 0.6, 1) is drawn.
    kinds = set()
    for i in range(200):
        n = mt.exercises.parameters("ex-inference-length-penalty", f"id{i}")
        t = np.log(n["log_p_b"] / n["log_p_a"]) / np.log((5 + n["length_b"]) / (5 + n["length_a"]))
        kinds.add(tuple(alpha > t for alpha in (0.0, 0.6, 1.0)))
    assert kinds == {(False, False, False), (False, False, True), (False, True, True)}
    passed, text = check_merged("ex-inference-length-penalty", **dict(right, tie_alpha=np.log(1.3) / np.log(1.4)))
    assert not passed and "tie_alpha is not the alpha for which s(A) = s(B)" in text, text
    assert_hides(text, tie)
    passed, text = check("ex-inference-length-penalty", **dict(right, tie_alpha=np.log(pb / pa) / np.log(lb / la)))
    assert not passed and "lp = |Y|^alpha" in text, text
    passed, text = check_merged("ex-inference-length-penalty", **dict(right, tie_alpha=1 / tie))
    assert not passed and "You inverted one of the two ratios" in text, text


@pytest.mark.parametrize("wrong", [
    mt.length_penalty,
    lambda length, alpha: mt.length_penalty(length, alpha),
    lambda length, alpha: mt.decoding.beam.length_penalty(np.asarray(length), alpha),
])
def test_length_penalty_refuses_the_packages(wrong):
    result = mt.exercises.run_check(CHAPTER, "ex-inference-length-penalty", {
        "my_length_penalty": wrong, "winners": {0.0: "A", 0.6: "A", 1.0: "B"}, "tie_alpha": np.log(1.3) / np.log(1.4),
        "STUDENT_ID": ""})
    text = result.summary()
    assert result.score == 2 and "calls mt.length_penalty" in text, text  # the penalty fails, the rest passes
    assert float(mt.length_penalty(1, 0.6)) == 1.0  # restored


# The memory of the cache.

@pytest.mark.parametrize("wrong,message", [
    (lambda n, b, t, s, d: 2 * n * b * (t + s) * d + n * b * t, "the is_token booleans too"),
    # d_model / 8 where num_layers belongs: once right by chance (d_model = 8 N), now the generic hint
    (lambda n, b, t, s, d: 2 * (d / 8) * b * (t + s) * d, "is 7200: that is too small. Count, in every decoder layer"),
    (lambda n, b, t, s, d: n * b * (t + s) * d, "keys AND values"),
    (lambda n, b, t, s, d: 2 * n * b * t * d, "cross-attention keys and values"),
    (lambda n, b, t, s, d: 8 * n * b * (t + s) * d, "count numbers here"),
    (lambda n, b, t, s, d: 2 * b * (t + s) * d, "every decoder layer"),
])
def test_cache_memory_rejects_the_wrong_formulas(wrong, message):
    passed, text = check("ex-inference-cache-memory", cache_numbers=wrong, base_cache_megabytes=157.2864)
    assert not passed and message in text, text


@pytest.mark.parametrize("megabytes,message", [(150.0, "MiB"), (39.3216, "not bytes"), (78.6432, "4 bytes, not 2")])
def test_cache_memory_rejects_the_wrong_megabytes(megabytes, message):
    right = lambda n, b, t, s, d: 2 * n * b * (t + s) * d  # noqa: E731
    passed, text = check("ex-inference-cache-memory", cache_numbers=right, base_cache_megabytes=megabytes)
    assert not passed and message in text, text
    assert_hides(text, 157.2864, 2 * 6 * 32 * 200 * 512)
    assert "half" not in text and "numbers * 4" not in text, text
    passed, text = check("ex-inference-cache-memory", cache_numbers=right, base_cache_megabytes=157.3)
    assert passed, text


def test_cache_memory_for_a_drawn_id():
    # A student's own batch and lengths: the right megabytes for them pass, the book's 157.2864 fail.
    numbers = mt.exercises.parameters("ex-inference-cache-memory", "s001")
    args = (6, numbers["batch"], numbers["target_length"], numbers["source_length"], 512)
    assert args != (6, 32, 100, 100, 512)
    right = lambda n, b, t, s, d: 2 * n * b * (t + s) * d  # noqa: E731
    env = dict(cache_numbers=right, STUDENT_ID="s001", cache_memory_numbers=numbers)
    megabytes = right(*args) * 4 / 1e6
    assert check_merged("ex-inference-cache-memory", base_cache_megabytes=megabytes, **env)[0]
    passed, text = check("ex-inference-cache-memory", base_cache_megabytes=157.2864, **env)
    assert not passed and f"against your cache_numbers{args}" in text, text
    passed, text = check_merged("ex-inference-cache-memory", base_cache_megabytes=157.2864, **env)
    assert not passed and "base_cache_megabytes is 157.286: that is too" in text, text
    passed, text = check("ex-inference-cache-memory", base_cache_megabytes=right(*args) * 4 / 2**20, **env)
    assert not passed and "That is in MiB" in text, text
    assert_hides(text, megabytes, right(*args))


# The wrong position.

def test_position_rejects_the_correct_step_and_a_percentage():
    passed, text = check("ex-inference-position", largest_difference=3e-6, argmax_agreement=1.0)
    assert not passed and "rounding only" in text and "almost every token agrees" in text
    model, tokenizer = recipes.load_pretrained_date_model()
    _, (_, _, test_pairs) = recipes.task_data("dates")
    source = data.pad([tokenizer.encode(s) for s, _ in test_pairs[:16]])
    target_in = data.pad([tokenizer.encode(t, add_start=True) for _, t in test_pairs[:16]])
    full = ops.convert_to_numpy(model((source, target_in), training=False))
    caches = model.start_cache(source, target_in.shape[1])
    wrong = []
    for t in range(target_in.shape[1]):
        x, caches = model.decoder.step(model.target_embedding(target_in[:, t:t + 1]), caches, t,
                                       cross_mask=mt.padding_mask(source))
        wrong.append(ops.convert_to_numpy(model.output_projection(x))[:, 0])
    wrong = np.stack(wrong, axis=1)
    agreement = float(np.mean(full.argmax(-1) == wrong.argmax(-1)))
    passed, text = check("ex-inference-position", largest_difference=float(np.abs(full - wrong).max()),
                         argmax_agreement=100 * agreement)
    assert not passed and "not a percentage" in text
    passed, text = check("ex-inference-position", largest_difference=float(np.abs(full - wrong).max()),
                         argmax_agreement=agreement)
    assert passed, text


def _position_zero(cross_mask=True, add_end=False):
    """The exercise's two numbers, computed with (or without) the cross mask and <end>."""
    model, tokenizer = recipes.load_pretrained_date_model()
    _, (_, _, test_pairs) = recipes.task_data("dates")
    source = data.pad([tokenizer.encode(s) for s, _ in test_pairs[:16]])
    target_in = data.pad([tokenizer.encode(t, add_start=True, add_end=add_end) for _, t in test_pairs[:16]])
    full = ops.convert_to_numpy(model((source, target_in), training=False))
    caches = model.start_cache(source, target_in.shape[1])
    wrong = []
    for t in range(target_in.shape[1]):
        x, caches = model.decoder.step(model.target_embedding(target_in[:, t:t + 1]), caches, t,
                                       cross_mask=mt.padding_mask(source) if cross_mask else None)
        wrong.append(ops.convert_to_numpy(model.output_projection(x))[:, 0])
    wrong = np.stack(wrong, axis=1)
    return float(np.abs(full - wrong).max()), float(np.mean(full.argmax(-1) == wrong.argmax(-1)))


def test_position_names_a_missing_cross_mask_and_a_target_with_end():
    difference, agreement = _position_zero(cross_mask=False)
    passed, text = check("ex-inference-position", largest_difference=difference, argmax_agreement=agreement)
    assert not passed and text.count("pass cross_mask=mt.padding_mask(source, PAD)") == 2, text
    _, agreement = _position_zero(add_end=True)
    right, _ = _position_zero()
    passed, text = check("ex-inference-position", largest_difference=right, argmax_agreement=agreement)
    assert not passed and "without <end>" in text and "shape (16, 11)" in text, text


def test_position_never_gives_the_numbers_away():
    right, agreement = _position_zero()
    assert check("ex-inference-position", largest_difference=5.0, argmax_agreement=0.6)[0]  # the form only
    passed, text = check_merged("ex-inference-position", largest_difference=5.0, argmax_agreement=0.6)
    assert not passed and "is 5: that is too small" in text and "is 0.6: that is too large" in text, text
    assert f"{right:.3f}"[:4] not in text and f"{agreement:.3f}"[:4] not in text, text
    passed, text = check("ex-inference-position", largest_difference=right, argmax_agreement=-0.1)
    assert not passed and "between 0 and 1" in text, text


# A cached step without a mask.

def _step(mask):
    """The exercise's post-norm cached step with the self-attention mask ``mask``."""
    def step(layer, x, cache, position, cross_mask=None, is_token=None):
        k_new, v_new = layer.self_attention.project_key_value(x, x)
        slots = ops.arange(ops.shape(cache["keys"])[2])
        write = ops.equal(slots, position)
        keys = ops.where(write[:, None], k_new, cache["keys"])
        values = ops.where(write[:, None], v_new, cache["values"])
        if is_token is None:
            is_token = ops.ones((ops.shape(x)[0], 1), dtype="bool")
        tokens = ops.where(write[None, :], is_token, cache["is_token"])
        seen = {
            "none": None,  # the course chapter: every mask is None
            "causal": ops.less_equal(slots, position)[None, None, None, :],
            "strict": ops.logical_and(ops.less(slots, position)[None, :], tokens)[:, None, None, :],
            "right": ops.logical_and(ops.less_equal(slots, position)[None, :], tokens)[:, None, None, :],
            "tokens only": tokens[:, None, None, :],  # right for a fresh cache: unwritten slots are False
        }[mask]
        y, _ = layer.self_attention.attend(x, keys, values, attention_mask=seen)
        x = layer.norm1(x + y)
        y, _ = layer.cross_attention.attend(x, cache["cross_keys"], cache["cross_values"],
                                            attention_mask=cross_mask)
        x = layer.norm2(x + y)
        x = layer.norm3(x + layer.ffn(x))
        return x, dict(cache, keys=keys, values=values, is_token=tokens)
    return step


@pytest.mark.parametrize("mask,message", [
    ("none", "still the bug"),
    ("causal", "a <pad> fed back into the decoder is attended"),
    ("strict", "cannot see itself"),
])
def test_fix_cache_mask_rejects_the_bug_and_the_half_fixes(mask, message):
    passed, text = check("ex-inference-fix-cache-mask", fixed_step=_step(mask))
    assert not passed and message in text, text


@pytest.mark.parametrize("mask", ["right", "tokens only"])
def test_fix_cache_mask_accepts_the_fixes(mask):
    passed, text = check("ex-inference-fix-cache-mask", fixed_step=_step(mask))
    assert passed, text


def _three_axis_step(layer, x, cache, position, cross_mask=None, is_token=None):
    """The fix with a (B, 1, L) mask, seen[:, None, :]: right only when B equals the number of heads."""
    k_new, v_new = layer.self_attention.project_key_value(x, x)
    slots = ops.arange(ops.shape(cache["keys"])[2])
    write = ops.equal(slots, position)
    keys = ops.where(write[:, None], k_new, cache["keys"])
    values = ops.where(write[:, None], v_new, cache["values"])
    tokens = ops.where(write[None, :], is_token, cache["is_token"])
    seen = ops.logical_and(ops.less_equal(slots, position)[None, :], tokens)
    y, _ = layer.self_attention.attend(x, keys, values, attention_mask=seen[:, None, :])
    x = layer.norm1(x + y)
    y, _ = layer.cross_attention.attend(x, cache["cross_keys"], cache["cross_values"],
                                        attention_mask=cross_mask)
    x = layer.norm2(x + y)
    x = layer.norm3(x + layer.ffn(x))
    return x, dict(cache, keys=keys, values=values, is_token=tokens)


def test_fix_cache_mask_rejects_a_mask_without_the_head_axis():
    passed, text = check("ex-inference-fix-cache-mask", fixed_step=_three_axis_step)
    assert not passed and "(5, 1, 11)" in text and "seen[:, None, None, :]" in text, text


def test_fix_cache_mask_must_not_call_the_package_step():
    passed, text = check("ex-inference-fix-cache-mask", fixed_step=lambda layer, *a, **k: layer.step(*a, **k))
    assert not passed and "without calling layer.step" in text, text
    # and the package's step works again afterwards
    model, tokenizer = recipes.load_pretrained_date_model()
    source = data.pad([tokenizer.encode("10/2/2003")])
    assert tokenizer.decode(mt.greedy_decode(model, source, tokenizer.start_id, tokenizer.end_id, 12)[0]) \
        == recipes.translate(model, tokenizer, ["10/2/2003"], 12)[0]


def test_fix_cache_mask_needs_the_cache_back():
    passed, text = check("ex-inference-fix-cache-mask", fixed_step=lambda layer, x, cache, *a, **k: x)
    assert not passed and "must return (x, cache)" in text


# The intervention.

def test_intervention_rejects_expected_dates_and_a_wrong_order():
    model, tokenizer = recipes.load_pretrained_date_model()
    decode = lambda texts: recipes.translate(model, tokenizer, texts, 12)  # noqa: E731
    right = dict(weekday_outputs=decode([f"{d}, 17 March 1998" for d in data.DAYS]),
                 month_outputs=decode([f"Tuesday, 17 {m} 1998" for m in data.MONTHS]),
                 november_outputs=decode([f"{d}, 2 November 1994" for d in data.DAYS]))
    passed, text = check("ex-inference-intervention", **right)
    assert passed, text
    passed, text = check("ex-inference-intervention", **dict(right, november_outputs=["1994-11-02"] * 7))
    assert not passed and "do not write the dates you expect" in text
    passed, text = check("ex-inference-intervention", **dict(right, month_outputs=right["month_outputs"][::-1]))
    assert not passed and "wrong order" in text
    passed, text = check("ex-inference-intervention", **dict(right, weekday_outputs=right["weekday_outputs"][:6]))
    assert not passed and "it needs 7" in text
    as_dict = dict(zip(data.DAYS, right["november_outputs"]))  # as the solution prints them
    passed, text = check("ex-inference-intervention", **dict(right, november_outputs=as_dict))
    assert not passed and "must be a list of 7 strings in the order of data.DAYS, not a dict" in text, text


# The slices.

@functools.lru_cache(maxsize=None)
def _translated(texts):
    """The shipped date model's outputs for a tuple of strings, decoded once for all these tests."""
    model, tokenizer = _date_model()
    return recipes.translate(model, tokenizer, list(texts), 12)


@functools.lru_cache(maxsize=None)
def _date_model():
    return recipes.load_pretrained_date_model()


def _error_table(leave_out_known=True, pair=lambda wrong, total: (wrong, total)):
    _, (train_pairs, validation_pairs, test_pairs) = recipes.task_data("dates")
    known = {s for s, _ in train_pairs + validation_pairs + test_pairs} if leave_out_known else set()

    def error_table(formats, days, years):
        slices = {}
        for fmt in formats:
            for day in days:
                dates = [datetime.date(y, m, day) for y in years for m in range(1, 13)]
                pairs = [(data.DATE_FORMATS[fmt](d), d.isoformat()) for d in dates]
                slices[fmt, day] = [(s, t) for s, t in pairs if s not in known]
        outputs = iter(_translated(tuple(s for pairs in slices.values() for s, _ in pairs)))  # one call
        return {key: pair(sum(next(outputs) != t for _, t in pairs), len(pairs)) for key, pairs in slices.items()}
    return error_table


def test_slices_rejects_dates_in_a_split_and_wrong_months():
    passed, text = check("ex-inference-slices", error_table=_error_table(), failing_months={"October"})
    assert passed, text
    passed, text = check("ex-inference-slices", error_table=_error_table(False), failing_months={"october"})
    assert not passed and "leave out those whose input string is in a split" in text
    assert check("ex-inference-slices", error_table=_error_table(), failing_months={"October", "March"})[0]
    passed, text = check_merged("ex-inference-slices", error_table=_error_table(), failing_months={"October", "March"})
    assert not passed and "is not the set of months" in text
    assert check_merged("ex-inference-slices", error_table=_error_table(), failing_months=["october"])[0]
    passed, text = check("ex-inference-slices", error_table=_error_table(), failing_months={"Oct"})
    assert not passed and "full month names" in text


@pytest.mark.parametrize("pair,message", [
    (lambda wrong, total: (total, wrong), "the pair is (wrong, total), in that order"),
    (lambda wrong, total: (wrong / total, total), "wrong is a count, not a fraction"),
    (lambda wrong, total: (wrong + 1, total), "wrong outputs: that is too many"),
    (lambda wrong, total: (wrong, total - 1), "dates: that is too few"),
])
def test_slices_names_a_wrong_pair(pair, message):
    passed, text = check("ex-inference-slices", error_table=_error_table(pair=pair), failing_months={"October"})
    assert not passed and message in text, text


# ---------------------------------------------------------------- "without calling mt.greedy_decode"
@pytest.mark.parametrize("wrong", [
    lambda model, source_tokens, start_id, end_id, max_length: mt.greedy_decode(
        model, source_tokens, start_id, end_id, max_length),
    lambda model, source_tokens, start_id, end_id, max_length: mt.beam_search(
        model, source_tokens, start_id, end_id, max_length, beam_size=1, alpha=0.0)[0],
    lambda model, source_tokens, start_id, end_id, max_length: mt.decoding.run.greedy_decode(
        model, source_tokens, start_id, end_id, max_length, use_cache=False),
])
def test_greedy_refuses_the_packages_loops(wrong):
    result = mt.exercises.run_check(CHAPTER, "ex-inference-greedy", {"my_greedy_decode": wrong})
    text = result.summary()
    assert result.score == 0 and "calls one of the package's decoding loops" in text, text
    assert mt.greedy_decode.__name__ == "greedy_decode" and "refused" not in repr(mt.decoding.run.greedy_decode)


# ---------------------------------------------------------------- no message hands out the answer
def test_cache_memory_formula_messages_give_no_count():
    for wrong in (lambda n, b, t, s, d: 1, lambda n, b, t, s, d: 3 * n * b * (t + s) * d):
        passed, text = check("ex-inference-cache-memory", cache_numbers=wrong, base_cache_megabytes=1.0)
        assert not passed, text
        arguments = [(3, 4, 7, 11, 20), (2, 16, 12, 27, 64), (6, 32, 100, 100, 512), (1, 1, 5, 3, 8),
                     (4, 5, 1, 9, 24), (12, 2, 40, 60, 1024)]
        for checked in (check, check_merged):
            passed, text = checked("ex-inference-cache-memory", cache_numbers=wrong, base_cache_megabytes=1.0)
            assert_hides(text, *[2 * n * b * (t + s) * d for n, b, t, s, d in arguments], 157.2864)
        assert "h * d_k = d_model numbers" not in text, text


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden)
def _numbers(n, b, t, s, d):
    return 2 * n * b * (t + s) * d


def test_greedy_hidden_cases_catch_pad_id_taken_as_0():
    def pad_zero(model, source_tokens, start_id, end_id, max_length):  # every public model pads with 0
        class Zero:
            pad_id = 0

            def __call__(self, *args, **kwargs):
                return model(*args, **kwargs)
        return _greedy()(Zero(), source_tokens, start_id, end_id, max_length)

    assert_tuned_answer_caught(CHAPTER, "ex-inference-greedy", my_greedy_decode=pad_zero)


def test_length_penalty_hidden_cases_catch_a_penalty_of_the_public_lengths_only():
    right = lambda n, a: ((5.0 + np.asarray(n, float)) / 6.0) ** a  # noqa: E731
    public = {(1, 2, 5, 11, 50): right}
    assert_tuned_answer_caught(
        CHAPTER, "ex-inference-length-penalty", winners={0.0: "A", 0.6: "A", 1.0: "B"},
        tie_alpha=np.log(1.3) / np.log(1.4),
        my_length_penalty=lambda n, a: public.get(tuple(np.ravel(n).tolist()), lambda n, a: 1.0)(n, a))


def test_length_penalty_public_check_holds_neither_winners_nor_tie():
    assert_public_check_hides(CHAPTER, "ex-inference-length-penalty", np.log(1.3) / np.log(1.4),
                              spelled=("np.log(1.3) / np.log(1.4)", "_score", "-2.6"))
    # The winners are "A" or "B", words every message uses: no value of the check is the dict of them.
    namespace = {}
    exec(compile(mt.exercises.check_path(CHAPTER, "ex-inference-length-penalty").read_text(), "public", "exec"),
         namespace)
    assert not any(isinstance(v, dict) and v == {0.0: "A", 0.6: "A", 1.0: "B"} for v in namespace.values())


def test_cache_memory_hidden_cases_catch_a_formula_tuned_to_the_public_arguments():
    public = {(3, 4, 7, 11, 20), (2, 16, 12, 27, 64), (1, 1, 5, 3, 8), (2, 3, 9, 5, 16), (6, 32, 100, 100, 512)}
    tuned = lambda *args: _numbers(*args) if args in public else 1  # noqa: E731
    assert_tuned_answer_caught(CHAPTER, "ex-inference-cache-memory", cache_numbers=tuned,
                               base_cache_megabytes=157.2864)
    # base_cache_megabytes: the public check compares it with the student's own formula only.
    wrong = lambda *args: 3 * _numbers(*args)  # noqa: E731
    passed, text = check("ex-inference-cache-memory", cache_numbers=wrong, base_cache_megabytes=3 * 157.2864)
    assert "from your cache_numbers" not in text and "against your cache_numbers" not in text, text
    passed, text = check_merged("ex-inference-cache-memory", cache_numbers=wrong, base_cache_megabytes=3 * 157.2864)
    assert not passed and "base_cache_megabytes is 471.859: that is too large" in text, text
    passed, text = check("ex-inference-cache-memory", cache_numbers=None, base_cache_megabytes=99.0)
    assert "that is too" not in text.split("- 3 result")[-1], text  # no formula to compare with: the form only


def test_cache_memory_public_check_holds_neither_formula_nor_megabytes():
    assert_public_check_hides(CHAPTER, "ex-inference-cache-memory", 157.2864, _numbers(6, 32, 100, 100, 512),
                              spelled=("2 * num_layers", "(target_length + source_length)"))


def test_position_public_check_holds_neither_number():
    right, agreement = _position_zero()
    assert_public_check_hides(CHAPTER, "ex-inference-position", right, agreement)
    # and none of its functions computes them (its loop runs the known mistakes only)
    src = mt.exercises.check_path(CHAPTER, "ex-inference-position").read_text()
    namespace = {}
    exec(compile(src, "public", "exec"), namespace)
    model, tokenizer = recipes.load_pretrained_date_model()
    for key in namespace["MISTAKES"]:
        assert not np.allclose(namespace["_compute"](model, tokenizer, key), (right, agreement), atol=1e-6), key


def test_fix_cache_mask_hidden_cases_catch_a_step_that_is_right_for_five_dates_only():
    def five_only(layer, x, cache, position, cross_mask=None, is_token=None):
        mask = "right" if ops.shape(x)[0] == 5 else "none"
        return _step(mask)(layer, x, cache, position, cross_mask=cross_mask, is_token=is_token)

    assert_tuned_answer_caught(CHAPTER, "ex-inference-fix-cache-mask", fixed_step=five_only)


def test_slices_hidden_cases_catch_a_table_that_ignores_its_arguments():
    def public_years(formats, days, years):  # the years of the public case, whatever is asked
        return _error_table()(formats, days, range(1950, 2050, 9))

    assert_tuned_answer_caught(CHAPTER, "ex-inference-slices", error_table=public_years, failing_months={"October"})


def test_slices_public_check_no_longer_holds_the_failing_months():
    text = mt.exercises.check_path(CHAPTER, "ex-inference-slices").read_text()
    assert "October" not in text and "range(1950, 2050))" not in text

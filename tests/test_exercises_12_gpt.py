"""Chapter 12's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import pathlib
import re
import runpy

import numpy as np
import pytest
from keras import ops

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute

CHAPTER = "12_gpt"
HIDDEN = pathlib.Path(__file__).resolve().parents[1] / "grading" / "hidden" / CHAPTER


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-gpt-cache-memory has per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def check_merged(label, **env):
    """The check with its hidden cases, as the instructor grades."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=HIDDEN / f"{label}.py")
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,name", [
    ("ex-gpt-generate-by-hand", "greedy_by_hand"),
    ("ex-gpt-cache-memory", "cache_values"),
    ("ex-gpt-fix-mask", "lm_mask"),
])
def test_blank_answers_fail_and_say_so(label, name):
    passed, text = check(label)
    assert not passed and "is not defined" in text
    passed, text = check(label, **{name: stub})
    assert not passed and "NotImplementedError" in text


def _by_hand(offset=0, ban_pad=True, full_pass=False):
    def greedy_by_hand(model, prompt, max_new_tokens):
        if full_pass:
            sequence = list(prompt)
            for _ in range(max_new_tokens):
                scores = ops.convert_to_numpy(model(np.array([sequence], "int32")))[0, -1].copy()
                scores[0] = -np.inf
                sequence.append(int(scores.argmax()))
            return sequence[len(prompt):]
        caches = model.start_cache(1, len(prompt) + max_new_tokens + 1)
        logits, caches = model.decode_step(np.array([prompt], "int32"), 0, caches)
        new = []
        for i in range(max_new_tokens):
            scores = ops.convert_to_numpy(logits)[0].copy()
            if ban_pad:
                scores[0] = -np.inf
            new.append(int(scores.argmax()))
            logits, caches = model.decode_step(np.array([[new[-1]]], "int32"), len(prompt) + i + offset, caches)
        return new
    return greedy_by_hand


def test_generate_by_hand_accepts_the_cached_loop_and_refuses_the_full_pass():
    assert check("ex-gpt-generate-by-hand", greedy_by_hand=_by_hand())[0]
    passed, text = check("ex-gpt-generate-by-hand", greedy_by_hand=_by_hand(full_pass=True))
    assert not passed and "asks for the cache" in text, text
    passed, text = check("ex-gpt-generate-by-hand", greedy_by_hand=_by_hand(offset=1))
    assert not passed and "fed back at position P + i" in text, text
    passed, text = check("ex-gpt-generate-by-hand",
                         greedy_by_hand=lambda model, prompt, n: _by_hand()(model, prompt, n) + [3])
    assert not passed and "new tokens only, not the prompt" in text, text


def _cache_values(mistake=""):
    def cache_values(num_layers, d_model, batch_size, length):
        tensors = 1 if mistake == "keys-only" else 2
        layers = 1 if mistake == "one-layer" else num_layers
        width = d_model // 4 if mistake == "d_k" else d_model  # d_k of 4 heads, right for GPT-2's 12 by chance
        rows = 1 if mistake == "one-sequence" else batch_size
        return tensors * layers * rows * length * width
    return cache_values


@pytest.mark.parametrize("mistake,message", [
    ("keys-only", "keys AND the values"), ("one-layer", "each of the num_layers layers"),
    ("d_k", "one head's d_k"), ("one-sequence", "batch_size rows"),
])
def test_cache_memory_names_what_is_wrong(mistake, message):
    assert check("ex-gpt-cache-memory", cache_values=_cache_values(), batch_over_weights=7)[0]
    passed, text = check("ex-gpt-cache-memory", cache_values=_cache_values(mistake), batch_over_weights=7)
    assert not passed and message in text, text


def test_cache_memory_never_gives_the_count_nor_how_to_make_it():
    passed, text = check("ex-gpt-cache-memory", cache_values=lambda *args: 0, batch_over_weights=7)
    assert not passed and "is 0: that is too small" in text and "start_cache" in text, text
    for answer in ["18,874,368", "18874368", "(batch, heads", "keys and the values"]:
        assert answer not in text, text
    for config in [(2, 16, 3, 10), (12, 768, 1, 1024)]:  # no count of the package's in any message
        passed, text = check("ex-gpt-cache-memory", cache_values=_cache_values("keys-only"), batch_over_weights=7)
        assert f"{_cache_values()(*config):,}" not in text, text


@pytest.mark.parametrize("batch,message", [
    (6, "the batch is too small"), (8, "is not the smallest"), (6.6, "whole number"), ("7", "whole number"),
    (0, "at least one sequence"),
])
def test_cache_memory_refuses_a_wrong_batch_without_giving_the_answer(batch, message):
    for merged in (False, True):
        passed, text = (check_merged if merged else check)(
            "ex-gpt-cache-memory", cache_values=_cache_values(), batch_over_weights=batch)
        assert not passed and message in text, text
        shown = re.sub(r"line \d+", "", text).replace("1,024", "")  # otter's line number is not an answer
        assert "7 " not in shown  # the answer is never in the message


def test_cache_memory_public_check_judges_the_batch_by_the_students_own_formula():
    # Without a working cache_values, the public check cannot tell a wrong batch: the hidden case does.
    for cache_values in (None, stub, _cache_values("keys-only")):
        batch = 14 if cache_values is not None and cache_values is not stub else 6
        env = dict(cache_values=cache_values, batch_over_weights=batch, STUDENT_ID="")
        result = mt.exercises.run_check(CHAPTER, "ex-gpt-cache-memory", env)
        assert result.test_case_results[-1].passed, result.summary()
        passed, text = check_merged("ex-gpt-cache-memory", **env)
        assert not passed and "is not the smallest number of 1,024-token sequences" in text, text
        assert_hides(text, 7, _cache_values()(12, 768, 1, 1024))


def test_cache_memory_for_a_drawn_id():
    # A student's own model and length: their batch passes, the book's 7 fails, and the public check's messages
    # name the student's model and length.
    numbers = mt.exercises.parameters("ex-gpt-cache-memory", "s001")
    assert (numbers["model"], numbers["length"]) != ("GPT-2 small", 1024)
    per_sequence = _cache_values()(numbers["num_layers"], numbers["d_model"], 1, numbers["length"])
    right = numbers["parameters"] // per_sequence + 1
    assert right != 7
    env = dict(cache_values=_cache_values(), STUDENT_ID="s001", gpt_cache_numbers=numbers)
    assert check_merged("ex-gpt-cache-memory", batch_over_weights=right, **env)[0]
    for batch, message in [(right - 1, "the batch is too small"), (right + 1, "is not the smallest")]:
        passed, text = check("ex-gpt-cache-memory", batch_over_weights=batch, **env)
        assert not passed and message in text and f"{numbers['length']:,}" in text, text
        assert numbers["model"] in text, text
    passed, text = check_merged("ex-gpt-cache-memory", batch_over_weights=7, **env)
    assert not passed and f"smallest number of {numbers['length']:,}-token sequences" in text, text
    assert_hides(text, right, per_sequence)


def test_the_drawn_models_are_gpt2s_sizes():
    # Each size's parameter count, as the exercise states it: the package's MinGPT of that configuration
    # (GPT-2's vocabulary, context and d_ff = 4 d_model) has as many. Counted at one and two layers, since
    # every layer adds the same number, not built at full size (GPT-2 extra-large takes 6 GB in float32).
    from mintransformer.exercises.per_student.gpt import GPT2_SIZES

    def count(layers, d_model):
        model = mt.MinGPT(num_layers=layers, d_model=d_model, num_heads=d_model // 64, dff=4 * d_model,
                          vocab_size=50257, max_length=1024)
        model.build((None, None))
        return model.count_params()

    for name, layers, d_model, parameters in GPT2_SIZES:
        one, two = count(1, d_model), count(2, d_model)
        assert one + (layers - 1) * (two - one) == parameters, name


def test_the_mask_check_catches_the_upper_triangle_and_missing_padding():
    def right(tokens, pad_id):
        T = tokens.shape[1]
        return np.tril(np.ones((T, T), bool))[None, None] & (np.asarray(tokens) != pad_id)[:, None, None, :]

    def upper(tokens, pad_id):
        T = tokens.shape[1]
        return np.triu(np.ones((T, T), bool))[None, None] & (np.asarray(tokens) != pad_id)[:, None, None, :]

    def no_padding(tokens, pad_id):
        T = tokens.shape[1]
        return np.broadcast_to(np.tril(np.ones((T, T), bool)), (tokens.shape[0], 1, T, T))

    assert check("ex-gpt-fix-mask", lm_mask=right)[0]
    passed, text = check("ex-gpt-fix-mask", lm_mask=upper)
    assert not passed and "see key positions after its own" in text, text
    assert "lower" not in text and "tril" not in text and "copy" not in text, text  # the fix and the why are not given
    passed, text = check("ex-gpt-fix-mask", lm_mask=no_padding)
    assert not passed and "AND it with the padding mask" in text, text


@pytest.mark.parametrize("answer", [
    mt.decoder_self_mask,
    lambda tokens, pad_id: mt.decoder_self_mask(tokens, pad_id),
    lambda tokens, pad_id: ops.logical_and(mt.causal_mask(tokens.shape[1]), mt.padding_mask(tokens, pad_id)),
], ids=["the-function", "a-call", "its-parts"])
def test_the_mask_check_refuses_the_packages_masks(answer):
    passed, text = check("ex-gpt-fix-mask", lm_mask=answer)
    assert not passed and "do not call the package's decoder_self_mask" in text, text


# ---------------------------------------------------------------- "without the package's loop"
@pytest.mark.parametrize("wrong", [
    lambda model, prompt, n: mt.greedy_generate(model, [prompt], n)[0].tolist(),
    lambda model, prompt, n: mt.decoding.run.greedy_generate(model, [prompt], n, use_cache=False)[0].tolist(),
    lambda model, prompt, n: model._model.generate(prompt, n),  # the wrapped model is not an attribute
])
def test_generate_by_hand_refuses_the_packages_loops(wrong):
    result = mt.exercises.run_check(CHAPTER, "ex-gpt-generate-by-hand", {"greedy_by_hand": wrong})
    text = result.summary()
    assert result.score == 0, text
    assert "calls one of the package's generation loops" in text or "_model" in text, text
    assert mt.greedy_generate.__name__ == "greedy_generate"  # restored


# ---------------------------------------------------------------- no message hands out the answer
@pytest.mark.parametrize("batch", [1, 3, 6, 8, 12, 100])
def test_cache_memory_batch_messages_give_no_answer(batch):
    passed, text = check("ex-gpt-cache-memory", cache_values=_cache_values(), batch_over_weights=batch)
    assert not passed, text
    assert "(batch 7" not in text and " 7 sequences" not in text and "= 7" not in text, text
    assert_hides(text, _cache_values()(12, 768, 1, 1024), 7 * _cache_values()(12, 768, 1, 1024))


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden)
def test_cache_memory_public_check_holds_neither_the_count_nor_the_batch():
    path = pathlib.Path(mt.exercises.check_path(CHAPTER, "ex-gpt-cache-memory"))
    text = path.read_text()
    per_sequence = _cache_values()(12, 768, 1, 1024)
    for form in (str(per_sequence), f"{per_sequence:,}", f"{per_sequence:_}", "2 * num_layers"):
        assert form not in text
    module = runpy.run_path(str(path))
    for key, value in module.items():
        if callable(value) and getattr(value, "__module__", None) == "<run_path>" and key != "test_case":
            try:
                got = value(12, 768, 1, 1024)
            except Exception:
                continue
            assert got != per_sequence, key  # no function of the public check counts the cache
        assert not (isinstance(value, int) and value in (7, per_sequence)), key


def _tuned_cache_values(num_layers, d_model, batch_size, length):
    """Right on the public check's configurations (looked up), wrong elsewhere: the d_k of 4 heads."""
    public = {(2, 16, 3, 10): 1920, (1, 24, 1, 7): 336, (3, 32, 2, 5): 1920}
    return public.get((num_layers, d_model, batch_size, length), _cache_values("d_k")(num_layers, d_model,
                                                                                       batch_size, length))


def test_cache_memory_hidden_cases_catch_an_answer_tuned_to_the_public_ones():
    batch = next(b for b in range(1, 100) if _tuned_cache_values(12, 768, b, 1024) > 124_439_808)
    assert check("ex-gpt-cache-memory", cache_values=_tuned_cache_values, batch_over_weights=batch)[0]
    passed, text = check_merged("ex-gpt-cache-memory", cache_values=_tuned_cache_values, batch_over_weights=batch)
    assert not passed and "GPT-2 small, one sequence" in text and "is not the smallest" in text, text
    assert check_merged("ex-gpt-cache-memory", cache_values=_cache_values(), batch_over_weights=7)[0]


def test_fix_mask_hidden_cases_catch_a_mask_that_ignores_pad_id():
    def zero_is_padding(tokens, pad_id):  # the public cases always pass pad_id 0
        T = tokens.shape[1]
        return np.tril(np.ones((T, T), bool))[None, None] & (np.asarray(tokens) != 0)[:, None, None, :]

    assert check("ex-gpt-fix-mask", lm_mask=zero_is_padding)[0]
    passed, text = check_merged("ex-gpt-fix-mask", lm_mask=zero_is_padding)
    assert not passed and "pad_id = 3" in text, text


def test_generate_by_hand_hidden_cases_catch_a_cache_of_fixed_length():
    def fixed_cache(model, prompt, max_new_tokens):  # long enough for every public case, not for a longer text
        caches = model.start_cache(1, 17)
        logits, caches = model.decode_step(np.array([prompt], "int32"), 0, caches)
        new = []
        for i in range(max_new_tokens):
            scores = ops.convert_to_numpy(logits)[0].copy()
            scores[0] = -np.inf
            new.append(int(scores.argmax()))
            logits, caches = model.decode_step(np.array([[new[-1]]], "int32"), len(prompt) + i, caches)
        return new

    assert check("ex-gpt-generate-by-hand", greedy_by_hand=fixed_cache)[0]
    passed, text = check_merged("ex-gpt-generate-by-hand", greedy_by_hand=fixed_cache)
    assert not passed and "an 11-token prompt" in text, text

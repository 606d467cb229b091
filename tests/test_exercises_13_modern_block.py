"""Chapter 13's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed"), by
tests/test_per_student.py (the exercises with per-student numbers, for 12 ids) and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import numpy as np
import pytest
from keras import ops

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught, hidden_path

CHAPTER = "13_modern_block"


def check(label, hidden=False, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers, for the exercises that have per-student ones
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=hidden_path(CHAPTER, label) if hidden else None)
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,name", [
    ("ex-modern-rotary", "rotate_pairs"),
    ("ex-modern-gqa-cache", "kv_cache_bytes"),
    ("ex-modern-swiglu-width", "swiglu_width"),
    ("ex-modern-fix-online-softmax", "online_attention"),
    ("ex-modern-online-by-hand", "tile_1"),
])
def test_blank_answers_fail_and_say_so(label, name):
    passed, text = check(label)
    assert not passed and "is not defined" in text, text
    value = ... if label in ("ex-modern-swiglu-width", "ex-modern-online-by-hand") else stub
    passed, text = check(label, **{name: value})
    assert not passed and ("NotImplementedError" in text or "is still `...`" in text), text


def test_the_checks_point_by_test_case_and_show_no_formula():
    assert not shown_lines_that_compute(CHAPTER)
    assert mt.exercises.labels(CHAPTER) == ["ex-modern-fix-online-softmax", "ex-modern-gqa-cache",
                                            "ex-modern-online-by-hand", "ex-modern-rotary", "ex-modern-swiglu-width"]


# ---------------------------------------------------------------- ex-modern-rotary
def _rotate_pairs(mistake="", base=10000.0, dtype_out=None):
    """An answer written as a student would, in keras.ops; ``mistake`` makes it one of the known wrong ones."""
    def rotate_pairs(x, positions):
        d = x.shape[-1]
        exponent = {"slow": 1.0, "fast": 4.0}.get(mistake, 2.0)
        theta = ops.power(base, -exponent * ops.arange(0, d // 2, dtype="float32") / d)  # base^(-2i/d)
        rows = ops.arange(ops.shape(x)[-2]) if mistake == "no-positions" else positions
        angle = ops.cast(rows, "float32")[:, None] * theta[None, :]
        sin = -ops.sin(angle) if mistake == "sign" else ops.sin(angle)
        x32 = ops.cast(x, "float32")
        if mistake == "half":
            first, second = x32[..., : d // 2], x32[..., d // 2:]
        else:
            first, second = x32[..., 0::2], x32[..., 1::2]
        pair = [first * ops.cos(angle) - second * sin, first * sin + second * ops.cos(angle)]
        if mistake in ("half", "halves"):
            out = ops.concatenate(pair, axis=-1)
        else:
            out = ops.reshape(ops.stack(pair, axis=-1), ops.shape(x32))
        return ops.cast(out, dtype_out or x.dtype)
    return rotate_pairs


def test_rotary_accepts_a_right_answer_and_every_dtype():
    assert check("ex-modern-rotary", hidden=True, rotate_pairs=_rotate_pairs())[0]


@pytest.mark.parametrize("mistake,message", [
    ("half", "the half layout"), ("sign", "the other way"), ("slow", "fall too slowly"), ("fast", "fall too fast"),
    ("no-positions", "not by the positions it is given"), ("halves", "writes the results back in two halves"),
])
def test_rotary_names_each_known_mistake(mistake, message):
    passed, text = check("ex-modern-rotary", rotate_pairs=_rotate_pairs(mistake))
    assert not passed and message in text, text
    assert "10000^(-2i/d)" not in text or mistake not in ("slow", "fast")  # the exponent is not handed out


@pytest.mark.parametrize("answer", [
    mt.apply_rotary,
    lambda x, positions: mt.apply_rotary(x, positions),
    lambda x, positions: _rotate_pairs()(x, positions) + 0 * mt.rotary.rotary_frequencies(x.shape[-1])[0],
], ids=["the-function", "a-call", "its-frequencies"])
def test_rotary_refuses_the_packages_rotation(answer):
    passed, text = check("ex-modern-rotary", rotate_pairs=answer)
    assert not passed and "do not call the package's apply_rotary" in text, text
    assert mt.apply_rotary.__name__ == "apply_rotary"  # restored


def test_rotary_hidden_cases_catch_an_answer_in_float32_only():
    # Right in float32, the public cases' dtype; a float16 query comes back float32.
    assert_tuned_answer_caught(CHAPTER, "ex-modern-rotary", rotate_pairs=_rotate_pairs(dtype_out="float32"))
    passed, text = check("ex-modern-rotary", hidden=True, rotate_pairs=_rotate_pairs(dtype_out="float32"))
    assert "returns float32 for float64 queries" in text, text


def test_rotary_hidden_cases_catch_an_answer_that_needs_a_batch_axis():
    def leading_axes_only(x, positions):  # right for 4-axis inputs, and for the 2-axis public one by chance
        if len(x.shape) == 3:
            raise ValueError("expected (B, h, T, d) or (T, d)")
        return _rotate_pairs()(x, positions)

    assert_tuned_answer_caught(CHAPTER, "ex-modern-rotary", rotate_pairs=leading_axes_only)


# ---------------------------------------------------------------- ex-modern-gqa-cache
def _kv_cache_bytes(mistake=""):
    def kv_cache_bytes(num_layers, d_model, num_heads, num_key_value_heads, batch_size, length, bytes_per_value):
        tensors = 1 if mistake == "keys-only" else 2
        heads = num_heads if mistake == "h" else num_key_value_heads
        width = d_model if mistake == "d_model" else d_model // num_heads
        size = 1 if mistake == "values" else (8 * bytes_per_value if mistake == "bits" else bytes_per_value)
        layers = 1 if mistake == "one-layer" else num_layers
        rows = 1 if mistake == "one-sequence" else batch_size
        return tensors * layers * rows * length * heads * width * size
    return kv_cache_bytes


def _lengths(student_id="", function=None):
    """The answers of the numbers' part, computed with ``function`` (the right one by default), as a student would:
    the largest length whose cache fits, from the bytes of one token."""
    n = mt.exercises.parameters("ex-modern-gqa-cache", student_id)
    function = function or _kv_cache_bytes()
    model = (n["num_layers"], n["d_model"], n["num_heads"])
    budget = n["memory_gib"] * 2**30
    values = [int(budget // function(*model, heads, n["batch_size"], 1, n["bytes_per_value"]))
              for heads in (n["num_heads"], n["num_key_value_heads"], 1)]
    return dict(mha_length=values[0], gqa_length=values[1], mqa_length=values[2], STUDENT_ID=student_id,
                gqa_numbers=n)


def test_gqa_cache_the_books_longest_contexts():
    # Llama 2 70B, 8 sequences in bfloat16, 16 GiB: the numbers the solution's text quotes.
    assert [_lengths()[k] for k in ("mha_length", "gqa_length", "mqa_length")] == [819, 6553, 52428]


def test_gqa_cache_accepts_the_right_answers():
    for student_id in ("", "s001", "s002", "s007"):
        passed, text = check("ex-modern-gqa-cache", hidden=True, kv_cache_bytes=_kv_cache_bytes(),
                             **_lengths(student_id))
        assert passed, text


@pytest.mark.parametrize("mistake,message", [
    ("keys-only", "keys AND the values"), ("h", "counts h = num_heads heads"), ("d_model", "d_k = d_model / h"),
    ("values", "counts values, not bytes"), ("bits", "counts bits"), ("one-layer", "each of the num_layers layers"),
    ("one-sequence", "batch_size rows"),
])
def test_gqa_cache_names_what_is_wrong(mistake, message):
    passed, text = check("ex-modern-gqa-cache", kv_cache_bytes=_kv_cache_bytes(mistake), **_lengths())
    assert not passed and message in text, text
    assert_hides(text, *(_kv_cache_bytes()(*config) for config in [(3, 16, 4, 2, 5, 10, 4), (2, 24, 6, 1, 1, 7, 2),
                                                                     (1, 32, 8, 8, 2, 5, 2)]))


def test_gqa_cache_lengths_are_checked_against_the_students_own_formula():
    env = dict(_lengths(), kv_cache_bytes=_kv_cache_bytes())
    for changes, message in [(dict(gqa_length=env["gqa_length"] + 1), "does not fit in your 16 GiB"),
                             (dict(mqa_length=env["mqa_length"] - 1), "one token longer than mqa_length"),
                             (dict(mqa_length=env["mqa_length"] + 0.5), "positive whole number of tokens"),
                             (dict(mqa_length=env["mha_length"] - 1), "not in the order")]:
        passed, text = check("ex-modern-gqa-cache", **dict(env, **changes))
        assert not passed and message in text, (changes, text)
        assert_hides(text, _lengths()["gqa_length"], _lengths()["mqa_length"])


def test_gqa_cache_hidden_cases_check_the_values():
    # A wrong formula, applied consistently: the public check cannot tell, the hidden cases name it.
    wrong = _kv_cache_bytes("keys-only")
    public, merged = (mt.exercises.run_check(CHAPTER, "ex-modern-gqa-cache",
                                             dict(_lengths(function=wrong), kv_cache_bytes=None), hidden=h)
                      for h in (None, hidden_path(CHAPTER, "ex-modern-gqa-cache")))
    assert public.test_case_results[-1].passed, public.summary()
    assert not merged.passed_all and "keys AND the values" in merged.summary(), merged.summary()
    # The book's numbers under a student's id: the public case refuses them by the student's own formula, the
    # hidden case by the values.
    env = dict(_lengths(), STUDENT_ID="s002", gqa_numbers=mt.exercises.parameters("ex-modern-gqa-cache", "s002"))
    passed, text = check("ex-modern-gqa-cache", hidden=True, kv_cache_bytes=_kv_cache_bytes(), **env)
    assert not passed and "is not the longest context whose cache" in text, text
    # Each known mistake of the numbers' part, named by the hidden case.
    right = _lengths()
    n = right["gqa_numbers"]
    per_token = _kv_cache_bytes()(80, 8192, 64, 8, 8, 1, 2)
    for changes, message in [
        (dict(gqa_length=right["gqa_length"] + 1), "is rounded up"),
        (dict(gqa_length=16 * 10**9 // per_token), "a GiB is 2**30"),
        (dict(gqa_length=16 * 2**30 // (per_token // 8)), "all 8 sequences of the batch"),
        (dict(gqa_length=right["mha_length"]), "counts h = 64 key/value heads"),
    ]:
        passed, text = check("ex-modern-gqa-cache", hidden=True, **dict(right, kv_cache_bytes=None, **changes))
        assert not passed and message in text, (changes, text)
    assert n["batch_size"] == 8


def _tuned_kv_cache_bytes(*config):
    """Right on the public check's configurations (looked up), wrong elsewhere: h for h_kv."""
    public = {(3, 16, 4, 2, 5, 10, 4): 9600, (2, 24, 6, 1, 1, 7, 2): 224, (1, 32, 8, 8, 2, 5, 2): 1280}
    return public.get(config, _kv_cache_bytes("h")(*config))


def test_gqa_cache_hidden_cases_catch_an_answer_tuned_to_the_public_ones():
    numbers = _lengths(function=_tuned_kv_cache_bytes)  # its numbers computed with it, as a student would
    assert_tuned_answer_caught(CHAPTER, "ex-modern-gqa-cache", kv_cache_bytes=_tuned_kv_cache_bytes, **numbers)


def test_gqa_cache_public_check_holds_no_answer():
    assert_public_check_hides(CHAPTER, "ex-modern-gqa-cache", *(_lengths()[k] for k in ("mha_length", "gqa_length",
                                                                                        "mqa_length")),
                              spelled=("2 * num_layers",))


# ---------------------------------------------------------------- ex-modern-swiglu-width
def _swiglu(student_id="", **changes):
    n = mt.exercises.parameters("ex-modern-swiglu-width", student_id)
    d, multiple = n["d_model"], n["multiple_of"]
    hidden = int(2 * 4 * d / 3)
    width = multiple * ((hidden + multiple - 1) // multiple)
    count = 3 * d * width
    env = dict(swiglu_width=width, swiglu_parameters=count, extra_fraction=(count - 8 * d * d) / (8 * d * d),
               STUDENT_ID=student_id, swiglu_numbers=n)
    env.update(changes)
    return env


def test_swiglu_width_accepts_the_right_answers():
    assert _swiglu()["swiglu_width"] == 11008 and _swiglu()["swiglu_parameters"] == 135_266_304
    for student_id in ("", "s001", "s002"):
        assert check("ex-modern-swiglu-width", hidden=True, **_swiglu(student_id))[0]


@pytest.mark.parametrize("changes,message", [
    (dict(swiglu_width=4 * 4096), "the ReLU network's 4 d_model"),
    (dict(swiglu_width=10922), "not a multiple of your multiple_of"),
    (dict(swiglu_width=10922.67), "must be a whole number"),
    (dict(swiglu_parameters=2 * 4096 * 11008), "counts two matrices"),
    (dict(swiglu_parameters=3 * 4096 * 11008 + 2 * 11008 + 4096), "counts biases"),
    (dict(extra_fraction=0.78125), "is a percentage"),
    (dict(extra_fraction=1.0078125), "the ratio of the two counts"),
    (dict(extra_fraction=(135_266_304 - 134_217_728) / 135_266_304), "relative to the SwiGLU count"),
])
def test_swiglu_width_names_what_is_wrong(changes, message):
    passed, text = check("ex-modern-swiglu-width", **_swiglu(**changes))
    assert not passed and message in text, text
    assert_hides(text, 11008, 135_266_304, 0.0078125)


@pytest.mark.parametrize("width,message", [
    (10752, "it is rounded down"), (2816, "it is 2/3 of d_model"),
])
def test_swiglu_width_hidden_cases_name_a_wrong_rounding(width, message):
    # A width that is a multiple, with its count and fraction: the public cases pass, the hidden ones name it.
    env = _swiglu(swiglu_width=width, swiglu_parameters=3 * 4096 * width,
                  extra_fraction=(3 * 4096 * width - 8 * 4096**2) / (8 * 4096**2))
    assert check("ex-modern-swiglu-width", **env)[0]
    passed, text = check("ex-modern-swiglu-width", hidden=True, **env)
    assert not passed and message in text, text
    assert_hides(text, 11008)


def test_swiglu_width_book_answers_fail_for_a_drawn_id():
    book = {k: v for k, v in _swiglu().items() if k not in ("STUDENT_ID", "swiglu_numbers")}
    env = dict(_swiglu("s001"), **book)
    passed, text = check("ex-modern-swiglu-width", hidden=True, **env)
    assert not passed, text
    assert_hides(text, *(_swiglu("s001")[k] for k in ("swiglu_width", "swiglu_parameters")))


def test_swiglu_width_public_check_holds_no_answer():
    assert_public_check_hides(CHAPTER, "ex-modern-swiglu-width", 11008, 135_266_304, spelled=("// multiple_of",))


# ---------------------------------------------------------------- ex-modern-fix-online-softmax
def _online(rescale_values=True, rescale_sum=True, subtract_max=True):
    def online_attention(q, k, v, block_size):
        m = total = acc = None
        for start in range(0, k.shape[-2], block_size):
            s = q @ np.swapaxes(k[..., start:start + block_size, :], -1, -2) / np.sqrt(q.shape[-1])
            m_new = s.max(-1, keepdims=True) if m is None else np.maximum(m, s.max(-1, keepdims=True))
            m_new = m_new if subtract_max else 0 * m_new
            p = np.exp(s - m_new)
            if m is None:
                total, acc = p.sum(-1, keepdims=True), p @ v[..., start:start + block_size, :]
            else:
                factor = np.exp(m - m_new)
                total = (factor if rescale_sum else 1) * total + p.sum(-1, keepdims=True)
                acc = (factor if rescale_values else 1) * acc + p @ v[..., start:start + block_size, :]
            m = m_new
        return acc / total
    return online_attention


def test_online_softmax_accepts_the_fix():
    assert check("ex-modern-fix-online-softmax", hidden=True, online_attention=_online())[0]


@pytest.mark.parametrize("answer", [_online(rescale_values=False), _online(rescale_sum=False),
                                   _online(False, False)], ids=["the-bug", "the-sum-instead", "neither"])
def test_online_softmax_catches_the_bug_without_giving_the_fix(answer):
    passed, text = check("ex-modern-fix-online-softmax", online_attention=answer)
    assert not passed and "what a wrong version of the tiled loop computes" in text, text
    for giveaway in ("exp(m - m", "rescal", "acc", "largest", "later tile", "first tile", "maximum", "row"):
        assert giveaway not in text, (giveaway, text)


def test_online_softmax_the_buggy_code_passes_its_authors_test():
    # One tile of 64 keys over 50: the factor the bug leaves out is 1 (what the exercise asks to explain).
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 50, 8)), rng.normal(size=(2, 50, 8))
    full = ops.convert_to_numpy(mt.scaled_dot_product_attention(q, k, v)[0])
    assert np.allclose(_online(rescale_values=False)(q, k, v, 64), full)
    assert not np.allclose(_online(rescale_values=False)(q, k, v, 7), full)


def test_online_softmax_hidden_cases_catch_a_softmax_without_its_maximum():
    assert_tuned_answer_caught(CHAPTER, "ex-modern-fix-online-softmax", online_attention=_online(subtract_max=False))
    passed, text = check("ex-modern-fix-online-softmax", hidden=True, online_attention=_online(subtract_max=False))
    assert "NaN or inf" in text, text


@pytest.mark.parametrize("answer", [
    lambda q, k, v, block_size: mt.tiled_attention(q, k, v, block_size=block_size),
    lambda q, k, v, block_size: mt.scaled_dot_product_attention(q, k, v)[0],
    lambda q, k, v, block_size: ops.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) @ v,
], ids=["tiled_attention", "scaled_dot_product_attention", "a-softmax"])
def test_online_softmax_refuses_the_packages_attention(answer):
    passed, text = check("ex-modern-fix-online-softmax", online_attention=answer)
    assert not passed and "do not call the package's tiled_attention" in text, text


# ---------------------------------------------------------------- ex-modern-online-by-hand
BOOK_TILES = dict(tile_1=(1, 1.3679, 4.7358), tile_2=(3, 1.553, 0.7446), output=0.4794)  # the solution's


def _by_hand(student_id="", **changes):
    env = dict(BOOK_TILES, STUDENT_ID=student_id,
               online_numbers=mt.exercises.parameters("ex-modern-online-by-hand", student_id))
    env.update(changes)
    return env


def test_online_by_hand_accepts_the_books_answers_to_four_decimals():
    assert check("ex-modern-online-by-hand", hidden=True, **_by_hand())[0]
    full = mt.scaled_dot_product_attention(np.ones((1, 1)), np.array([[0.0], [1], [3], [2]]),
                                           np.array([[2.0], [4], [-1], [3]]), scale=1.0)[0]
    assert abs(float(ops.convert_to_numpy(full)[0, 0]) - BOOK_TILES["output"]) < 1e-4


@pytest.mark.parametrize("changes,message", [
    (dict(tile_1=(1, 1.3679)), "a tuple of three numbers"),
    (dict(tile_1=(0, 1.3679, 4.7358)), "tile_1's m is not the largest logit seen so far"),
    (dict(tile_2=(1, 1.553, 0.7446)), "tile_2's m is not the largest logit seen so far"),
    (dict(tile_1=(1, 0.3679, 4.7358)), "tile_1's l is out of its range"),
    (dict(tile_2=(3, 7.3891 * 1.3679 + 1.3679, 0.7446)), "tile_2's l is out of its range"),
    (dict(output=0.7446 / 1.3679), "does not follow from your tile_2"),
    (dict(output=4.5), "outside the range of the values"),
])
def test_online_by_hand_public_cases_check_the_definitions(changes, message):
    passed, text = check("ex-modern-online-by-hand", **_by_hand(**changes))
    assert not passed and message in text, text
    assert_hides(text, *BOOK_TILES.values())


def test_online_by_hand_hidden_cases_name_the_missing_rescaling():
    # The first tile's acc carried over as it was: consistent, so the public cases pass.
    acc = 4.7358 - 1 + 3 * 0.3679
    env = _by_hand(tile_2=(3, 1.553, acc), output=acc / 1.553)
    if acc / 1.553 <= 4:
        assert check("ex-modern-online-by-hand", **env)[0]
    passed, text = check("ex-modern-online-by-hand", hidden=True, **env)
    assert not passed and "computed under the old maximum" in text, text


def test_online_by_hand_book_answers_fail_for_a_drawn_id():
    env = _by_hand("s001", **BOOK_TILES)
    result = mt.exercises.run_check(CHAPTER, "ex-modern-online-by-hand", env,
                                    hidden=hidden_path(CHAPTER, "ex-modern-online-by-hand"))
    assert result.score == 0, result.summary()


def test_online_by_hand_public_check_holds_no_answer():
    assert_public_check_hides(CHAPTER, "ex-modern-online-by-hand", 1.3679, 4.7358, 1.553, 0.7446, 0.4794)

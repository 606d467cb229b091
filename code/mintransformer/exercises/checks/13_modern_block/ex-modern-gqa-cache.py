"""Exercise: the bytes of the key/value cache, and the longest context a memory budget holds for h, h_kv and 1.

kv_cache_bytes is checked against the caches the package allocates; the model, its batch and its budget are
the student's own (mt.exercises.parameters, drawn from STUDENT_ID). The three longest contexts are checked
here against the student's own kv_cache_bytes only, and their values by the hidden cases, when the notebook
is graded.
"""

import numbers

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, student_numbers

OK_FORMAT = False
name = "ex-modern-gqa-cache"
points = 2

ARGUMENTS = "num_layers, d_model, num_heads, num_key_value_heads, batch_size, length, bytes_per_value"


def _allocated(num_layers, d_model, num_heads, num_key_value_heads, batch_size, length, bytes_per_value):
    """The bytes of the keys and values that model.start_cache allocates, at bytes_per_value each."""
    model = mt.MinGPT(num_layers, d_model, num_heads, 2 * d_model, 11, length, dropout=0.0,
                      num_key_value_heads=num_key_value_heads)
    caches = model.start_cache(batch_size, length)
    entries = sum(int(np.prod(c["keys"].shape)) + int(np.prod(c["values"].shape)) for c in caches)
    return entries * bytes_per_value


def _bytes(kv_cache_bytes, config, what):
    got = call(kv_cache_bytes, "kv_cache_bytes", *config)
    try:
        return float(got)
    except (TypeError, ValueError):
        raise AssertionError(f"kv_cache_bytes({what}) must return a number, not a {type(got).__name__}.") from None


def _mistakes(got, config, expected):
    """The known mistakes that give ``got``: [what the message says]."""
    num_layers, d_model, num_heads, num_kv_heads, batch_size, length, bytes_per_value = config
    hints = [
        (expected / 2, "it counts one of the two tensors: every layer caches the keys AND the values"),
        (expected * num_heads / num_kv_heads, "it counts h = num_heads heads: the cache holds only the "
                                              "num_key_value_heads heads that the keys and values have"),
        (expected * num_heads, "it gives each key/value head d_model features; each has d_k = d_model / h"),
        (expected / bytes_per_value, "it counts values, not bytes: each takes bytes_per_value bytes"),
        (expected * 8, "it counts bits, not bytes"),
        (expected / num_layers, "it counts one layer: each of the num_layers layers keeps its own cache"),
        (expected / batch_size, "it counts one sequence: the cache holds batch_size rows"),
    ]
    return [hint for wrong, hint in hints if wrong != expected and np.isclose(got, wrong)]


def _check(kv_cache_bytes, config, expected, what, got=None):
    got = _bytes(kv_cache_bytes, config, what) if got is None else got
    if got == expected:
        return
    # The message names the mistake, never the number of bytes nor how to count them.
    for hint in _mistakes(got, config, expected)[:1]:
        raise AssertionError(f"kv_cache_bytes({what}) is {got:,.0f}, not the bytes of the cache the package "
                             f"allocates: {hint}.")
    close(got, expected, f"kv_cache_bytes({what})", atol=0.5, rtol=0.0,
          hint="It is not the bytes of the cache the package allocates: look at the shapes of the tensors in "
               "model.start_cache(batch_size, length), for every layer, of a MinGPT with num_key_value_heads.")


# (num_layers, d_model, num_heads, num_key_value_heads, batch_size, length, bytes_per_value): grouped-query,
# multi-query and multi-head attention; on the first, each known mistake gives a count of its own.
CONFIGURATIONS = [(3, 16, 4, 2, 5, 10, 4), (2, 24, 6, 1, 1, 7, 2), (1, 32, 8, 8, 2, 5, 2)]


@test_case(points=1)
def against_the_package(kv_cache_bytes, STUDENT_ID, gqa_numbers):
    student_numbers(name, STUDENT_ID, gqa_numbers)  # a notebook with no id scores nothing
    wrong = []
    for config in CONFIGURATIONS:
        what = ", ".join(str(c) for c in config)
        got = _bytes(kv_cache_bytes, config, what)
        expected = _allocated(*config)
        if got != expected:
            wrong.append((config, expected, what, got))
    # The configuration on which the answer is one known mistake only, if any; else the first wrong one.
    named = [case for case in wrong if len(_mistakes(case[3], case[0], case[1])) == 1]
    for config, expected, what, got in (named + wrong)[:1]:
        _check(kv_cache_bytes, config, expected, what, got=got)


NAMES = ("mha_length", "gqa_length", "mqa_length")


@test_case(points=1)
def your_longest_contexts_by_your_formula(mha_length, gqa_length, mqa_length, kv_cache_bytes, STUDENT_ID,
                                          gqa_numbers):
    # Checked against your own kv_cache_bytes only: the check holds no length of your model's contexts.
    n = student_numbers(name, STUDENT_ID, gqa_numbers)
    answers = [answered(value, key) for value, key in zip((mha_length, gqa_length, mqa_length), NAMES)]
    for value, key in zip(answers, NAMES):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise AssertionError(f"{key} must be a positive whole number of tokens, not {type(value).__name__} "
                                 f"{value!r}.")
    if not answers[0] <= answers[1] <= answers[2]:
        raise AssertionError("Your three contexts are not in the order mha_length <= gqa_length <= mqa_length: "
                             "fewer key/value heads never make the longest context shorter.")
    if not callable(kv_cache_bytes):
        return
    budget = n["memory_gib"] * 2**30
    heads = {"mha_length": n["num_heads"], "gqa_length": n["num_key_value_heads"], "mqa_length": 1}
    for value, key in zip(answers, NAMES):
        config = (n["num_layers"], n["d_model"], n["num_heads"], heads[key], n["batch_size"])
        try:
            fits, longer = (float(kv_cache_bytes(*config, length, n["bytes_per_value"])) for length in (value,
                                                                                                         value + 1))
        except Exception:  # a kv_cache_bytes that does not run: its own case says why
            return
        with_heads = f"with {heads[key]} key/value head{'s' if heads[key] > 1 else ''}"
        if fits > budget:
            raise AssertionError(f"By your kv_cache_bytes, the cache of {key} tokens {with_heads} does not fit in "
                                 f"your {n['memory_gib']} GiB (a GiB is 2**30 bytes).")
        if longer <= budget:
            raise AssertionError(f"By your kv_cache_bytes, a context one token longer than {key} {with_heads} "
                                 f"still fits in your {n['memory_gib']} GiB: {key} is the longest that fits.")

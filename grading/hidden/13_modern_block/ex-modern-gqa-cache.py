"""Hidden cases of ex-modern-gqa-cache: the book's Llama 2 70B cache, and the student's three longest contexts.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _allocated, name,
NAMES) are in scope. The model is the student's own (drawn from STUDENT_ID).
"""

import numbers

from otter.test_files import test_case

from mintransformer.exercises.checking import student_numbers


def _cache_bytes(num_layers, d_model, num_heads, num_key_value_heads, batch_size, length, bytes_per_value):
    """Keys and values, (B, h_kv, L, d_model / h) each, in every layer."""
    return 2 * num_layers * batch_size * length * num_key_value_heads * (d_model // num_heads) * bytes_per_value


@test_case(points=1, hidden=True)
def hidden_a_large_model_and_other_configurations(kv_cache_bytes, STUDENT_ID, gqa_numbers):
    student_numbers(name, STUDENT_ID, gqa_numbers)  # noqa: F821 (the public check's name)
    config = (80, 8192, 64, 8, 1, 4096, 2)
    _check(kv_cache_bytes, config, _cache_bytes(*config), "Llama 2 70B, one sequence of 4,096 tokens")  # noqa: F821
    for config in [(2, 48, 12, 4, 3, 6, 2), (4, 20, 5, 1, 2, 3, 4)]:
        _check(kv_cache_bytes, config, _allocated(*config), ", ".join(str(c) for c in config))  # noqa: F821


def _longest(n, heads, tensors=2, batch=True):
    """The longest context whose cache fits in the budget; tensors=1 or batch=False give two known mistakes."""
    per_token = _cache_bytes(n["num_layers"], n["d_model"], n["num_heads"], heads,
                             n["batch_size"] if batch else 1, 1, n["bytes_per_value"]) * tensors // 2
    return n["memory_gib"] * 2**30 // per_token


@test_case(points=1, hidden=True)
def hidden_your_longest_contexts(mha_length, gqa_length, mqa_length, STUDENT_ID, gqa_numbers):
    n = student_numbers(name, STUDENT_ID, gqa_numbers)  # noqa: F821 (the public check's name)
    for value, key, heads in zip((mha_length, gqa_length, mqa_length), NAMES,  # noqa: F821
                                 (n["num_heads"], n["num_key_value_heads"], 1)):
        right = _longest(n, heads)
        with_heads = f"with {heads} key/value head{'s' if heads > 1 else ''}"
        if isinstance(value, numbers.Real) and value == right:
            continue
        if isinstance(value, numbers.Real) and value == right + 1:
            raise AssertionError(f"{key} is rounded up: the cache of {key} tokens {with_heads} must fit, so the "
                                 "longest context is rounded down.")
        if isinstance(value, numbers.Real) and value == n["memory_gib"] * 10**9 // (
                _cache_bytes(*[n[k] for k in ("num_layers", "d_model", "num_heads")], heads, n["batch_size"], 1,
                             n["bytes_per_value"])):
            raise AssertionError(f"{key} takes a GiB for 10**9 bytes: a GiB is 2**30.")
        if isinstance(value, numbers.Real) and value == _longest(n, heads, tensors=1):
            raise AssertionError(f"{key} counts one of the two tensors: every layer caches the keys AND the values.")
        if isinstance(value, numbers.Real) and value == _longest(n, heads, batch=False):
            raise AssertionError(f"{key} is the longest context of one sequence: the budget holds the caches of "
                                 f"all {n['batch_size']} sequences of the batch.")
        if key != "mha_length" and isinstance(value, numbers.Real) and value == _longest(n, n["num_heads"]):
            raise AssertionError(f"{key} counts h = {n['num_heads']} key/value heads: with grouped keys and "
                                 f"values the cache holds {heads} head{'s' if heads > 1 else ''} a layer.")
        raise AssertionError(f"{key} is not the longest context whose cache, {with_heads}, fits in your "
                             f"{n['memory_gib']} GiB.")

"""Hidden cases of ex-modern-gqa-cache: the book's Llama 2 70B cache, and the student's three caches.

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


@test_case(points=1, hidden=True)
def hidden_your_models_three_caches(mha_bytes, gqa_bytes, mqa_bytes, mha_over_gqa, STUDENT_ID, gqa_numbers):
    n = student_numbers(name, STUDENT_ID, gqa_numbers)  # noqa: F821 (the public check's name)
    config = [n["num_layers"], n["d_model"], n["num_heads"], None, n["batch_size"], n["length"],
              n["bytes_per_value"]]
    for value, key, heads in zip((mha_bytes, gqa_bytes, mqa_bytes), NAMES,  # noqa: F821
                                 (n["num_heads"], n["num_key_value_heads"], 1)):
        config[3] = heads
        right = _cache_bytes(*config)
        if isinstance(value, numbers.Real) and value == right:
            continue
        if isinstance(value, numbers.Real) and value == right / 2:
            raise AssertionError(f"{key} counts one of the two tensors: every layer caches the keys AND the values.")
        if key != "mha_bytes" and isinstance(value, numbers.Real) and value == _cache_bytes(
                *config[:3], n["num_heads"], *config[4:]):
            raise AssertionError(f"{key} counts h = {n['num_heads']} key/value heads: with grouped keys and "
                                 f"values the cache holds {heads} head{'s' if heads > 1 else ''} a layer.")
        raise AssertionError(f"{key} is not the bytes of the keys and values your model caches with {heads} "
                             f"key/value head{'s' if heads > 1 else ''}.")
    if not (isinstance(mha_over_gqa, numbers.Real) and abs(mha_over_gqa - n["num_heads"] / n["num_key_value_heads"])
            < 1e-9):
        raise AssertionError("mha_over_gqa is not how many times larger multi-head attention's cache is than "
                             "grouped-query attention's, for your model.")

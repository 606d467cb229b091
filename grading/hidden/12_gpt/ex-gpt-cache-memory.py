"""Hidden cases of ex-gpt-cache-memory: GPT-2 small's cache and the batch, which the public check no longer holds.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _allocated, name)
are in scope. The model and the length of the batch's sequences are the student's own (drawn from STUDENT_ID).
"""

import numbers

from otter.test_files import test_case

from mintransformer.exercises.checking import student_numbers


def _gpt_cache(num_layers, d_model, batch_size, length):
    """Keys and values, (B, h, L, d_model / h) each, in every layer."""
    return 2 * num_layers * batch_size * length * d_model


@test_case(points=1, hidden=True)
def hidden_gpt2_small_and_other_configurations(cache_values, STUDENT_ID, gpt_cache_numbers):
    student_numbers(name, STUDENT_ID, gpt_cache_numbers)  # noqa: F821 (the public check's name)
    expected = _gpt_cache(12, 768, 1, 1024)
    _check(cache_values, (12, 768, 1, 1024), expected, "GPT-2 small, one sequence of 1,024 tokens", 12)  # noqa: F821
    for num_layers, d_model, num_heads, batch_size, length in [(4, 40, 5, 6, 13), (1, 8, 1, 9, 2)]:
        allocated = _allocated(num_layers, d_model, num_heads, batch_size, length)  # noqa: F821
        _check(cache_values, (num_layers, d_model, batch_size, length), allocated,  # noqa: F821
               f"{num_layers}, {d_model}, {batch_size}, {length}; {num_heads} heads", num_heads)


@test_case(points=1, hidden=True)
def hidden_the_batch_over_the_weights(batch_over_weights, STUDENT_ID, gpt_cache_numbers):
    n = student_numbers(name, STUDENT_ID, gpt_cache_numbers)  # noqa: F821 (the public check's name)
    batch = batch_over_weights
    per_sequence = _gpt_cache(n["num_layers"], n["d_model"], 1, n["length"])
    right = n["parameters"] // per_sequence + 1
    if not (isinstance(batch, numbers.Integral) and batch == right):
        raise AssertionError(f"batch_over_weights is not the smallest number of {n['length']:,}-token sequences "
                             f"whose cache holds more values than {n['model']}'s {n['parameters']:,} parameters.")

"""Hidden cases of ex-gpt-cache-memory: GPT-2 small's cache and the batch, which the public check no longer holds.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _allocated,
GPT2_SMALL) are in scope.
"""

import numbers

from otter.test_files import test_case


def _gpt_cache(num_layers, d_model, batch_size, length):
    """Keys and values, (B, h, L, d_model / h) each, in every layer."""
    return 2 * num_layers * batch_size * length * d_model


@test_case(points=1, hidden=True)
def hidden_gpt2_small_and_other_configurations(cache_values):
    expected = _gpt_cache(12, 768, 1, 1024)
    _check(cache_values, (12, 768, 1, 1024), expected, "GPT-2 small, one sequence of 1,024 tokens", 12)  # noqa: F821
    for num_layers, d_model, num_heads, batch_size, length in [(4, 40, 5, 6, 13), (1, 8, 1, 9, 2)]:
        allocated = _allocated(num_layers, d_model, num_heads, batch_size, length)  # noqa: F821
        _check(cache_values, (num_layers, d_model, batch_size, length), allocated,  # noqa: F821
               f"{num_layers}, {d_model}, {batch_size}, {length}; {num_heads} heads", num_heads)


@test_case(points=1, hidden=True)
def hidden_the_batch_over_the_weights(batch_over_weights):
    batch = batch_over_weights
    per_sequence = _gpt_cache(12, 768, 1, 1024)
    right = GPT2_SMALL // per_sequence + 1  # noqa: F821 (the public check's)
    if not (isinstance(batch, numbers.Integral) and batch == right):
        raise AssertionError("batch_over_weights is not the smallest number of 1,024-token sequences whose cache "
                             "holds more values than GPT-2 small's 124,439,808 parameters.")

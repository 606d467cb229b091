"""Hidden cases of ex-inference-cache-memory: the formula at the base model's size and others, and the base
model's megabytes, which the public check no longer holds.

Merged after the public check (mt.exercises.merged_source), so its helpers (_named, _base_model, UNITS)
are in scope. The base model's batch and lengths are the student's own (drawn from STUDENT_ID).
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, close, to_numpy


def _floats(num_layers, batch, target_length, source_length, d_model):
    """Keys and values of the self-attention (T positions) and of the cross-attention (S), in every layer."""
    return 2 * num_layers * batch * (target_length + source_length) * d_model


@test_case(points=1, hidden=True)
def hidden_the_formula_at_other_sizes(cache_numbers, STUDENT_ID, cache_memory_numbers):
    base = _base_model(STUDENT_ID, cache_memory_numbers)  # noqa: F821 (the public check's)
    for args in [base, (4, 5, 1, 9, 24), (12, 2, 40, 60, 1024)]:
        got = float(to_numpy(call(cache_numbers, "cache_numbers", *args), f"cache_numbers{args}"))
        expected = _floats(*args)
        mistake = _named(got, args, expected)  # noqa: F821 (the public check's)
        if mistake:
            raise AssertionError(f"cache_numbers{args}: you counted {mistake}.")
        close(got, expected, f"cache_numbers{args}", atol=0.5,
              hint="Count, in every decoder layer, what its self-attention and its cross-attention cache, "
                   "for every sequence of the batch and every position they cache.")


@test_case(points=1, hidden=True)
def hidden_the_base_models_megabytes(base_cache_megabytes, STUDENT_ID, cache_memory_numbers):
    answered(base_cache_megabytes, "base_cache_megabytes")
    got = float(to_numpy(base_cache_megabytes, "base_cache_megabytes").reshape(-1)[0])
    numbers = _floats(*_base_model(STUDENT_ID, cache_memory_numbers))  # noqa: F821
    for factor, message in UNITS.values():  # noqa: F821
        if abs(got - numbers * factor) < 0.5:
            raise AssertionError(f"base_cache_megabytes: {message}")
    expected = numbers * 4 / 1e6
    close(got, expected, "base_cache_megabytes", atol=0.5,
          hint="The base model's cache: its floats, 4 bytes each, in MB (10^6 bytes).")

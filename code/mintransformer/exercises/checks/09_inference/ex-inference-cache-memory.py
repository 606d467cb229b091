"""Exercise: the memory of the key/value cache, as a formula and in megabytes.

The base model's batch and lengths are the student's own (mt.exercises.parameters, drawn from
STUDENT_ID); its megabytes are checked by the hidden cases, when the notebook is graded.
"""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, student_numbers, to_numpy

OK_FORMAT = False
name = "ex-inference-cache-memory"
points = 3

# (num_layers, batch, T, S, d_model, num_heads); the first tells the known mistakes apart (T != S, N > 2, and
# d_model not a multiple of N times a plausible d_k, so that no other mistake looks like "one layer").
ARGUMENTS = [(3, 4, 7, 11, 20, 4), (2, 16, 12, 27, 64, 8), (1, 1, 5, 3, 8, 2)]


def _counted(num_layers, batch, target_length, source_length, d_model, num_heads):
    """The floats in the caches of a small untrained model of this shape (model.start_cache)."""
    keras.utils.set_random_seed(0)
    model = mt.MinTransformer(num_layers=num_layers, d_model=d_model, num_heads=num_heads, dff=2 * d_model,
                              input_vocab_size=10, target_vocab_size=10,
                              max_length=max(target_length, source_length), dropout=0.0)
    source = np.full((batch, source_length), 3, "int32")
    model((source, source[:, :2]))
    caches = model.start_cache(source, target_length)
    return sum(int(np.prod(cache[key].shape)) for cache in caches
               for key in ("keys", "values", "cross_keys", "cross_values"))


def _named(got, args, right):
    n, b, t, s, d = args
    wrong = {
        "keys only: each attention caches keys AND values, two tensors": right / 2,
        "self-attention only: each layer also caches the cross-attention keys and values of the S source "
        "positions": right * t / (t + s),
        "bytes: count numbers here (the 4 bytes of a float32 come in base_cache_megabytes)": 4 * right,
        "one layer: every decoder layer has its own cache": right / n,
        "the is_token booleans too (B x T per layer): the task leaves them out; count only the floats of "
        "the keys and values": right + n * b * t,
    }
    for message, value in wrong.items():
        if value != right and np.isclose(got, value):
            return message
    return None


@test_case(points=1)
def the_formula(cache_numbers, STUDENT_ID, cache_memory_numbers):
    _base_model(STUDENT_ID, cache_memory_numbers)  # a notebook with no id scores nothing
    for *args, num_heads in ARGUMENTS:
        got = float(to_numpy(call(cache_numbers, "cache_numbers", *args), f"cache_numbers{tuple(args)}"))
        expected = _counted(*args, num_heads)
        mistake = _named(got, args, expected)
        if mistake:
            raise AssertionError(f"cache_numbers{tuple(args)} = {got:.0f}: you counted {mistake}.")
        close(got, expected, f"cache_numbers{tuple(args)}", atol=0.5,
              hint="Count, in every decoder layer, what its self-attention and its cross-attention cache, "
                   "for every sequence of the batch and every position they cache.")


@test_case(points=1)
def a_real_cache(cache_numbers, STUDENT_ID, cache_memory_numbers):
    _base_model(STUDENT_ID, cache_memory_numbers)
    keras.utils.set_random_seed(0)
    model = mt.MinTransformer(num_layers=2, d_model=16, num_heads=2, dff=32, input_vocab_size=10,
                              target_vocab_size=10, max_length=16, dropout=0.0)
    source = np.array([[3, 4, 5, 6, 7], [3, 4, 0, 0, 0], [5, 6, 7, 0, 0]], "int32")  # B = 3, S = 5
    model((source, source[:, :2]))
    caches = model.start_cache(source, 9)  # L = T = 9
    counted = sum(int(np.prod(cache[key].shape)) for cache in caches
                  for key in ("keys", "values", "cross_keys", "cross_values"))
    got = float(to_numpy(call(cache_numbers, "cache_numbers", 2, 3, 9, 5, 16), "cache_numbers(2, 3, 9, 5, 16)"))
    close(got, counted, "cache_numbers(2, 3, 9, 5, 16), against the floats of model.start_cache(source, 9)",
          atol=0.5, hint="Count the keys, values, cross_keys and cross_values of every layer's cache.")


def _base_model(STUDENT_ID, cache_memory_numbers):
    """The arguments of cache_numbers for the base model (6 layers, d_model = 512) and the student's numbers."""
    n = student_numbers(name, STUDENT_ID, cache_memory_numbers)
    return (6, n["batch"], n["target_length"], n["source_length"], 512)


# Megabytes from a number of floats, with the known mistakes: {what it computes: message}.
UNITS = {
    "MiB": (4 / 2**20, "That is in MiB (2^20 bytes); give megabytes, 10^6 bytes."),
    "numbers": (1 / 1e6, "That counts numbers, not bytes: a float32 takes 4 bytes."),
    "2 bytes": (2 / 1e6, "A float32 takes 4 bytes, not 2."),
    "8 bytes": (8 / 1e6, "A float32 takes 4 bytes, not 8."),
}


@test_case(points=1)
def the_base_model(base_cache_megabytes, cache_numbers, STUDENT_ID, cache_memory_numbers):
    # Checked against your own cache_numbers only: the value is checked when your notebook is graded.
    args = _base_model(STUDENT_ID, cache_memory_numbers)
    answered(base_cache_megabytes, "base_cache_megabytes")
    got = to_numpy(base_cache_megabytes, "base_cache_megabytes").reshape(-1)
    if got.size != 1:
        raise AssertionError("`base_cache_megabytes` must be one number.")
    got = float(got[0])
    if not np.isfinite(got) or got <= 0:
        raise AssertionError(f"base_cache_megabytes = {got:.4g}: a cache takes a positive number of megabytes.")
    try:
        numbers = float(cache_numbers(*args))
    except Exception:  # no cache_numbers yet, or one that does not run: its own cases say why
        return
    for factor, message in UNITS.values():
        if abs(got - numbers * factor) < 0.5 and abs(numbers * factor - numbers * 4 / 1e6) >= 0.5:
            raise AssertionError(f"base_cache_megabytes = {got:.4g}, from your cache_numbers. {message}")
    mine = numbers * 4 / 1e6  # (otter shows the failing line, the close() below)
    close(got, mine, f"base_cache_megabytes, against your cache_numbers{args}", atol=0.5,
          hint=f"cache_numbers{args} floats of 4 bytes each, in MB (10^6 bytes).")

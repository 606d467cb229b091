"""Exercise: the size of the key/value cache from a GPT's configuration, against its parameters."""

import numbers

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close

OK_FORMAT = False
name = "ex-gpt-cache-memory"
points = 3

GPT2_SMALL = 124_439_808  # parameters (chapter 12)


def reference(num_layers, d_model, batch_size, length):
    return 2 * num_layers * batch_size * length * d_model  # keys and values, (B, h, L, d_k) each, h d_k = d


def _allocated(num_layers, d_model, num_heads, batch_size, length):
    """The number of key and value entries in the caches that the package allocates."""
    model = mt.MinGPT(num_layers, d_model, num_heads, 2 * d_model, 11, length, dropout=0.0)
    caches = model.start_cache(batch_size, length)
    return int(sum(np.prod(c["keys"].shape) + np.prod(c["values"].shape) for c in caches))


def _check(cache_values, config, expected, what, num_heads=None):
    got = call(cache_values, "cache_values", *config)
    try:
        got = float(got)
    except (TypeError, ValueError):
        raise AssertionError(f"cache_values({what}) must return a number, not a {type(got).__name__}.") from None
    if got == expected:
        return
    num_layers, d_model, batch_size, length = config
    hints = [
        (expected / 2, "it counts one of the two tensors: every layer caches the keys AND the values"),
        (expected / num_layers, "it counts one layer: each of the num_layers layers keeps its own cache"),
        (expected / batch_size, "it counts one sequence: the cache holds batch_size rows"),
        (expected / length, "it counts one position: the cache holds every position up to length"),
    ]
    if num_heads:
        hints += [
            (expected / num_heads, "it counts one head's d_k = d_model / h features per position; the h heads "
                                   "together keep h d_k = d_model of them"),
            (expected * num_heads, "it gives every head d_model features; each head keeps d_k = d_model / h"),
        ]
    # The message names the mistake, never the number the package allocates nor how to count it.
    for wrong, hint in hints:
        if np.isclose(got, wrong):
            raise AssertionError(f"cache_values({what}) is {got:,.0f}, not the number of entries the package "
                                 f"allocates: {hint}.")
    close(got, expected, f"cache_values({what})", atol=0.5, rtol=0.0,
          hint="It is not the number of entries the package allocates: look at the shapes of the tensors in "
               "model.start_cache(batch_size, length), for every layer.")


@test_case(points=1)
def against_the_package(cache_values):
    for num_layers, d_model, num_heads, batch_size, length in [(2, 16, 4, 3, 10), (1, 24, 3, 1, 7),
                                                               (3, 32, 8, 2, 5)]:
        config = (num_layers, d_model, batch_size, length)
        _check(cache_values, config, _allocated(num_layers, d_model, num_heads, batch_size, length),
               f"{num_layers}, {d_model}, {batch_size}, {length}; {num_heads} heads", num_heads)


@test_case(points=1)
def gpt2_small(cache_values):
    _check(cache_values, (12, 768, 1, 1024), reference(12, 768, 1, 1024),
           "GPT-2 small, one sequence of 1,024 tokens", 12)


@test_case(points=1)
def the_batch_at_which_the_cache_outgrows_the_weights(batch_over_weights):
    batch = answered(batch_over_weights, "batch_over_weights")
    if not isinstance(batch, numbers.Integral) or isinstance(batch, bool):
        raise AssertionError(f"batch_over_weights must be a whole number of sequences, not "
                             f"{type(batch).__name__} {batch!r}: round up, since a batch holds whole sequences.")
    if reference(12, 768, batch, 1024) <= GPT2_SMALL:
        raise AssertionError(f"At a batch of {batch} sequences of 1,024 tokens, GPT-2 small's cache still holds "
                             f"no more values than its {GPT2_SMALL:,} parameters: the batch is too small.")
    if reference(12, 768, batch - 1, 1024) > GPT2_SMALL:
        raise AssertionError(f"batch_over_weights = {batch} is not the smallest: a smaller batch of 1,024-token "
                             "sequences already caches more values than GPT-2 small has parameters.")

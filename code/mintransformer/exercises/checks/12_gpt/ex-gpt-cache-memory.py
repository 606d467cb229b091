"""Exercise: the size of the key/value cache from a GPT's configuration, against its parameters.

The model (one of GPT-2's sizes) and the length of the sequences are the student's own
(mt.exercises.parameters, drawn from STUDENT_ID); batch_over_weights is checked by the hidden cases,
when the notebook is graded.
"""

import numbers

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, student_numbers

OK_FORMAT = False
name = "ex-gpt-cache-memory"
points = 2


def _allocated(num_layers, d_model, num_heads, batch_size, length):
    """The number of key and value entries in the caches that the package allocates."""
    model = mt.MinGPT(num_layers, d_model, num_heads, 2 * d_model, 11, length, dropout=0.0)
    caches = model.start_cache(batch_size, length)
    return int(sum(np.prod(c["keys"].shape) + np.prod(c["values"].shape) for c in caches))


def _value(cache_values, config, what):
    got = call(cache_values, "cache_values", *config)
    try:
        return float(got)
    except (TypeError, ValueError):
        raise AssertionError(f"cache_values({what}) must return a number, not a {type(got).__name__}.") from None


def _mistakes(got, config, expected, num_heads=None):
    """The known mistakes that give ``got``: [what the message says]."""
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
    return [hint for wrong, hint in hints if wrong != expected and np.isclose(got, wrong)]


def _check(cache_values, config, expected, what, num_heads=None, got=None):
    got = _value(cache_values, config, what) if got is None else got
    if got == expected:
        return
    # The message names the mistake, never the number the package allocates nor how to count it.
    for hint in _mistakes(got, config, expected, num_heads)[:1]:
        raise AssertionError(f"cache_values({what}) is {got:,.0f}, not the number of entries the package "
                             f"allocates: {hint}.")
    close(got, expected, f"cache_values({what})", atol=0.5, rtol=0.0,
          hint="It is not the number of entries the package allocates: look at the shapes of the tensors in "
               "model.start_cache(batch_size, length), for every layer.")


# (num_layers, d_model, num_heads, batch_size, length): each known mistake gives the count of exactly one
# of them on at least one configuration (on the first, one layer of two is also one of the two tensors).
CONFIGURATIONS = [(2, 16, 4, 3, 10), (1, 24, 3, 1, 7), (3, 32, 8, 2, 5)]


@test_case(points=1)
def against_the_package(cache_values, STUDENT_ID, gpt_cache_numbers):
    student_numbers(name, STUDENT_ID, gpt_cache_numbers)  # a notebook with no id scores nothing
    wrong = []
    for num_layers, d_model, num_heads, batch_size, length in CONFIGURATIONS:
        config = (num_layers, d_model, batch_size, length)
        what = f"{num_layers}, {d_model}, {batch_size}, {length}; {num_heads} heads"
        got = _value(cache_values, config, what)
        expected = _allocated(num_layers, d_model, num_heads, batch_size, length)
        if got != expected:
            wrong.append((config, expected, what, num_heads, got))
    # The configuration on which the answer is one known mistake only, if any; else the first wrong one.
    named = [case for case in wrong if len(_mistakes(case[4], case[0], case[1], case[3])) == 1]
    for config, expected, what, num_heads, got in (named + wrong)[:1]:
        _check(cache_values, config, expected, what, num_heads, got=got)


@test_case(points=1)
def the_batch_at_which_the_cache_outgrows_the_weights(batch_over_weights, cache_values, STUDENT_ID,
                                                       gpt_cache_numbers):
    # Checked against your own cache_values only: the check holds no count of the model's cache.
    n = student_numbers(name, STUDENT_ID, gpt_cache_numbers)
    model, parameters, length = n["model"], n["parameters"], n["length"]
    batch = answered(batch_over_weights, "batch_over_weights")
    if not isinstance(batch, numbers.Integral) or isinstance(batch, bool):
        raise AssertionError(f"batch_over_weights must be a whole number of sequences, not "
                             f"{type(batch).__name__} {batch!r}: round up, since a batch holds whole sequences.")
    if batch < 1:
        raise AssertionError(f"batch_over_weights = {batch}: a batch holds at least one sequence.")
    if not callable(cache_values):
        return
    try:
        values = [float(cache_values(n["num_layers"], n["d_model"], b, length)) for b in (batch - 1, batch)]
    except Exception:  # a cache_values that does not run: its own case says why
        return
    if values[1] <= parameters:
        raise AssertionError(f"By your cache_values, at a batch of {batch} sequences of {length:,} tokens {model}'s "
                             f"cache still holds no more values than its {parameters:,} parameters: the batch is "
                             "too small.")
    if values[0] > parameters:
        raise AssertionError(f"batch_over_weights = {batch} is not the smallest: by your cache_values, a smaller "
                             f"batch of {length:,}-token sequences already caches more values than {model} has "
                             "parameters.")

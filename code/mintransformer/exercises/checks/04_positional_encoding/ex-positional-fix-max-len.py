"""Exercise: find and fix the bug of the Keras functional-API tutorial, the table added at max_len, for tokens
that start at any position (step-by-step decoding), refusing positions past the table."""

import re

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-positional-fix-max-len"
points = 5

MAX_LEN, D_MODEL = 10, 16
STILL_THE_BUG = ("Still the bug: the whole max_len table, shape (1, max_len, d_model), is added to "
                 "a batch of T tokens. Cut the table to the batch's length first: its first "
                 "T = x.shape[1] rows.")


def _batch(seed, length):
    return np.random.default_rng(seed).normal(size=(2, length, D_MODEL)).astype("float32")


def _shapes(message):
    """The shapes named in a broadcasting error: NumPy's (2,7,16), TensorFlow's [2,7,16]."""
    return [tuple(int(n) for n in found.split(",") if n.strip())
            for found in re.findall(r"[(\[](\d+(?:\s*,\s*\d+)*)\s*,?\s*[)\]]", message)]


def _table_problem(table, x):
    """What is wrong with a table of shape ``table`` added to the batch ``x``."""
    batch, length = x.shape[0], x.shape[1]
    rows = table[-2] if len(table) >= 2 else None
    if rows == MAX_LEN and length != MAX_LEN:
        return STILL_THE_BUG
    if rows == batch and length != batch:
        return (f"Your table has shape {table}: {batch} rows, the batch size x.shape[0]. "
                f"Cut it to the number of positions, T = x.shape[1] = {length}: axis 1 of x, not axis 0.")
    return (f"Your table has shape {table}; it must be (1, T, d_model) = (1, {length}, {D_MODEL}), "
            "with T = x.shape[1]: the first T rows of the max_len table.")


def _call(fixed_add_encoding, x, start):
    if start == 0:  # the tutorial's signature also works here
        return call(fixed_add_encoding, "fixed_add_encoding", x, MAX_LEN)
    return call(fixed_add_encoding, "fixed_add_encoding", x, MAX_LEN, start=start)


def _check(fixed_add_encoding, x, case, start=0):
    try:
        got = _call(fixed_add_encoding, x, start)
    except AssertionError as error:
        cause = str(error.__cause__ or "")
        if "broadcast" in cause or "Incompatible shapes" in cause:
            tables = [s for s in _shapes(cause) if s != x.shape]
            if tables:
                raise AssertionError(f"{case}: {_table_problem(tables[0], x)} (The error was: {error})") from None
            raise AssertionError(f"{case}: adding the table to x failed: {error} The table must have "
                                 f"shape (1, T, d_model) = (1, {x.shape[1]}, {D_MODEL}), with "
                                 "T = x.shape[1].") from None
        if "unexpected keyword argument 'start'" in str(error):
            raise AssertionError(f"{case}: {error} Give the function the argument start=0: the position of "
                                 "the first token of x.") from None
        raise
    out = to_numpy(got, f"{case}: the result")
    length = x.shape[1]
    pe = mt.positional_encoding(MAX_LEN, D_MODEL)
    if out.shape == (2, MAX_LEN, D_MODEL) and length != MAX_LEN:
        raise AssertionError(f"{case}: the batch came back {MAX_LEN} tokens long, not {length}. "
                             f"{STILL_THE_BUG} A one-token batch broadcasts against it silently.")
    if out.shape != x.shape:
        batch = x.shape[0]
        if out.shape == (batch, batch, D_MODEL) and like(out, x + pe[None, :batch], atol=1e-5):
            raise AssertionError(f"{case}: {_table_problem((1, batch, D_MODEL), x)} "
                                 f"(It broadcast silently: the result has shape {out.shape}.)")
        raise AssertionError(f"{case}: the result has shape {out.shape}; it must have the shape of x, "
                             f"{x.shape}. Add a table of shape (1, T, d_model) with T = x.shape[1].")
    if start > 0 and like(out, x + pe[None, :length], atol=1e-5):
        raise AssertionError(f"{case}: you added the first {length} row(s) of the table, the fix of the "
                             "chapter: every decoding step would get row 0 and the model could not tell one "
                             "step from another. Tokens at positions start, ..., start + T - 1 get those rows.")
    if length < MAX_LEN and start == 0 and like(out, x + pe[None, -length:], atol=1e-5):
        raise AssertionError(f"{case}: you added the LAST {length} rows of the table. Positions "
                             f"start at 0: token t gets row t, so add the first {length} rows.")
    close(out, x + pe[None, start:start + length], f"{case}: the result", atol=1e-5,
          hint="Token t of x stands at position start + t and gets that row of the table, broadcast over the "
               "batch.")


@test_case(points=1)
def a_shorter_batch(fixed_add_encoding):
    _check(fixed_add_encoding, _batch(0, 7), f"A batch of 7 tokens with max_len = {MAX_LEN}")


@test_case(points=1)
def a_one_token_batch(fixed_add_encoding):
    _check(fixed_add_encoding, _batch(1, 1), "A batch of 1 token (the first decoding step)")


@test_case(points=1)
def a_batch_of_max_len_tokens(fixed_add_encoding):
    _check(fixed_add_encoding, _batch(2, MAX_LEN), f"A batch of exactly max_len = {MAX_LEN} tokens")


@test_case(points=1)
def tokens_further_on(fixed_add_encoding):
    _check(fixed_add_encoding, _batch(3, 1), "One token at start = 4 (the fifth decoding step)", start=4)
    _check(fixed_add_encoding, _batch(4, 3), "Three tokens at start = 2", start=2)
    _check(fixed_add_encoding, _batch(5, 1), f"One token at start = {MAX_LEN - 1}, the last row", start=MAX_LEN - 1)


@test_case(points=1)
def past_the_table(fixed_add_encoding):
    for start, length in [(MAX_LEN - 1, 2), (MAX_LEN, 1), (0, MAX_LEN + 2), (-2, 1)]:
        case = f"{length} token(s) at start = {start} with max_len = {MAX_LEN}"
        try:
            got = _call(fixed_add_encoding, _batch(6, length), start)
        except AssertionError as error:
            cause = error.__cause__
            if isinstance(cause, ValueError) and not ("broadcast" in str(cause) or "Incompatible" in str(cause)):
                continue  # refused with a ValueError of its own
            if "broadcast" in str(cause) or "Incompatible" in str(cause):
                raise AssertionError(f"{case}: your function failed while adding ({error}) rather than "
                                     "refusing the positions past the table: check start + T <= max_len "
                                     "first and raise a ValueError that says so.") from None
            raise AssertionError(f"{case}: {error} Raise a ValueError when a position has no row in the "
                                 "table (start + T > max_len).") from None
        out = to_numpy(got, f"{case}: the result")
        if start < 0:
            raise AssertionError(f"{case}: a negative position has no row either, yet your function returned a "
                                 f"result of shape {out.shape} without a word (a negative index counts from the "
                                 "end of the table, as in NumPy). Raise a ValueError instead.")
        raise AssertionError(f"{case}: the positions past max_len - 1 have no row, yet your function returned "
                             f"a result of shape {out.shape} without a word (a slice past the end of a table "
                             "is shorter, and a 1-row slice broadcasts). Raise a ValueError instead.")

"""Exercise: find and fix the bug of the Keras functional-API tutorial, the table added at max_len."""

import re

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-positional-fix-max-len"
points = 3

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


def _check(fixed_add_encoding, x, case):
    try:
        got = call(fixed_add_encoding, "fixed_add_encoding", x, MAX_LEN)
    except AssertionError as error:
        cause = str(error.__cause__ or "")
        if "broadcast" in cause or "Incompatible shapes" in cause:
            tables = [s for s in _shapes(cause) if s != x.shape]
            if tables:
                raise AssertionError(f"{case}: {_table_problem(tables[0], x)} (The error was: {error})") from None
            raise AssertionError(f"{case}: adding the table to x failed: {error} The table must have "
                                 f"shape (1, T, d_model) = (1, {x.shape[1]}, {D_MODEL}), with "
                                 "T = x.shape[1].") from None
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
    if length < MAX_LEN and like(out, x + pe[None, -length:], atol=1e-5):
        raise AssertionError(f"{case}: you added the LAST {length} rows of the table. Positions "
                             f"start at 0: token t gets row t, so add the first {length} rows.")
    close(out, x + pe[None, :length], f"{case}: the result", atol=1e-5,
          hint="Token t of every sentence gets row t of the table: x + PE[:T], broadcast over the batch.")


@test_case(points=1)
def a_shorter_batch(fixed_add_encoding):
    _check(fixed_add_encoding, _batch(0, 7), f"A batch of 7 tokens with max_len = {MAX_LEN}")


@test_case(points=1)
def a_one_token_batch(fixed_add_encoding):
    _check(fixed_add_encoding, _batch(1, 1), "A batch of 1 token (a decoding step)")


@test_case(points=1)
def a_batch_of_max_len_tokens(fixed_add_encoding):
    _check(fixed_add_encoding, _batch(2, MAX_LEN), f"A batch of exactly max_len = {MAX_LEN} tokens")

"""Exercise: find and fix the bug of the Keras functional-API tutorial, the table added at max_len."""

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


def _check(fixed_add_encoding, x, case):
    try:
        got = call(fixed_add_encoding, "fixed_add_encoding", x, MAX_LEN)
    except AssertionError as error:
        cause = str(error.__cause__ or "")
        if "broadcast" in cause or "Incompatible shapes" in cause:
            raise AssertionError(f"{case}. {STILL_THE_BUG} (The error was: {error})") from None
        raise
    out = to_numpy(got, f"{case}: the result")
    length = x.shape[1]
    pe = mt.positional_encoding(MAX_LEN, D_MODEL)
    if out.shape == (2, MAX_LEN, D_MODEL) and length != MAX_LEN:
        raise AssertionError(f"{case}: the batch came back {MAX_LEN} tokens long, not {length}. "
                             f"{STILL_THE_BUG} A one-token batch broadcasts against it silently.")
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

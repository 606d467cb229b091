"""Hidden case of ex-positional-fix-max-len: another table (max_len = 25, d_model = 8) and a batch of three.

Merged after the public check (mt.exercises.merged_source), whose imports are in scope.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close


@test_case(points=1, hidden=True)
def hidden_another_table(fixed_add_encoding):
    max_len, d_model = 25, 8
    rng = np.random.default_rng(25)
    for start, length in [(0, 25), (20, 5), (13, 1), (0, 3)]:
        case = f"Hidden case, {length} token(s) at start = {start} with max_len = {max_len}, d_model = {d_model}"
        x = rng.normal(size=(3, length, d_model)).astype("float32")
        got = call(fixed_add_encoding, "fixed_add_encoding", x, max_len, start=start)
        expected = x + mt.positional_encoding(max_len, d_model)[None, start:start + length]
        close(got, expected, case, atol=1e-5,
              hint="Use the max_len and the width you are given: token t of x stands at position start + t.")
    for start, length in [(24, 2), (25, 1)]:
        case = f"Hidden case, {length} token(s) at start = {start} with max_len = {max_len}"
        try:
            call(fixed_add_encoding, "fixed_add_encoding", np.zeros((3, length, d_model), "float32"), max_len,
                 start=start)
        except AssertionError as error:
            if isinstance(error.__cause__, ValueError):
                continue
            raise AssertionError(f"{case}: {error} Raise a ValueError when a position has no row.") from None
        raise AssertionError(f"{case}: a position past max_len - 1 has no row: raise a ValueError.")

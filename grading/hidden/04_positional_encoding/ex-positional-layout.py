"""Hidden cases of ex-positional-layout: other shifts and widths, other tables for close_pairs.

Merged after the public check (mt.exercises.merged_source): _t2t_table, _gaps and _pairs are its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, to_numpy


@test_case(points=1, hidden=True)
def hidden_shift_at_other_widths(t2t_shift):
    for k, d_model in [(3, 32), (12, 128), (1, 4)]:
        what = f"Hidden case: t2t_shift({k}, {d_model})"
        m = to_numpy(call(t2t_shift, "t2t_shift", k, d_model), what)
        saved = _t2t_table(40, d_model)  # noqa: F821 (the public check's)
        shifted = saved[:-k] @ m.T if m.shape == (d_model, d_model) else m
        close(shifted, saved[k:], f"The colleague's table shifted by {what}", atol=1e-5,
              hint="Build the shift for the k and the d_model given: saved[:-k] @ m.T must equal saved[k:].")


@test_case(points=1, hidden=True)
def hidden_close_pairs_of_other_tables(close_pairs):
    for d_model, length in [(32, 30), (24, 12), (64, 500)]:  # every pair's gap at least 1e-4 from 0.01
        what = f"Hidden case: close_pairs({d_model}, {length})"
        pairs = _pairs(close_pairs, d_model, length, what)  # noqa: F821 (the public check's)
        right = [int(i) for i in np.flatnonzero(_gaps(d_model, length) < 0.01)]  # noqa: F821
        if pairs != right:
            raise AssertionError(f"{what} is not right: for each pair of the d_model given, take the largest "
                                 "difference of its sine and of its cosine column from the paper's over the "
                                 "positions, and keep the pairs where it is below 0.01.")

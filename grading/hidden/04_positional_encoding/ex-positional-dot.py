"""Hidden cases of ex-positional-dot: the first rises at the public widths and at others, and
the runner-up keys themselves.

Merged after the public check (mt.exercises.merged_source): _dot, _offset, _query and _keys are its.
"""

import numpy as np
from otter.test_files import test_case


def _first_rise(d_model):
    k = np.arange(1, 5000)
    return int(k[np.argmax(_dot(k, d_model) > _dot(k - 1, d_model))])  # noqa: F821 (the public check's)


@test_case(points=1, hidden=True)
def hidden_first_rise_at_every_width(first_rise, STUDENT_ID, dot_numbers):
    _query(STUDENT_ID, dot_numbers)  # noqa: F821 (the public check's): the notebook's id
    for d_model in (128, 16, 64, 512, 32, 256, 1024, 8):
        k = _offset(first_rise, d_model, "")  # noqa: F821 (the public check's): a rise, or it says why not
        if k != _first_rise(d_model):
            raise AssertionError(
                f"first_rise({d_model}) is {k}: that is too large: the dot product has already risen at a "
                "smaller offset. Find the FIRST k where sum_i cos(omega_i k) grows.")


@test_case(points=1, hidden=True)
def hidden_the_runner_up_keys(runner_up, STUDENT_ID, dot_numbers):
    keys = _keys(runner_up)  # noqa: F821 (the public check's)
    p, k, target = _query(STUDENT_ID, dot_numbers)  # noqa: F821 (the public check's)
    right = [target - 1, target + 1]  # PE_target . PE_p' depends on |p' - target| only
    if len(keys) == 1 and keys[0] in right:
        raise AssertionError(f"runner_up is {keys}: is that key alone in second place? Compute the scores "
                             "of its neighbours too (up to the rounding of the float32 table).")
    if keys == [32, 34] and right != [32, 34]:
        raise AssertionError(f"runner_up is {keys}: those keys are for the book's query PE_30 M_3^T, "
                             f"not for yours, PE_{p} M_{k}^T.")
    if keys == [p - 1, p + 1]:
        raise AssertionError(f"runner_up is {keys}, the neighbours of {p}, the query's own position; but the "
                             f"query PE_{p} M_{k}^T looks {k} positions ahead.")
    if keys != right:
        raise AssertionError(f"runner_up is {keys}: the scores are PE_{target} . PE_p' (the query "
                             f"PE_{p} M_{k}^T equals PE_{target}); list every key with the second-highest score.")

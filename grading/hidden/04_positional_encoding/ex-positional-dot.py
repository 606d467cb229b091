"""Hidden cases of ex-positional-dot: the first rises at the public widths and at others, and
the runner-up keys themselves.

Merged after the public check (mt.exercises.merged_source): _dot, _offset and _keys are its.
"""

import numpy as np
from otter.test_files import test_case


def _first_rise(d_model):
    k = np.arange(1, 5000)
    return int(k[np.argmax(_dot(k, d_model) > _dot(k - 1, d_model))])  # noqa: F821 (the public check's)


@test_case(points=1, hidden=True)
def hidden_first_rise_at_every_width(first_rise):
    for d_model in (128, 16, 64, 512, 32, 256, 1024, 8):
        k = _offset(first_rise, d_model, "")  # noqa: F821 (the public check's): a rise, or it says why not
        if k != _first_rise(d_model):
            raise AssertionError(
                f"first_rise({d_model}) is {k}: that is too large: the dot product has already risen at a "
                "smaller offset. Find the FIRST k where sum_i cos(omega_i k) grows.")


@test_case(points=1, hidden=True)
def hidden_the_runner_up_keys(runner_up):
    keys = _keys(runner_up)  # noqa: F821 (the public check's)
    if len(keys) == 1 and keys[0] in (32, 34):
        raise AssertionError(f"runner_up is {keys}: is that key alone in second place? Compute the scores "
                             "of its neighbours too (up to the rounding of the float32 table).")
    if keys != [32, 34]:
        raise AssertionError(f"runner_up is {keys}: the scores are PE_33 . PE_p' (the query PE_30 M_3^T equals "
                             "PE_33); list every key with the second-highest score.")

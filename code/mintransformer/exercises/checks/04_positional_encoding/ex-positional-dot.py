"""Exercise: two consequences of the dot product of encodings: it does not fall steadily with the
distance, and it cannot tell before from after (the runner-up keys of a query that looks ahead).

The check confirms the format, that the dot product does rise at first_rise's offset, and catches known
mistakes of runner_up; the first rises and the keys themselves are hidden test cases (grading/hidden/),
checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, to_numpy

OK_FORMAT = False
name = "ex-positional-dot"
points = 2


def _omega(d_model):
    return 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # (d_model/2,)


def _dot(k, d_model):
    return np.cos(np.multiply.outer(k, _omega(d_model))).sum(axis=-1)  # PE_pos . PE_(pos + k)


@test_case(points=1)
def first_rise_of_the_similarity(first_rise):
    for d_model in (128, 16, 64, 512):
        _offset(first_rise, d_model, "")


def _offset(first_rise, d_model, case):
    """The student's first_rise(d_model), a whole number k >= 1 at which the dot product does grow."""
    what = f"{case}first_rise({d_model})"
    value = to_numpy(call(first_rise, "first_rise", d_model), what)
    if value.size != 1 or value.reshape(()) != np.round(value.reshape(())):
        raise AssertionError(f"{what} must be one whole number, an offset k.")
    k = int(value.reshape(()))
    if k < 1:
        raise AssertionError(f"{what} is {k}: offsets start at 1 (k = 0 compares a position with itself).")
    if not _dot(k, d_model) > _dot(k - 1, d_model):
        raise AssertionError(
            f"{what} is {k}: the dot product falls at that offset, it does not rise there. Compute "
            "sum_i cos(omega_i k) for k = 0, 1, 2, ... with omega_i = 10000^(-2i / d_model), "
            "i = 0 .. d_model/2 - 1, and find the first k where it grows.")
    return k


@test_case(points=1)
def runner_up_keys(runner_up):
    keys = _keys(runner_up)
    if any(k < 0 or k > 63 for k in keys):
        raise AssertionError(f"runner_up is {keys}: key positions run from 0 to 63.")
    if len(set(keys)) != len(keys) or not keys:
        raise AssertionError(f"runner_up is {keys}: list each key of the second-highest score once.")
    if 33 in keys:
        raise AssertionError("runner_up holds 33, the key with the highest score: the query PE_30 M_3^T is "
                             "PE_33. Which keys come second?")
    if keys == [27]:
        raise AssertionError("27 is three positions behind 30. The query PE_30 M_3^T equals PE_33, so its "
                             "score against key p' is PE_33 . PE_p': second place depends on the distance "
                             "to 33, not to 30.")
    if 30 in keys:
        raise AssertionError("runner_up holds 30, the query's own position; but the query PE_30 M_3^T equals "
                             "PE_33, so its scores are PE_33 . PE_p'.")


def _keys(runner_up):
    answered(runner_up, "runner_up")
    try:
        return sorted(int(k) for k in np.atleast_1d(np.asarray(runner_up)).reshape(-1))
    except (TypeError, ValueError):
        raise AssertionError("runner_up must be a list of key positions, whole numbers from 0 to 63.") from None

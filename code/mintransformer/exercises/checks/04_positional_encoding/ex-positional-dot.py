"""Exercise: two consequences of the dot product of encodings: it does not fall steadily with the
distance, and it cannot tell before from after (the runner-up keys of a query that looks ahead).

The query of runner_up is the student's own (mt.exercises.parameters, drawn from STUDENT_ID). The check
confirms the format, that the dot product does rise at first_rise's offset, and catches known mistakes
of runner_up; the first rises and the keys themselves are hidden test cases (grading/hidden/),
checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, student_numbers, to_numpy

OK_FORMAT = False
name = "ex-positional-dot"
points = 2


def _omega(d_model):
    return 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # (d_model/2,)


def _dot(k, d_model):
    return np.cos(np.multiply.outer(k, _omega(d_model))).sum(axis=-1)  # PE_pos . PE_(pos + k)


@test_case(points=1)
def first_rise_of_the_similarity(first_rise, STUDENT_ID, dot_numbers):
    _query(STUDENT_ID, dot_numbers)  # the notebook's id (with none, it says so)
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


def _query(STUDENT_ID, dot_numbers):
    """(p, k, p + k): the query PE_p M_k^T of the student's numbers, and the key it looks at."""
    n = student_numbers(name, STUDENT_ID, dot_numbers)
    p, k = n["query_position"], n["look_ahead"]
    return p, k, p + k


@test_case(points=1)
def runner_up_keys(runner_up, STUDENT_ID, dot_numbers):
    keys = _keys(runner_up)
    p, k, target = _query(STUDENT_ID, dot_numbers)
    if any(key < 0 or key > 63 for key in keys):
        raise AssertionError(f"runner_up is {keys}: key positions run from 0 to 63.")
    if len(set(keys)) != len(keys) or not keys:
        raise AssertionError(f"runner_up is {keys}: list each key of the second-highest score once.")
    if target in keys:
        raise AssertionError(f"runner_up holds {target}, the key with the highest score: the query "
                             f"PE_{p} M_{k}^T is PE_{target}. Which keys come second?")
    if keys == [p - k]:
        raise AssertionError(f"{p - k} is {k} positions behind {p}, but the query PE_{p} M_{k}^T looks {k} "
                             "positions ahead. Which keys come second?")
    if p in keys:
        raise AssertionError(f"runner_up holds {p}, the query's own position: where does the query "
                             f"PE_{p} M_{k}^T look, and which keys come second there?")


def _keys(runner_up):
    answered(runner_up, "runner_up")
    try:
        return sorted(int(k) for k in np.atleast_1d(np.asarray(runner_up)).reshape(-1))
    except (TypeError, ValueError):
        raise AssertionError("runner_up must be a list of key positions, whole numbers from 0 to 63.") from None

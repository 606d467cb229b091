"""Hidden cases of ex-positional-dot: first_rise at other widths, and the runner-up keys themselves.

Merged after the public check (mt.exercises.merged_source): _check_first_rise and _keys are its.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_first_rise_at_other_widths(first_rise):
    _check_first_rise(first_rise, (32, 256, 1024, 8), "Hidden case: ")  # noqa: F821 (the public check's)


@test_case(points=1, hidden=True)
def hidden_the_runner_up_keys(runner_up):
    keys = _keys(runner_up)  # noqa: F821 (the public check's)
    if len(keys) == 1 and keys[0] in (32, 34):
        raise AssertionError(f"runner_up is {keys}: is that key alone in second place? Compute the scores "
                             "of its neighbours too (up to the rounding of the float32 table).")
    if keys != [32, 34]:
        raise AssertionError(f"runner_up is {keys}: the scores are PE_33 . PE_p' (the query PE_30 M_3^T equals "
                             "PE_33); list every key with the second-highest score.")

"""Hidden case of ex-positional-previous: other sizes within the ones the check names (T 12 to 30, d_model
64 to 256).

Merged after the public check (mt.exercises.merged_source): _check is its.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_sizes(look_back_queries):
    _check(look_back_queries, 25, 96)  # noqa: F821 (the public check's)
    _check(look_back_queries, 14, 200)  # noqa: F821

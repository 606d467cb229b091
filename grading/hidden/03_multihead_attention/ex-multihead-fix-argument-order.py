"""Hidden case of ex-multihead-fix-argument-order: one target position over seven source positions, and
S = T = 3 (where the bug runs silently).

Merged after the public check (mt.exercises.merged_source): _compare is its.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_lengths(fixed_cross_attention):
    _compare(fixed_cross_attention, 21, T=1, S=7)  # noqa: F821 (the public check's)
    _compare(fixed_cross_attention, 22, T=3, S=3)  # noqa: F821

"""Hidden cases of ex-inference-fix-cache-mask: other batch sizes (7 dates, one date), <pad> fed back at other
positions, two in one row.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_batches_and_pads(fixed_step):
    _check(fixed_step, True, rows=(5, 12), pads=[(0, 1), (0, 2), (2, 10), (3, 4), (6, 6)],  # noqa: F821
           case="Seven test dates with <pad> fed back at positions 1 and 2 of row 0, and in rows 2, 3 and 6")
    _check(fixed_step, True, rows=(20, 21), pads=[(0, 3)], case="One test date with <pad> fed back at position 3")  # noqa: F821

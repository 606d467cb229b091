"""Hidden cases of ex-dist-by-hand: a batch whose rows do not split evenly, and as many replicas as rows.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
The public batches have 6 rows, which 1, 2 and 3 replicas split evenly.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_uneven_slices(data_parallel_gradient):
    # 7 rows in 4 slices of 2, 2, 2 and 1 rows; then 5 rows, one per replica.
    _check(data_parallel_gradient, 4, 5, source_cuts=(2, 5, 1, 4, 3, 6, 2),  # noqa: F821 (the public check's)
           target_cuts=(4, 1, 6, 2, 5, 1, 3))
    _check(data_parallel_gradient, 5, 6, source_cuts=(3, 1, 4, 2, 5), target_cuts=(1, 5, 2, 4, 3))  # noqa: F821

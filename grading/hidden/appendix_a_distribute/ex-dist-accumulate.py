"""Hidden cases of ex-dist-accumulate: other numbers of micro-batches, one of them a single row.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
Both public streams hold three micro-batches.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_streams(accumulated_gradient):
    _check(accumulated_gradient, 2, [[3, 1], [6], [2, 5, 1], [4, 4, 2, 6]],  # noqa: F821 (the public check's)
           [[1, 5], [2], [6, 1, 4], [3, 2, 5, 1]])
    _check(accumulated_gradient, 3, [[4, 2, 5]], [[2, 6, 3]])  # noqa: F821: a stream of one micro-batch

"""Hidden case of ex-layers-implement-encoder-layer: other widths, another number of heads, another batch.

Merged after the public check (mt.exercises.merged_source), so its helper _compare is in scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_sizes(MyEncoderLayer):
    sizes = dict(d=12, h=4, dff=20, batch=3)
    _compare(MyEncoderLayer, False, 6062, length=7, **sizes)  # noqa: F821 (the public check's)
    _compare(MyEncoderLayer, True, 6063, length=4, **sizes)  # noqa: F821

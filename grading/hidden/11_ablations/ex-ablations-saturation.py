"""Hidden cases of ex-ablations-saturation: the key dimensions between the public ones.

Merged after the public check (mt.exercises.merged_source), so its helpers (_scaled, _unscaled) are in scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_key_dimensions(mean_top_weight):
    _scaled(mean_top_weight, (2, 8, 32, 128))  # noqa: F821 (the public check's)
    _unscaled(mean_top_weight, (2, 8, 32, 128))  # noqa: F821

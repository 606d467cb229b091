"""Hidden case of ex-layernorm-count: sizes the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _package_counts)
are in scope.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_sizes(count_norm_params):
    settings = [(3, 10, False), (3, 10, True), (12, 1024, True), (2, 3, False)]
    _check(count_norm_params, settings, [_package_counts(*setting) for setting in settings])  # noqa: F821

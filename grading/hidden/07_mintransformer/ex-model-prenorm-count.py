"""Hidden case of ex-model-prenorm-count: configurations the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helpers (_student, _compare) are
in scope.
"""

from otter.test_files import test_case

# count_params() of mt.MinTransformer for each configuration (in the order of KEYS): confirmed by
# tests/test_exercises_07_mintransformer.py, which builds the models.
HIDDEN_COUNTS = {
    (3, 20, 4, 36, 30, 30, True, True): 25_376,
    (1, 8, 1, 8, 50, 9, False, True): 1_817,
    (4, 32, 8, 64, 15, 21, False, False): 87_349,
    (2, 12, 6, 12, 7, 7, True, False): 5_316,
}


@test_case(points=1, hidden=True)
def hidden_other_configurations(param_count):
    configs = list(HIDDEN_COUNTS)
    got = [_student(param_count, config) for config in configs]  # noqa: F821 (the public check's)
    _compare(configs, got, [HIDDEN_COUNTS[config] for config in configs])  # noqa: F821

"""Hidden cases of ex-dist-cost: configurations whose dff is not 4 d_model, with other lengths and vocabularies.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
Every public configuration has dff = 4 d_model.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_shapes(training_cost):
    _check(training_cost, (3, 96, 200, 50, 10, 300, 12), "3 layers, d_model 96, dff 200")  # noqa: F821
    _check(training_cost, (1, 8, 40, 7, 1, 5, 3), "one layer, d_model 8, dff 40, one step")  # noqa: F821

"""Hidden cases of ex-modern-rotary: other shapes, later positions, positions as a tensor, other dtypes.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
"""

import keras
import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_one_pair_and_a_wide_head(rotate_pairs):
    rng = np.random.default_rng(1301)
    x = rng.normal(size=(3, 7, 2)).astype("float32")  # d = 2: one pair
    _check(rotate_pairs, x, np.arange(20, 27, dtype="int32"), "hidden case, x of shape (3, 7, 2)")  # noqa: F821
    x = rng.normal(size=(2, 2, 1, 128)).astype("float32")  # one new row, d_k = 128, late in the context
    _check(rotate_pairs, x, keras.ops.convert_to_tensor(np.array([250], "int32")),  # noqa: F821
           "hidden case, x of shape (2, 2, 1, 128), positions a tensor [250]")


@test_case(points=1, hidden=True)
def hidden_other_dtypes(rotate_pairs):
    rng = np.random.default_rng(1302)
    x = rng.normal(size=(2, 5, 8))
    positions = np.array([0, 2, 4, 6, 8], "int64")
    _check(rotate_pairs, x.astype("float64"), positions, "hidden case, float64 x of shape (2, 5, 8)")  # noqa: F821
    _check(rotate_pairs, keras.ops.convert_to_tensor(x.astype("float16")), positions,  # noqa: F821
           "hidden case, float16 x of shape (2, 5, 8)", atol=1e-2)

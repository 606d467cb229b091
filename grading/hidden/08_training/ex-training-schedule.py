"""Hidden case of ex-training-schedule: widths and warm-ups the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helper _check is in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_widths_and_warmups(my_schedule):
    _check(my_schedule, 256, 1000, [1, 500, 999, 1000, 1001, 4000, 50_000],  # noqa: F821 (the public check's)
           "Hidden case (d_model 256, warm-up 1000)")
    _check(my_schedule, 1024, 8000, [np.int64(0), 8000, 32_000, 300_000],  # noqa: F821 (a NumPy int among them)
           "Hidden case (d_model 1024, warm-up 8000)")

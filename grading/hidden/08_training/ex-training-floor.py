"""Hidden case of ex-training-floor: vocabularies and smoothings the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helpers (_number, _floor) are in
scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close

HIDDEN_CASES = [(4, 0.1), (1000, 0.05), (5, 0.5), (50_000, 0.2)]


@test_case(points=1, hidden=True)
def hidden_other_vocabularies(smoothing_floor, logit_gap):
    for V, eps in HIDDEN_CASES:
        got = _number(smoothing_floor, "smoothing_floor", V, eps)  # noqa: F821 (the public check's)
        expected = _floor(V, eps)  # noqa: F821
        close(got, expected, f"Hidden case, smoothing_floor({V}, {eps})", atol=1e-5, rtol=1e-4,
              hint="H(q') over the V tokens, whatever V and eps.")
        got = _number(logit_gap, "logit_gap", V, eps)  # noqa: F821
        expected = np.log((1 - eps + eps / V) / (eps / V))
        close(got, expected, f"Hidden case, logit_gap({V}, {eps})", atol=1e-4, rtol=1e-4,
              hint="At the optimum softmax(z) = q', whatever V and eps.")

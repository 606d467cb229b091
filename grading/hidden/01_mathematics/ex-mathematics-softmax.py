"""Hidden case of ex-mathematics-softmax: one axis of a 4-D array, a vector, and float32 logits of +-1000 with
blocked keys along axis 0.

Merged after the public check (mt.exercises.merged_source): _run, _reference and _blocked_reference are its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close


@test_case(points=1, hidden=True)
def hidden_other_shapes_and_axes(stable_softmax):
    rng = np.random.default_rng(13)
    for z, axis in [(rng.normal(scale=3.0, size=(2, 3, 4, 5)), 2), (rng.normal(size=7), -1),
                    (rng.normal(size=(3, 4, 2)), -2)]:
        got = _run(stable_softmax, z.copy(), axis=axis)  # noqa: F821 (the public check's)
        expected = _reference(z, axis=axis)  # noqa: F821
        close(got, expected, f"Hidden case: stable_softmax(z, axis={axis}) for z of shape {z.shape}", atol=1e-6,
              hint="Take the maximum and the sum along `axis`, with keepdims=True, for any number of axes.")
    z = np.array([[1000.0, -np.inf, 3.0], [999.0, -np.inf, -1000.0], [-np.inf, -np.inf, 2.0]], dtype="float32")
    got = _run(stable_softmax, z.copy(), axis=0)  # noqa: F821
    expected = _blocked_reference(z.astype("float64"), axis=0)  # noqa: F821
    close(got, expected, "Hidden case: stable_softmax(z, axis=0) for float32 logits with -inf entries", atol=1e-6,
          hint="Every slice along `axis` is one softmax; a slice of -inf only gets all-zero weights.")

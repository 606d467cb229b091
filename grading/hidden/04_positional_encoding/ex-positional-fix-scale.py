"""Hidden cases of ex-positional-fix-scale: other widths and batches; other limits of the initialiser.

Merged after the public check (mt.exercises.merged_source): _reference is its.
"""

import math

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, to_numpy


@test_case(points=1, hidden=True)
def hidden_other_widths_and_batches(fixed_embed):
    for seed, d_model, shape in [(40, 64, (3, 9)), (41, 200, (1, 4))]:
        rng = np.random.default_rng(seed)
        embeddings = rng.normal(scale=d_model**-0.5, size=(50, d_model)).astype("float32")
        tokens = rng.integers(0, 50, size=shape)
        case = f"Hidden case, d_model = {d_model}, tokens of shape {shape}"
        out = to_numpy(call(fixed_embed, "fixed_embed", tokens, embeddings), f"{case}: the result")
        expected = _reference(tokens, embeddings)  # noqa: F821 (the public check's)
        close(out, expected, f"{case}: the result", atol=1e-4,
              hint="The factor is sqrt(d_model) of the embeddings at hand: embeddings.shape[1].")


@test_case(points=1, hidden=True)
def hidden_other_limits(unit_rms_factor):
    for limit in (0.3, 2.0, 1e-3):
        what = f"Hidden case: unit_rms_factor({limit})"
        value = to_numpy(call(unit_rms_factor, "unit_rms_factor", limit), what)
        expected = math.sqrt(3) / limit
        close(value.reshape(()) if value.size == 1 else value, expected, what, rtol=1e-6, atol=0,
              hint="The factor follows from the mean square of the uniform distribution on [-limit, limit].")

"""Hidden cases of ex-positional-fix-scale: other widths and batches; the factor itself, at the public limits
and at others.

Merged after the public check (mt.exercises.merged_source): _reference, LIMITS and _factor are its.
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
def hidden_the_factor(unit_rms_factor):
    for limit in LIMITS + (0.3, 2.0, 1e-3):  # noqa: F821 (the public check's)
        what = f"unit_rms_factor({limit})"
        value = _factor(unit_rms_factor, limit, what)  # noqa: F821
        for wrong, message in [
            (math.sqrt(3) * limit, "multiplies by the limit: the factor must grow as the entries shrink"),
            (3 / limit, "is not the inverse of a root mean square: check where the square root goes"),
        ]:
            if np.isclose(value, wrong, rtol=1e-3):
                raise AssertionError(f"{what} {message}.")
        # rtol 1e-6: float32 arithmetic passes; an estimate from a sample (error ~ 1/sqrt(n)) does not.
        expected = math.sqrt(3) / limit  # (otter shows the failing line, the close() below)
        close(value, expected, what, rtol=1e-6, atol=0,
              hint="Compute the mean square of a uniform distribution on [-limit, limit] (an integral), "
                   "not of a sample; the factor divides its square root into 1.")

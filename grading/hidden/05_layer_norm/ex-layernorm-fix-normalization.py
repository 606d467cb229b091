"""Hidden case of ex-layernorm-fix-normalization: another width and another number of axes.

Merged after the public check (mt.exercises.merged_source), so its helpers (_new_layer, _output,
_ln) are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close


@test_case(points=1, hidden=True)
def hidden_another_width(AddAndNorm):
    rng = np.random.default_rng(5054)
    width = 24
    x = rng.normal(size=(2, 2, 3, width)).astype("float32")
    y = (rng.uniform(0.02, 2.0, size=(2, 2, 3, 1)) * rng.normal(size=(2, 2, 3, width)) - x).astype("float32")
    layer = _new_layer(AddAndNorm)  # noqa: F821 (the public check's)
    got = _output(layer, x, y)  # noqa: F821
    expected = _ln(x + y)  # noqa: F821
    close(got, expected, "Hidden case, on (2, 2, 3, 24) inputs: AddAndNorm()(x, sublayer_output)", atol=1e-5,
          hint="Layer norm over the last axis, whatever its width D and the number of axes before it.")
    count = sum(int(np.prod(w.shape)) for w in layer.trainable_weights)
    if count != 2 * width:
        raise AssertionError(
            f"Hidden case, on inputs of width D = {width}: your layer has {count} trainable numbers; layer norm "
            "has 2 D (gamma and beta, one of each per feature), whatever D is."
        )

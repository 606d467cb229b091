"""Hidden case of ex-layers-fix-missing-masks: another batch, with other lengths and pads.

Merged after the public check (mt.exercises.merged_source), so its helpers (_layers, _run,
_reference) are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close


@test_case(points=1, hidden=True)
def hidden_other_lengths(fixed_layers):
    layers = _layers()  # noqa: F821 (the public check's)
    source = np.array([[3, 1, 0, 0], [6, 6, 2, 8], [9, 0, 0, 0]])  # (B, S) = (3, 4)
    target = np.array([[1, 7, 3, 5, 2, 0, 0], [1, 2, 4, 4, 9, 10, 2], [1, 11, 2, 0, 0, 0, 0]])  # (3, 7)
    out = _run(fixed_layers, layers, source, target)  # noqa: F821
    expected = _reference(layers, source, target)  # noqa: F821
    real = (target != 0)[..., None]
    close(np.where(real, out, 0), np.where(real, expected, 0),
          "Hidden case, a batch of 3 with S = 4 and T = 7: the decoder output at the real target positions",
          atol=1e-5, hint="Build every mask from the tokens it is given, whatever their lengths.")

"""Hidden cases of ex-layers-prenorm-decoder: other sizes and masks, and which inputs the norms see.

Merged after the public check (mt.exercises.merged_source), so its helpers (_compare, _names) are
in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_sizes_and_masks(prenorm_decoder_layer):
    target = np.array([[1, 7, 3, 0], [1, 2, 0, 0], [1, 4, 4, 9]])  # (B, T) = (3, 4)
    source = np.array([[3, 1, 0, 0, 0, 0, 0], [6, 6, 2, 8, 5, 1, 0], [9, 0, 0, 0, 0, 0, 0]])  # (3, 7)
    _compare(prenorm_decoder_layer, 6064, target=target, source=source, d=12, h=3, dff=20)  # noqa: F821


@test_case(points=1, hidden=True)
def hidden_what_the_norms_see(cross_inputs_normalized):
    got = _names(cross_inputs_normalized)  # noqa: F821 (the public check's)
    if got != {"queries"}:
        raise AssertionError(f"{sorted(got)} is not the set of cross-attention's inputs that pass through a "
                             "norm of the decoder layer. Trace each input back: is it computed from the layer's "
                             "own stream z1, or is it the encoder's output C?")

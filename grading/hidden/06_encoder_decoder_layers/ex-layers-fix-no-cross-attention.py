"""Hidden case of ex-layers-fix-no-cross-attention: other widths, another number of heads, another batch.

Merged after the public check (mt.exercises.merged_source), so its helpers (_build, _copy,
_reference) are in scope.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy


@test_case(points=1, hidden=True)
def hidden_other_sizes(FixedDecoderLayer):
    d, h, dff = 12, 3, 20
    rng = np.random.default_rng(6060)
    target = np.array([[1, 7, 3, 0], [1, 2, 0, 0], [1, 4, 4, 9]])  # (B, T) = (3, 4)
    source = np.array([[3, 1, 0, 0, 0, 0, 0], [6, 6, 2, 8, 5, 1, 0], [9, 0, 0, 0, 0, 0, 0]])  # (3, 7)
    x = rng.normal(size=target.shape + (d,)).astype("float32")
    context = rng.normal(size=source.shape + (d,)).astype("float32")
    self_mask, cross_mask = mt.decoder_self_mask(target), mt.padding_mask(source)
    ref = _reference(6061, d, h, dff)  # noqa: F821 (the public check's)
    layer = _build(FixedDecoderLayer, x, context, self_mask, cross_mask, d=d, h=h, dff=dff)  # noqa: F821
    _copy(layer, ref)  # noqa: F821
    out = call(layer, "FixedDecoderLayer(12, 3, 20)", x, context, self_mask=self_mask, cross_mask=cross_mask,
               training=False)
    expected = to_numpy(ref(x, context, self_mask=self_mask, cross_mask=cross_mask, training=False), "")
    close(out, expected, "Hidden case, FixedDecoderLayer(12, 3, 20) on a batch of 3 (T = 4, S = 7)", atol=1e-4,
          hint="Build every sub-layer from the layer's arguments d_model, num_heads and dff.")

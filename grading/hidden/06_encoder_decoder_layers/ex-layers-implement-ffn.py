"""Hidden case of ex-layers-implement-ffn: other widths, and an input of two axes.

Merged after the public check (mt.exercises.merged_source), so its helpers (_reference, _student)
are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, to_numpy


@test_case(points=1, hidden=True)
def hidden_other_widths(MyFeedForward):
    d, dff = 12, 20
    ref = _reference(606, dropout=0.2, d=d, dff=dff)  # noqa: F821 (the public check's)
    x = np.random.default_rng(607).normal(size=(9, d)).astype("float32")  # (N, D): two axes
    layer = _student(MyFeedForward, ref, x, dropout=0.2, d=d, dff=dff)  # noqa: F821
    expected = to_numpy(ref(x, training=False), "")
    close(call(layer, "MyFeedForward(12, 20, dropout=0.2)", x, training=False), expected,
          "Hidden case, MyFeedForward(12, 20) on a (9, 12) input (training=False)", atol=1e-5,
          hint="The widths are the layer's arguments d_model and dff, whatever they are.")

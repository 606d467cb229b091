"""Hidden case of ex-model-fix-masks: another pad id, other lengths, another batch size.

Merged after the public check (mt.exercises.merged_source), so its helpers (_model, _student,
_name_the_mistake) are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close


@test_case(points=1, hidden=True)
def hidden_other_lengths_and_pad_id(fixed_logits):
    pad = 7
    model = _model(pad_id=pad)  # noqa: F821 (the public check's)
    source = np.array([[3, 0, pad], [12, pad, pad], [4, 4, 9]])  # (B, S) = (3, 3)
    target = np.array([[1, 5, 0, 2, 9, 11, pad, pad], [1, 2, pad, pad, pad, pad, pad, pad],
                       [1, 3, 3, 3, 3, 3, 3, 2]])  # (B, T) = (3, 8)
    got = _student(fixed_logits, model, source, target)  # noqa: F821
    _name_the_mistake(model, source, target, got)  # noqa: F821
    expected = model((source, target), training=False)
    close(got, expected, "Hidden case, pad_id 7, S = 3 and T = 8: your logits", atol=1e-5,
          hint="Build every mask from the token ids and model.pad_id, whatever the lengths.")

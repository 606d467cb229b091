"""Hidden cases of ex-gpt-fix-mask: another pad id, left padding, one position.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
The public cases always pass pad_id 0: these make sure lm_mask uses its argument.
"""

import numpy as np
import mintransformer as mt
from mintransformer.exercises.checking import call, refusing, to_numpy
from otter.test_files import test_case


def _hidden_check(lm_mask, tokens, pad_id, what):
    expected = np.asarray(mt.decoder_self_mask(tokens, pad_id)) != 0  # (B, 1, T, T)
    with refusing([mt.decoder_self_mask, mt.causal_mask, mt.padding_mask, mt.attends_causally], lm_mask, RULE):  # noqa: F821
        got = to_numpy(call(lm_mask, "lm_mask", tokens, pad_id), "lm_mask(...)")
    try:
        got = np.broadcast_to(got, expected.shape) != 0
    except ValueError:
        raise AssertionError(f"lm_mask({what}) has shape {got.shape}; it must broadcast to (B, 1, T, T).") from None
    if not np.array_equal(got, expected):
        raise AssertionError(f"lm_mask({what}) differs from the look-ahead AND padding mask (True where query t "
                             "may see key s: s <= t and token s is not padding, padding being the id pad_id).")


@test_case(points=1, hidden=True)
def hidden_another_pad_id(lm_mask):
    # pad_id 3; id 0 is a real token here. Row 1 is padded on the left.
    tokens = np.array([[0, 4, 0, 3, 3, 3], [3, 3, 7, 0, 5, 6], [1, 2, 0, 4, 5, 7]], "int32")
    _hidden_check(lm_mask, tokens, 3, "six positions, pad_id = 3")
    _hidden_check(lm_mask, np.array([[9], [2]], "int32"), 2, "one position, pad_id = 2")

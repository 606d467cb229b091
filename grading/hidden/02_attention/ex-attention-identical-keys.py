"""Hidden cases of ex-attention-identical-keys: other sizes, and a query that may see no key.

Merged after the public check (mt.exercises.merged_source), whose imports are in scope.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy


def _hidden_case(seed, T=4, S=7, d_v=3):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(T, 6)).astype("float32")
    k = np.tile(rng.normal(size=(1, 6)), (S, 1)).astype("float32")
    v = rng.normal(size=(S, d_v)).astype("float32")
    mask = rng.random((T, S)) > 0.5
    mask[:, 0] = True  # every query may see a key
    return q, k, v, mask


def _compare_with_mask(predict_identical_keys, q, k, v, mask, what, hint):
    expected = to_numpy(mt.scaled_dot_product_attention(q, k, v, mask=mask)[0], "")
    predicted = to_numpy(call(predict_identical_keys, "predict_identical_keys", v, mask), "Your prediction")
    close(predicted, expected, what, atol=1e-5, hint=hint)


@test_case(points=1, hidden=True)
def hidden_other_sizes(predict_identical_keys):
    q, k, v, mask = _hidden_case(31)
    _compare_with_mask(predict_identical_keys, q, k, v, mask,
                       "Hidden case, S = 7 keys, d_v = 3: your prediction with a mask",
                       "What does the mask do to a row of logits that are all equal?")
    row = to_numpy(mt.scaled_dot_product_attention(q, k, v)[0], "")[0]  # (d_v,): the same for every query
    predicted = to_numpy(call(predict_identical_keys, "predict_identical_keys", v, None), "Your prediction")
    one_row_each = predicted.ndim <= 2 and predicted.shape[-1:] == row.shape
    expected = np.broadcast_to(row, predicted.shape) if one_row_each else row
    close(predicted, expected, "Hidden case, S = 7 keys, d_v = 3: your prediction without a mask",
          atol=1e-5, hint="With identical keys every logit of a row is the same number.")


@test_case(points=1, hidden=True)
def hidden_a_query_that_may_see_no_key(predict_identical_keys):
    q, k, v, mask = _hidden_case(32, T=3, S=4, d_v=2)
    mask[1] = False
    _compare_with_mask(predict_identical_keys, q, k, v, mask,
                       "Hidden case, a query whose mask row is all False: your prediction with a mask",
                       "A query that may attend to no key gets output 0 from the book's attention (not NaN).")

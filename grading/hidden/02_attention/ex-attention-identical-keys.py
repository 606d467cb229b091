"""Hidden case of ex-attention-identical-keys: other sizes, and a query that may see no key.

Merged after the public check (mt.exercises.merged_source), whose imports are in scope.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy


@test_case(points=1, hidden=True)
def hidden_other_sizes_and_an_empty_row(predict_identical_keys):
    rng = np.random.default_rng(31)
    T, S, d_v = 4, 7, 3
    q = rng.normal(size=(T, 6)).astype("float32")
    k = np.tile(rng.normal(size=(1, 6)), (S, 1)).astype("float32")
    v = rng.normal(size=(S, d_v)).astype("float32")
    mask = rng.random((T, S)) > 0.5
    mask[0, :2], mask[2] = True, False  # query 2 may see no key
    expected = to_numpy(mt.scaled_dot_product_attention(q, k, v, mask=mask)[0], "")
    predicted = to_numpy(call(predict_identical_keys, "predict_identical_keys", v, mask), "Your prediction")
    close(predicted, expected, f"Hidden case, S = {S} keys, d_v = {d_v}: your prediction with a mask", atol=1e-5,
          hint="A query whose mask row is all False may attend to no key: its output is 0, as the package's.")
    row = to_numpy(mt.scaled_dot_product_attention(q, k, v)[0], "")[0]  # (d_v,): the same for every query
    predicted = to_numpy(call(predict_identical_keys, "predict_identical_keys", v, None), "Your prediction")
    one_row_each = predicted.ndim <= 2 and predicted.shape[-1:] == row.shape
    expected = np.broadcast_to(row, predicted.shape) if one_row_each else row
    close(predicted, expected, f"Hidden case, S = {S} keys, d_v = {d_v}: your prediction without a mask",
          atol=1e-5, hint="With identical keys every logit of a row is the same number.")

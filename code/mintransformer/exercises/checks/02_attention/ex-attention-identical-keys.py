"""Exercise: predict attention over identical keys, without computing any logit."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-attention-identical-keys"
points = 2


def _case(seed, mask):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(3, 4)).astype("float32")
    k = np.tile(rng.normal(size=(1, 4)), (5, 1)).astype("float32")
    v = rng.normal(size=(5, 2)).astype("float32")
    return q, k, v, mask


@test_case(points=1)
def without_mask(predict_identical_keys):
    q, k, v, mask = _case(0, None)
    expected = to_numpy(mt.scaled_dot_product_attention(q, k, v)[0], "")  # (T, d_v), all rows equal
    d_v = expected.shape[-1]
    predicted = to_numpy(call(predict_identical_keys, "predict_identical_keys", v, None), "Your prediction")
    if predicted.shape == (d_v,) or (predicted.ndim == 2 and predicted.shape[0] >= 1 and predicted.shape[1] == d_v):
        expected = np.broadcast_to(expected[0], predicted.shape)  # one row serves every query
    else:
        raise AssertionError(
            f"Your prediction without a mask has shape {predicted.shape}. Without a mask you cannot know "
            f"the number of queries T: return one row, of shape (d_v,) = ({d_v},) or (1, d_v) = (1, {d_v}), "
            "that serves every query."
        )
    close(predicted, expected,
          "Your prediction without a mask", atol=1e-5,
          hint="With identical keys every logit of a row is the same number: what is the softmax of a constant row?")


@test_case(points=1)
def with_mask(predict_identical_keys):
    mask = np.array([[True, True, False, False, False],
                     [True, True, True, True, True],
                     [False, False, False, False, True]])
    q, k, v, _ = _case(1, mask)
    expected = to_numpy(mt.scaled_dot_product_attention(q, k, v, mask=mask)[0], "")  # (T, d_v)
    predicted = to_numpy(call(predict_identical_keys, "predict_identical_keys", v, mask), "Your prediction")
    if predicted.shape in (expected.shape, expected.shape[-1:], (1, expected.shape[-1])) and like(
            np.broadcast_to(predicted, expected.shape), np.broadcast_to(v.mean(axis=0), expected.shape)):
        raise AssertionError(
            "With a mask, you returned the mean of all the values, the same for every query: the mask "
            "changes which keys each query can see. Return one row per query (T x d_v)."
        )
    close(predicted, expected,
          "Your prediction with a mask (one row per query, T x d_v)", atol=1e-5,
          hint="What does the mask do to a row of logits that are all equal?")

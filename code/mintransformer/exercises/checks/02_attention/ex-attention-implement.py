"""Exercise: scaled dot-product attention with a mask, written from its equation."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy

OK_FORMAT = False
name = "ex-attention-implement"
points = 3


def _inputs(seed, shape_q=(2, 3, 4, 8), shape_k=(2, 3, 5, 8), d_v=6):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=shape_q).astype("float32")
    k = rng.normal(size=shape_k).astype("float32")
    v = rng.normal(size=shape_k[:-1] + (d_v,)).astype("float32")
    return q, k, v


def _compare(my_attention, q, k, v, mask, case, hint=""):
    result = call(my_attention, "my_attention", q, k, v, mask=mask)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise AssertionError("`my_attention` must return a pair: (output, weights).")
    output, weights = result
    ref_output, ref_weights = (to_numpy(t, "") for t in mt.scaled_dot_product_attention(q, k, v, mask=mask))
    w = to_numpy(weights, "the weights")
    if w.shape == ref_weights.shape and mask is not None:
        keep = np.broadcast_to(to_numpy(mask, "mask") > 0, ref_weights.shape)
        if np.any(w[~keep] > 1e-3) and np.all(w[keep] < 1e-3):
            raise AssertionError(
                f"{case}: the keys the mask allows get weight 0 and the blocked ones get it all. "
                "In this book a mask is True where a query MAY attend (Keras's convention)."
            )
    unscaled = to_numpy(mt.scaled_dot_product_attention(q * np.sqrt(q.shape[-1]), k, v, mask=mask)[1], "")
    if mask is None and w.shape == unscaled.shape and np.allclose(w, unscaled, atol=1e-5):
        raise AssertionError(f"{case}: these are the weights of softmax(Q K^T), unscaled: divide by sqrt(d_k).")
    close(weights, ref_weights, f"{case}: the weights", atol=1e-5,
          hint=hint or "weights = softmax(Q K^T / sqrt(d_k)) along the last axis (over the keys).")
    close(output, ref_output, f"{case}: the output", atol=1e-5, hint="output = weights @ V.")


@test_case(points=1)
def without_mask(my_attention):
    q, k, v = _inputs(0)
    _compare(my_attention, q, k, v, None, "Without a mask")


@test_case(points=1)
def with_padding_and_look_ahead_masks(my_attention):
    q, k, v = _inputs(1, (2, 3, 5, 8), (2, 3, 5, 8))
    tokens = np.array([[5, 6, 7, 0, 0], [5, 6, 7, 8, 9]])
    _compare(my_attention, q, k, v, mt.padding_mask(tokens), "With a padding mask (B, 1, 1, S)")
    _compare(my_attention, q, k, v, mt.decoder_self_mask(tokens), "With a decoder mask (B, 1, T, T)")


@test_case(points=1)
def a_query_with_nothing_to_attend_to(my_attention):
    q, k, v = _inputs(2, (1, 1, 2, 4), (1, 1, 3, 4))
    mask = np.array([[True, True, False], [False, False, False]])  # query 1 may see no key
    _compare(my_attention, q, k, v, mask, "A query whose mask row is all False",
             hint="A query that may attend to no key gets weights 0 and output 0: not NaN "
             "(a softmax of -inf everywhere) and not uniform weights (a finite fill value alone).")

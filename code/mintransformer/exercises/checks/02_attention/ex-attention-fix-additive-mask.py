"""Exercise: find and fix the bug of the from-scratch TensorFlow tutorial's masking."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy

OK_FORMAT = False
name = "ex-attention-fix-additive-mask"
points = 3


def _qkv(seed, t, s):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(2, 1, t, 8)).astype("float32")
    k = rng.normal(size=(2, 1, s, 8)).astype("float32")
    v = rng.normal(size=(2, 1, s, 3)).astype("float32")
    return q, k, v


def _check(fixed_attention, q, k, v, mask, case, hint):
    result = call(fixed_attention, "fixed_attention", q, k, v, mask)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise AssertionError("`fixed_attention` must still return (output, weights).")
    ref_out, ref_w = mt.scaled_dot_product_attention(q, k, v, mask=mask)
    w = to_numpy(result[1], "the weights")
    keep = np.broadcast_to(to_numpy(mask, "mask") > 0, to_numpy(ref_w, "").shape)
    if w.shape == keep.shape and np.all(w[keep] < 1e-3) and np.any(w[~keep] > 1e-3):
        raise AssertionError(
            f"{case}: still the bug. The mask is True where a query may attend, so adding "
            "mask * -1e9 pushes down exactly the keys that should be kept."
        )
    close(result[1], ref_w, f"{case}: the weights", atol=1e-5, hint=hint)
    close(result[0], ref_out, f"{case}: the output", atol=1e-5, hint=hint)


@test_case(points=1)
def padding_mask(fixed_attention):
    tokens = np.array([[4, 5, 0, 0], [4, 5, 6, 7]])
    q, k, v = _qkv(0, 3, 4)
    _check(fixed_attention, q, k, v, mt.padding_mask(tokens), "With a padding mask",
           "Blocked keys must get weight exactly 0.")


@test_case(points=1)
def look_ahead_mask(fixed_attention):
    tokens = np.array([[4, 5, 6, 0], [4, 5, 6, 7]])
    q, k, v = _qkv(1, 4, 4)
    _check(fixed_attention, q, k, v, mt.decoder_self_mask(tokens), "With a decoder mask",
           "Query t may see keys 0..t that are not padding.")


@test_case(points=1)
def nothing_to_attend_to(fixed_attention):
    q, k, v = _qkv(2, 2, 3)
    mask = np.array([[True, False, False], [False, False, False]])
    _check(fixed_attention, q, k, v, mask, "A query whose mask row is all False",
           "With only a large negative number added, a row with no allowed key becomes uniform "
           "(every logit is about -1e9): it must give weights 0 and output 0, as the package does.")

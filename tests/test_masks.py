"""The mask helpers: literal values, dtypes and shapes (True = may attend)."""

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops


def as_numpy(x):
    return ops.convert_to_numpy(x)


def test_padding_mask_docstring_example():
    mask = as_numpy(mt.padding_mask(np.array([[7, 4, 0]])))
    assert mask.dtype == bool
    assert mask.shape == (1, 1, 1, 3)
    np.testing.assert_array_equal(mask, [[[[True, True, False]]]])


def test_padding_mask_batch_and_pad_id():
    tokens = np.array([[5, 3, 1, 1], [2, 1, 1, 1]])
    mask = as_numpy(mt.padding_mask(tokens, pad_id=1))
    assert mask.shape == (2, 1, 1, 4) and mask.dtype == bool
    np.testing.assert_array_equal(mask[:, 0, 0], [[True, True, False, False],
                                                  [True, False, False, False]])


def test_causal_mask_docstring_example():
    mask = as_numpy(mt.causal_mask(3))
    assert mask.dtype == bool
    assert mask.shape == (3, 3)
    np.testing.assert_array_equal(mask, [[True, False, False],
                                         [True, True, False],
                                         [True, True, True]])


def test_causal_mask_is_lower_triangle_and_accepts_a_tensor_length():
    np.testing.assert_array_equal(as_numpy(mt.causal_mask(6)), np.tril(np.ones((6, 6), bool)))
    length = ops.shape(ops.zeros((2, 4)))[1]
    np.testing.assert_array_equal(as_numpy(mt.causal_mask(ops.convert_to_tensor(length))),
                                  np.tril(np.ones((4, 4), bool)))


def test_decoder_self_mask_is_causal_and_padding():
    tokens = np.array([[4, 9, 2, 0], [6, 0, 0, 0]])
    mask = as_numpy(mt.decoder_self_mask(tokens))
    assert mask.dtype == bool
    assert mask.shape == (2, 1, 4, 4)
    np.testing.assert_array_equal(mask[0, 0], [[True, False, False, False],
                                               [True, True, False, False],
                                               [True, True, True, False],
                                               [True, True, True, False]])
    np.testing.assert_array_equal(mask[1, 0], [[True, False, False, False]] * 4)
    # Exactly the AND of the two helpers, broadcast.
    expected = np.tril(np.ones((4, 4), bool)) & (tokens != 0)[:, None, None, :]
    np.testing.assert_array_equal(mask, expected)


def test_masks_broadcast_to_attention_logits():
    b, h, t, s = 2, 3, 4, 5
    logits_shape = (b, h, t, s)
    pad = as_numpy(mt.padding_mask(np.ones((b, s))))
    assert np.broadcast_shapes(pad.shape, logits_shape) == logits_shape
    causal = as_numpy(mt.causal_mask(t))
    assert np.broadcast_shapes(causal.shape, (b, h, t, t)) == (b, h, t, t)
    self_mask = as_numpy(mt.decoder_self_mask(np.ones((b, t))))
    assert np.broadcast_shapes(self_mask.shape, (b, h, t, t)) == (b, h, t, t)


def test_masks_on_symbolic_tokens_keep_unknown_lengths():
    tokens = keras.Input((None,), dtype="int32")
    assert tuple(mt.padding_mask(tokens).shape) == (None, 1, 1, None)


def test_decoder_self_mask_on_symbolic_tokens_of_unknown_length():
    tokens = keras.Input((None,), dtype="int32")
    assert tuple(mt.decoder_self_mask(tokens).shape) == (None, 1, None, None)

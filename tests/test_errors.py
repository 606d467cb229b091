"""Bad input fails early with a ValueError that names the offending values."""

import re

import keras
import mintransformer as mt
import numpy as np
import pytest


def test_d_model_not_divisible_by_num_heads():
    with pytest.raises(ValueError, match=r"d_model=10.*num_heads=3"):
        mt.MultiHeadAttention(d_model=10, num_heads=3)
    with pytest.raises(ValueError, match=r"d_model=10.*num_heads=3"):
        mt.MinTransformer(num_layers=1, d_model=10, num_heads=3, dff=8, input_vocab_size=5,
                          target_vocab_size=5, max_length=4)


def test_split_heads_with_a_width_that_does_not_divide():
    with pytest.raises(ValueError, match=r"10.*num_heads=3"):
        mt.split_heads(np.zeros((1, 2, 10), "float32"), 3)


def test_sequence_longer_than_max_length():
    layer = mt.PositionalEmbedding(vocab_size=11, d_model=8, max_length=4)
    with pytest.raises(ValueError, match=r"length 6 .*max_length=4"):
        layer(np.ones((2, 6), "int32"))
    model = mt.MinTransformer(num_layers=1, d_model=8, num_heads=2, dff=8, input_vocab_size=11,
                              target_vocab_size=11, max_length=4)
    with pytest.raises(ValueError, match=r"length 7 .*max_length=4"):
        model((np.ones((1, 7), "int32"), np.ones((1, 3), "int32")))  # source too long
    with pytest.raises(ValueError, match=r"length 5 .*max_length=4"):
        model((np.ones((1, 3), "int32"), np.ones((1, 5), "int32")))  # target too long


def test_mask_that_does_not_broadcast_to_the_logits():
    q = np.zeros((2, 2, 5, 4), "float32")
    k = np.zeros((2, 2, 6, 4), "float32")
    bad = np.ones((2, 1, 1, 7), bool)  # 7 keys, but S = 6
    with pytest.raises(ValueError, match=re.escape("(2, 1, 1, 7)") + ".*"
                       + re.escape("(2, 2, 5, 6)")):
        mt.scaled_dot_product_attention(q, k, k, mask=bad)
    # The same check through the layer, with the masks the helpers build.
    mha = mt.MultiHeadAttention(d_model=8, num_heads=2)
    x = np.zeros((2, 5, 8), "float32")
    with pytest.raises(ValueError, match=re.escape("(1, 1, 1, 3)") + ".*"
                       + re.escape("(2, 2, 5, 5)")):
        mha(x, x, x, attention_mask=mt.padding_mask(np.ones((1, 3))))
    with pytest.raises(ValueError, match=re.escape("(4, 4)") + ".*" + re.escape("(2, 2, 5, 5)")):
        mha(x, x, x, attention_mask=mt.causal_mask(4))


def test_mask_with_too_many_dimensions():
    q = np.zeros((2, 5, 4), "float32")
    with pytest.raises(ValueError, match=re.escape("(1, 2, 1, 5)") + ".*"
                       + re.escape("(2, 5, 5)")):
        mt.scaled_dot_product_attention(q, q, q, mask=np.ones((1, 2, 1, 5), bool))


def test_queries_and_keys_of_different_depth():
    q = np.zeros((2, 5, 8), "float32")
    k = np.zeros((2, 6, 4), "float32")
    with pytest.raises(ValueError, match=r"d_k=8.*d_k=4"):
        mt.scaled_dot_product_attention(q, k, k)


def test_shared_embeddings_need_one_vocabulary():
    with pytest.raises(ValueError, match=r"input_vocab_size=11.*target_vocab_size=13"):
        mt.MinTransformer(num_layers=1, d_model=8, num_heads=2, dff=8, input_vocab_size=11,
                          target_vocab_size=13, max_length=4, share_embeddings=True)


def test_odd_positional_depth():
    with pytest.raises(ValueError, match=r"depth=7"):
        mt.positional_encoding(5, 7)


def test_errors_are_raised_when_building_symbolically_too():
    tokens = keras.Input((9,), dtype="int32")
    with pytest.raises(ValueError, match=r"length 9 .*max_length=4"):
        mt.PositionalEmbedding(11, 8, max_length=4)(tokens)
    x = keras.Input((5, 8))
    with pytest.raises(ValueError, match=re.escape("(3, 3)") + ".*"
                       + re.escape("(None, 2, 5, 5)")):
        mt.MultiHeadAttention(8, 2)(x, x, x, attention_mask=mt.causal_mask(3))

"""Chapter 3's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import keras
import numpy as np
import pytest
from keras import ops

import mintransformer as mt

CHAPTER = "03_multihead_attention"


def check(label, **env):
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,names", [
    ("ex-multihead-shapes", ["shapes"]),
    ("ex-multihead-split-merge", ["my_split_heads", "my_merge_heads"]),
    ("ex-multihead-sum", ["head_terms"]),
    ("ex-multihead-params", ["params_base", "params_key_dim_mistake", "params_six_heads"]),
    ("ex-multihead-causal", ["copy_to_keras", "keras_decoder_mask"]),
    ("ex-multihead-fix-argument-order", ["fixed_cross_attention"]),
])
def test_blank_answers_fail_and_say_so(label, names):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text, text
    placeholders = {name: ... if name.startswith(("params", "shapes")) else stub for name in names}
    passed, text = check(label, **placeholders)
    assert not passed and ("still `...`" in text or "NotImplementedError" in text), text


# ex-multihead-shapes

RIGHT_SHAPES = {
    "query projection": (2, 7, 512), "key projection": (2, 9, 512), "value projection": (2, 9, 512),
    "split queries": (2, 8, 7, 64), "split keys": (2, 8, 9, 64), "split values": (2, 8, 9, 64),
    "logits": (2, 8, 7, 9), "weights": (2, 8, 7, 9), "head outputs": (2, 8, 7, 64),
    "merged": (2, 7, 512), "output": (2, 7, 512),
}


def test_shapes_accepts_lists_and_rejects_an_unfilled_entry():
    passed, _ = check("ex-multihead-shapes", shapes={k: list(v) for k, v in RIGHT_SHAPES.items()})
    assert passed
    passed, text = check("ex-multihead-shapes", shapes=dict(RIGHT_SHAPES, logits=...))
    assert not passed and 'shapes["logits"]` is still `...`' in text


@pytest.mark.parametrize("key,wrong,message", [
    ("split queries", (2, 7, 8, 64), "before the transpose"),
    ("split keys", (2, 8, 9, 512), "d_k = d_model / h"),
    ("split keys", (2, 8, 7, 64), "S = 9"),
    ("logits", (2, 8, 9, 7), "not the reverse"),
    ("weights", (2, 7, 9), "no head axis"),
    ("output", (2, 9, 512), "the keys' length"),  # the head-splitting walkthrough's (1, 5, 256)
    ("head outputs", (2, 8, 9, 64), "the keys' length"),
    ("merged", (2, 7, 8, 64), "still has a head axis"),
])
def test_shapes_names_the_mistake(key, wrong, message):
    passed, text = check("ex-multihead-shapes", shapes=dict(RIGHT_SHAPES, **{key: wrong}))
    assert not passed and message in text, text


# ex-multihead-split-merge

def _split(kind):
    def split(x, num_heads):
        B, T, D = x.shape
        d_k = D // num_heads
        if kind == "plain":
            return np.reshape(x, (B, num_heads, T, d_k))  # right shape, wrong numbers
        if kind == "no transpose":
            return np.reshape(x, (B, T, num_heads, d_k))
        if kind == "strided":
            return np.reshape(x, (B, T, d_k, num_heads)).transpose(0, 3, 1, 2)
        raise ValueError(kind)
    return split


def _merge(kind):
    def merge(x):
        B, h, T, d_k = x.shape
        if kind == "plain":
            return np.reshape(x, (B, T, h * d_k))
        if kind == "no reshape":
            return np.transpose(x, (0, 2, 1, 3))
        if kind == "interleaved":
            return np.transpose(x, (0, 2, 3, 1)).reshape(B, T, h * d_k)
        raise ValueError(kind)
    return merge


@pytest.mark.parametrize("kind,message", [
    ("plain", "plain reshape to (B, h, T, d_k)"),
    ("no transpose", "permutation (0, 2, 1, 3)"),
    ("strided", "i + h, i + 2h"),
])
def test_split_names_the_mistake(kind, message):
    passed, text = check("ex-multihead-split-merge", my_split_heads=_split(kind), my_merge_heads=mt.merge_heads)
    assert not passed and message in text, text


@pytest.mark.parametrize("kind,message", [
    ("plain", "plain reshape to (B, T, D)"),
    ("no reshape", "concatenate the heads"),
    ("interleaved", "interleaves the heads"),
])
def test_merge_names_the_mistake(kind, message):
    passed, text = check("ex-multihead-split-merge", my_split_heads=mt.split_heads, my_merge_heads=_merge(kind))
    assert not passed and message in text, text


def test_split_merge_accepts_the_package():
    passed, text = check("ex-multihead-split-merge", my_split_heads=mt.split_heads, my_merge_heads=mt.merge_heads)
    assert passed, text


# ex-multihead-sum

def _head_terms(bias_in_each=False, swap_key_value=False, no_biases=False, columns_of_wo=None):
    def head_terms(layer, query, key, value):
        if swap_key_value:
            key, value = value, key
        d_k = layer.d_k
        (wq, bq), (wk, bk), (wv, bv), (wo, bo) = (
            [ops.convert_to_numpy(w) for w in d.weights] for d in (layer.wq, layer.wk, layer.wv, layer.wo))
        if no_biases:
            bq, bk, bv = 0 * bq, 0 * bk, 0 * bv
        terms = []
        for i in range(layer.num_heads):
            c = slice(i * d_k, (i + 1) * d_k)
            head, _ = mt.scaled_dot_product_attention(query @ wq[:, c] + bq[c], key @ wk[:, c] + bk[c],
                                                      value @ wv[:, c] + bv[c])
            head = ops.convert_to_numpy(head)
            term = head @ {None: wo[c, :], "transposed": wo[:, c].T, "as is": wo[:, c]}[columns_of_wo]
            terms.append(term + bo if bias_in_each else term)
        return np.stack(terms)
    return head_terms


@pytest.mark.parametrize("kwargs,message", [
    ({}, None),
    ({"bias_in_each": True}, "b^O is added once"),
    ({"swap_key_value": True}, "`value` input for the keys"),
    ({"no_biases": True}, "leave out the biases"),
    ({"columns_of_wo": "transposed"}, "a block of columns of W^O, transposed"),
    ({"columns_of_wo": "as is"}, "Check the shapes"),  # (B, T, d_k) @ (D, d_k) fails
])
def test_sum_names_the_mistake(kwargs, message):
    passed, text = check("ex-multihead-sum", head_terms=_head_terms(**kwargs))
    if message is None:
        assert passed, text
    else:
        assert not passed and message in text, text


# ex-multihead-params

RIGHT_COUNTS = {"params_base": 18_911_232, "params_key_dim_mistake": 151_225_344, "params_six_heads": 1_046_522}


@pytest.mark.parametrize("name,wrong,message", [
    ("params_base", 1_050_624, "ONE attention sub-layer"),
    ("params_base", 18 * 4 * 512**2, "leaves out the biases"),
    ("params_base", 12 * 1_050_624, "encoder-decoder attention"),
    ("params_base", 18 * 3 * (512**2 + 512), "counts three projections"),
    ("params_key_dim_mistake", 8_401_408, "ONE attention sub-layer"),
    ("params_key_dim_mistake", 18_911_232, "key_dim = d_model / h = 64"),
    ("params_six_heads", 1_050_624, "6 x 85 = 510"),
    ("params_six_heads", 18 * 1_046_522, "ONE layer"),
    ("params_six_heads", 4 * 512 * 510, "leaves out the biases"),
    ("params_six_heads", "many", "must be a number"),
])
def test_params_names_the_mistake(name, wrong, message):
    passed, text = check("ex-multihead-params", **dict(RIGHT_COUNTS, **{name: wrong}))
    assert not passed and message in text, text


def test_params_accepts_the_counts():
    passed, text = check("ex-multihead-params", **RIGHT_COUNTS)
    assert passed, text


# ex-multihead-causal

def _copy(transpose=False, swap_key_value=False, skip=False):
    def copy_to_keras(ours, theirs):
        if skip:
            return
        D, h, d_k = ours.d_model, ours.num_heads, ours.d_k
        sources = [ours.wq, ours.wv, ours.wk] if swap_key_value else [ours.wq, ours.wk, ours.wv]
        for mine, dense in zip(sources, [theirs.query_dense, theirs.key_dense, theirs.value_dense]):
            kernel = ops.transpose(mine.kernel) if transpose else mine.kernel
            dense.kernel.assign(ops.reshape(kernel, (D, h, d_k)))
            dense.bias.assign(ops.reshape(mine.bias, (h, d_k)))
        theirs.output_dense.kernel.assign(ops.reshape(ours.wo.kernel, (h, d_k, D)))
        theirs.output_dense.bias.assign(ours.wo.bias)
    return copy_to_keras


def _keras_mask(kind):
    def keras_decoder_mask(tokens):
        T = tokens.shape[1]
        causal = np.broadcast_to(np.tril(np.ones((T, T), bool)), (len(tokens), T, T))
        padding = np.broadcast_to((tokens != 0)[:, None, :], (len(tokens), T, T))
        return {"right": causal & padding, "ours": mt.decoder_self_mask(tokens), "causal": causal,
                "padding": padding, "or": causal | padding, "inverted": ~(causal & padding)}[kind]
    return keras_decoder_mask


@pytest.mark.parametrize("copy,mask,message", [
    (_copy(), "right", None),
    (_copy(transpose=True), "right", "transposed, then reshaped"),
    (_copy(swap_key_value=True), "right", "holds ours.wv's kernel"),
    (_copy(skip=True), "right", "theirs.query_dense.kernel is wrong"),
    (_copy(), "ours", "drop axis 1"),
    (_copy(), "causal", "look-ahead mask only"),
    (_copy(), "padding", "blocks the padding only"),
    (_copy(), "or", "combine them with AND"),
    (_copy(), "inverted", "True where a key is blocked"),
])
def test_causal_names_the_mistake(copy, mask, message):
    passed, text = check("ex-multihead-causal", copy_to_keras=copy, keras_decoder_mask=_keras_mask(mask))
    if message is None:
        assert passed, text
    else:
        assert not passed and message in text, text


# ex-multihead-fix-argument-order

def the_tutorials_call(att, x, enc_output, mask):
    return att(x, enc_output, enc_output, mask)  # the paper's order into a (v, k, q) layer


def test_fix_rejects_the_tutorials_call():
    passed, text = check("ex-multihead-fix-argument-order", fixed_cross_attention=the_tutorials_call)
    assert not passed and "Still the bug" in text, text
    assert "must be passed as q" in text, text  # S != T: the call fails, and the check says why
    assert "with S = T = 5 the tutorial's call runs" in text, text  # S = T: silently wrong


@pytest.mark.parametrize("wrong,message", [
    (lambda att, x, enc, mask: att(x, x, x, mask), "keys k"),  # self-attention
    (lambda att, x, enc, mask: att(enc, enc, x, None), "no mask"),
    (lambda att, x, enc, mask: att(enc, enc, enc, mask), "queries q"),
    (lambda att, x, enc, mask: np.zeros((2, x.shape[1], 16)), "never calls the layer"),
])
def test_fix_names_the_other_mistakes(wrong, message):
    passed, text = check("ex-multihead-fix-argument-order", fixed_cross_attention=wrong)
    assert not passed and message in text, text


def test_fix_accepts_positional_and_keyword_calls():
    for right in (lambda att, x, enc, mask: att(enc, enc, x, mask),
                  lambda att, x, enc, mask: att(q=x, k=enc, v=enc, mask=mask)):
        passed, text = check("ex-multihead-fix-argument-order", fixed_cross_attention=right)
        assert passed, text

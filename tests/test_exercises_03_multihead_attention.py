"""Chapter 3's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import keras
import numpy as np
import pytest
from keras import ops

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught, hidden_path

CHAPTER = "03_multihead_attention"


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-multihead-params has per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def graded(label, **env):
    """The check as the instructor grades it: public and hidden cases (grading/hidden/)."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=hidden_path(CHAPTER, label))
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,names", [
    ("ex-multihead-shapes", ["shapes"]),
    ("ex-multihead-split-merge", ["fold_heads", "unfold_heads"]),
    ("ex-multihead-sum", ["head_terms"]),
    ("ex-multihead-params", ["params_big", "params_big_key_dim_mistake", "params_six_heads"]),
    ("ex-multihead-causal", ["copy_from_keras", "keras_decoder_mask"]),
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
    passed, _ = graded("ex-multihead-shapes", shapes={k: list(v) for k, v in RIGHT_SHAPES.items()})
    assert passed
    passed, text = graded("ex-multihead-shapes", shapes=dict(RIGHT_SHAPES, logits=...))
    assert not passed and 'shapes["logits"]` is still `...`' in text
    passed, text = graded("ex-multihead-shapes", shapes=dict(RIGHT_SHAPES, logits="2, 8, 7, 9"))
    assert not passed and "must be a tuple of integers, like (1, 2, 3)" in text, text


@pytest.mark.parametrize("key,wrong,message", [
    ("split queries", (2, 7, 8, 64), "before the transpose"),
    ("split keys", (2, 8, 9, 512), "d_k = d_model / h"),
    ("split keys", (2, 8, 7, 64), "the encoder's length"),
    ("logits", (2, 8, 9, 7), "which of the last two axes holds the queries"),
    ("weights", (2, 7, 9), "no head axis"),
    ("output", (2, 9, 512), "the keys' length"),  # the head-splitting walkthrough's (1, 5, 256)
    ("head outputs", (2, 8, 9, 64), "the keys' length"),
    ("merged", (2, 7, 8, 64), "still has a head axis"),
])
def test_shapes_names_the_mistake(key, wrong, message):
    passed, text = graded("ex-multihead-shapes", shapes=dict(RIGHT_SHAPES, **{key: wrong}))
    assert not passed and message in text, text
    assert_hides(text, RIGHT_SHAPES[key])


@pytest.mark.parametrize("key", sorted(RIGHT_SHAPES))
@pytest.mark.parametrize("wrong", [(1, 2, 3), (2, 8, 3, 3), (2, 7, 9, 512)])
def test_shapes_never_gives_a_shape_away(key, wrong):
    passed, text = graded("ex-multihead-shapes", shapes=dict(RIGHT_SHAPES, **{key: wrong}))
    assert not passed, text
    assert_hides(text, RIGHT_SHAPES[key])


# ex-multihead-split-merge

def _fold(kind):
    def fold_heads(x, num_heads):
        B, T, D = x.shape
        d_k = D // num_heads
        if kind == "plain":
            return np.reshape(x, (B * num_heads, T, d_k))  # right shape, wrong numbers
        if kind == "no fold":
            return np.reshape(x, (B, T, num_heads, d_k)).transpose(0, 2, 1, 3)
        if kind == "head-major":
            return np.reshape(x, (B, T, num_heads, d_k)).transpose(2, 0, 1, 3).reshape(B * num_heads, T, d_k)
        if kind == "strided":
            return np.reshape(x, (B, T, d_k, num_heads)).transpose(0, 3, 1, 2).reshape(B * num_heads, T, d_k)
        if kind == "package":  # the exercise says not to
            return ops.reshape(mt.split_heads(x, num_heads), (B * num_heads, T, d_k))
        raise ValueError(kind)
    return fold_heads


def _unfold(kind):
    def unfold_heads(x, num_heads):
        Bh, T, d_k = x.shape
        B, D = Bh // num_heads, num_heads * d_k
        if kind == "plain":
            return np.reshape(x, (B, T, D))
        if kind == "no reshape":
            return np.reshape(x, (B, num_heads, T, d_k)).transpose(0, 2, 1, 3)
        if kind == "head-major":
            return np.reshape(x, (num_heads, B, T, d_k)).transpose(1, 2, 0, 3).reshape(B, T, D)
        if kind == "interleaved":
            return np.reshape(x, (B, num_heads, T, d_k)).transpose(0, 2, 3, 1).reshape(B, T, D)
        if kind == "package":
            return mt.merge_heads(ops.reshape(x, (B, num_heads, T, d_k)))
        raise ValueError(kind)
    return unfold_heads


def _fold_right(x, num_heads):
    B, T, D = x.shape
    return ops.reshape(ops.transpose(ops.reshape(x, (B, T, num_heads, D // num_heads)), (0, 2, 1, 3)),
                       (B * num_heads, T, D // num_heads))


def _unfold_right(x, num_heads):
    Bh, T, d_k = x.shape
    x = ops.transpose(ops.reshape(x, (Bh // num_heads, num_heads, T, d_k)), (0, 2, 1, 3))
    return ops.reshape(x, (Bh // num_heads, T, num_heads * d_k))


@pytest.mark.parametrize("kind,message", [
    ("plain", "a plain reshape: the right shape, the wrong numbers"),
    ("no fold", "split but not folded"),
    ("head-major", "row i B + b holds head i of sequence b"),
    ("strided", "i + h, i + 2h"),
    ("package", "do not call the package's split_heads or merge_heads"),
])
def test_fold_names_the_mistake(kind, message):
    passed, text = check("ex-multihead-split-merge", fold_heads=_fold(kind), unfold_heads=_unfold_right)
    assert not passed and message in text, text


@pytest.mark.parametrize("kind,message", [
    ("plain", "plain reshape to (B, T, D)"),
    ("no reshape", "concatenate the heads"),
    ("head-major", "reads row i B + b as head i of sequence b"),
    ("interleaved", "interleaves the heads"),
    ("package", "do not call the package's split_heads or merge_heads"),
])
def test_unfold_names_the_mistake(kind, message):
    passed, text = check("ex-multihead-split-merge", fold_heads=_fold_right, unfold_heads=_unfold(kind))
    assert not passed and message in text, text


def test_fold_refuses_a_name_bound_to_the_package_function():
    """`from mintransformer import split_heads` in the notebook is refused too, and restored after."""
    namespace = {"split_heads": mt.split_heads, "np": np}
    exec("def fold_heads(x, h):\n"
         "    B, T, D = x.shape\n"
         "    return np.reshape(np.asarray(split_heads(x, h)), (B * h, T, D // h))\n", namespace)
    passed, text = check("ex-multihead-split-merge", fold_heads=namespace["fold_heads"], unfold_heads=_unfold_right)
    assert not passed and "do not call the package's split_heads" in text, text
    assert namespace["split_heads"] is mt.split_heads and mt.multihead.split_heads is mt.split_heads


def _fold_np(x, num_heads):  # NumPy float64: cut the features into h blocks, stack them after the batch
    x = np.asarray(x, "float64")
    B, T, D = x.shape
    return np.stack(np.split(x, num_heads, axis=-1), axis=1).reshape(B * num_heads, T, D // num_heads)


def _unfold_np(x, num_heads):
    Bh, T, d_k = x.shape
    x = np.asarray(x, "float64").reshape(Bh // num_heads, num_heads, T, d_k)
    return np.concatenate(list(np.moveaxis(x, 1, 0)), axis=-1)


def _fold_einsum(x, num_heads):
    B, T, D = x.shape
    return np.einsum("bthd->bhtd", np.reshape(x, (B, T, num_heads, D // num_heads))).reshape(B * num_heads, T, -1)


@pytest.mark.parametrize("fold,unfold", [
    (_fold_right, _unfold_right),
    (_fold_np, _unfold_np),
    (_fold_einsum, _unfold_np),
    (lambda x, h: _fold_np(x, h).tolist(), lambda x, h: _unfold_np(x, h).tolist()),  # nested lists
])
def test_split_merge_accepts_correct_answers(fold, unfold):
    passed, text = graded("ex-multihead-split-merge", fold_heads=fold, unfold_heads=unfold)
    assert passed, text


# ex-multihead-sum

def _head_terms(bias_in_each=False, swap_key_value=False, no_biases=False, columns_of_wo=None,
                scale_by_d_model=False, strided=False, summed=None):
    def head_terms(layer, query, key, value):
        if swap_key_value:
            key, value = value, key
        d_k = layer.d_k
        (wq, bq), (wk, bk), (wv, bv), (wo, bo) = (
            [ops.convert_to_numpy(w) for w in d.weights] for d in (layer.wq, layer.wk, layer.wv, layer.wo))
        if no_biases:
            bq, bk, bv = 0 * bq, 0 * bk, 0 * bv
        terms = []
        h = layer.num_heads
        for i in range(h):
            c = slice(i, None, h) if strided else slice(i * d_k, (i + 1) * d_k)
            q, k, v = query @ wq[:, c] + bq[c], key @ wk[:, c] + bk[c], value @ wv[:, c] + bv[c]
            if scale_by_d_model:  # the scores divided by sqrt(D) instead of sqrt(d_k)
                head = _softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(layer.d_model)) @ v
            else:
                head = ops.convert_to_numpy(mt.scaled_dot_product_attention(q, k, v)[0])
            term = head @ {None: wo[c, :], "transposed": wo[:, c].T, "as is": wo[:, c]}[columns_of_wo]
            terms.append(term + bo if bias_in_each else term)
        if summed == "terms":
            return np.sum(terms, axis=0)
        if summed == "output":
            return np.sum(terms, axis=0) + bo
        return np.stack(terms)
    return head_terms


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _head_terms_float64(layer, query, key, value):
    """A correct answer in float64 NumPy, with its own softmax, returning a list of h arrays."""
    h, d_k = layer.num_heads, layer.d_k
    (wq, bq), (wk, bk), (wv, bv), (wo, _) = (
        [np.asarray(ops.convert_to_numpy(w), "float64") for w in d.weights]
        for d in (layer.wq, layer.wk, layer.wv, layer.wo))
    query, key, value = (np.asarray(t, "float64") for t in (query, key, value))
    terms = []
    for i in range(h):
        c = slice(i * d_k, (i + 1) * d_k)
        q, k, v = query @ wq[:, c] + bq[c], key @ wk[:, c] + bk[c], value @ wv[:, c] + bv[c]
        weights = _softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k))
        terms.append(weights @ v @ wo[c, :])
    return terms


@pytest.mark.parametrize("kwargs,message", [
    ({}, None),
    ({"bias_in_each": True}, "b^O is added once"),
    ({"swap_key_value": True}, "`value` input for the keys"),
    ({"no_biases": True}, "leave out the biases"),
    ({"columns_of_wo": "transposed"}, "a block of columns of W^O, transposed"),
    ({"columns_of_wo": "as is"}, "Check the shapes"),  # (B, T, d_k) @ (D, d_k) fails
    ({"scale_by_d_model": True}, "divide the scores by sqrt(d_model)"),
    ({"strided": True}, "i + h, i + 2h"),
    ({"summed": "terms"}, "return the h terms, not their sum"),
    ({"summed": "output"}, "returns the layer's output"),
])
def test_sum_names_the_mistake(kwargs, message):
    passed, text = check("ex-multihead-sum", head_terms=_head_terms(**kwargs))
    if message is None:
        assert passed, text
    else:
        assert not passed and message in text, text


@pytest.mark.parametrize("how", ["split_heads", "the layer's project_key_value"])
def test_sum_refuses_the_package_split(how):
    def head_terms(layer, query, key, value):
        h = layer.num_heads
        if how == "split_heads":
            k = mt.split_heads(layer.wk(key), h)
        else:
            k, _ = layer.project_key_value(key, value)
        return _head_terms()(layer, query, key, value) + 0 * ops.convert_to_numpy(k).sum()
    passed, text = check("ex-multihead-sum", head_terms=head_terms)
    assert not passed and "do not call the package's split_heads or merge_heads" in text, text
    passed, text = check("ex-multihead-sum", head_terms=_head_terms())  # restored afterwards
    assert passed, text


def test_sum_accepts_float64_numpy_and_a_list():
    passed, text = graded("ex-multihead-sum", head_terms=_head_terms_float64)
    assert passed, text


# ex-multihead-params

BIG_LAYER = 4 * (1024**2 + 1024)  # mt.MultiHeadAttention(1024, 16)
BIG_KEY_DIM_LAYER = 3 * (1024 * 16384 + 16384) + 16384 * 1024 + 1024  # Keras, num_heads=16, key_dim=1024
RIGHT_COUNTS = {"params_big": 18 * BIG_LAYER, "params_big_key_dim_mistake": 18 * BIG_KEY_DIM_LAYER,
                "params_six_heads": 1_046_522}


def test_params_counts_are_the_layers():
    assert RIGHT_COUNTS["params_big"] == 75_571_200
    assert RIGHT_COUNTS["params_big_key_dim_mistake"] == 1_208_862_720
    layer = keras.layers.MultiHeadAttention(num_heads=16, key_dim=1024)
    layer.build((None, None, 1024), (None, None, 1024))
    assert layer.count_params() == BIG_KEY_DIM_LAYER


@pytest.mark.parametrize("name,wrong,message", [
    ("params_big", BIG_LAYER, "ONE attention sub-layer"),
    ("params_big", 18 * 4 * 1024**2, "leaves out the biases"),
    ("params_big", 12 * BIG_LAYER, "encoder-decoder attention"),
    ("params_big", 18 * 3 * (1024**2 + 1024), "counts three projections"),
    ("params_big", 18_911_232, "the base model's count"),
    ("params_big_key_dim_mistake", BIG_KEY_DIM_LAYER, "ONE attention sub-layer"),
    ("params_big_key_dim_mistake", 18 * BIG_LAYER, "key_dim = d_model / h = 64"),
    ("params_big_key_dim_mistake", 18 * (3 * (1024 * 8192 + 8192) + 8192 * 1024 + 1024), "counts 8 heads"),
    ("params_big_key_dim_mistake", 151_225_344, "the base model's count"),
    ("params_big_key_dim_mistake", 8 * 18 * BIG_LAYER, "the base model's number of heads"),
    ("params_big_key_dim_mistake", 16 * 18 * BIG_LAYER, "scales every weight of the layer by h"),
    ("params_six_heads", 1_050_624, "6 x 85 = 510"),
    ("params_six_heads", 18 * 1_046_522, "ONE layer"),
    ("params_six_heads", 4 * 512 * 510, "leaves out the biases"),
    ("params_six_heads", "many", "must be a number"),
])
def test_params_names_the_mistake(name, wrong, message):
    passed, text = graded("ex-multihead-params", **dict(RIGHT_COUNTS, **{name: wrong}))
    assert not passed and message in text, text
    assert_hides(text, *RIGHT_COUNTS.values())  # the message never gives a count away


def test_params_accepts_the_counts():
    passed, text = graded("ex-multihead-params", **RIGHT_COUNTS)
    assert passed, text



def _keras_count(num_heads, key_dim, d_model):
    layer = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim)
    layer.build((None, None, d_model), (None, None, d_model))
    return layer.count_params()


def test_params_checks_each_students_own_layer():
    # Part (c) is the student's layer: its width, its heads and key_dim = d_model // num_heads.
    student_id = next(f"s{i:03d}" for i in range(100)
                      if mt.exercises.parameters("ex-multihead-params", f"s{i:03d}")["d_model"] != 512)
    n = mt.exercises.parameters("ex-multihead-params", student_id)
    d, h, k = n["d_model"], n["num_heads"], n["key_dim"]
    assert d % h and k == d // h and h * k < d
    sublayers = 3 * n["num_layers"]  # (a) and (b): the big model's width and heads, the student's N
    own = dict(params_big=sublayers * BIG_LAYER, params_big_key_dim_mistake=sublayers * BIG_KEY_DIM_LAYER,
               params_six_heads=_keras_count(h, k, d), STUDENT_ID=student_id, params_numbers=n)
    passed, text = graded("ex-multihead-params", **own)
    assert passed, text
    # The book's counts of (a) and (b), for N = 6, copied: the hidden cases catch them.
    assert n["num_layers"] != 6
    for name in ("params_big", "params_big_key_dim_mistake"):
        passed, text = graded("ex-multihead-params", **dict(own, **{name: RIGHT_COUNTS[name]}))
        assert not passed, text
    for wrong, message, public in [
        (4 * (d * d + d), f"h d_k = d_model = {d}", True),  # a layer as wide as the model: the public check
        (4 * (d * d + d), f"projections of width {h} x {k} = {h * k}", False),
        (1_046_522, "the count of the book's layer", False),  # the book's answer
        (4 * d * h * k, "leaves out the biases", False),
    ]:
        passed, text = (check if public else graded)("ex-multihead-params", **dict(own, params_six_heads=wrong))
        assert not passed and message in text, text
        assert_hides(text, own["params_six_heads"])

# ex-multihead-causal

def _copy(transpose=False, swap_key_value=False, skip=False, strided=False, biases=True):
    def copy_from_keras(theirs, ours):
        if skip:
            return
        D, h = ours.d_model, ours.num_heads
        targets = [ours.wq, ours.wv, ours.wk] if swap_key_value else [ours.wq, ours.wk, ours.wv]
        for dense, mine in zip([theirs.query_dense, theirs.key_dense, theirs.value_dense], targets):
            kernel = ops.convert_to_numpy(dense.kernel)  # (D, h, d_k)
            if strided:
                kernel = kernel.transpose(0, 2, 1)  # (D, d_k, h): head i gets columns i, i + h, ...
            kernel = kernel.reshape(D, D)
            mine.kernel.assign(kernel.T if transpose else kernel)
            if biases:
                mine.bias.assign(ops.reshape(dense.bias, (D,)))
        ours.wo.kernel.assign(ops.reshape(theirs.output_dense.kernel, (D, D)))
        ours.wo.bias.assign(theirs.output_dense.bias)
    return copy_from_keras


def _copy_with_set_weights(theirs, ours):
    ours.set_weights([np.reshape(w, o.shape) for w, o in zip(theirs.get_weights(), ours.get_weights())])


def _keras_mask(kind):
    def keras_decoder_mask(tokens):
        T = tokens.shape[1]
        causal = np.broadcast_to(np.tril(np.ones((T, T), bool)), (len(tokens), T, T))
        padding = np.broadcast_to((tokens != 0)[:, None, :], (len(tokens), T, T))  # blocks keys (columns)
        rows = np.broadcast_to((tokens != 0)[:, :, None], (len(tokens), T, T))  # blocks queries (rows)
        right = causal & padding
        if kind == "ours":  # the package's own mask (refused): (B, 1, T, T)
            return mt.decoder_self_mask(tokens)
        if kind == "package causal":  # the package's look-ahead mask (refused)
            return ops.convert_to_numpy(mt.causal_mask(T)) & padding
        return {"right": right, "causal": causal,
                "padding": padding, "or": causal | padding, "inverted": ~right,
                "head axis": right[:, None],
                "int32": right.astype("int32"), "float tensor": ops.convert_to_tensor(right.astype("float32")),
                "additive": (1 - right.astype("float32")) * -1e9,  # the Keras functional-API tutorial's
                "padded rows": causal & rows, "padded rows and columns": causal & rows & padding}[kind]
    return keras_decoder_mask


@pytest.mark.parametrize("copy,mask,message", [
    (_copy(), "right", None),
    (_copy_with_set_weights, "right", None),
    (_copy(), "int32", None),  # a NumPy array of 0/1
    (_copy(), "float tensor", None),
    (_copy(transpose=True), "right", "then transposed"),
    (_copy(swap_key_value=True), "right", "holds theirs.value_dense's kernel"),
    (_copy(strided=True), "right", "i + h, i + 2h"),
    (_copy(skip=True), "right", "ours.wq.kernel is wrong"),
    (_copy(biases=False), "right", "ours.wq.bias is wrong"),
    (_copy(), "ours", "do not call the package's mask functions"),
    (_copy(), "package causal", "do not call the package's mask functions"),
    (_copy(), "head axis", "drop axis 1"),
    (_copy(), "causal", "look-ahead mask only"),
    (_copy(), "padding", "blocks the padding only"),
    (_copy(), "or", "combine them with AND"),
    (_copy(), "inverted", "True where a key is blocked"),
    (_copy(), "additive", "not an additive 0 / -1e9 mask"),
    (_copy(), "padded rows", "Padding blocks keys, i.e. columns"),
    (_copy(), "padded rows and columns", "Padding blocks keys, i.e. columns"),
])
def test_causal_names_the_mistake(copy, mask, message):
    passed, text = check("ex-multihead-causal", copy_from_keras=copy, keras_decoder_mask=_keras_mask(mask))
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
    # S != T: the call fails, and the check says what the layer got
    assert "the layer got enc_output as q, enc_output as k and x as v. Still the bug" in text, text
    assert "with S = T = 5 the tutorial's call runs" in text, text  # S = T: silently wrong


@pytest.mark.parametrize("wrong,got", [
    (lambda att, x, enc, mask: att(x, enc, x, mask), "the layer got x as q, enc_output as k and x as v"),
    (lambda att, x, enc, mask: att(q=enc, k=x, v=enc, mask=mask),
     "the layer got enc_output as q, x as k and enc_output as v"),
])
def test_fix_says_what_the_layer_got_when_the_call_fails(wrong, got):
    """The hint of the failing call (S != T) is built from what the layer received."""
    passed, text = check("ex-multihead-fix-argument-order", fixed_cross_attention=wrong)
    assert not passed and got in text, text
    assert "q (the 3rd argument) must be the decoder states x" in text, text
    assert "Still the bug" not in text, text


@pytest.mark.parametrize("wrong,message", [
    (lambda att, x, enc, mask: att(x, x, x, mask), "keys k"),  # self-attention
    (lambda att, x, enc, mask: att(x, enc, x, mask), "gets enc_output as its keys k and x as its values v"),
    (lambda att, x, enc, mask: att(q=enc, k=x, v=enc, mask=mask), "gets enc_output as its queries q"),
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
        passed, text = graded("ex-multihead-fix-argument-order", fixed_cross_attention=right)
        assert passed, text


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden/)
PUBLIC_FOLD_SIZES = [((2, 5, 12), 3), ((1, 4, 16), 4), ((3, 2, 8), 1), ((2, 3, 6), 6)]


def _fold_looked_up(x, num_heads):
    """Right for the public cases' (shape, h) only; a plain reshape otherwise."""
    B, T, D = x.shape
    if ((B, T, D), num_heads) in PUBLIC_FOLD_SIZES:
        return _fold_right(x, num_heads)
    return np.reshape(x, (B * num_heads, T, D // num_heads))


def _head_terms_of_four_heads(layer, query, key, value):
    """Right for the public layer only: its h = 4 heads of d_k = 4 typed in."""
    (Wq, bq), (Wk, bk), (Wv, bv), (Wo, _) = (
        [ops.convert_to_numpy(w) for w in dense.weights] for dense in (layer.wq, layer.wk, layer.wv, layer.wo))
    terms = []
    for i in range(4):
        c = slice(4 * i, 4 * i + 4)
        head, _ = mt.scaled_dot_product_attention(query @ Wq[:, c] + bq[c], key @ Wk[:, c] + bk[c],
                                                  value @ Wv[:, c] + bv[c])
        terms.append(ops.convert_to_numpy(head) @ Wo[c, :])
    return np.stack(terms)


def _copy_to_sixteen(theirs, ours):
    """Right for the public layers only: their width 16 typed in."""
    for dense, mine in [(theirs.query_dense, ours.wq), (theirs.key_dense, ours.wk),
                        (theirs.value_dense, ours.wv), (theirs.output_dense, ours.wo)]:
        mine.set_weights([np.reshape(w, (16, 16) if w.size == 256 else (16,)) for w in dense.get_weights()])


def _mask_of_five(tokens):
    """Right for the public batch only: its length 5 typed in."""
    return np.tril(np.ones((5, 5), bool))[None] & (np.asarray(tokens)[:, None, :5] != 0)


def _fixed_for_public_lengths(att, x, enc_output, mask):
    """The fix where the public cases look (T = 4 or 5), the tutorial's call elsewhere."""
    if x.shape[1] in (4, 5):
        return att(enc_output, enc_output, x, mask)
    return att(x, enc_output, enc_output, mask)


@pytest.mark.parametrize("label,env", [
    ("ex-multihead-shapes", dict(shapes=dict(RIGHT_SHAPES, logits=(2, 8, 9, 7)))),
    ("ex-multihead-shapes", dict(shapes=dict(RIGHT_SHAPES, **{"split keys": (2, 9, 8, 64)}))),
    ("ex-multihead-params", dict(RIGHT_COUNTS, params_big=12 * BIG_LAYER)),
    ("ex-multihead-params", dict(RIGHT_COUNTS, params_six_heads=4 * 512 * 510)),
    ("ex-multihead-split-merge", dict(fold_heads=_fold_looked_up, unfold_heads=_unfold_right)),
    ("ex-multihead-sum", dict(head_terms=_head_terms_of_four_heads)),
    ("ex-multihead-causal", dict(copy_from_keras=_copy_to_sixteen, keras_decoder_mask=_mask_of_five)),
    ("ex-multihead-fix-argument-order", dict(fixed_cross_attention=_fixed_for_public_lengths)),
])
def test_hidden_cases_catch_answers_tuned_to_the_public_ones(label, env):
    assert_tuned_answer_caught(CHAPTER, label, **env)


def test_public_checks_no_longer_hold_the_values_they_hid():
    assert_public_check_hides(CHAPTER, "ex-multihead-shapes", *RIGHT_SHAPES.values(),
                              spelled=["MultiHeadAttention", "split_heads(", "_truth"])
    assert_public_check_hides(CHAPTER, "ex-multihead-params", *RIGHT_COUNTS.values(), BIG_LAYER, BIG_KEY_DIM_LAYER,
                              spelled=["count_params", "1024", "85"])


@pytest.mark.parametrize("env,message", [
    (dict(shapes=dict(RIGHT_SHAPES, logits=(2, 8, 7, 10))), "one of the exercise's sizes"),
    (dict(shapes=dict(RIGHT_SHAPES, merged=())), "one of the exercise's sizes"),
])
def test_public_shapes_check_still_catches_what_it_can(env, message):
    passed, text = check("ex-multihead-shapes", **env)
    assert not passed and message in text, text


@pytest.mark.parametrize("name,wrong,message", [
    ("params_big", 18_911_232, "the base model's count"),
    ("params_six_heads", 1_050_624, "the base model's count"),
    ("params_six_heads", -5, "is positive"),
])
def test_public_params_check_still_catches_what_it_can(name, wrong, message):
    passed, text = check("ex-multihead-params", **dict(RIGHT_COUNTS, **{name: wrong}))
    assert not passed and message in text, text
    assert_hides(text, *RIGHT_COUNTS.values())


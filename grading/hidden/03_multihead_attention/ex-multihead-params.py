"""Hidden cases of ex-multihead-params: the three counts, and the slips that only the counts show.

Merged after the public check (mt.exercises.merged_source): _integer and name are its. Part (c) is the
student's own layer, and (a) and (b) the paper's big model with the student's own number of layers N
(mt.exercises.parameters, drawn from STUDENT_ID; N = 6 in the book).
"""

import keras
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import student_numbers

D, H = 1024, 16  # the paper's big model (Table 3): d_model = 1024, h = 16 (and N = 6, the student's N here)
BASE_D, BASE_H = 512, 8  # the base model, the chapter's example


def _sublayers(n):
    """3 N: N encoder self-attentions, N decoder self-attentions, N cross-attentions."""
    return 3 * n["num_layers"]


def _keras_count(num_heads, key_dim, d_model=D):
    layer = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim)
    layer.build((None, None, d_model), (None, None, d_model))
    return layer.count_params()


def _per_layer_mistakes(got, name, per_layer, no_bias_per_layer, three_projections, N_SUBLAYERS):
    """Messages for the usual slips, given the right count of one sub-layer and the number of sub-layers."""
    if got == per_layer:
        return f"`{name}` = {got:,} is the count of ONE attention sub-layer: the big model has several."
    if got == N_SUBLAYERS * no_bias_per_layer:
        return (f"`{name}` = {got:,} leaves out the biases: mt.MultiHeadAttention (like Keras's layer) "
                "gives each of its four projections a bias.")
    if got in (2 * N_SUBLAYERS // 3 * per_layer, N_SUBLAYERS // 3 * per_layer):
        return (f"`{name}` = {got:,} counts {got // per_layer} sub-layers. Each encoder layer has one "
                "attention sub-layer and each decoder layer two: masked self-attention AND "
                "encoder-decoder attention.")
    if got == N_SUBLAYERS * three_projections:
        return f"`{name}` = {got:,} counts three projections: there are four, W^Q, W^K, W^V and W^O."
    return None


@test_case(points=1, hidden=True)
def hidden_big_model(params_big, STUDENT_ID, params_numbers):
    N_SUBLAYERS = _sublayers(student_numbers(name, STUDENT_ID, params_numbers))  # noqa: F821 (name: the public check's)
    got = _integer(params_big, "params_big")  # noqa: F821 (the public check's)
    layer = mt.MultiHeadAttention(d_model=D, num_heads=H)
    layer.build((None, None, D))
    right = N_SUBLAYERS * layer.count_params()
    if got != right:
        message = _per_layer_mistakes(got, "params_big", layer.count_params(), 4 * D * D, 3 * (D * D + D),
                                      N_SUBLAYERS)
        if got == N_SUBLAYERS * 4 * (BASE_D * BASE_D + BASE_D):
            message = (f"`params_big` = {got:,} is the base model's count, which the chapter prints. The big "
                       "model is twice as wide: d_model = 1024.")
        raise AssertionError(message or (
            f"`params_big` = {got:,} is not right. Count one mt.MultiHeadAttention(1024, 16) (four "
            f"D x D kernels and four biases), then the attention sub-layers of {N_SUBLAYERS // 3} encoder and "
            f"{N_SUBLAYERS // 3} decoder layers."))


@test_case(points=1, hidden=True)
def hidden_key_dim_mistake(params_big_key_dim_mistake, STUDENT_ID, params_numbers):
    N_SUBLAYERS = _sublayers(student_numbers(name, STUDENT_ID, params_numbers))  # noqa: F821 (name: the public check's)
    got = _integer(params_big_key_dim_mistake, "params_big_key_dim_mistake")  # noqa: F821 (the public check's)
    per_layer = _keras_count(H, D)
    if got != N_SUBLAYERS * per_layer:
        width = H * D
        message = _per_layer_mistakes(got, "params_big_key_dim_mistake", per_layer,
                                      4 * D * width, 3 * (D * width + width), N_SUBLAYERS)
        if got == N_SUBLAYERS * _keras_count(H, D // H):
            message = ("`params_big_key_dim_mistake` is the count with key_dim = d_model / h = 64. With "
                       "key_dim=1024 every one of the 16 heads is 1024 wide.")
        elif got == N_SUBLAYERS * _keras_count(BASE_H, D):
            message = ("`params_big_key_dim_mistake` counts 8 heads of width 1024: the big model has 16 "
                       "heads, so the projections are 16 times as wide as the model, not 8.")
        elif got == N_SUBLAYERS * _keras_count(BASE_H, BASE_D, BASE_D):
            message = ("`params_big_key_dim_mistake` is the base model's count, which the chapter prints. "
                       "Redo it for d_model = 1024 and h = 16.")
        elif got == 8 * N_SUBLAYERS * 4 * (D * D + D):
            message = ("`params_big_key_dim_mistake` scales a count by 8, the base model's number of heads: "
                       "the big model has 16. Count the layer with h = 16 heads of width 1024, weight by weight.")
        elif got == H * N_SUBLAYERS * 4 * (D * D + D):
            message = ("`params_big_key_dim_mistake` scales every weight of the layer by h: not all of them grow "
                       "with key_dim. Which bias keeps the model's width whatever key_dim is? Count the layer's "
                       "weights one by one.")
        raise AssertionError(message or (
            f"`params_big_key_dim_mistake` = {got:,} is not right. With key_dim=1024 and 16 heads the query, "
            "key and value projections map 1024 to 16 x 1024 (with biases), and the output "
            "projection maps that back to 1024 (with a bias); then count the sub-layers as in (a)."))


@test_case(points=1, hidden=True)
def hidden_six_heads(params_six_heads, STUDENT_ID, params_numbers):
    got = _integer(params_six_heads, "params_six_heads")  # noqa: F821 (the public check's)
    n = student_numbers(name, STUDENT_ID, params_numbers)  # noqa: F821 (name: the public check's)
    d, h, k = n["d_model"], n["num_heads"], n["key_dim"]
    right = _keras_count(h, k, d)
    if got != right:
        if got == 4 * (d * d + d):
            message = (f"`params_six_heads` is the count of a layer with h d_k = {d}. Here the {h} heads "
                       f"of {k} give projections of width {h} x {k} = {h * k}, and W^O maps {h * k} back to {d}.")
        elif got == 4 * d * h * k:
            message = (f"`params_six_heads` leaves out the biases: three of width {h * k} and one of "
                       f"width {d}.")
        elif got == _sublayers(n) * right:
            message = f"`params_six_heads` asks for ONE layer, not {_sublayers(n)}."
        elif got == _keras_count(6, 85, BASE_D) and (d, h, k) != (BASE_D, 6, 85):
            message = ("`params_six_heads` is the count of the book's layer, num_heads=6 and key_dim=85 on "
                       f"width 512: yours has num_heads={h} and key_dim={k} on width {d}.")
        else:
            message = (f"`params_six_heads` = {got:,} is not right. The query, key and value "
                       f"projections map {d} to {h} x {k} (with biases), the output projection maps "
                       f"that back to {d} (with a bias).")
        raise AssertionError(message)

"""Exercise: the parameters of the big model's attention sub-layers, and of Keras's variants.

The layer of part (c) is the student's own (mt.exercises.parameters, drawn from STUDENT_ID). The check
confirms the format (whole numbers) and catches a count of the chapter's base model; the counts
themselves are hidden test cases (grading/hidden/), checked when the notebook is graded.
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-multihead-params"
points = 3

BASE_LAYER = 1_050_624  # one mt.MultiHeadAttention(512, 8) of the base model, as the chapter prints it


def _integer(value, name):
    answered(value, name)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise AssertionError(f"`{name}` must be a number, not {type(value).__name__}.") from None
    if number != int(number):
        raise AssertionError(f"`{name}` = {number} must be a whole number of parameters.")
    if number <= 0:
        raise AssertionError(f"`{name}` = {number:g}: a count of parameters is positive.")
    return int(number)


def _base_model(got, name):
    if got % BASE_LAYER == 0:
        raise AssertionError(
            f"`{name}` = {got:,} is a multiple of {BASE_LAYER:,}, the base model's count of one attention layer, "
            "which the chapter prints (d_model = 512, h d_k = 512). Redo the count for this exercise's sizes.")


@test_case(points=1)
def big_model(params_big, STUDENT_ID, params_numbers):
    student_numbers(name, STUDENT_ID, params_numbers)  # the notebook's id (with none, it says so)
    _base_model(_integer(params_big, "params_big"), "params_big")


@test_case(points=1)
def key_dim_mistake(params_big_key_dim_mistake, STUDENT_ID, params_numbers):
    student_numbers(name, STUDENT_ID, params_numbers)  # the notebook's id (with none, it says so)
    _base_model(_integer(params_big_key_dim_mistake, "params_big_key_dim_mistake"), "params_big_key_dim_mistake")


@test_case(points=1)
def six_heads(params_six_heads, STUDENT_ID, params_numbers):
    got = _integer(params_six_heads, "params_six_heads")
    n = student_numbers(name, STUDENT_ID, params_numbers)
    _base_model(got, "params_six_heads")
    full = 4 * (n["d_model"] ** 2 + n["d_model"])  # a layer whose heads fill the model's width
    if got == full:
        raise AssertionError(
            f"`params_six_heads` is the count of a layer with h d_k = d_model = {n['d_model']}. Here the "
            f"{n['num_heads']} heads of {n['key_dim']} give projections of width {n['num_heads']} x {n['key_dim']}, "
            f"and W^O maps that back to {n['d_model']}.")

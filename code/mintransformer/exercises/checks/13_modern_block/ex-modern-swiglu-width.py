"""Exercise: Llama's SwiGLU width from d_model and multiple_of, its parameters, and how far they are from 8 d^2.

The numbers are the student's own (mt.exercises.parameters, drawn from STUDENT_ID). The public cases check the
form of the answers and that they agree with each other, counted by the package; the values are checked by
the hidden cases, when the notebook is graded.
"""

import numbers

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-modern-swiglu-width"
points = 2


def _whole(value, key):
    value = answered(value, key)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise AssertionError(f"{key} must be a whole number, not {type(value).__name__} {value!r}: "
                             "Meta's code rounds with int() and //.")
    if value < 1:
        raise AssertionError(f"{key} = {value} must be positive.")
    return int(value)


def _ffn_weights(d_model, dff, activation):
    """The weights of one feed-forward network with no biases, counted by mt.parameter_count."""
    config = dict(num_layers=1, d_model=d_model, num_heads=1, vocab_size=0, max_length=0, positions="none",
                  norm_first=False, activation=activation, use_bias=False)
    return mt.parameter_count(dff=dff, **config) - mt.parameter_count(dff=0, **config)


@test_case(points=1)
def the_width_is_a_rounded_width(swiglu_width, STUDENT_ID, swiglu_numbers):
    n = student_numbers(name, STUDENT_ID, swiglu_numbers)  # a notebook with no id scores nothing
    width = _whole(swiglu_width, "swiglu_width")
    if width == 4 * n["d_model"]:
        raise AssertionError("swiglu_width is the ReLU network's 4 d_model: Llama's SwiGLU network takes 2/3 "
                             "of it, then rounds.")
    if width % n["multiple_of"]:
        raise AssertionError(f"swiglu_width = {width:,} is not a multiple of your multiple_of, "
                             f"{n['multiple_of']}: Meta's code rounds the width up to one.")


@test_case(points=1)
def the_count_and_the_fraction_agree_with_your_width(swiglu_parameters, extra_fraction, swiglu_width, STUDENT_ID,
                                                     swiglu_numbers):
    # Checked against your own swiglu_width: the check holds neither the width nor the count.
    n = student_numbers(name, STUDENT_ID, swiglu_numbers)
    d_model = n["d_model"]
    width = _whole(swiglu_width, "swiglu_width")
    count = _whole(swiglu_parameters, "swiglu_parameters")
    weights = _ffn_weights(d_model, width, "swiglu")
    if count != weights:
        if count == _ffn_weights(d_model, width, "relu"):
            raise AssertionError("swiglu_parameters counts two matrices, as in the ReLU network: SwiGLU has "
                                 "three, the gate W_1, the linear branch W_3 and the output W_2.")
        if count > weights and count - weights in (2 * width + d_model, width + d_model):
            raise AssertionError("swiglu_parameters counts biases: Llama's network has none.")
        raise AssertionError(f"swiglu_parameters is not the number of weights of a SwiGLU network of width "
                             f"{width:,} (yours) with no biases, on d_model = {d_model:,}.")
    fraction = answered(extra_fraction, "extra_fraction")
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise AssertionError(f"extra_fraction must be a number, not {type(fraction).__name__}.")
    relu = _ffn_weights(d_model, 4 * d_model, "relu")  # 8 d_model^2
    right = (count - relu) / relu
    fraction = float(fraction)
    if np.isclose(fraction, right, rtol=1e-6, atol=1e-12):
        return
    if np.isclose(fraction, 100 * right, rtol=1e-6, atol=1e-12):
        raise AssertionError("extra_fraction is a percentage: give it as a fraction (0.5 for 50%).")
    if np.isclose(fraction, count / relu, rtol=1e-6, atol=1e-12):
        raise AssertionError("extra_fraction is the ratio of the two counts: give how far the SwiGLU count is "
                             "from 8 d_model^2, as a fraction of 8 d_model^2 (0 when they are equal).")
    if np.isclose(fraction, (count - relu) / count, rtol=1e-6, atol=1e-12):
        raise AssertionError("extra_fraction is taken relative to the SwiGLU count: take it relative to the "
                             "ReLU network's 8 d_model^2.")
    raise AssertionError("extra_fraction is not how far your swiglu_parameters is from the ReLU network's "
                         "8 d_model^2, as a fraction of 8 d_model^2.")

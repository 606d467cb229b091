"""Hidden cases of ex-modern-swiglu-width: the width, the count and the fraction of the student's numbers.

Merged after the public check (mt.exercises.merged_source), so its helpers (name) are in scope.
"""

import numbers

from otter.test_files import test_case

from mintransformer.exercises.checking import student_numbers


def _llama_width(d_model, multiple_of):
    """Meta's llama/model.py: hidden_dim = int(2 * 4 d / 3), rounded up to a multiple of multiple_of."""
    hidden = int(2 * (4 * d_model) / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


@test_case(points=1, hidden=True)
def hidden_the_width(swiglu_width, STUDENT_ID, swiglu_numbers):
    n = student_numbers(name, STUDENT_ID, swiglu_numbers)  # noqa: F821 (the public check's name)
    d_model, multiple_of = n["d_model"], n["multiple_of"]
    right = _llama_width(d_model, multiple_of)
    if isinstance(swiglu_width, numbers.Integral) and swiglu_width == right:
        return
    hidden = int(8 * d_model / 3)
    known = {
        multiple_of * (hidden // multiple_of): "it is rounded down: Meta's code rounds up to the next multiple",
        hidden: "it is not rounded to a multiple of multiple_of",
        _llama_width(d_model // 4, multiple_of) if d_model % 4 == 0 else None:
            "it is 2/3 of d_model, rounded: the ReLU network's width is 4 d_model, and SwiGLU's is 2/3 of that",
    }
    for wrong, message in known.items():
        if wrong is not None and wrong != right and swiglu_width == wrong:
            raise AssertionError(f"swiglu_width is not Llama's width for your numbers: {message}.")
    raise AssertionError("swiglu_width is not Llama's width for your d_model and multiple_of.")


@test_case(points=1, hidden=True)
def hidden_the_count_and_the_fraction(swiglu_parameters, extra_fraction, STUDENT_ID, swiglu_numbers):
    n = student_numbers(name, STUDENT_ID, swiglu_numbers)  # noqa: F821 (the public check's name)
    d_model = n["d_model"]
    count = 3 * d_model * _llama_width(d_model, n["multiple_of"])  # W_1, W_3 (d x dff) and W_2 (dff x d)
    if not (isinstance(swiglu_parameters, numbers.Integral) and swiglu_parameters == count):
        raise AssertionError("swiglu_parameters is not the count of Llama's SwiGLU network (no biases) for your "
                             "numbers.")
    right = (count - 8 * d_model ** 2) / (8 * d_model ** 2)
    if not (isinstance(extra_fraction, numbers.Real) and abs(extra_fraction - right) <= 1e-9 + 1e-6 * abs(right)):
        raise AssertionError("extra_fraction is not how far that count is from 8 d_model^2, as a fraction of "
                             "8 d_model^2, for your numbers.")

"""Exercise: the shape of every tensor of encoder-decoder attention, for the student's sizes.

The sizes are the student's own (mt.exercises.parameters, drawn from STUDENT_ID; the book's are the base
model's). The check confirms the format (a tuple of whole numbers for each tensor, made of the exercise's
sizes); the shapes themselves are hidden test cases (grading/hidden/), checked when the notebook is graded.
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-multihead-shapes"
points = 3



def _sizes(STUDENT_ID, shapes_numbers):
    """(B, T, S, d_model, h) of the student's numbers."""
    n = student_numbers(name, STUDENT_ID, shapes_numbers)
    return n["B"], n["T"], n["S"], n["d_model"], n["h"]


HINTS = {  # what each tensor is, never its shape: the shapes are the answer
    "query projection": "Each projection is a Dense(d_model) applied to every position of its input.",
    "key projection": "The keys are projected from the encoder's output: which length do they have?",
    "value projection": "The values are projected from the encoder's output: which length do they have?",
    "split queries": "split_heads cuts the d_model features of each position into h heads of d_k = d_model / h and "
                     "gives the heads an axis of their own: where does the chapter put it?",
    "split keys": "split_heads works on the keys as on the queries; the keys have the encoder's length.",
    "split values": "split_heads works on the values as on the queries; the values have the encoder's length.",
    "logits": "Each head scores every query against every key: one row per query, one column per key.",
    "weights": "The softmax does not change the shape of the logits.",
    "head outputs": "weights @ V in every head: one row per query, of width d_k.",
    "merged": "Concat puts the h heads of width d_k side by side again, for every query.",
    "output": "W^O maps the concatenation back to d_model, for every query.",
}


def _shape(shapes, key):
    answered(shapes, "shapes")
    if not isinstance(shapes, dict):
        raise AssertionError(f"`shapes` must be a dictionary, not a {type(shapes).__name__}.")
    if key not in shapes:
        raise AssertionError(f'`shapes` has no entry "{key}": keep the keys of the work cell.')
    value = shapes[key]
    if value is Ellipsis:
        raise AssertionError(f'`shapes["{key}"]` is still `...`: replace the placeholder with a tuple.')
    try:
        return tuple(int(d) for d in value)
    except (TypeError, ValueError):
        raise AssertionError(f'`shapes["{key}"]` must be a tuple of integers, like (1, 2, 3).') from None


KEYS = list(HINTS)


def _check_format(shapes, keys, STUDENT_ID, shapes_numbers):
    B, T, S, D, H = _sizes(STUDENT_ID, shapes_numbers)
    SIZES = {B, T, S, D, H, D // H}  # the sizes of the exercise (the book's: 2, 7, 9, 512, 8 and d_k = 64)
    for key in keys:
        got = _shape(shapes, key)
        if not got or any(d not in SIZES for d in got):
            raise AssertionError(
                f'`shapes["{key}"]` = {got}: each axis of a tensor here has one of the exercise\'s sizes, B, T, S, '
                f"d_model, h or d_k. {HINTS[key]}")


@test_case(points=1)
def projections_and_split(shapes, STUDENT_ID, shapes_numbers):
    _check_format(shapes, KEYS[:6], STUDENT_ID, shapes_numbers)


@test_case(points=1)
def logits_and_weights(shapes, STUDENT_ID, shapes_numbers):
    _check_format(shapes, KEYS[6:8], STUDENT_ID, shapes_numbers)


@test_case(points=1)
def heads_merge_and_output(shapes, STUDENT_ID, shapes_numbers):
    _check_format(shapes, KEYS[8:], STUDENT_ID, shapes_numbers)

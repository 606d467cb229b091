"""Helpers for the exercises' check files: each failure says what is wrong, in words.

A check file (``checks/<chapter>/<label>.py``) is an otter-grader test file. Its test cases take
the student's names as arguments and call these helpers, which raise ``AssertionError`` with a
message the student can act on; otter shows that message under the check cell.
"""

import contextlib
import functools
import re
import sys

import numpy as np


class Unanswered(AssertionError):
    """The student has not written this part yet."""


def answered(value, name):
    """Fail unless the student defined ``name`` and replaced the ``...`` placeholder."""
    if value is None:
        raise Unanswered(f"`{name}` is not defined: run the cell where you define it, then this check.")
    if value is Ellipsis:
        raise Unanswered(f"`{name}` is still `...`: replace the placeholder with your answer.")
    return value


def call(function, name, *args, **kwargs):
    """Call the student's ``function``; a placeholder or a crash becomes a readable failure."""
    answered(function, name)
    # Copies of the arrays: an answer that changes its input in place (x += ...) must not change
    # the check's own copy, from which the expected answer is computed.
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kwargs = {k: (a.copy() if isinstance(a, np.ndarray) else a) for k, a in kwargs.items()}
    if not callable(function):
        raise AssertionError(f"`{name}` must be a function, not a {type(function).__name__}.")
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        raise Unanswered(f"`{name}` still raises NotImplementedError: write its body.") from None
    except Exception as error:
        message = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # Keras colours its messages
        if len(message) > 600:  # Keras puts whole tensors in some messages
            message = message[:600] + " [...]"
        # (otter strips quotes from the ends of a message: end it with a period.)
        raise AssertionError(f"`{name}` raised {type(error).__name__}: {message.strip().rstrip('.')}.") from error


def pair(result, function, what, item_ndim=0):
    """The two items of a returned pair: a tuple, a list, or an array whose first axis has 2.

    ``item_ndim`` is the number of axes of each item (0 for two numbers, 2 for two matrices);
    anything else fails with what the function returned instead.
    """
    if isinstance(result, (tuple, list)):
        if len(result) == 2:
            return result
        raise AssertionError(f"`{function}` must return a pair {what}; it returned a "
                             f"{type(result).__name__} of {len(result)} items.")
    try:
        with np.errstate(all="ignore"):
            array = to_numpy(result, "result")
    except AssertionError:
        array = None
    if array is not None and array.ndim == item_ndim + 1 and array.shape[0] == 2:
        return array[0], array[1]
    kind = type(result).__name__
    if array is not None and array.ndim > 0:
        kind = f"{'NumPy array' if isinstance(result, np.ndarray) else kind} of shape {array.shape}"
    article = "an" if kind[0] in "aeiouAEIOU" else "a"
    raise AssertionError(f"`{function}` must return a pair {what}; it returned {article} {kind}.")


def to_numpy(value, name):
    """The student's result as a float64 NumPy array (tensors, lists and arrays accepted)."""
    try:
        from keras import ops

        return np.asarray(ops.convert_to_numpy(value), dtype="float64")
    except Exception:
        try:
            return np.asarray(value, dtype="float64")
        except Exception as error:
            raise AssertionError(
                f"{name} must be an array or a tensor of numbers, not {type(value).__name__}."
            ) from error


def same_shape(actual, expected, what):
    if actual.shape != expected.shape:
        raise AssertionError(f"{what} has shape {actual.shape}; it should have {expected.shape}.")


def close(actual, expected, what, *, atol=1e-5, rtol=1e-5, hint=""):
    """Fail with the shape, where the entries are wrong and in which direction, unless the two agree.

    The message says which entry is furthest off and whether it is too large or too small, never
    the expected value nor the size of the error: either would hand the answer to whoever reads
    the check's message.
    """
    actual = to_numpy(actual, what)
    expected = np.asarray(expected, dtype="float64")
    if expected.size == 1 and actual.size == 1:
        actual, expected = actual.reshape(()), expected.reshape(())
    same_shape(actual, expected, what)
    if not np.all(np.isfinite(actual)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(np.atleast_1d(actual)))[0])
        raise AssertionError(f"{what} has a NaN or inf at index {bad}. {hint}".strip())
    if np.allclose(actual, expected, atol=atol, rtol=rtol):
        return
    if expected.ndim == 0:
        side = "too large" if actual > expected else "too small"
        raise AssertionError(f"{what} is {float(actual):.6g}: that is {side}. {hint}".strip())
    error = np.abs(actual - expected)
    where = tuple(int(i) for i in np.unravel_index(np.argmax(error), error.shape))
    wrong = int(np.sum(~np.isclose(actual, expected, atol=atol, rtol=rtol)))
    side = "too large" if actual[where] > expected[where] else "too small"
    raise AssertionError(
        f"{what} is wrong in {wrong} of its {actual.size} entries; the furthest off is at index {where}, "
        f"where it is {actual[where]:.6g}: that is {side}. {hint}".strip()
    )


def like(actual, wrong, *, atol=1e-5, rtol=1e-5):
    """Whether ``actual`` matches a known wrong answer (to name the mistake)."""
    try:
        actual = to_numpy(actual, "value")
        wrong = np.asarray(wrong, dtype="float64")
        return actual.shape == wrong.shape and np.allclose(actual, wrong, atol=atol, rtol=rtol)
    except AssertionError:
        return False


@contextlib.contextmanager
def refusing(functions, students, rule, modules=("mintransformer",), owners=()):
    """Run the student's code with some of the package's functions refused.

    For an exercise that says "do not call the package's ...": while the block runs, every name
    bound to one of ``functions`` in the package's modules (``mt.split_heads`` and
    ``mintransformer.multihead.split_heads`` alike, so a layer that uses it refuses too) and in
    the notebook of the student's functions ``students`` (``from mintransformer import
    split_heads``) stands for a function that records the call and raises. If the student's code
    called one, the block ends with ``AssertionError(rule)``, whatever the code raised or
    returned; the names are restored in every case. Compute the expected answer outside the block.
    A student's function that is itself one of ``functions`` (``my_split_heads = mt.split_heads``,
    or a ``functools.partial`` of it) is refused at once, and so is a student's class that subclasses
    a refused class (``class MyFeedForward(mt.FeedForward)``). ``modules`` names the packages whose
    modules are searched (by default the book's package only; ``library_softmaxes`` needs
    ``("keras", "tensorflow", ...)`` too). ``owners`` are classes whose attributes are searched
    as well, for a refused method: ``refusing([mt.DecoderLayer.call], f, rule, owners=[mt.DecoderLayer])``
    refuses ``mt.DecoderLayer.call(layer, ...)``.

    Example::

        with refusing([mt.split_heads], my_split_heads, "Write the split yourself: do not call "
                      "mt.split_heads."):
            got = call(my_split_heads, "my_split_heads", x, 2)
    """
    functions = list(functions)
    students = list(students) if isinstance(students, (list, tuple)) else [students]
    classes = tuple(original for original in functions if isinstance(original, type))
    for student in students:
        if classes and isinstance(student, type) and issubclass(student, classes):
            raise AssertionError(rule)  # a subclass of a refused class: its methods are the package's
        for _ in range(8):  # the student's name bound to a refused function itself
            if student is None:
                break
            if any(student is original for original in functions):
                raise AssertionError(rule)
            student = getattr(student, "func", None)  # functools.partial
    used = []

    def stand_in(original):
        @functools.wraps(original)
        def refused(*args, **kwargs):
            used.append(original.__name__)
            raise RuntimeError(f"this exercise asks you not to call the package's {original.__name__}")

        return refused

    stand_ins = [(original, stand_in(original)) for original in functions]
    namespaces = [vars(module) for name, module in list(sys.modules.items())
                  if module is not None and any(name == m or name.startswith(m + ".") for m in modules)]
    namespaces += [getattr(student, "__globals__", None) or {} for student in students]
    patched, patched_owners = [], []
    for namespace in namespaces:
        for key, value in list(namespace.items()):
            for original, replacement in stand_ins:
                if value is original:
                    patched.append((namespace, key, value))
                    namespace[key] = replacement
    for owner in owners:  # a class's __dict__ cannot be written to: setattr, then setattr back
        for key, value in list(vars(owner).items()):
            for original, replacement in stand_ins:
                if value is original:
                    patched_owners.append((owner, key, value))
                    setattr(owner, key, replacement)
    try:
        yield used
    except Exception:
        if not used:
            raise
    finally:
        for namespace, key, value in reversed(patched):
            namespace[key] = value
        for owner, key, value in reversed(patched_owners):
            setattr(owner, key, value)
    if used:
        raise AssertionError(rule)


LIBRARIES = ("mintransformer", "keras", "tensorflow", "scipy", "jax", "torch")


def library_softmaxes():
    """The softmax functions a student may reach for: Keras's, TensorFlow's, and SciPy's, JAX's or
    PyTorch's where they are loaded. For "do not call a library softmax"::

        with refusing(library_softmaxes(), stable_softmax, rule, modules=LIBRARIES):
            ...
    """
    import keras
    import tensorflow as tf

    found = [keras.ops.softmax, keras.activations.softmax, keras.ops.log_softmax, tf.nn.softmax,
             tf.math.softmax, tf.nn.log_softmax, getattr(keras.src.ops.nn, "softmax", None)]
    for module, names in [("scipy.special", ("softmax", "log_softmax")), ("jax.nn", ("softmax", "log_softmax")),
                          ("torch", ("softmax", "log_softmax")), ("torch.nn.functional", ("softmax", "log_softmax"))]:
        loaded = sys.modules.get(module)
        found += [getattr(loaded, name, None) for name in names] if loaded is not None else []
    return [f for f in found if f is not None]


def student_numbers(label, student_id, used=None):
    """The numbers of exercise ``label`` for the notebook's ``STUDENT_ID`` (``student_id``).

    A check takes ``STUDENT_ID`` as an argument (None when the notebook defines none: at grading,
    a notebook with no id) and, as ``used``, the numbers the student's work cell printed: when
    they were drawn for another id, the answers are for numbers that are not the student's.
    """
    from mintransformer.exercises import per_student

    if student_id is None:
        raise AssertionError(
            "This notebook defines no STUDENT_ID, and the exercise's numbers are drawn from it: run the cell "
            'near the top of the notebook (STUDENT_ID = "your id", or "" for the book\'s numbers), then the work '
            "cell.")
    try:
        student_id = per_student.normalize_id(student_id)
    except TypeError as error:
        raise AssertionError(str(error)) from None
    numbers = per_student.parameters(label, student_id)
    if isinstance(used, per_student.Parameters) and used.label == label:
        if used.student_id != student_id:
            raise AssertionError(
                f"Your work cell printed the numbers of STUDENT_ID {used.student_id!r}, but the notebook's id is "
                f"{student_id!r}: run the work cell again and answer with the numbers it prints.")
        if dict(used) != dict(numbers):
            raise AssertionError(
                "Your work cell printed numbers that this version of the book's package does not draw for your "
                "id: the notebook ran with another version. Run the notebook from its first cell again.")
    return numbers

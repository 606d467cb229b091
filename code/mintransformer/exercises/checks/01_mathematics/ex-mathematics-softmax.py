"""Exercise: a numerically stable softmax in NumPy, along any axis, that gives zeros to a slice of -inf."""

import numpy as np
from keras import ops
from otter.test_files import test_case

from mintransformer.exercises.checking import LIBRARIES, call, close, library_softmaxes, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-mathematics-softmax"
points = 5

RULE = ("`stable_softmax` calls a library softmax (Keras's, TensorFlow's or SciPy's, perhaps through the "
        "setup cell's keras_softmax or the package's attention): the exercise is to write it in NumPy from the "
        "equation.")


def _reference(z, axis=-1):
    return ops.convert_to_numpy(ops.softmax(ops.convert_to_tensor(z, dtype="float64"), axis=axis))


def _run(stable_softmax, z, **kwargs):
    try:
        with refusing(library_softmaxes(), stable_softmax, RULE, modules=LIBRARIES):
            result = call(stable_softmax, "stable_softmax", z, **kwargs)
    except AssertionError as error:
        if "broadcast" in str(error):
            raise AssertionError(
                f"{error}. The maximum and the sum along `axis` lose that axis unless you pass "
                "keepdims=True; then they broadcast back against z."
            ) from None
        raise
    with np.errstate(all="ignore"):
        return to_numpy(result, "The result of `stable_softmax`")


def _naive(z, axis=-1):
    with np.errstate(all="ignore"):
        e = np.exp(z)
        return e / np.sum(e, axis=axis, keepdims=True)


def _global_max(z, axis=-1):
    with np.errstate(all="ignore"):
        e = np.exp(z - np.max(z))
        return e / np.sum(e, axis=axis, keepdims=True)


def _no_keepdims(z, axis=-1):
    """The maximum taken without keepdims: None where the shapes do not even broadcast."""
    try:
        with np.errstate(all="ignore"):
            e = np.exp(z - np.max(z, axis=axis))
            return e / np.sum(e, axis=axis, keepdims=True)
    except ValueError:
        return None


def _same_with_nan(actual, wrong):
    wrong = np.asarray(wrong, dtype="float64")
    return (actual.shape == wrong.shape and np.any(np.isnan(wrong))
            and np.allclose(actual, wrong, atol=1e-6, equal_nan=True))


@test_case(points=1)
def ordinary_logits(stable_softmax):
    z = np.random.default_rng(0).normal(scale=3.0, size=(4, 6))
    got = _run(stable_softmax, z.copy())
    if like(got, _reference(z, axis=0), atol=1e-6):
        raise AssertionError(
            "Each column of your result sums to 1: you normalised along axis 0. The default is "
            "axis=-1, the last axis (in attention: over the keys of one query)."
        )
    close(got, _reference(z), "stable_softmax(z) for a (4, 6) array of ordinary logits", atol=1e-6,
          hint="softmax(z)_i = exp(z_i - m) / sum_j exp(z_j - m), m the largest entry of the same row.")


@test_case(points=1)
def extreme_logits(stable_softmax):
    z = np.array([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1002.0], [1000.0, 0.0, -1000.0]],
                 dtype="float32")
    got = _run(stable_softmax, z.copy())
    if _same_with_nan(got, _naive(z)):
        raise AssertionError(
            "This is the formula as written: exp(1000) overflows to inf (inf / inf = nan) and "
            "exp(-1000) underflows to 0 (0 / 0 = nan). Subtract each row's maximum before exp."
        )
    if _same_with_nan(got, _global_max(z)):
        raise AssertionError(
            "The row [-1000, -1001, -1002] gives nan: you subtracted the largest entry of the whole "
            "array (1000), so every exp of that row underflows to 0. Subtract each row's own maximum: "
            "np.max(z, axis=axis, keepdims=True)."
        )
    close(got, _reference(z), "stable_softmax(z) for logits of +-1000", atol=1e-6,
          hint="Shift each row by its own maximum: the largest exponent is then e^0 = 1 and the "
          "denominator at least 1.")


@test_case(points=1)
def any_axis(stable_softmax):
    rng = np.random.default_rng(1)
    square = rng.normal(scale=2.0, size=(3, 3))
    cube = rng.normal(scale=2.0, size=(2, 3, 4))
    for z, axis in [(square, -1), (square, 0), (cube, 1), (cube, -1)]:
        got = _run(stable_softmax, z.copy(), axis=axis)
        what = f"stable_softmax(z, axis={axis}) for z of shape {z.shape}"
        if axis not in (-1, z.ndim - 1) and like(got, _reference(z, axis=-1), atol=1e-6):
            raise AssertionError(f"{what} is the softmax along the last axis: use the `axis` argument.")
        reference = _reference(z, axis=axis)
        wrong = _no_keepdims(z, axis)
        if wrong is not None and not np.allclose(wrong, reference, atol=1e-6) and like(got, wrong, atol=1e-6):
            raise AssertionError(
                f"{what} is wrong: the maximum, taken without keepdims=True, was subtracted along the "
                "wrong axis (a square matrix hides it: the shapes still broadcast). Use "
                "np.max(z, axis=axis, keepdims=True)."
            )
        close(got, reference, what, atol=1e-6,
              hint="Take the maximum and the sum along `axis`, with keepdims=True.")


@test_case(points=1)
def leaves_its_input_alone(stable_softmax):
    z = np.random.default_rng(2).normal(size=(2, 5))
    before = z.copy()
    _run(stable_softmax, z)  # a placeholder or a crash fails here, with its message
    try:  # `call` hands the function a copy: call it on z itself to see whether it changes it
        with np.errstate(all="ignore"), refusing(library_softmaxes(), stable_softmax, RULE, modules=LIBRARIES):
            stable_softmax(z)
    except Exception:
        pass
    if not np.array_equal(z, before):
        raise AssertionError(
            "`stable_softmax` changed the array it was given (an in-place `z -= ...`). Write "
            "z = z - np.max(...) instead: the caller's logits must stay as they were."
        )


def _blocked_reference(z, axis=-1):
    """The softmax with -inf entries: 0 for them, and all zeros for a slice of -inf only."""
    m = np.max(z, axis=axis, keepdims=True)
    e = np.exp(z - np.where(np.isneginf(m), 0.0, m))
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


@test_case(points=1)
def blocked_logits(stable_softmax):
    inf = np.inf
    z = np.array([[0.0, -inf, 1.0, -inf],      # two blocked keys
                  [-inf, -inf, -inf, -inf],    # nothing to attend to
                  [1000.0, -inf, 999.0, 0.0],  # large and blocked
                  [-inf, -1000.0, -inf, -inf]])
    for array, axis in [(z, -1), (z.T.copy(), 0)]:
        got = _run(stable_softmax, array.copy(), axis=axis)
        expected = _blocked_reference(array, axis=axis)
        what = f"stable_softmax(z, axis={axis}) for logits with -inf entries (blocked keys)"
        empty = np.broadcast_to(np.all(np.isneginf(array), axis=axis, keepdims=True), array.shape)
        if got.shape == array.shape and np.all(np.isfinite(got[~empty])) and np.allclose(
                got[~empty], expected[~empty], atol=1e-6):
            if np.any(np.isnan(got[empty])):
                raise AssertionError(
                    f"{what}: the slice whose entries are all -inf gives nan. Its maximum is itself -inf, "
                    "and -inf - (-inf) is nan. A slice with nothing to attend to must give all-zero weights: "
                    "shift it by something finite, and do not divide by its sum of 0."
                )
            if np.any(got[empty] > 0):
                raise AssertionError(
                    f"{what}: the slice whose entries are all -inf gets weights that are not 0 (a finite "
                    "number put in place of -inf?). Every key of that slice is blocked: each must get exactly 0."
                )
        close(got, expected, what, atol=1e-6,
              hint="A -inf entry is a blocked key: its weight is exactly 0, and the other entries of its "
              "slice share the weight as usual.")

"""Exercise: RMSNorm, layer norm without the mean and without beta.

The public cases check rms_norm and the form of rmsnorm_keeps; which invariance it names is
checked by a hidden case, when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-layernorm-rmsnorm"
points = 3

TINY = np.array(
    [[[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 6.0], [0.0, -1.0, 1.0, 0.0]],
     [[10.0, 20.0, 30.0, 40.0], [5.0, 5.0, 5.0, 5.0], [4.0, 3.0, 2.0, 1.0]]],
    dtype="float32",
)


def _rms_norm(x, gamma, eps, eps_outside=False, divide_by_d=True, centred=False):
    """RMSNorm in float64; the flags give known mistakes (`centred`: the variance around the mean)."""
    x = np.asarray(x, dtype="float64")
    squares = (x - x.mean(axis=-1, keepdims=True)) ** 2 if centred else x**2
    mean_square = np.mean(squares, axis=-1, keepdims=True) if divide_by_d else np.sum(squares, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return gamma * x / (np.sqrt(mean_square) + eps if eps_outside else np.sqrt(mean_square + eps))


def _layer_norm(x, gamma, eps):
    layer = mt.LayerNormalization(epsilon=eps)
    layer.build(np.shape(x))
    layer.gamma.assign(gamma)  # beta stays 0
    return to_numpy(layer(np.asarray(x, dtype="float32")), "")


def _compare(rms_norm, x, gamma, eps, case):
    got = call(rms_norm, "rms_norm", x, gamma, eps=eps)
    expected = _rms_norm(x, gamma, eps)
    if like(got, expected, atol=1e-5):
        return
    known = [
        (_layer_norm(x, gamma, eps),
         "You subtracted the mean: that is layer norm (with beta = 0). RMSNorm divides x itself by its "
         "root mean square, sqrt(mean(x^2) + eps), with no re-centering."),
        (_rms_norm(x, gamma, eps, centred=True),
         "You divided x by its standard deviation around the mean, sqrt(mean((x - mu)^2) + eps). RMS uses "
         "mean(x^2), the mean of the squares of x itself, without subtracting mu."),
        (_rms_norm(x, gamma, eps, eps_outside=True),
         "You added eps to the root mean square, x / (RMS(x) + eps). That is the other convention (the "
         "RMSNorm authors' own PyTorch code uses it), but the task's formula puts eps inside the root: "
         "sqrt(mean(x^2) + eps)."),
        (_rms_norm(x, gamma, 0.0),
         "You left out eps: x / sqrt(mean(x^2)). The task's formula adds it inside the root, "
         "sqrt(mean(x^2) + eps), and it matters where the RMS is not much larger than sqrt(eps)."),
        (_rms_norm(x, gamma, eps, divide_by_d=False),
         "You divided by the root of the SUM of the squares: RMS is the root of their MEAN (divide by D)."),
        (_rms_norm(x, 1.0, eps), "Your output does not use gamma: RMSNorm(x) = gamma * x / RMS(x)."),
    ]
    for wrong, message in known:
        if np.all(np.isfinite(wrong)) and like(got, wrong, atol=1e-5):
            raise AssertionError(f"{case}: {message}")
    close(got, expected, f"{case}: rms_norm(x, gamma)", atol=1e-5,
          hint="RMSNorm(x)_i = gamma_i * x_i / sqrt(mean over the last axis of x^2 + eps).")


@test_case(points=1)
def equals_layer_norm_on_centred_inputs(rms_norm):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 8))
    x = (x - x.mean(-1, keepdims=True)).astype("float32")  # every position has mean 0
    gamma = rng.normal(1.0, 0.5, size=8).astype("float32")
    got = call(rms_norm, "rms_norm", x, gamma, eps=1e-6)
    close(got, _layer_norm(x, gamma, 1e-6), "On inputs whose positions have mean 0, rms_norm(x, gamma)",
          atol=1e-5, hint="There mean(x^2) is the variance, and RMSNorm must equal layer norm with beta = 0.")


@test_case(points=1)
def differs_from_layer_norm_otherwise(rms_norm):
    rng = np.random.default_rng(1)
    gamma = np.array([1.0, 2.0, 0.5, -1.0], dtype="float32")
    _compare(rms_norm, TINY, gamma, 1e-6, "On the tiny (2, 3, 4) batch")
    x = (rng.uniform(-2, 2, size=(5, 1)) + rng.normal(size=(5, 6))).astype("float32")
    x[-1] *= 1e-4  # a position with a tiny root mean square
    _compare(rms_norm, x, rng.normal(1.0, 0.5, size=6).astype("float32"), 1e-6,
             "On a (5, 6) input whose last row has an RMS of about 1e-4")


def _invariance(rmsnorm_keeps):
    answered(rmsnorm_keeps, "rmsnorm_keeps")
    if not isinstance(rmsnorm_keeps, str) or rmsnorm_keeps.strip().lower() not in ("scale", "shift"):
        raise AssertionError('`rmsnorm_keeps` must be the string "scale" or "shift".')
    return rmsnorm_keeps.strip().lower()


@test_case(points=1)
def which_invariance(rmsnorm_keeps):
    _invariance(rmsnorm_keeps)  # the form only: which one is right is for the graded notebook's hidden case

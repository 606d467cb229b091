"""Exercise: layer normalization over the last axis, written from its equation."""

import itertools

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import LIBRARIES, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-layernorm-implement"
points = 3


def _reference(x, gamma, beta, eps):
    layer = mt.LayerNormalization(epsilon=eps)
    layer.build(x.shape)
    layer.gamma.assign(gamma)
    layer.beta.assign(beta)
    return to_numpy(layer(x), "")


def _normalize(x, gamma, beta, eps, axes=(-1,), ddof=0, eps_on_sigma=False):
    """Layer norm's formula in float64, with the statistics over `axes` (a known mistake if not -1)."""
    x = np.asarray(x, dtype="float64")
    mu = x.mean(axis=axes, keepdims=True)
    n = np.prod([x.shape[a] for a in axes])
    var = ((x - mu) ** 2).sum(axis=axes, keepdims=True) / (n - ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_hat = (x - mu) / (np.sqrt(var) + eps if eps_on_sigma else np.sqrt(var + eps))
    return gamma * x_hat + beta, x_hat


def _mistakes(x, gamma, beta, eps):
    """(wrong output, message) for each known mistake, most specific first."""
    last = x.ndim - 1
    sketch = ("This is (x - mu) / (sigma + eps), the equation of the PyTorch-sketch chapter: "
              "eps is added to the standard deviation, outside the square root. On rows with a "
              "tiny spread it blows the noise up to unit variance "
              "instead of shrinking it. Add eps to the variance: (x - mu) / sqrt(sigma^2 + eps).")
    found = [
        (_normalize(x, gamma, beta, eps, eps_on_sigma=True)[0], sketch),
        # Before the Annotated Transformer's: on ordinary rows the place of eps does not show.
        (_normalize(x, gamma, beta, eps, ddof=1)[0],
         "You divided the variance by D - 1 (ddof=1, the default of torch.var and pandas): layer "
         "norm uses the biased variance, the mean of the squared deviations (divide by D)."),
        (_normalize(x, gamma, beta, eps, ddof=1, eps_on_sigma=True)[0],
         "This is the Annotated Transformer's layer norm, (x - mu) / (std + eps) with PyTorch's unbiased "
         "std (divide by D - 1): use the biased variance (divide by D) and put eps inside the square "
         "root: (x - mu) / sqrt(sigma^2 + eps)."),
        (_normalize(x, gamma, beta, 1e-6 if eps != 1e-6 else 1e-3)[0],
         f"Your function ignores its `eps` argument: called with eps={eps:g}, it used another value."),
        (_normalize(x, beta, gamma, eps)[0], "gamma and beta are swapped: the output is gamma * x_hat + beta."),
        (_normalize(x, gamma, beta, eps)[1], "Your output is x_hat, without gamma and beta: return gamma * x_hat + beta."),
    ]
    with np.errstate(divide="ignore", invalid="ignore"):
        x64 = np.asarray(x, dtype="float64")
        mu = x64.mean(axis=-1, keepdims=True)
        no_eps = gamma * (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(axis=-1, keepdims=True)) + beta
    for size in range(1, x.ndim + 1):
        for axes in itertools.combinations(range(x.ndim), size):
            if axes == (last,):
                continue
            if size == x.ndim:
                message = ("You used one mean and one variance for the whole tensor, as "
                           "keras.layers.Normalization(axis=None) does (the head-splitting walkthrough's "
                           "layer). Layer norm computes them for each position, over its last axis only: "
                           "axis=-1 with keepdims=True.")
            elif axes == tuple(range(last)):
                message = ("Your statistics are taken for each feature, over all the positions of the "
                           "batch: that is batch normalization. Layer norm takes them over the last axis "
                           "(the D features of one position): axis=-1, keepdims=True.")
            else:
                where = f"axis {axes[0]}" if size == 1 else f"the axes {axes}"
                message = (f"Your statistics are taken over {where}. Layer norm takes them over the last "
                           "axis only (the D features of one position): axis=-1, keepdims=True.")
            found.append((_normalize(x, gamma, beta, eps, axes=axes)[0], message))
    return found, no_eps


def _content(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


class _Refused(Exception):
    """Raised by a normalization layer or op that the student's function called."""


RULE = ("This exercise asks you to write layer norm from its equation, with NumPy or keras.ops: the mean "
        "and the biased variance of the last axis, eps inside the square root, then gamma and beta. Do not "
        "call a normalization layer or op.")

# What `refusing` records (the function's __name__), as the student would have written it.
_OP_NAMES = {"layer_normalization": "keras.ops.layer_normalization",
             "rms_normalization": "keras.ops.rms_normalization",
             "batch_normalization": "a batch_normalization op (keras.ops or tf.nn)",
             "fused_batch_norm": "tf.nn.fused_batch_norm"}


def _normalization_ops():
    """Keras's and TensorFlow's normalization functions: with them, layer norm is one call."""
    import keras
    import tensorflow as tf

    found = [getattr(keras.ops, n, None)
             for n in ("layer_normalization", "rms_normalization", "batch_normalization")]
    found += [getattr(tf.nn, n, None) for n in ("batch_normalization", "fused_batch_norm")]
    return [f for f in found if f is not None]


def _call_without_normalization_layers(my_layer_norm, *args, **kwargs):
    """Call the student's function with the normalization layers and ops of Keras, TensorFlow and the
    package disabled (restored afterwards): the exercise asks for layer norm written from its equation."""
    import keras

    used = []
    classes = [mt.LayerNormalization] + [
        getattr(keras.layers, n) for n in ("LayerNormalization", "Normalization", "BatchNormalization",
                                           "GroupNormalization", "RMSNormalization", "UnitNormalization")
        if hasattr(keras.layers, n)]

    def refuse(what):
        def refused(*a, **k):
            used.append(what)
            raise _Refused(f"{what} is not allowed in this exercise: write layer norm from its equation.")
        return refused

    saved_classes = [(cls, cls.__dict__.get("__call__")) for cls in classes]
    functions = _normalization_ops()
    # `refusing` replaces every binding of these functions in Keras's, TensorFlow's and the package's
    # modules and in the student's notebook; a closure (`from keras.ops import ...` inside a function)
    # is replaced here.
    cells = [c for c in (getattr(my_layer_norm, "__closure__", None) or ())
             if any(_content(c) is f for f in functions)]
    saved_cells = [(c, c.cell_contents) for c in cells]
    ops_used = []
    try:
        for cls in classes:
            cls.__call__ = refuse("mt.LayerNormalization" if cls is mt.LayerNormalization
                                  else f"keras.layers.{cls.__name__}")
        for c, v in saved_cells:
            c.cell_contents = refuse(_OP_NAMES.get(v.__name__, v.__name__))
        try:
            with refusing(functions, my_layer_norm, RULE, modules=LIBRARIES) as ops_used:
                result = call(my_layer_norm, "my_layer_norm", *args, **kwargs)
        except AssertionError as error:
            if not used and not ops_used and str(error) != RULE:
                raise
            result = None
            if not used and not ops_used:  # the student's name is itself a refused function
                used.append("a normalization op")
    finally:
        for cls, original in saved_classes:
            if original is None:
                del cls.__call__
            else:
                cls.__call__ = original
        for c, v in saved_cells:
            c.cell_contents = v
    used += [_OP_NAMES.get(n, n) for n in ops_used]
    if used:
        raise AssertionError(f"Your function calls {used[0]}. {RULE}")
    return result


def _compare(my_layer_norm, x, gamma, beta, eps, case):
    result = _call_without_normalization_layers(my_layer_norm, x, gamma, beta, eps=eps)
    expected = _reference(x, gamma, beta, eps)
    if like(result, expected, atol=1e-5):
        return
    got = to_numpy(result, "The output of `my_layer_norm`")
    if got.shape == expected.shape:
        mistakes, no_eps = _mistakes(x, gamma, beta, eps)
        for wrong, message in mistakes:
            if np.all(np.isfinite(wrong)) and like(got, wrong, atol=1e-5):
                raise AssertionError(f"{case}: {message}")
        if not np.all(np.isfinite(got)) and np.any(~np.isfinite(no_eps)):
            raise AssertionError(
                f"{case}: NaN or inf on the constant row (sigma = 0). Add eps to the variance, inside "
                "the square root: it keeps the division finite."
            )
    close(got, expected, f"{case}: the output of `my_layer_norm`", atol=1e-5,
          hint="LN(x) = gamma * (x - mu) / sqrt(sigma^2 + eps) + beta, with mu and the biased variance "
          "sigma^2 of each position's D features (the last axis).")


def _gamma_beta(rng, d):
    return (rng.normal(1.0, 0.5, size=d).astype("float32"), rng.normal(0.0, 0.5, size=d).astype("float32"))


@test_case(points=1)
def ordinary_inputs(my_layer_norm):
    rng = np.random.default_rng(0)
    scale = rng.uniform(0.5, 5.0, size=(3, 5, 1))
    offset = rng.uniform(-4.0, 4.0, size=(3, 5, 1))
    x = (offset + scale * rng.normal(size=(3, 5, 16))).astype("float32")  # (B, T, D)
    _compare(my_layer_norm, x, *_gamma_beta(rng, 16), 1e-6, "On random (3, 5, 16) inputs")


@test_case(points=1)
def rows_with_a_tiny_variance(my_layer_norm):
    rng = np.random.default_rng(1)
    z = rng.normal(size=(2, 6, 32))
    z = (z - z.mean(-1, keepdims=True)) / z.std(-1, keepdims=True)  # each row: mean 0, std 1
    spread = np.array([[1.0, 1e-2, 1e-3, 1e-4, 1e-5, 0.0], [3.0, 1e-1, 3e-3, 3e-4, 3e-5, 0.0]])
    x = (spread[..., None] * z).astype("float32")  # row (b, t) has standard deviation spread[b, t]
    _compare(my_layer_norm, x, *_gamma_beta(rng, 32), 1e-6,
             "On rows whose spread sigma goes from 3 down to 1e-5 and 0")


@test_case(points=1)
def another_shape_and_epsilon(my_layer_norm):
    rng = np.random.default_rng(2)
    spread = np.array([2.0, 1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 0.0])[:, None]
    x = (rng.uniform(-1, 1, size=(8, 1)) + spread * rng.normal(size=(8, 12))).astype("float32")  # (N, D)
    _compare(my_layer_norm, x, *_gamma_beta(rng, 12), 1e-3,
             "On a (8, 12) input with eps=1e-3")

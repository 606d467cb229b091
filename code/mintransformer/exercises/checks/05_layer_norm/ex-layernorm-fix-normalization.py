"""Exercise: find and fix the head-splitting walkthrough's Normalization(axis=None) "layer norm"."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-layernorm-fix-normalization"
points = 3

D = 16


def _inputs():
    """x and a sublayer_output whose sum has rows of every spread, from 2 down to 0.03."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, D)).astype("float32")
    spread = np.array([[1.0, 0.5, 0.1, 0.05, 0.03], [2.0, 1.0, 0.2, 0.04, 0.08]])[..., None]
    y = (rng.uniform(-1, 1, size=(2, 5, 1)) + spread * rng.normal(size=(2, 5, D)) - x).astype("float32")
    return x, y


def _ln(v, epsilon=1e-6):
    return to_numpy(mt.LayerNormalization(epsilon=epsilon)(np.asarray(v, dtype="float32")), "")


def _wrong_normalizations(layer):
    """Messages for the keras.layers.Normalization / BatchNormalization layers that `layer` uses."""
    import keras

    wrong = {
        keras.layers.Normalization: (
            "Your AddAndNorm uses keras.layers.Normalization, the walkthrough's layer. Whatever its axis, "
            "it is a preprocessing layer, not a layer norm: its mean and variance are frozen (set by adapt(), "
            "never learned, the same for every input), and it has no gamma or beta. (With axis=-1, created in "
            "your layer's __init__, it even fails, with an \"out of scope\" TypeError.) Layer norm takes the "
            "statistics of each position from the input itself, over its D features, and learns gamma and "
            "beta."),
        keras.layers.BatchNormalization: (
            "Your AddAndNorm uses keras.layers.BatchNormalization: it normalizes each feature with statistics "
            "taken over the batch (and moving averages at inference), that is batch normalization. Layer norm "
            "normalizes each position over its own D features, whatever else is in the batch."),
    }
    found = []
    flatten = getattr(layer, "_flatten_layers", None)
    if callable(flatten):
        try:
            found += list(flatten(include_self=False, recursive=True))
        except Exception:
            pass
    method = getattr(type(layer), "call", None)  # a module-level layer used by call, like the walkthrough's
    code, names = getattr(method, "__code__", None), getattr(method, "__globals__", {})
    if code is not None:
        found += [names[n] for n in code.co_names if n in names]
    for cls, message in wrong.items():
        if any(isinstance(sub, cls) for sub in found):
            raise AssertionError(message)


def _new_layer(AddAndNorm):
    answered(AddAndNorm, "AddAndNorm")
    layer = call(AddAndNorm, "AddAndNorm")
    if not callable(layer):
        raise AssertionError("`AddAndNorm()` must build a layer: define `class AddAndNorm(keras.layers.Layer)`.")
    _wrong_normalizations(layer)
    return layer


def _output(layer, x, y):
    try:
        result = call(layer, "AddAndNorm()", x, y)
    except AssertionError:
        _wrong_normalizations(layer)  # sub-layers made in build(): say which is wrong before the crash
        raise
    _wrong_normalizations(layer)
    return to_numpy(result, "The output of AddAndNorm()(x, sublayer_output)")


@test_case(points=1)
def normalizes_each_position_of_the_sum(AddAndNorm):
    x, y = _inputs()
    got = _output(_new_layer(AddAndNorm), x, y)
    expected = _ln(x + y)
    if like(got, expected, atol=1e-5):
        return
    s = (x + y).astype("float64")
    known = [
        (s, "Your layer returns x + sublayer_output unchanged: nothing normalizes it (an un-adapted "
            "keras.layers.Normalization does this, and so does BatchNormalization in inference mode). Layer "
            "norm standardizes each position over its D features: LayerNorm(x + Sublayer(x))."),
        ((s - s.mean()) / np.sqrt(s.var() + 1e-6),
         "You normalized with one mean and one variance for the whole tensor, what an adapted "
         "Normalization(axis=None) does. Layer norm computes them for each position, over its D features."),
    ]
    for eps in (1e-6, 1e-3):  # 1e-3: BatchNormalization's default
        known.append(((s - s.mean(axis=(0, 1))) / np.sqrt(s.var(axis=(0, 1)) + eps),
                      "You normalized each feature with its mean and variance over all the positions of the "
                      "batch: that is batch normalization. Layer norm computes them for each position, over "
                      "its D features (the last axis)."))
    mu = s.mean(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma_eps = (s - mu) / (s.std(axis=-1, keepdims=True) + 1e-6)
        unbiased = (s - mu) / np.sqrt(s.var(axis=-1, ddof=1, keepdims=True) + 1e-6)
        annotated = (s - mu) / (s.std(axis=-1, ddof=1, keepdims=True) + 1e-6)
    known += [
        (sigma_eps,
         "This is (x - mu) / (sigma + eps), the PyTorch-sketch chapter's equation: eps is added to the standard "
         "deviation. The paper's reference code (and Keras, PyTorch's nn.LayerNorm, the package) adds it to the "
         "variance, inside the square root; the rows with a small spread show the difference."),
        (unbiased,
         "You divided the variance by D - 1 (ddof=1, the default of torch.var and torch.std): layer norm "
         "uses the biased variance, the mean of the squared deviations (divide by D)."),
        (annotated,
         "This is the Annotated Transformer's layer norm, (x - mu) / (std + eps) with the unbiased std "
         "(divide by D - 1). Layer norm as the paper's reference code computes it uses the biased variance "
         "(divide by D), with eps inside the square root."),
        (_ln(x + y, 1e-3),
         "This is layer norm with epsilon = 1e-3, Keras's default for LayerNormalization. The paper's "
         "reference code and this book use 1e-6: pass epsilon=1e-6 (the rows with a small spread show "
         "the difference)."),
        (_ln(y), "You normalized sublayer_output alone: the residual connection is missing. The paper's "
                 "sub-layer output is LayerNorm(x + Sublayer(x))."),
        (x + _ln(y), "This is x + LN(sublayer_output): you normalized the sub-layer's output, not the sum. "
                     "The paper (post-norm) returns LayerNorm(x + Sublayer(x))."),
        (_ln(x) + y, "You normalized x and then added sublayer_output. Normalize the sum: LayerNorm(x + Sublayer(x))."),
    ]
    for wrong, message in known:
        if like(got, wrong, atol=1e-5):
            raise AssertionError(message)
    close(got, expected, "AddAndNorm()(x, sublayer_output)", atol=1e-5,
          hint="It must return LayerNorm(x + sublayer_output), with epsilon = 1e-6, gamma = 1 and beta = 0 "
          "at the start.")


@test_case(points=1)
def has_gamma_and_beta(AddAndNorm):
    x, y = _inputs()
    layer = _new_layer(AddAndNorm)
    _output(layer, x, y)  # builds the layer
    weights = getattr(layer, "trainable_weights", None)
    if weights is None:
        raise AssertionError("`AddAndNorm` must be a Keras layer (a subclass of keras.layers.Layer).")
    count = sum(int(np.prod(w.shape)) for w in weights)
    if count == 0:
        raise AssertionError(
            "Your layer has no trainable weights. Layer norm learns a gamma and a beta for each of the "
            f"D = {D} features (the walkthrough's Normalization has only frozen statistics)."
        )
    if count != 2 * D:
        raise AssertionError(
            f"Your layer has {count} trainable numbers; layer norm has 2 D = {2 * D} (gamma and beta, "
            "one of each per feature), and the addition has none."
        )


@test_case(points=1)
def gamma_and_beta_act(AddAndNorm):
    x, y = _inputs()
    layer = _new_layer(AddAndNorm)
    _output(layer, x, y)  # builds the layer
    weights = list(getattr(layer, "trainable_weights", []))
    if not weights:
        raise AssertionError("Your layer has no trainable weights: it needs a gamma and a beta.")
    for w in weights:  # gamma: 1 -> 2.5, beta: 0 -> 0.5
        w.assign(to_numpy(w, "a weight") * 2.0 + 0.5)
    expected = 2.5 * _ln(x + y) + 0.5  # (otter shows the failing line, the close() below)
    close(_output(layer, x, y), expected,
          "After setting gamma to 2.5 and beta to 0.5, AddAndNorm()(x, sublayer_output)", atol=1e-5,
          hint="The output must be gamma * x_hat + beta with the layer's own trainable gamma and beta "
          "(start them at 1 and 0).")

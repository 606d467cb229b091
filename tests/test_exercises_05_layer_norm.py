"""Chapter 5's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import keras
import numpy as np
import pytest
from keras import ops

import mintransformer as mt

CHAPTER = "05_layer_norm"


def check(label, **env):
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


class StubLayer(keras.layers.Layer):
    def call(self, x, sublayer_output):
        raise NotImplementedError


@pytest.mark.parametrize("label,names", [
    ("ex-layernorm-implement", {"my_layer_norm": stub}),
    ("ex-layernorm-invariance", {"predict_affine": stub, "scaled_row": ..., "reversed_row": ...}),
    ("ex-layernorm-epsilon", {"sigma_small_eps": ..., "sigma_keras_eps": ...}),
    ("ex-layernorm-fix-normalization", {"AddAndNorm": StubLayer}),
    ("ex-layernorm-rmsnorm", {"rms_norm": stub, "rmsnorm_keeps": ...}),
    ("ex-layernorm-count", {"count_norm_params": stub}),
])
def test_blank_answers_fail_and_say_so(label, names):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text, text
    passed, text = check(label, **names)  # the work cells as given
    assert not passed and ("still `...`" in text or "NotImplementedError" in text), text
    assert "is not defined" not in text, text


# --- ex-layernorm-implement ------------------------------------------------------------------------

def _layer_norm(axis=-1, ddof=0, eps_on_sigma=False, use_eps=True, affine=True, swap=False, fixed_eps=None):
    """Layer norms with one mistake each."""
    def layer_norm(x, gamma, beta, eps=1e-6):
        eps = fixed_eps if fixed_eps is not None else eps
        x = np.asarray(x, dtype="float64")
        mu = x.mean(axis=axis, keepdims=True)
        sigma = x.std(axis=axis, ddof=ddof, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):  # no eps: 0 / 0 on the constant row
            if eps_on_sigma:
                x_hat = (x - mu) / (sigma + eps)
            else:
                x_hat = (x - mu) / np.sqrt(sigma**2 + (eps if use_eps else 0.0))
        if swap:
            gamma, beta = beta, gamma
        return gamma * x_hat + beta if affine else x_hat
    return layer_norm


@pytest.mark.parametrize("wrong,message", [
    (_layer_norm(eps_on_sigma=True), "(x - mu) / (sigma + eps), the equation of the PyTorch-sketch chapter"),
    (_layer_norm(eps_on_sigma=True, ddof=1), "with the unbiased sigma"),
    (_layer_norm(axis=None), "keras.layers.Normalization(axis=None)"),
    (_layer_norm(axis=(0, 1)), "that is batch normalization"),
    (_layer_norm(axis=1), "taken over axis 1"),
    (_layer_norm(ddof=1), "ddof=1"),
    (_layer_norm(fixed_eps=1e-6), "ignores its `eps` argument"),
    (_layer_norm(fixed_eps=1e-3), "ignores its `eps` argument"),
    (_layer_norm(swap=True), "gamma and beta are swapped"),
    (_layer_norm(affine=False), "without gamma and beta"),
    (_layer_norm(use_eps=False), "NaN or inf on the constant row"),
])
def test_implement_rejects_the_known_wrong_layer_norms(wrong, message):
    passed, text = check("ex-layernorm-implement", my_layer_norm=wrong)
    assert not passed and message in text, text


def test_implement_names_the_sketch_on_the_tiny_variance_rows():
    result = mt.exercises.run_check(CHAPTER, "ex-layernorm-implement",
                                    {"my_layer_norm": _layer_norm(eps_on_sigma=True)})
    # (x - mu) / (sigma + eps) agrees on ordinary rows: only the small-variance cases catch it.
    assert [r.passed for r in result.test_case_results] == [True, False, False]
    assert "PyTorch-sketch chapter" in result.summary()


def test_implement_accepts_right_answers():
    def with_keras_ops(x, gamma, beta, eps=1e-6):
        x = ops.convert_to_tensor(x)
        mu = ops.mean(x, axis=-1, keepdims=True)
        return gamma * (x - mu) / ops.sqrt(ops.var(x, axis=-1, keepdims=True) + eps) + beta

    def with_keras_layer(x, gamma, beta, eps=1e-6):  # the exercise says not to, but it is right
        layer = keras.layers.LayerNormalization(epsilon=eps)
        layer.build(np.shape(x))
        layer.gamma.assign(gamma)
        layer.beta.assign(beta)
        return layer(x)

    for right in (_layer_norm(), with_keras_ops, with_keras_layer):
        passed, text = check("ex-layernorm-implement", my_layer_norm=right)
        assert passed, text


# --- ex-layernorm-invariance -----------------------------------------------------------------------

RIGHT_ROWS = {"scaled_row": (1, 0), "reversed_row": (1, 2)}


@pytest.mark.parametrize("wrong,message", [
    (lambda ln_x, a, c: a * ln_x + c, "you returned a * LN(x) + c"),
    (lambda ln_x, a, c: ln_x, "you returned LN(x). For a < 0"),
    (lambda ln_x, a, c: ln_x + c, "Work out the mean and the variance"),
])
def test_invariance_rejects_wrong_predictions(wrong, message):
    passed, text = check("ex-layernorm-invariance", predict_affine=wrong, **RIGHT_ROWS)
    assert not passed and message in text, text


@pytest.mark.parametrize("rows,message", [
    ({"scaled_row": (0, 0), "reversed_row": (1, 2)}, "the ramp itself"),
    ({"scaled_row": (1, 2), "reversed_row": (1, 2)}, "a * [1, 2, 3, 4] + c with a > 0"),
    ({"scaled_row": (1, 0), "reversed_row": (1, 0)}, "a * [1, 2, 3, 4] + c with a < 0"),
    ({"scaled_row": 3, "reversed_row": (1, 2)}, "must be a pair (b, t)"),
])
def test_invariance_rejects_wrong_rows(rows, message):
    passed, text = check("ex-layernorm-invariance", predict_affine=lambda ln_x, a, c: np.sign(a) * ln_x, **rows)
    assert not passed and message in text, text


# --- ex-layernorm-epsilon --------------------------------------------------------------------------

@pytest.mark.parametrize("small,keras_eps,message", [
    (0.00707, 0.2236, "first-order estimate"),
    (0.00705, 0.223, "you left out the eps"),
    (0.178, 0.00700, "is the answer for eps = 0.001"),
    (0.0071, 0.19, "give it to 3 significant digits"),
])
def test_epsilon_rejects_the_estimates(small, keras_eps, message):
    passed, text = check("ex-layernorm-epsilon", sigma_small_eps=small, sigma_keras_eps=keras_eps)
    assert not passed and message in text, text


def test_epsilon_accepts_three_digits():
    passed, text = check("ex-layernorm-epsilon", sigma_small_eps=0.00700, sigma_keras_eps=0.178)
    assert passed, text


# --- ex-layernorm-fix-normalization ----------------------------------------------------------------

def _add_norm(body, weights=True):
    """A Keras layer (x, sublayer_output) -> body(self, x, y), with gamma and beta when `weights`."""
    class Layer(keras.layers.Layer):
        def build(self, input_shape):
            if weights:
                d = input_shape[-1]
                self.gamma = self.add_weight(shape=(d,), initializer="ones", name="gamma")
                self.beta = self.add_weight(shape=(d,), initializer="zeros", name="beta")

        def call(self, x, sublayer_output):
            return body(self, x, sublayer_output)
    return Layer


def _ln(v, eps=1e-6):
    mu = ops.mean(v, axis=-1, keepdims=True)
    return (v - mu) / ops.sqrt(ops.var(v, axis=-1, keepdims=True) + eps)


class Walkthrough(keras.layers.Layer):
    def build(self, input_shape):
        self.normalization = keras.layers.Normalization(axis=None)
        self.normalization.build(input_shape)

    def call(self, x, sublayer_output):
        return self.normalization(sublayer_output + x)


@pytest.mark.parametrize("wrong,message", [
    (Walkthrough, "Still the walkthrough's bug"),
    (_add_norm(lambda self, x, y: (x + y - ops.mean(x + y)) / ops.sqrt(ops.var(x + y) + 1e-6), weights=False),
     "one mean and one variance for the whole tensor"),
    (_add_norm(lambda self, x, y: self.gamma * _ln(x + y, 1e-3) + self.beta), "epsilon = 1e-3, Keras's default"),
    (_add_norm(lambda self, x, y: self.gamma * _ln(y) + self.beta), "the residual connection is missing"),
    (_add_norm(lambda self, x, y: x + self.gamma * _ln(y) + self.beta), "pre-norm's addition"),
    (_add_norm(lambda self, x, y: self.gamma * _ln(x) + self.beta + y), "then added sublayer_output"),
])
def test_fix_rejects_the_walkthrough_and_other_wrong_layers(wrong, message):
    passed, text = check("ex-layernorm-fix-normalization", AddAndNorm=wrong)
    assert not passed and message in text, text


def test_fix_requires_gamma_and_beta():
    no_weights = _add_norm(lambda self, x, y: _ln(x + y), weights=False)
    result = mt.exercises.run_check(CHAPTER, "ex-layernorm-fix-normalization", {"AddAndNorm": no_weights})
    assert [r.passed for r in result.test_case_results] == [True, False, False]
    assert "no trainable weights" in result.summary()

    ignores_them = _add_norm(lambda self, x, y: _ln(x + y))  # has gamma and beta but never uses them
    result = mt.exercises.run_check(CHAPTER, "ex-layernorm-fix-normalization", {"AddAndNorm": ignores_them})
    assert [r.passed for r in result.test_case_results] == [True, True, False]
    assert "After setting gamma to 2.5 and beta to 0.5" in result.summary()

    class TooMany(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.norm = mt.LayerNormalization()
            self.extra = keras.layers.Dense(16)

        def call(self, x, sublayer_output):
            _ = self.extra(x)
            return self.norm(x + sublayer_output)

    passed, text = check("ex-layernorm-fix-normalization", AddAndNorm=TooMany)
    assert not passed and "layer norm has 2 D = 32" in text, text


def test_fix_accepts_keras_layer_norm_with_the_books_epsilon():
    class WithKeras(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.norm = keras.layers.LayerNormalization(epsilon=1e-6)

        def call(self, x, sublayer_output):
            return self.norm(x + sublayer_output)

    passed, text = check("ex-layernorm-fix-normalization", AddAndNorm=WithKeras)
    assert passed, text


# --- ex-layernorm-rmsnorm --------------------------------------------------------------------------

def _right_rms(x, gamma, eps=1e-6):
    return gamma * x / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + eps)


@pytest.mark.parametrize("wrong,message", [
    (lambda x, gamma, eps=1e-6: _layer_norm()(x, gamma, 0.0, eps), "You subtracted the mean: that is layer norm"),
    (lambda x, gamma, eps=1e-6: gamma * x / (np.sqrt(np.mean(np.square(x), -1, keepdims=True)) + eps),
     "outside the square root"),
    (lambda x, gamma, eps=1e-6: gamma * x / np.sqrt(np.sum(np.square(x), -1, keepdims=True) + eps),
     "the root of the SUM"),
    (lambda x, gamma, eps=1e-6: _right_rms(x, 1.0, eps), "does not use gamma"),
])
def test_rmsnorm_rejects_the_wrong_formulas(wrong, message):
    passed, text = check("ex-layernorm-rmsnorm", rms_norm=wrong, rmsnorm_keeps="scale")
    assert not passed and message in text, text


def test_rmsnorm_invariance_answer():
    passed, text = check("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps="shift")
    assert not passed and "Adding c to every feature changes" in text, text
    passed, text = check("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps="both")
    assert not passed and 'the string "scale" or "shift"' in text, text
    passed, text = check("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps=" Scale")
    assert passed, text


# --- ex-layernorm-count ----------------------------------------------------------------------------

def _count(enc=2, dec=3, finals=2, per_norm=2):
    def count(num_layers, d_model, norm_first):
        return (enc * num_layers + dec * num_layers + (finals if norm_first else 0)) * per_norm * d_model
    return count


@pytest.mark.parametrize("wrong,message", [
    (_count(per_norm=1), "gamma and beta: 2 d_model parameters"),
    (_count(dec=2), "3 per decoder layer"),
    (_count(finals=0), "each end with a final layer norm"),
    (lambda n, d, norm_first: (5 * n + 2) * 2 * d, "Post-norm (norm_first=False) has no final layer norm"),
    (_count(dec=0, finals=1), "count the decoder's layer norms too"),
    (lambda n, d, norm_first: 2.5, "must return a whole number"),
    (lambda n, d, norm_first: 30720, "where the package's mt.Encoder and mt.Decoder have"),
])
def test_count_rejects_the_miscounts(wrong, message):
    passed, text = check("ex-layernorm-count", count_norm_params=wrong)
    assert not passed and message in text, text

"""Chapter 5's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import pathlib

import keras
import numpy as np
import pytest
from keras import ops

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught

CHAPTER = "05_layer_norm"
HIDDEN = pathlib.Path(__file__).resolve().parents[1] / "grading" / "hidden" / CHAPTER


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-layernorm-epsilon has per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def graded(label, **env):
    """The check as the instructor grades it: public and hidden cases."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=HIDDEN / f"{label}.py")
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
    (_layer_norm(eps_on_sigma=True, ddof=1), "the Annotated Transformer's layer norm"),
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


def test_implement_names_the_annotated_transformer_and_its_variance():
    result = mt.exercises.run_check(CHAPTER, "ex-layernorm-implement",
                                    {"my_layer_norm": _layer_norm(eps_on_sigma=True, ddof=1)})
    text = result.summary()
    assert "the Annotated Transformer's layer norm" in text and "PyTorch-sketch" not in text, text
    # On ordinary rows the place of eps does not show: the check names the variance only.
    assert "ddof=1" in text, text


def test_implement_accepts_right_answers():
    def with_keras_ops(x, gamma, beta, eps=1e-6):
        x = ops.convert_to_tensor(x)
        mu = ops.mean(x, axis=-1, keepdims=True)
        return gamma * (x - mu) / ops.sqrt(ops.var(x, axis=-1, keepdims=True) + eps) + beta

    def with_moments(x, gamma, beta, eps=1e-6):
        mu, var = ops.moments(ops.convert_to_tensor(x), axes=[-1], keepdims=True)
        return gamma * (x - mu) * ops.rsqrt(var + eps) + beta

    def with_tf_moments(x, gamma, beta, eps=1e-6):  # statistics from tf.nn.moments, the formula by hand
        import tensorflow as tf

        mu, var = tf.nn.moments(tf.convert_to_tensor(x), axes=[-1], keepdims=True)
        return gamma * (x - mu) / tf.sqrt(var + eps) + beta

    for right in (_layer_norm(), with_keras_ops, with_moments, with_tf_moments):
        passed, text = check("ex-layernorm-implement", my_layer_norm=right)
        assert passed, text


def _with_layer(make_layer):
    def layer_norm(x, gamma, beta, eps=1e-6):
        layer = make_layer(eps)
        layer.build(np.shape(x))
        layer.gamma.assign(gamma)
        layer.beta.assign(beta)
        return layer(x)
    return layer_norm


def _with_op(x, gamma, beta, eps=1e-6):
    return ops.layer_normalization(x, gamma, beta, epsilon=eps)


def _centred_rms_op(x, gamma, beta, eps=1e-6):
    x = ops.convert_to_tensor(x)
    return ops.rms_normalization(x - ops.mean(x, axis=-1, keepdims=True), gamma, epsilon=eps) + beta


def _tf_batch_normalization(x, gamma, beta, eps=1e-6):
    import tensorflow as tf

    mu, var = tf.nn.moments(tf.convert_to_tensor(x), axes=[-1], keepdims=True)
    return tf.nn.batch_normalization(x, mu, var, beta, gamma, eps)


def _keras_batch_normalization(x, gamma, beta, eps=1e-6):
    x = ops.convert_to_tensor(x)
    mu, var = ops.moments(x, axes=[-1], keepdims=True)
    return ops.batch_normalization(x - mu, 0.0, var, axis=-1, offset=beta, scale=gamma, epsilon=eps)


@pytest.mark.parametrize("right_but_not_allowed,message", [
    (_with_layer(lambda eps: keras.layers.LayerNormalization(epsilon=eps)), "calls keras.layers.LayerNormalization"),
    (_with_layer(lambda eps: mt.LayerNormalization(epsilon=eps)), "calls mt.LayerNormalization"),
    (_with_op, "calls keras.ops.layer_normalization"),
    (_centred_rms_op, "calls keras.ops.rms_normalization"),
    (_tf_batch_normalization, "calls a batch_normalization op"),
    (_keras_batch_normalization, "calls a batch_normalization op"),
    (ops.layer_normalization, "calls a normalization op"),  # the op itself as the answer
])
def test_implement_refuses_normalization_layers(right_but_not_allowed, message):
    passed, text = check("ex-layernorm-implement", my_layer_norm=right_but_not_allowed)
    assert not passed and message in text and "from its equation" in text, text
    # ... and gives them back afterwards.
    layer = keras.layers.LayerNormalization()
    assert ops.convert_to_numpy(layer(np.ones((1, 4), dtype="float32"))).shape == (1, 4)
    assert ops.convert_to_numpy(mt.LayerNormalization()(np.ones((1, 4), dtype="float32"))).shape == (1, 4)
    assert ops.layer_normalization.__name__ == "layer_normalization"
    import tensorflow as tf

    assert tf.nn.batch_normalization.__name__ == "batch_normalization"
    assert "is not allowed" not in str(_keras_batch_normalization(np.ones((1, 4), "float32"), 1.0, 0.0))


def test_implement_refuses_an_op_imported_by_name():
    from keras.ops import layer_normalization

    def imported(x, gamma, beta, eps=1e-6):
        return layer_normalization(x, gamma, beta, epsilon=eps)

    passed, text = check("ex-layernorm-implement", my_layer_norm=imported)
    assert not passed and "calls keras.ops.layer_normalization" in text, text
    assert layer_normalization is ops.layer_normalization  # restored


# --- ex-layernorm-invariance -----------------------------------------------------------------------

RIGHT_ROWS = {"scaled_row": (1, 0), "reversed_row": (1, 2)}


@pytest.mark.parametrize("wrong,message", [
    (lambda ln_x, a, c: a * ln_x + c, "you returned a * LN(x) + c"),
    (lambda ln_x, a, c: ln_x, "you returned LN(x). For a < 0"),
    (lambda ln_x, a, c: np.sign(a) * ln_x + c, "the shift c survives in your answer. It cancels in x - mu"),
    (lambda ln_x, a, c: ln_x + c, "the shift c survives in your answer. It cancels in x - mu"),
    (lambda ln_x, a, c: a * ln_x, "you returned a * LN(x). The shift c does cancel"),
    (lambda ln_x, a, c: -ln_x, "you returned -LN(x). For a > 0"),
    (lambda ln_x, a, c: np.sign(a) * ln_x * 2, "Work out the mean and the variance"),
])
def test_invariance_rejects_wrong_predictions(wrong, message):
    passed, text = check("ex-layernorm-invariance", predict_affine=wrong, **RIGHT_ROWS)
    assert not passed and message in text, text


def test_invariance_names_the_surviving_shift_for_negative_a():
    # At a = -1, sign(a) LN(x) + c equals a LN(x) + c: the check must not call it "a * LN(x) + c".
    result = mt.exercises.run_check(CHAPTER, "ex-layernorm-invariance",
                                    {"predict_affine": lambda ln_x, a, c: np.sign(a) * ln_x + c, **RIGHT_ROWS})
    text = result.summary()
    assert [r.passed for r in result.test_case_results] == [False, False, True]
    assert "a * LN(x) + c" not in text and "For a < 0: the sign is right, but the shift c survives" in text, text


@pytest.mark.parametrize("rows,message", [
    ({"scaled_row": (0, 0), "reversed_row": (1, 2)}, "the ramp itself"),
    ({"scaled_row": (1, 2), "reversed_row": (1, 2)}, "are the same row"),
    ({"scaled_row": (1, 0), "reversed_row": (1, 0)}, "are the same row"),
    ({"scaled_row": (1, 0), "reversed_row": (0, 0)}, "`reversed_row` is the ramp itself"),
    ({"scaled_row": (1, 2), "reversed_row": (0, 1)}, "a * [1, 2, 3, 4] + c with a > 0"),  # hidden cases
    ({"scaled_row": (1, 0), "reversed_row": (0, 1)}, "a * [1, 2, 3, 4] + c with a < 0"),
    ({"scaled_row": 3, "reversed_row": (1, 2)}, "must be a pair (b, t)"),
])
def test_invariance_rejects_wrong_rows(rows, message):
    passed, text = graded("ex-layernorm-invariance", predict_affine=lambda ln_x, a, c: np.sign(a) * ln_x, **rows)
    assert not passed and message in text, text


# --- ex-layernorm-epsilon --------------------------------------------------------------------------

@pytest.mark.parametrize("small,keras_eps,message", [
    (0.00707, 0.2236, "first-order estimate"),
    (0.007071, 0.224, "first-order estimate"),  # 0.224: the estimate to 3 significant digits
    (0.00705, 0.223, "you left out the eps"),
    (0.178, 0.00700, "check which eps you used"),
    (0.0071, 0.19, "your sigma is too large"),
    (0.006916, 0.1771, "yours is too small. Use a finer grid"),  # a coarse grid's answers
    (0.00702, 0.178, "your sigma is too large"),  # 0.0070029 to 3 digits is 0.00700
    (0.0007, 1.9, "give it to 3 significant digits"),
])
def test_epsilon_rejects_the_estimates(small, keras_eps, message):
    passed, text = graded("ex-layernorm-epsilon", sigma_small_eps=small, sigma_keras_eps=keras_eps)
    assert not passed and message in text, text


def test_epsilon_names_the_rounded_estimate_for_keras_eps():
    result = mt.exercises.run_check(CHAPTER, "ex-layernorm-epsilon",
                                    {"sigma_small_eps": 0.00700, "sigma_keras_eps": 0.224, "STUDENT_ID": ""})
    assert [r.passed for r in result.test_case_results] == [True, False]
    assert "`sigma_keras_eps` = 0.224 is the first-order estimate" in result.summary()


def test_epsilon_accepts_three_digits():
    for small, keras_eps in [(0.00700, 0.178), (0.007003, 0.1779), (np.float64(0.0070029), 0.17789)]:
        for run in (check, graded):
            passed, text = run("ex-layernorm-epsilon", sigma_small_eps=small, sigma_keras_eps=keras_eps)
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


def _unbiased(v, eps=1e-6, eps_on_std=False):
    """(v - mu) over the unbiased spread (divide by D - 1), eps in the root or added to the std."""
    v = np.asarray(v, dtype="float64")
    centred = v - v.mean(axis=-1, keepdims=True)
    var = np.var(v, axis=-1, ddof=1, keepdims=True)
    return (centred / (np.sqrt(var) + eps) if eps_on_std else centred / np.sqrt(var + eps)).astype("float32")


class Walkthrough(keras.layers.Layer):
    def build(self, input_shape):
        self.normalization = keras.layers.Normalization(axis=None)
        self.normalization.build(input_shape)

    def call(self, x, sublayer_output):
        return self.normalization(sublayer_output + x)


def _with_sublayer(make):
    """AddAndNorm with a sub-layer made in __init__ and applied to the sum."""
    class Layer(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.norm = make()

        def call(self, x, sublayer_output):
            return self.norm(x + sublayer_output)
    return Layer


normalization = keras.layers.Normalization(axis=None)  # as the walkthrough: a module-level layer


class UsesTheGlobal(keras.layers.Layer):
    def call(self, x, sublayer_output):
        return normalization(sublayer_output + x)


@pytest.mark.parametrize("wrong,message", [
    (Walkthrough, "uses keras.layers.Normalization, the walkthrough's layer"),
    (UsesTheGlobal, "uses keras.layers.Normalization, the walkthrough's layer"),
    (_with_sublayer(lambda: keras.layers.Normalization(axis=-1)), "\"out of scope\" TypeError"),
    (_with_sublayer(lambda: keras.layers.BatchNormalization(epsilon=1e-6)),
     "uses keras.layers.BatchNormalization"),
    (_add_norm(lambda self, x, y: x + y, weights=False), "nothing normalizes it"),
    (_add_norm(lambda self, x, y: (x + y - ops.mean(x + y)) / ops.sqrt(ops.var(x + y) + 1e-6), weights=False),
     "one mean and one variance for the whole tensor"),
    (_add_norm(lambda self, x, y: self.gamma * (x + y - ops.mean(x + y, axis=(0, 1)))
               / ops.sqrt(ops.var(x + y, axis=(0, 1)) + 1e-3) + self.beta), "that is batch normalization"),
    (_add_norm(lambda self, x, y: self.gamma * _ln(x + y, 1e-3) + self.beta), "epsilon = 1e-3, Keras's default"),
    (_add_norm(lambda self, x, y: self.gamma * _ln(y) + self.beta), "the residual connection is missing"),
    (_add_norm(lambda self, x, y: x + self.gamma * _ln(y) + self.beta),
     "you normalized the sub-layer's output, not the sum"),
    (_add_norm(lambda self, x, y: self.gamma * _ln(x) + self.beta + y), "then added sublayer_output"),
    (_add_norm(lambda self, x, y: self.gamma * (x + y - ops.mean(x + y, axis=-1, keepdims=True))
               / (ops.std(x + y, axis=-1, keepdims=True) + 1e-6) + self.beta), "the PyTorch-sketch chapter's equation"),
    (_add_norm(lambda self, x, y: self.gamma * _unbiased(x + y) + self.beta), "ddof=1"),
    (_add_norm(lambda self, x, y: self.gamma * _unbiased(x + y, eps_on_std=True) + self.beta),
     "the Annotated Transformer's layer norm"),
])
def test_fix_rejects_the_walkthrough_and_other_wrong_layers(wrong, message):
    passed, text = check("ex-layernorm-fix-normalization", AddAndNorm=wrong)
    assert not passed and message in text, text
    assert "pre-norm's addition" not in text and "Still the walkthrough" not in text, text
    assert "LayerNormalization(epsilon=1e-6)" not in text, text  # the fix is not handed out


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
     "That is the other convention (the RMSNorm authors' own PyTorch code uses it)"),
    (lambda x, gamma, eps=1e-6: gamma * x / np.sqrt(np.mean(np.square(x), -1, keepdims=True)), "You left out eps"),
    (lambda x, gamma, eps=1e-6: gamma * x / np.sqrt(np.var(x, -1, keepdims=True) + eps),
     "RMS uses mean(x^2)"),
    (lambda x, gamma, eps=1e-6: gamma * x / np.sqrt(np.sum(np.square(x), -1, keepdims=True) + eps),
     "the root of the SUM"),
    (lambda x, gamma, eps=1e-6: _right_rms(x, 1.0, eps), "does not use gamma"),
])
def test_rmsnorm_rejects_the_wrong_formulas(wrong, message):
    passed, text = check("ex-layernorm-rmsnorm", rms_norm=wrong, rmsnorm_keeps="scale")
    assert not passed and message in text, text
    assert "mistake again" not in text, text


def test_rmsnorm_invariance_answer():
    passed, text = graded("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps="shift")
    assert not passed and "is not the invariance RMSNorm keeps" in text, text
    assert "'scale'" not in text and '"scale"' not in text, text  # one of two: never name the other
    passed, text = check("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps="both")
    assert not passed and 'the string "scale" or "shift"' in text, text
    passed, text = graded("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps=" Scale")
    assert passed, text


# --- ex-layernorm-count ----------------------------------------------------------------------------

def _count(enc=2, dec=3, enc_final=1, dec_final=1, per_norm=2, post_finals=False):
    def count(num_layers, d_model, norm_first):
        finals = norm_first or post_finals
        return ((enc * num_layers + (enc_final if finals else 0)) * per_norm * d_model,
                (dec * num_layers + (dec_final if finals else 0)) * per_norm * d_model)
    return count


def test_count_accepts_right_answers():
    def as_array(n, d, norm_first):
        return np.array(_count()(n, d, norm_first), dtype="int64")

    def as_list_of_floats(n, d, norm_first):
        return [float(v) for v in _count()(n, d, norm_first)]

    for right in (_count(), as_array, as_list_of_floats):
        passed, text = check("ex-layernorm-count", count_norm_params=right)
        assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (_count(enc=3, dec=2), "You swapped the encoder's and the decoder's counts"),  # the same total as right
    (_count(per_norm=1), "gamma and beta: 2 d_model parameters"),
    (_count(dec=2), "A decoder layer has three sub-layers"),
    (_count(enc=3), "An encoder layer has two sub-layers"),
    (_count(enc_final=0, dec_final=0), "each end with a final layer norm"),
    (_count(post_finals=True), "Post-norm (norm_first=False) has no final layer norm"),
    (_count(enc_final=1, dec_final=0), "a final layer norm but not the decoder"),  # one final norm, not two
    (_count(enc_final=0, dec_final=1), "a final layer norm but not the encoder"),
    (_count(enc_final=2, dec_final=0), "both final layer norms in the encoder"),
    (lambda n, d, norm_first: sum(_count()(n, d, norm_first)), "is the right total, but return the two parts"),
    (lambda n, d, norm_first: 2.5, "must return a pair of whole numbers"),
    (lambda n, d, norm_first: (12288, 18432), "your encoder count, 12288, is too large for mt.Encoder"),
    (lambda n, d, norm_first: (_count()(n, d, norm_first)[0], 0), "your decoder count, 0, is too small for mt.Decoder"),
])
def test_count_rejects_the_miscounts(wrong, message):
    passed, text = check("ex-layernorm-count", count_norm_params=wrong)
    assert not passed and message in text, text
    assert "where mt." not in text, text  # the package's count is never printed


def test_count_names_a_mistake_only_if_it_fits_every_setting():
    # Right in post-norm; in pre-norm, two mistakes at once (2 norms per decoder layer, and no final
    # norm in the decoder). No single known mistake fits every (num_layers, d_model): the check says
    # which part is off, and by how much, at the first setting.
    def two_mistakes(n, d, norm_first):
        if not norm_first:
            return _count()(n, d, norm_first)
        return ((2 * n + 1) * 2 * d, 2 * n * 2 * d)

    result = mt.exercises.run_check(CHAPTER, "ex-layernorm-count", {"count_norm_params": two_mistakes})
    text = result.summary()
    assert [r.passed for r in result.test_case_results] == [True, False, False]
    assert "With num_layers=5, d_model=8, norm_first=True: your decoder count, 160, is too small for mt.Decoder" in text
    assert "256" not in text, text  # the package's count (the expected value) is never printed
    for named in ("swapped", "three sub-layers", "two sub-layers", "final layer norm but not", "Post-norm"):
        assert named not in text, text


# --- no message hands out the answer ---------------------------------------------------------------
SIGMA_SMALL_EPS, SIGMA_KERAS_EPS = 0.0070029, 0.17789  # the thresholds, to 5 significant digits


@pytest.mark.parametrize("small,keras_eps", [
    (0.0001, 0.001), (0.5, 0.9), (0.006, 0.15), (0.0075, 0.2), (0.00707, 0.2236), (1e-6, 1e-3),
])
def test_epsilon_messages_give_no_threshold(small, keras_eps):
    passed, text = graded("ex-layernorm-epsilon", sigma_small_eps=small, sigma_keras_eps=keras_eps)
    assert not passed, text
    assert_hides(text, SIGMA_SMALL_EPS, SIGMA_KERAS_EPS, 0.0070, 0.178, 0.00700)
    assert "% " not in text and "%." not in text, text  # not how far off, either


def test_epsilon_uses_the_students_ratio():
    # A drawn id has its own ratio (the epsilons stay 1e-6 and 1e-3): the book's thresholds fail, the
    # student's first-order estimate is named, and the student's thresholds pass.
    numbers = mt.exercises.parameters("ex-layernorm-epsilon", "s001")
    ratio = numbers["ratio"]
    assert ratio != 1.01 and (numbers["eps_small"], numbers["eps_keras"]) == (1e-6, 1e-3)
    env = dict(STUDENT_ID="s001", epsilon_numbers=numbers)
    passed, text = graded("ex-layernorm-epsilon", sigma_small_eps=SIGMA_SMALL_EPS, sigma_keras_eps=SIGMA_KERAS_EPS,
                          **env)
    assert not passed and (f"exceeds {ratio:g}" in text or f"exceed {ratio:g}" in text), text
    first_order = float(f"{np.sqrt(1e-3 / (2 * (ratio - 1))):.3g}")
    passed, text = check("ex-layernorm-epsilon", sigma_small_eps=SIGMA_SMALL_EPS, sigma_keras_eps=first_order, **env)
    assert not passed and "first-order estimate" in text and "sigma_keras_eps" in text, text
    sigma = np.logspace(-6, 1, 200_001)
    right = [float(f"{sigma[np.sqrt(sigma**2 + eps) / (sigma + eps) > ratio].max():.3g}") for eps in (1e-6, 1e-3)]
    passed, text = graded("ex-layernorm-epsilon", sigma_small_eps=right[0], sigma_keras_eps=right[1], **env)
    assert passed, text
    # The numbers of another id, printed by a work cell that was not run again.
    passed, text = check("ex-layernorm-epsilon", sigma_small_eps=right[0], sigma_keras_eps=right[1],
                         STUDENT_ID="s002", epsilon_numbers=numbers)
    assert not passed and "run the work cell again" in text, text


@pytest.mark.parametrize("rows", [
    {"scaled_row": (0, 1), "reversed_row": (0, 2)},
    {"scaled_row": (1, 1), "reversed_row": (0, 0)},
    {"scaled_row": (1, 0), "reversed_row": (0, 1)},
])
def test_invariance_rows_messages_give_no_row(rows):
    passed, text = graded("ex-layernorm-invariance", predict_affine=lambda ln_x, a, c: np.sign(a) * ln_x, **rows)
    assert not passed, text
    assert "(1, 2)" not in text and "[4.0, 3.0, 2.0, 1.0]" not in text, text
    if rows["scaled_row"] != (1, 0):
        assert "(1, 0)" not in text and "[10.0, 20.0, 30.0, 40.0]" not in text, text


def test_rmsnorm_says_the_same_for_every_wrong_invariance():
    texts = [graded("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps=answer)[1] for answer in ("shift",)]
    for text in texts:
        assert "scale" not in text.split("AssertionError")[-1].lower(), text


@pytest.mark.parametrize("wrong", [lambda n, d, norm_first: (1, 1), lambda n, d, norm_first: (4 * n * d, 6 * n * d)])
def test_count_messages_give_no_count(wrong):
    passed, text = check("ex-layernorm-count", count_norm_params=wrong)
    assert not passed, text
    counts = [(2 * n + f) * 2 * d for n, d in ((5, 8), (7, 6), (1, 4), (6, 512)) for f in (0, 1)]
    counts += [(3 * n + f) * 2 * d for n, d in ((5, 8), (7, 6), (1, 4), (6, 512)) for f in (0, 1)]
    assert_hides(text, [c for c in counts if c != 4 * 5 * 8 and c != 6 * 5 * 8])


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# --- hidden cases (grading/hidden/05_layer_norm): answers tuned to the public cases fail them ------

def test_every_exercise_with_one_right_answer_has_hidden_cases():
    assert sorted(p.stem for p in HIDDEN.glob("*.py")) == sorted(mt.exercises.labels(CHAPTER))


def _tuned_layer_norm(x, gamma, beta, eps=1e-6):
    """Right on the public inputs, (B, T, D) and (N, D): the axis assumed from the number of axes."""
    x = np.asarray(x, dtype="float64")
    axis = 2 if x.ndim == 3 else 1
    mu = x.mean(axis=axis, keepdims=True)
    return gamma * (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=axis, keepdims=True) + eps) + beta


def _tuned_affine(ln_x, a, c):
    """Right at the public (a, c) only: a sign looked up from the values of a the public cases use."""
    return -np.asarray(ln_x) if a in (-2.0, -1.0, -0.5) else np.asarray(ln_x)


class _TunedAddAndNorm(keras.layers.Layer):
    """Right at the public width D = 16 only: gamma and beta made for it."""

    def build(self, *shapes):
        self.gamma = self.add_weight(shape=(16,), initializer="ones")
        self.beta = self.add_weight(shape=(16,), initializer="zeros")

    def call(self, x, sublayer_output):
        s = x + sublayer_output
        mu = ops.mean(s, axis=-1, keepdims=True)
        var = ops.mean(ops.square(s - mu), axis=-1, keepdims=True)
        return self.gamma[: s.shape[-1]] * (s - mu) / ops.sqrt(var + 1e-6) + self.beta[: s.shape[-1]]


def _tuned_count(num_layers, d_model, norm_first):
    """The public settings' counts, looked up (from the package, as one would copy them)."""
    table = {(n, d, f): ((2 * n + f) * 2 * d, (3 * n + f) * 2 * d)
             for n, d in ((5, 8), (7, 6), (1, 4), (6, 512)) for f in (0, 1)}
    return table[(num_layers, d_model, int(norm_first))]


@pytest.mark.parametrize("label,env", [
    ("ex-layernorm-implement", {"my_layer_norm": _tuned_layer_norm}),
    ("ex-layernorm-invariance", {"predict_affine": _tuned_affine, **RIGHT_ROWS}),
    ("ex-layernorm-invariance", {"predict_affine": lambda ln_x, a, c: np.sign(a) * ln_x,
                                 "scaled_row": (0, 1), "reversed_row": (0, 2)}),  # rows of the right form
    ("ex-layernorm-epsilon", {"sigma_small_eps": 0.0069, "sigma_keras_eps": 0.17}),  # where r > 1.01, too small
    ("ex-layernorm-fix-normalization", {"AddAndNorm": _TunedAddAndNorm}),
    ("ex-layernorm-rmsnorm", {"rms_norm": lambda x, gamma, eps=1e-6: _right_rms(x, gamma), "rmsnorm_keeps": "scale"}),
    ("ex-layernorm-rmsnorm", {"rms_norm": _right_rms, "rmsnorm_keeps": "shift"}),
    ("ex-layernorm-count", {"count_norm_params": _tuned_count}),
])
def test_answers_tuned_to_the_public_cases_fail_the_hidden_ones(label, env):
    assert_tuned_answer_caught(CHAPTER, label, **env)


def test_public_checks_no_longer_hold_the_fixed_answers():
    # The epsilon thresholds: no function of the public check computes them, no digits of them in it.
    assert_public_check_hides(CHAPTER, "ex-layernorm-epsilon", SIGMA_SMALL_EPS, SIGMA_KERAS_EPS, 0.00700, 0.178,
                              spelled=("_threshold",))
    # The rows and the invariance: every answer of the right form passes the public check.
    for scaled in [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]:
        passed, text = check("ex-layernorm-invariance", predict_affine=lambda ln_x, a, c: np.sign(a) * ln_x,
                             scaled_row=scaled, reversed_row=(1, 2) if scaled != (1, 2) else (1, 0))
        assert passed, text
    assert_public_check_hides(CHAPTER, "ex-layernorm-invariance", spelled=("ln[0, 0]", "(1, 0)", "(1, 2)"))
    for keeps in ("scale", "shift"):
        assert check("ex-layernorm-rmsnorm", rms_norm=_right_rms, rmsnorm_keeps=keeps)[0]
    assert_public_check_hides(CHAPTER, "ex-layernorm-rmsnorm", spelled=('!= "scale"', '== "scale"'))

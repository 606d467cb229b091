"""Chapter 6's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import pathlib
import re

import keras
import numpy as np
import pytest

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught

CHAPTER = "06_encoder_decoder_layers"
HIDDEN = pathlib.Path(__file__).resolve().parents[1] / "grading" / "hidden" / CHAPTER


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-layers-which-positions has per-student ones)
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
    def __init__(self, *args, **kwargs):
        super().__init__()

    def call(self, *args, **kwargs):
        raise NotImplementedError


@pytest.mark.parametrize("label,names", [
    ("ex-layers-ffn-count", ["ffn_params", "decoder_layer_params"]),
    ("ex-layers-implement-ffn", ["MyFeedForward"]),
    ("ex-layers-implement-encoder-layer", ["MyEncoderLayer"]),
    ("ex-layers-which-positions", ["changed_decoder_masked", "changed_decoder_unmasked", "changed_encoder"]),
    ("ex-layers-fix-missing-masks", ["fixed_layers"]),
    ("ex-layers-fix-no-cross-attention", ["FixedDecoderLayer"]),
    ("ex-layers-prenorm-decoder", ["prenorm_decoder_layer", "cross_inputs_normalized"]),
])
def test_blank_answers_fail_and_say_so(label, names):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    placeholders = {}
    for name in names:
        if name[0].isupper():
            placeholders[name] = StubLayer
        elif name.startswith("changed") or name == "cross_inputs_normalized":
            placeholders[name] = ...
        else:
            placeholders[name] = stub
    passed, text = check(label, **placeholders)
    assert not passed and ("still `...`" in text or "NotImplementedError" in text), text


# ex-layers-ffn-count

def _ffn(d, dff):
    return 2 * d * dff + dff + d


def _layer(d, dff):
    return 8 * (d * d + d) + _ffn(d, dff) + 6 * d  # two attentions, the FFN, three layer norms


def test_ffn_count_reference_equals_the_package():
    for d, heads, dff in [(512, 8, 2048), (12, 3, 20)]:
        layer = mt.DecoderLayer(d, heads, dff)
        layer.build((None, None, d), (None, None, d))
        assert layer.count_params() == _layer(d, dff) and layer.ffn.count_params() == _ffn(d, dff)
    passed, text = check("ex-layers-ffn-count", ffn_params=_ffn, decoder_layer_params=_layer)
    assert passed, text


@pytest.mark.parametrize("ffn_params,message", [
    (lambda d, dff: 2 * d * dff, "add the biases"),
    (lambda d, dff: 2 * d * dff + dff, "one bias only"),
    (lambda d, dff: d * dff + dff, "counts one linear map"),
    (lambda d, dff: 2 * d * dff + dff + d + 1, "too many"),
])
def test_ffn_count_rejects_the_wrong_ffn_counts(ffn_params, message):
    passed, text = check("ex-layers-ffn-count", ffn_params=ffn_params, decoder_layer_params=_layer)
    assert not passed and message in text, text
    assert f"{_ffn(512, 2048):,}" not in text  # never the expected value


@pytest.mark.parametrize("decoder_layer_params,message", [
    (lambda d, dff: 4 * (d * d + d) + _ffn(d, dff) + 4 * d, "counts an encoder layer"),
    (lambda d, dff: 4 * (d * d + d) + _ffn(d, dff) + 6 * d, "has one attention"),
    (lambda d, dff: 8 * (d * d + d) + _ffn(d, dff) + 4 * d, "has two layer norms"),
    (lambda d, dff: 6 * (d * d + d) + _ffn(d, dff) + 6 * d, "too few projections"),
    (lambda d, dff: 8 * d * d + _ffn(d, dff) + 6 * d, "leaves out biases"),
    (lambda d, dff: 8 * (d * d + d) + 6 * d, "leaves out the feed-forward network"),
    (lambda d, dff: _layer(d, dff) + 1, "too many"),
])
def test_ffn_count_rejects_the_wrong_layer_counts(decoder_layer_params, message):
    passed, text = check("ex-layers-ffn-count", ffn_params=_ffn, decoder_layer_params=decoder_layer_params)
    assert not passed and message in text, text
    assert f"{_layer(512, 2048):,}" not in text  # never the expected value


def _built_ffn(d, dff):
    layer = mt.FeedForward(d, dff)
    layer.build((None, None, d))
    return layer.count_params()


def _built_layer(d, dff):
    layer = mt.DecoderLayer(d, 1, dff)
    layer.build((None, None, d), (None, None, d))
    return layer.count_params()


def test_ffn_count_refuses_the_package_layers():
    for ffn, layer in [(_built_ffn, _layer), (_ffn, _built_layer)]:
        passed, text = check("ex-layers-ffn-count", ffn_params=ffn, decoder_layer_params=layer)
        assert not passed and "do not build the package's layers" in text, text
        assert "count_params()." not in text.replace("read their count_params().", "")
    assert mt.FeedForward.__name__ == "FeedForward" and isinstance(mt.FeedForward(4, 8), keras.layers.Layer)


# ex-layers-implement-ffn

def _feed_forward(relu_inner=True, relu_outer=False, dropout_where="inner", dense_count=2):
    class WrongFeedForward(keras.layers.Layer):
        def __init__(self, d_model, dff, dropout=0.1, **kwargs):
            super().__init__(**kwargs)
            if dense_count == 1:
                self.only = keras.layers.Dense(d_model)
            else:
                self.inner = keras.layers.Dense(dff, activation="relu" if relu_inner else None)
                self.outer = keras.layers.Dense(d_model, activation="relu" if relu_outer else None)
            self.drop = keras.layers.Dropout(dropout)

        def call(self, x, training=False):
            if dense_count == 1:
                return self.only(x)
            h = self.inner(x)
            if dropout_where == "inner":
                h = self.drop(h, training=training)
            y = self.outer(h)
            return self.drop(y, training=training) if dropout_where == "output" else y
    return WrongFeedForward


@pytest.mark.parametrize("layer,message", [
    (_feed_forward(dense_count=1), "one Dense layer is one linear map"),
    (_feed_forward(relu_inner=False), "it has no ReLU"),
    (_feed_forward(relu_outer=True), "clipped at 0"),
    (_feed_forward(dropout_where="output"), "Dropout acts on your output"),
    (_feed_forward(dropout_where="none"), "equals the inference output"),
])
def test_implement_ffn_rejects_the_known_wrong_layers(layer, message):
    passed, text = check("ex-layers-implement-ffn", MyFeedForward=layer)
    assert not passed and message in text, text


def test_implement_ffn_accepts_a_right_layer():
    passed, text = check("ex-layers-implement-ffn", MyFeedForward=_feed_forward())
    assert passed, text


def _other_feed_forward(style, rate=None):
    """FFNs written otherwise: right ones (Sequential, outer Dense assigned first, dropout before the
    ReLU) and wrong ones (dropout on the input, a fixed dropout rate)."""
    class OtherFeedForward(keras.layers.Layer):
        def __init__(self, d_model, dff, dropout=0.1, **kwargs):
            super().__init__(**kwargs)
            dropout = dropout if rate is None else rate
            if style == "sequential":
                self.net = keras.Sequential([keras.layers.Dense(dff, activation="relu"),
                                             keras.layers.Dropout(dropout), keras.layers.Dense(d_model)])
                return
            if style == "outer first":
                self.outer = keras.layers.Dense(d_model)
            self.inner = keras.layers.Dense(dff, activation=None if style == "before relu" else "relu")
            if style != "outer first":
                self.outer = keras.layers.Dense(d_model)
            self.drop = keras.layers.Dropout(dropout)

        def call(self, x, training=False):
            if style == "sequential":
                return self.net(x, training=training)
            if style == "input":
                return self.outer(self.inner(self.drop(x, training=training)))
            if style == "before relu":
                return self.outer(keras.ops.relu(self.drop(self.inner(x), training=training)))
            return self.outer(self.drop(self.inner(x), training=training))
    return OtherFeedForward


@pytest.mark.parametrize("style", ["sequential", "outer first", "before relu"])
def test_implement_ffn_accepts_other_right_layers(style):
    passed, text = check("ex-layers-implement-ffn", MyFeedForward=_other_feed_forward(style))
    assert passed, text


@pytest.mark.parametrize("layer,message", [
    (_other_feed_forward("input"), "probably on the input x"),
    (_other_feed_forward("inner", rate=0.1), "its Dropout has rate 0.1"),
    (_other_feed_forward("inner", rate=0.5), "built with dropout=0.3, but its Dropout has rate 0.5"),
])
def test_implement_ffn_rejects_wrong_dropouts(layer, message):
    passed, text = check("ex-layers-implement-ffn", MyFeedForward=layer)
    assert not passed and message in text, text


# ex-layers-implement-encoder-layer

def _encoder_layer(mistake=None, dropout_at="output"):
    """An encoder layer, right or with one mistake; ``dropout_at`` places the sub-layers' dropout:
    "output" (right), "normed" (after the post-norm), "sum" (on x + Sublayer(x)), "input" (on the
    sub-layer's input)."""
    class WrongEncoderLayer(keras.layers.Layer):
        def __init__(self, d_model, num_heads, dff, dropout=0.1, norm_first=False, **kwargs):
            super().__init__(**kwargs)
            self.norm_first = not norm_first if mistake == "swapped" else norm_first
            self.self_attention = mt.MultiHeadAttention(d_model, num_heads, dropout)
            self.ffn = mt.FeedForward(d_model, dff, dropout)
            self.norm1 = mt.LayerNormalization()
            self.norm2_name = "ln2" if mistake == "misnamed" else "norm2"
            setattr(self, self.norm2_name, mt.LayerNormalization())
            if mistake != "hand dropout":
                self.drop = keras.layers.Dropout({"fixed rate": 0.1, "fixed rate 0.5": 0.5}.get(mistake, dropout))

        def block(self, x, f, norm, source, training):
            def drop(v, where):
                if where != dropout_at or not training:
                    return v
                return keras.random.dropout(v, 0.5) if mistake == "hand dropout" else self.drop(v, training=True)
            source = norm(source) if self.norm_first else source
            y = f(drop(source, "input"))
            if mistake != "no residual dropout":
                y = drop(y, "output")
            total = drop(y if mistake == "no residual" else x + y, "sum")
            return total if self.norm_first else drop(norm(total), "normed")

        def call(self, x, attention_mask=None, training=False):
            m = None if mistake == "no mask" else attention_mask
            z = self.block(x, lambda v: self.self_attention(v, v, v, attention_mask=m, training=training),
                           self.norm1, x, training)
            return self.block(z, lambda v: self.ffn(v, training=training), getattr(self, self.norm2_name),
                              x if mistake == "ffn reads x" else z, training)
    return WrongEncoderLayer


@pytest.mark.parametrize("mistake,message", [
    ("ffn reads x", "PyTorch-sketch chapter"),
    ("swapped", "the other variant"),
    ("no mask", "ignores the mask"),
    ("no residual", "no residual connection"),
    ("misnamed", "no attribute `norm2`"),
    ("no residual dropout", "no dropout on the sub-layers' outputs"),
    ("fixed rate", "its Dropout has rate 0.1"),
    ("fixed rate 0.5", "built with dropout=0.3, but its Dropout has rate 0.5"),
])
def test_implement_encoder_layer_rejects_the_known_mistakes(mistake, message):
    passed, text = check("ex-layers-implement-encoder-layer", MyEncoderLayer=_encoder_layer(mistake))
    assert not passed and message in text, text


@pytest.mark.parametrize("dropout_at,message", [
    ("normed", "post-norm layer applies its dropout after the layer norm"),
    ("sum", "applies its dropout on the whole sum"),
    ("input", "applies its dropout on the sub-layer's input"),
])
def test_implement_encoder_layer_rejects_dropout_in_the_wrong_place(dropout_at, message):
    passed, text = check("ex-layers-implement-encoder-layer", MyEncoderLayer=_encoder_layer(dropout_at=dropout_at))
    assert not passed and message in text, text
    result = mt.exercises.run_check(CHAPTER, "ex-layers-implement-encoder-layer",
                                    {"MyEncoderLayer": _encoder_layer(dropout_at=dropout_at)})
    assert result.score == result.possible - 1, result.summary()  # only the dropout's test case fails


def test_implement_encoder_layer_rejects_a_dropout_layer_missing():
    passed, text = check("ex-layers-implement-encoder-layer", MyEncoderLayer=_encoder_layer("hand dropout"))
    assert not passed and "no keras.layers.Dropout of its own" in text, text


def test_implement_encoder_layer_accepts_a_right_layer():
    passed, text = check("ex-layers-implement-encoder-layer", MyEncoderLayer=_encoder_layer())
    assert passed, text


# ex-layers-which-positions

RIGHT_POSITIONS = dict(changed_decoder_masked=[1, 2, 3, 4], changed_decoder_unmasked=[0, 1, 2, 3, 4],
                       changed_encoder=[0, 1, 2, 3, 4, 5])


@pytest.mark.parametrize("name,value,message", [
    ("changed_decoder_masked", [1], "attention mixes positions"),
    ("changed_decoder_masked", [0, 1, 2, 3, 4], "can output 0 read position 1"),
    ("changed_decoder_unmasked", [1, 2, 3, 4], "Count the outputs whose query"),
    ("changed_decoder_masked", [1, 2, 3], "not padding queries"),
    ("changed_decoder_unmasked", [0, 1, 2, 3], "not padding queries"),
    ("changed_encoder", [0, 1, 2, 3], "not padding queries"),
    ("changed_encoder", [1, 2, 3, 4, 5], "no look-ahead mask"),
    ("changed_encoder", [0, 7], "positions run from 0 to 5"),
    ("changed_encoder", [0, 2, 3], "leaves out position 1"),
])
def test_which_positions_rejects_the_wrong_predictions(name, value, message):
    passed, text = graded("ex-layers-which-positions", **dict(RIGHT_POSITIONS, **{name: value}))
    assert not passed and message in text, text
    for answer in ("1 to 4", "Position 4", "Positions 4 and 5", "0 to 3", "every output"):  # never the answer
        assert answer not in text, text
    passed, _ = graded("ex-layers-which-positions", **RIGHT_POSITIONS)
    assert passed


def _drawn_positions():
    """An id whose sentences differ from the book's, its numbers, and its right answers."""
    for number in range(100):
        student_id = f"s{number:03d}"
        n = mt.exercises.parameters("ex-layers-which-positions", student_id)
        real = sum(1 for token in n["target"] if token)
        if 1 < n["t"] < real - 1 and len(n["target"]) != 5 and len(n["source"]) != 6:
            right = dict(changed_decoder_masked=list(range(n["t"], len(n["target"]))),
                         changed_decoder_unmasked=list(range(len(n["target"]))),
                         changed_encoder=list(range(len(n["source"]))))
            return student_id, n, right
    raise AssertionError("no id of s000-s099 has a t inside its target and other lengths than the book's")


def test_which_positions_follows_the_students_sentences():
    student_id, n, right = _drawn_positions()
    env = dict(STUDENT_ID=student_id, positions_numbers=n)
    passed, text = graded("ex-layers-which-positions", **right, **env)
    assert passed, text
    passed, text = graded("ex-layers-which-positions", **RIGHT_POSITIONS, **env)  # the book's answers
    assert not passed, text
    t, real = n["t"], sum(1 for token in n["target"] if token)
    for name, value, message in [
            ("changed_decoder_masked", list(range(t, real)), "not padding queries"),
            ("changed_decoder_masked", list(range(t - 1, len(n["target"]))), f"can output {t - 1} read position {t}"),
            ("changed_decoder_masked", [t], "attention mixes positions"),
            ("changed_decoder_unmasked", [0], f"leaves out position {t}"),
            ("changed_encoder", list(range(n["s"], len(n["source"]))), "no look-ahead mask"),
            ("changed_encoder", [0, len(n["source"])], f"positions run from 0 to {len(n['source']) - 1}")]:
        passed, text = check("ex-layers-which-positions", **dict(right, **{name: value}), **env)
        assert not passed and message in text, text
    # The numbers of another id, printed by a work cell that was not run again.
    passed, text = check("ex-layers-which-positions", **right, STUDENT_ID="s999", positions_numbers=n)
    assert not passed and "run the work cell again" in text, text


# ex-layers-fix-missing-masks

def _layers(encoder_mask=True, self_mask="decoder", cross_mask=True, positional_training=False,
            always_training=False, cross_from_target=False):
    def run(encoder_layer, decoder_layer, embed, src_tokens, tgt_tokens, training=False):
        training = True if always_training else training
        src = mt.padding_mask(src_tokens)
        masks = {"decoder": mt.decoder_self_mask(tgt_tokens), "padding": mt.padding_mask(tgt_tokens),
                 "causal": mt.causal_mask(tgt_tokens.shape[1]), None: None}
        if positional_training:  # the MinTransformer course chapter's call
            context = encoder_layer(embed(src_tokens), training, None)
        else:
            context = encoder_layer(embed(src_tokens), attention_mask=src if encoder_mask else None,
                                    training=training)
        cross = mt.padding_mask(tgt_tokens) if cross_from_target else src
        return decoder_layer(embed(tgt_tokens), context, self_mask=masks[self_mask],
                             cross_mask=cross if cross_mask else None, training=training)
    return run


@pytest.mark.parametrize("layers,message", [
    (_layers(positional_training=True), "raised ValueError"),
    (_layers(encoder_mask=False, self_mask=None, cross_mask=False), "the decoder sees the future"),
    (_layers(self_mask="padding"), "the decoder sees the future"),
    (_layers(cross_mask=False), "cross-attention reads the source's pads"),
    (_layers(encoder_mask=False), "the encoder layer's self-attention reads"),
    (_layers(encoder_mask=False, cross_mask=False),
     "both the encoder layer's self-attention and cross-attention read"),
    (_layers(always_training=True), "returned two different outputs: dropout is on"),
])
def test_fix_missing_masks_rejects_the_course_chapter_and_half_fixes(layers, message):
    passed, text = check("ex-layers-fix-missing-masks", fixed_layers=layers)
    assert not passed and message in text, text
    assert "padding_mask(" not in text and "decoder_self_mask(" not in text, text  # never the fix itself


def test_fix_missing_masks_rejects_a_cross_mask_from_the_target():
    result = mt.exercises.run_check(CHAPTER, "ex-layers-fix-missing-masks",
                                    {"fixed_layers": _layers(cross_from_target=True)})
    text = result.summary()
    assert not result.passed_all and "built from the wrong tokens" in text, text
    assert "padding_mask(" not in text and "source tokens" not in text, text
    assert "The mask of shape (2, 1, 1, 5)" in text  # S != T: the package refuses it


def test_fix_missing_masks_names_an_index_of_the_full_output():
    # The comparison with the package keeps the (B, T, D) layout: the index it names means something.
    result = mt.exercises.run_check(CHAPTER, "ex-layers-fix-missing-masks",
                                    {"fixed_layers": _layers(self_mask="padding")})
    assert re.search(r"\(B, T, D\) at the real \(non-pad\) target positions is wrong.*index \(\d+, \d+, \d+\)",
                     result.summary()), result.summary()


def test_fix_missing_masks_accepts_the_look_ahead_mask_without_target_padding():
    passed, text = check("ex-layers-fix-missing-masks", fixed_layers=_layers(self_mask="causal"))
    assert passed, text


# ex-layers-fix-no-cross-attention

def _decoder_layer(mistake=None, dropout_at="output"):
    """A decoder layer, right or with one mistake; ``dropout_at`` as in ``_encoder_layer``."""
    class WrongDecoderLayer(keras.layers.Layer):
        def __init__(self, d_model, num_heads, dff, dropout=0.1, **kwargs):
            super().__init__(**kwargs)
            self.self_attention = mt.MultiHeadAttention(d_model, num_heads, dropout)
            if mistake != "no cross-attention":
                self.cross_attention = mt.MultiHeadAttention(d_model, num_heads, dropout)
                self.norm3 = mt.LayerNormalization()
            self.ffn = mt.FeedForward(d_model, dff, dropout)
            self.norm1 = mt.LayerNormalization()
            self.norm2 = mt.LayerNormalization()
            self.drop = keras.layers.Dropout(0.5 if mistake == "fixed rate 0.5" else dropout)

        def call(self, x, context, self_mask=None, cross_mask=None, training=False):
            def drop(y, where="output"):
                if mistake == "no residual dropout" or where != dropout_at:
                    return y
                return self.drop(y, training=training)

            def self_block(z):
                return self.self_attention(z, z, z, attention_mask=self_mask, training=training)

            def cross_block(z):
                query = x if mistake == "query from input" else z
                if mistake == "swapped":
                    return self.cross_attention(context, query, query, attention_mask=None, training=training)
                mask = None if mistake == "no cross mask" else cross_mask
                return self.cross_attention(query, context, context, attention_mask=mask, training=training)

            def ffn_block(z):
                return self.ffn(z, training=training)

            blocks = [self_block, cross_block, ffn_block]
            if mistake == "no cross-attention":
                blocks = [self_block, ffn_block]
            elif mistake == "cross last":
                blocks = [self_block, ffn_block, cross_block]
            norms = [self.norm1, self.norm2, getattr(self, "norm3", None)]
            z = x
            for block, norm in zip(blocks, norms):
                total = drop(z + drop(block(drop(z, "input"))), "sum")
                z = drop(norm(total), "normed")
            return z
    return WrongDecoderLayer


@pytest.mark.parametrize("mistake,message", [
    ("no cross-attention", "never reads `context`"),
    ("swapped", "the queries come from the decoder"),
    ("cross last", "order self, ffn, cross"),
    ("query from input", "queries come from the layer's input y"),
    ("no cross mask", "three more source pads"),
    ("no residual dropout", "no dropout on the sub-layers' outputs"),
    ("fixed rate 0.5", "built with dropout=0.3, but its Dropout has rate 0.5"),
])
def test_fix_no_cross_attention_rejects_the_tutorial_and_wrong_fixes(mistake, message):
    passed, text = check("ex-layers-fix-no-cross-attention", FixedDecoderLayer=_decoder_layer(mistake))
    assert not passed and message in text, text


@pytest.mark.parametrize("dropout_at,message", [
    ("normed", "applies its dropout after the layer norm"),
    ("sum", "applies its dropout on the whole sum"),
    ("input", "applies its dropout on the sub-layer's input"),
])
def test_fix_no_cross_attention_rejects_dropout_in_the_wrong_place(dropout_at, message):
    result = mt.exercises.run_check(CHAPTER, "ex-layers-fix-no-cross-attention",
                                    {"FixedDecoderLayer": _decoder_layer(dropout_at=dropout_at)})
    assert not result.passed_all and message in result.summary(), result.summary()
    assert result.score == result.possible - 1, result.summary()  # only the dropout's test case fails


def test_fix_no_cross_attention_names_a_mask_left_out():
    passed, text = check("ex-layers-fix-no-cross-attention", FixedDecoderLayer=_decoder_layer("no cross mask"))
    assert "ignores cross_mask" in text, text


def test_fix_no_cross_attention_accepts_a_right_layer():
    passed, text = check("ex-layers-fix-no-cross-attention", FixedDecoderLayer=_decoder_layer())
    assert passed, text


# ex-layers-prenorm-decoder

def _prenorm(mistake=None):
    def layer_output(layer, y, context, self_mask, cross_mask):
        if mistake == "call the layer":
            return layer(y, context, self_mask=self_mask, cross_mask=cross_mask)
        if mistake == "call its call":
            return layer.call(y, context, self_mask=self_mask, cross_mask=cross_mask)
        if mistake is None and layer.norm_first:  # every attribute of the layer is there, not only the six
            drop = layer.residual_dropout
            n1 = layer.norm1(y)
            z1 = y + drop(layer.self_attention(n1, n1, n1, attention_mask=self_mask, training=False), training=False)
            z2 = z1 + drop(layer.cross_attention(layer.norm2(z1), context, context, attention_mask=cross_mask,
                                                 training=False), training=False)
            return z2 + drop(layer.ffn(layer.norm3(z2), training=False), training=False)
        if mistake == "post-norm":
            z1 = layer.norm1(y + layer.self_attention(y, y, y, attention_mask=self_mask))
            z2 = layer.norm2(z1 + layer.cross_attention(z1, context, context, attention_mask=cross_mask))
            return layer.norm3(z2 + layer.ffn(z2))
        n1 = layer.norm1(y)
        z1 = y + layer.self_attention(n1, n1, n1, attention_mask=self_mask)
        kv = layer.norm2(context) if mistake == "norm context" else context
        z2 = z1 + layer.cross_attention(layer.norm2(z1), kv, kv, attention_mask=cross_mask)
        out = z2 + layer.ffn(layer.norm3(z2))
        return layer.norm3(out) if mistake == "norm output" else out
    return layer_output


@pytest.mark.parametrize("mistake,message", [
    ("post-norm", "This is the post-norm layer"),
    ("norm context", "You passed the context C through norm2"),
    ("norm output", "You normalized the layer's output"),
    ("call the layer", "do not call the layer itself"),
    ("call its call", "do not call the layer itself"),
])
def test_prenorm_decoder_rejects_the_known_mistakes(mistake, message):
    passed, text = check("ex-layers-prenorm-decoder", prenorm_decoder_layer=_prenorm(mistake),
                         cross_inputs_normalized=["queries"])
    assert not passed and message in text, text
    assert "LN2(z1)" not in text and "only the queries" not in text, text  # never the answer


def test_prenorm_decoder_hint_gives_no_equation():
    def wrong(layer, y, context, self_mask, cross_mask):  # no known mistake: the generic hint
        return 2 * _prenorm()(layer, y, context, self_mask, cross_mask)
    passed, text = check("ex-layers-prenorm-decoder", prenorm_decoder_layer=wrong, cross_inputs_normalized=["queries"])
    assert not passed and "pre-norm rule" in text and "LN2(z1)" not in text and "FFN(LN3" not in text, text


@pytest.mark.parametrize("answer,message", [
    (["queries", "keys", "values"], "is not the set of cross-attention's inputs"),
    (["queries", "keys"], "is not the set of cross-attention's inputs"),
    ([], "is not the set of cross-attention's inputs"),
    (["query"], "use the names"),
])
def test_prenorm_decoder_rejects_wrong_answers_about_the_norms(answer, message):
    passed, text = graded("ex-layers-prenorm-decoder", prenorm_decoder_layer=_prenorm(),
                         cross_inputs_normalized=answer)
    assert not passed and message in text, text
    passed, text = graded("ex-layers-prenorm-decoder", prenorm_decoder_layer=_prenorm(),
                         cross_inputs_normalized="queries")
    assert passed, text


# ---------------------------------------------------------------- "do not use the package's layer"
class SubclassedFeedForward(mt.FeedForward):
    pass


class WrappedFeedForward(keras.layers.Layer):
    def __init__(self, d_model, dff, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.inner = mt.FeedForward(d_model, dff, dropout)

    def call(self, x, training=False):
        return self.inner(x, training=training)


class SubclassedEncoderLayer(mt.EncoderLayer):
    pass


class SubclassedDecoderLayer(mt.DecoderLayer):
    pass


@pytest.mark.parametrize("label,name,wrong,message", [
    ("ex-layers-implement-ffn", "MyFeedForward", mt.FeedForward, "must not be, subclass or use mt.FeedForward"),
    ("ex-layers-implement-ffn", "MyFeedForward", SubclassedFeedForward, "must not be, subclass or use mt.FeedForward"),
    ("ex-layers-implement-ffn", "MyFeedForward", WrappedFeedForward, "must not be, subclass or use mt.FeedForward"),
    ("ex-layers-implement-encoder-layer", "MyEncoderLayer", mt.EncoderLayer,
     "must not be, subclass or use mt.EncoderLayer"),
    ("ex-layers-implement-encoder-layer", "MyEncoderLayer", SubclassedEncoderLayer,
     "subclass or use mt.EncoderLayer"),
    ("ex-layers-fix-no-cross-attention", "FixedDecoderLayer", mt.DecoderLayer,
     "must not be, subclass or use mt.DecoderLayer"),
    ("ex-layers-fix-no-cross-attention", "FixedDecoderLayer", SubclassedDecoderLayer,
     "subclass or use mt.DecoderLayer"),
])
def test_the_layers_refuse_the_package_layer_they_ask_you_to_write(label, name, wrong, message):
    result = mt.exercises.run_check(CHAPTER, label, {name: wrong})
    text = result.summary()
    assert result.score == 0 and message in text, text
    assert mt.FeedForward.__name__ == "FeedForward" and mt.decoder.DecoderLayer is mt.DecoderLayer  # restored


@pytest.mark.parametrize("wrong", [
    lambda layer, y, context, self_mask, cross_mask: mt.DecoderLayer.call(
        layer, y, context, self_mask=self_mask, cross_mask=cross_mask, training=False),
    lambda layer, y, context, self_mask, cross_mask: layer._layer(y, context, self_mask=self_mask,
                                                                  cross_mask=cross_mask),
])
def test_prenorm_decoder_refuses_the_layers_own_call(wrong):
    result = mt.exercises.run_check(CHAPTER, "ex-layers-prenorm-decoder",
                                    {"prenorm_decoder_layer": wrong, "cross_inputs_normalized": ["queries"]})
    text = result.summary()
    assert result.score == 1 and "Test case failed" in text, text  # only the question about the norms passes
    assert "calls mt.DecoderLayer's own call" in text or "has no attribute '_layer'" in text, text
    assert mt.DecoderLayer.call.__name__ == "call" and "refused" not in repr(mt.DecoderLayer.call)  # restored


# ---------------------------------------------------------------- no message hands out the answer
@pytest.mark.parametrize("name,value", [
    ("changed_decoder_masked", [2]), ("changed_decoder_masked", [0, 1, 2]), ("changed_decoder_masked", [3, 4]),
    ("changed_decoder_unmasked", [1]), ("changed_decoder_unmasked", [1, 2, 3, 4]),
    ("changed_encoder", [1]), ("changed_encoder", [1, 2, 3]), ("changed_encoder", [0, 1, 2, 3, 4]),
])
def test_which_positions_messages_give_no_answer(name, value):
    passed, text = graded("ex-layers-which-positions", **dict(RIGHT_POSITIONS, **{name: value}))
    assert not passed, text
    assert_hides(text, RIGHT_POSITIONS[name])
    assert "1 <= t" not in text and "Which t have" not in text, text


@pytest.mark.parametrize("ffn,decoder", [
    (lambda d, dff: 2 * d * dff + 7, lambda d, dff: 10 * d * d),
    (lambda d, dff: 1, lambda d, dff: 1),
])
def test_ffn_count_messages_give_no_count(ffn, decoder):
    for env in ({"ffn_params": ffn, "decoder_layer_params": lambda d, dff: 8 * (d * d + d) + 2 * d * dff + dff + d
                 + 6 * d}, {"ffn_params": lambda d, dff: 2 * d * dff + dff + d, "decoder_layer_params": decoder}):
        passed, text = check("ex-layers-ffn-count", **env)
        assert not passed, text
        sizes = ((512, 2048), (1024, 4096), (16, 64))  # (12, 20): its FFN has 512 parameters, an argument too
        assert_hides(text, *[2 * d * dff + dff + d for d, dff in sizes],
                     *[8 * (d * d + d) + 2 * d * dff + dff + d + 6 * d for d, dff in sizes])


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden/06_...)
def test_every_exercise_with_one_right_answer_has_hidden_cases():
    assert sorted(p.stem for p in HIDDEN.glob("*.py")) == sorted(mt.exercises.labels(CHAPTER))


_PUBLIC_SIZES = [(512, 2048), (1024, 4096), (16, 64), (12, 20)]


class _TunedFeedForward(keras.layers.Layer):
    """Right at the public width dff = 32 only: the inner width written in."""

    def __init__(self, d_model, dff, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.inner = keras.layers.Dense(32, activation="relu")
        self.inner_dropout = keras.layers.Dropout(dropout)
        self.outer = keras.layers.Dense(d_model)

    def call(self, x, training=False):
        return self.outer(self.inner_dropout(self.inner(x), training=training))


class _TunedEncoderLayer(_encoder_layer()):
    """Right with the public number of heads, 2, only: written in."""

    def __init__(self, d_model, num_heads, dff, **kwargs):
        super().__init__(d_model, 2, dff, **kwargs)


class _TunedDecoderLayer(_decoder_layer()):
    """Right with the public number of heads, 2, only: written in."""

    def __init__(self, d_model, num_heads, dff, **kwargs):
        super().__init__(d_model, 2, dff, **kwargs)


def _tuned_fixed_layers(encoder_layer, decoder_layer, embed, src_tokens, tgt_tokens, training=False):
    """Right at the public target length, 5, only: the look-ahead part made for it."""
    src_mask = mt.padding_mask(src_tokens)
    self_mask = keras.ops.logical_and(mt.causal_mask(5), mt.padding_mask(tgt_tokens))
    enc_out = encoder_layer(embed(src_tokens), attention_mask=src_mask, training=training)
    return decoder_layer(embed(tgt_tokens), enc_out, self_mask=self_mask, cross_mask=src_mask, training=training)


def _tuned_prenorm(layer, y, context, self_mask, cross_mask):
    """Right on the public inputs only: the self-attention mask rebuilt from the public target's tokens."""
    self_mask = mt.decoder_self_mask(np.array([[1, 8, 4, 6, 2], [1, 5, 9, 3, 0]]))
    return _prenorm()(layer, y, context, self_mask, cross_mask)


@pytest.mark.parametrize("label,env", [
    ("ex-layers-ffn-count", {"ffn_params": lambda d, dff: dict((s, _ffn(*s)) for s in _PUBLIC_SIZES).get((d, dff), 0),
                             "decoder_layer_params": _layer}),
    ("ex-layers-ffn-count", {"ffn_params": _ffn,
                             "decoder_layer_params": lambda d, dff: {s: _layer(*s) for s in _PUBLIC_SIZES}[d, dff]}),
    ("ex-layers-implement-ffn", {"MyFeedForward": _TunedFeedForward}),
    ("ex-layers-implement-encoder-layer", {"MyEncoderLayer": _TunedEncoderLayer}),
    ("ex-layers-which-positions", dict(RIGHT_POSITIONS, changed_decoder_unmasked=[1, 2])),  # of the right form
    ("ex-layers-which-positions", dict(RIGHT_POSITIONS, changed_encoder=[1, 2, 3])),
    ("ex-layers-fix-missing-masks", {"fixed_layers": _tuned_fixed_layers}),
    ("ex-layers-fix-no-cross-attention", {"FixedDecoderLayer": _TunedDecoderLayer}),
    ("ex-layers-prenorm-decoder", {"prenorm_decoder_layer": _tuned_prenorm, "cross_inputs_normalized": ["queries"]}),
    ("ex-layers-prenorm-decoder", {"prenorm_decoder_layer": _prenorm(), "cross_inputs_normalized": ["keys"]}),
])
def test_answers_tuned_to_the_public_cases_fail_the_hidden_ones(label, env):
    assert_tuned_answer_caught(CHAPTER, label, **env)


def test_public_checks_no_longer_hold_the_fixed_answers():
    # Every list of the right form that names no known mistake passes the public check: it cannot tell
    # the right one; and no list of positions, nor the set of names, is written in the public files.
    for env in (RIGHT_POSITIONS, dict(changed_decoder_masked=[1, 2], changed_decoder_unmasked=[1, 2, 3, 4],
                                      changed_encoder=[1, 4])):
        assert check("ex-layers-which-positions", **env)[0]
    text = mt.exercises.check_path(CHAPTER, "ex-layers-which-positions").read_text()
    for answer in RIGHT_POSITIONS.values():
        assert str(answer) not in text, answer
    for answer in (["queries"], ["keys"], ["queries", "keys", "values"], []):
        assert check("ex-layers-prenorm-decoder", prenorm_decoder_layer=_prenorm(),
                     cross_inputs_normalized=answer)[0]
    text = mt.exercises.check_path(CHAPTER, "ex-layers-prenorm-decoder").read_text()
    assert '{"queries"}' not in text and "== {" not in text

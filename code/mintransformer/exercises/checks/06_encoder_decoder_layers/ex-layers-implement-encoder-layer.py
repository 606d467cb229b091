"""Exercise: an encoder layer from its sub-layers, post-norm and pre-norm, checked with copied weights."""

import keras
import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-layers-implement-encoder-layer"
points = 4

D, H, DFF = 8, 2, 32
PARTS = {"self_attention": "mt.MultiHeadAttention(d_model, num_heads, dropout)",
         "ffn": "mt.FeedForward(d_model, dff, dropout)",
         "norm1": "mt.LayerNormalization()", "norm2": "mt.LayerNormalization()"}
RULE = ("Build the encoder layer from its parts, as the exercise asks: `MyEncoderLayer` must not be, subclass "
        "or use mt.EncoderLayer (nor mt.Encoder, which is made of them).")


def _inputs(seed, length=6, d=D, batch=2):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, length, d)).astype("float32")
    tokens = np.ones((batch, length), dtype="int32")
    tokens[1, length - 2:] = 0  # the second sequence ends in two pads
    return x, mt.padding_mask(tokens)


def _reference(seed, norm_first, d=D, h=H, dff=DFF):
    """An mt.EncoderLayer with random weights: biases, gamma and beta too (they start at 0 and 1)."""
    rng = np.random.default_rng(seed)
    ref = mt.EncoderLayer(d, h, dff, norm_first=norm_first)
    ref.build((None, None, d))
    for part in (ref.self_attention, ref.ffn):
        part.set_weights([(rng.normal(size=w.shape) / np.sqrt(w.shape[0] if w.ndim == 2 else 9)).astype("float32")
                          for w in part.get_weights()])
    for norm in (ref.norm1, ref.norm2):
        norm.set_weights([(1 + 0.3 * rng.normal(size=(d,))).astype("float32"),
                          (0.3 * rng.normal(size=(d,))).astype("float32")])
    return ref


def _student(MyEncoderLayer, ref, x, mask, norm_first, dropout=0.1, d=D, h=H, dff=DFF):
    answered(MyEncoderLayer, "MyEncoderLayer")
    with refusing([mt.EncoderLayer], MyEncoderLayer, RULE):  # made and built with the package's layer refused
        layer = call(MyEncoderLayer, "MyEncoderLayer", d, h, dff, dropout=dropout, norm_first=norm_first)
        call(layer, "MyEncoderLayer(...)", x, attention_mask=mask, training=False)  # builds the weights
    for attribute, what in PARTS.items():
        part = getattr(layer, attribute, None)
        if part is None:
            raise AssertionError(f"Your layer has no attribute `{attribute}`: create `self.{attribute} = {what}` "
                                 "in __init__ (the check copies the package's weights into it).")
        try:
            part.set_weights(getattr(ref, attribute).get_weights())
        except Exception:
            raise AssertionError(f"`self.{attribute}` must be {what}, used in call: "
                                 "its weights do not match the package's.") from None
    return layer


def _variant(ref, x, mask, norm_first, ffn_reads_x=False, residual=True, use_mask=True):
    """What a layer computes, right or with a known mistake."""
    def attention(h):
        return ref.self_attention(h, h, h, attention_mask=mask if use_mask else None, training=False)

    def block(v, sublayer, norm, sublayer_input=None):
        source = v if sublayer_input is None else sublayer_input
        y = sublayer(norm(source) if norm_first else source)
        total = v + y if residual else y
        return total if norm_first else norm(total)

    z = block(x, attention, ref.norm1)
    return to_numpy(block(z, lambda h: ref.ffn(h, training=False), ref.norm2, x if ffn_reads_x else None), "")


def _compare(MyEncoderLayer, norm_first, seed, length=6, with_mask=True, d=D, h=H, dff=DFF, batch=2):
    x, mask = _inputs(seed, length, d, batch)
    ref = _reference(seed, norm_first, d, h, dff)
    layer = _student(MyEncoderLayer, ref, x, mask, norm_first, d=d, h=h, dff=dff)
    if with_mask:
        out = call(layer, "MyEncoderLayer(...)", x, attention_mask=mask, training=False)
    else:  # the default, attention_mask=None
        mask = None
        out = call(layer, "MyEncoderLayer(...)", x, training=False)
    kind = "pre-norm (norm_first=True)" if norm_first else "post-norm (norm_first=False)"
    what = f"Your {kind} layer's output" + ("" if with_mask else " (called without a mask)")
    expected = to_numpy(ref(x, attention_mask=mask, training=False), "")
    if not like(out, expected, atol=1e-4):
        if like(out, _variant(ref, x, mask, not norm_first), atol=1e-4):
            wanted = ("x + Dropout(Sublayer(LayerNorm(x)))" if norm_first
                      else "LayerNorm(x + Dropout(Sublayer(x))), the paper's")
            raise AssertionError(f"With norm_first={norm_first} your layer is the other variant: "
                                 f"{kind} is {wanted}.")
        if like(out, _variant(ref, x, mask, norm_first, ffn_reads_x=True), atol=1e-4):
            raise AssertionError(
                "Your FFN reads the layer's input x: it must read z, the output of the attention "
                "sub-layer, or the attention's result is lost (the mistake of the equations of the "
                "PyTorch-sketch chapter and the Keras functional-API tutorial, read literally).")
        if mask is not None and like(out, _variant(ref, x, mask, norm_first, use_mask=False), atol=1e-4):
            raise AssertionError("Your layer ignores the mask: pass attention_mask=attention_mask to the "
                                 "self-attention.")
        if like(out, _variant(ref, x, mask, norm_first, residual=False), atol=1e-4):
            raise AssertionError("Your layer has no residual connection: add the sub-layer's input "
                                 "to its output, x + Sublayer(...).")
    close(out, expected, what, atol=1e-4,
          hint="Two sub-layers, self-attention then the FFN, each closed by dropout, the residual "
               "connection and its own layer norm (norm1, then norm2).")


@test_case(points=1)
def post_norm(MyEncoderLayer):
    _compare(MyEncoderLayer, False, 0)


@test_case(points=1)
def pre_norm(MyEncoderLayer):
    _compare(MyEncoderLayer, True, 1)


@test_case(points=1)
def without_a_mask(MyEncoderLayer):
    _compare(MyEncoderLayer, False, 2, length=3, with_mask=False)
    _compare(MyEncoderLayer, True, 3, length=3, with_mask=False)



def _own_dropouts(layer):
    """The keras.layers.Dropout layers of the student's layer itself (not those of its parts)."""
    try:
        return [sub for sub in layer._flatten_layers(include_self=False, recursive=False)
                if isinstance(sub, keras.layers.Dropout)]
    except Exception:
        return []


def _fixed_mask(inputs, training=False):
    """Dropout at rate 0.5 with a mask fixed by the input's shape: the same at every call."""
    if not training:
        return inputs
    shape = tuple(int(n) for n in inputs.shape)
    keep = np.random.default_rng(list(shape)).random(shape) >= 0.5
    return inputs * ops.cast(keep, inputs.dtype) * ops.cast(2.0, inputs.dtype)


def _fix_masks(layer, parts=("self_attention", "ffn")):
    """Turn off the dropout of the package's parts; give the layer's own Dropout a fixed mask."""
    for part, inner in ((p, "attention_dropout" if "attention" in p else "inner_dropout") for p in parts):
        dropout = getattr(getattr(layer, part, None), inner, None)
        if dropout is not None:
            dropout.rate = 0.0
    own = _own_dropouts(layer)
    for dropout in own:
        dropout.call = _fixed_mask
    return own


def _placed(ref, x, mask, norm_first, where):
    """The reference layer's training output with the fixed mask at ``where``: "output" (the
    sub-layer's output, right), "sum" (the residual sum), "normed" (after the post-norm), "input"
    (the sub-layer's input)."""
    drop = lambda v: _fixed_mask(v, training=True)  # noqa: E731

    def block(v, sublayer, norm):
        source = norm(v) if norm_first else v
        y = sublayer(drop(source) if where == "input" else source)
        if where == "output":
            y = drop(y)
        total = v + y
        if where == "sum":
            total = drop(total)
        if norm_first:
            return total
        return drop(norm(total)) if where == "normed" else norm(total)

    z = block(x, lambda h: ref.self_attention(h, h, h, attention_mask=mask, training=False), ref.norm1)
    return to_numpy(block(z, lambda h: ref.ffn(h, training=False), ref.norm2), "")


PLACES = {
    "sum": "on the whole sum x + Sublayer(...): that drops entries of the residual stream x too, which "
           "the residual connection must carry through unchanged",
    "normed": "after the layer norm, on LayerNorm(x + Sublayer(x)): the paper drops the sub-layer's output "
              "\"before it is added to the sub-layer input and normalized\"",
    "input": "on the sub-layer's input: the paper drops the sub-layer's output, before the residual addition",
}


@test_case(points=1)
def residual_dropout(MyEncoderLayer):
    # The attention's and the FFN's own dropout turned off, and the layer's own Dropout given a mask
    # fixed in advance: the training output must then be the reference's with that mask on each
    # sub-layer's output, before the residual addition.
    for norm_first, seed in ((False, 4), (True, 5)):
        x, mask = _inputs(seed)
        ref = _reference(seed, norm_first)
        layer = _student(MyEncoderLayer, ref, x, mask, norm_first, dropout=0.5)
        own = _fix_masks(layer)
        if not own:
            raise AssertionError(
                "Your layer has no keras.layers.Dropout of its own: create one in __init__, "
                "keras.layers.Dropout(dropout), and apply it to each sub-layer's output before the "
                "residual addition, passing training=training. (The check looks for a Dropout that is an "
                "attribute of the layer itself: one inside a Sequential or a helper layer is not found.)")
        if 0.5 not in [dropout.rate for dropout in own]:
            raise AssertionError(
                f"Your layer was built with dropout=0.5, but its Dropout has rate {own[0].rate}: create it "
                "with the layer's argument, keras.layers.Dropout(dropout), not a fixed rate.")
        other = _own_dropouts(_student(MyEncoderLayer, ref, x, mask, norm_first, dropout=0.3))
        if other and 0.3 not in [dropout.rate for dropout in other]:  # a rate of 0.5 typed in passes the above
            raise AssertionError(
                f"Your layer was built with dropout=0.3, but its Dropout has rate {other[0].rate}: create it "
                "with the layer's argument, keras.layers.Dropout(dropout), not a fixed rate.")
        kind = "pre-norm" if norm_first else "post-norm"
        inference = to_numpy(call(layer, "MyEncoderLayer(...)", x, attention_mask=mask, training=False), "Your output")
        training = to_numpy(call(layer, "MyEncoderLayer(...)", x, attention_mask=mask, training=True), "Your output")
        if np.allclose(training, inference, atol=1e-6):
            raise AssertionError(
                f"Your {kind} layer, built with dropout=0.5 and called with training=True, gives its "
                "inference output once the attention's and the FFN's own dropout are off: it has no "
                "dropout on the sub-layers' outputs. Apply a keras.layers.Dropout(dropout) to each "
                "sub-layer's output before the residual addition, passing training=training.")
        if like(training, _placed(ref, x, mask, norm_first, "output"), atol=1e-4):
            continue
        for where, message in PLACES.items():
            if like(training, _placed(ref, x, mask, norm_first, where), atol=1e-4):
                raise AssertionError(f"Your {kind} layer applies its dropout {message}.")
        raise AssertionError(
            f"Your {kind} layer's output with training=True is not the package's under the same dropout "
            "mask (the check fixes the mask of your Dropout): apply the dropout once to each sub-layer's "
            "output, before the residual addition, and nowhere else.")

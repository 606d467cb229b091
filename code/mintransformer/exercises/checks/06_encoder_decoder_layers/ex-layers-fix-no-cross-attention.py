"""Exercise: find and fix the from-scratch TensorFlow tutorial's decoder layer (no cross-attention)."""

import keras
import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-layers-fix-no-cross-attention"
points = 4

D, H, DFF = 8, 2, 16
PARTS = {"self_attention": "mt.MultiHeadAttention(d_model, num_heads, dropout)",
         "cross_attention": "mt.MultiHeadAttention(d_model, num_heads, dropout)",
         "ffn": "mt.FeedForward(d_model, dff, dropout)",
         "norm1": "mt.LayerNormalization()", "norm2": "mt.LayerNormalization()",
         "norm3": "mt.LayerNormalization()"}
RULE = ("Fix the tutorial's layer by adding the missing sub-layer, as the exercise asks: `FixedDecoderLayer` must "
        "not be, subclass or use mt.DecoderLayer (nor mt.Decoder, which is made of them).")


def _inputs(seed, pads=0):
    """A target (2, 5, D) with its decoder mask, and a context (2, 6 + pads, D) with its padding mask."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 5, D)).astype("float32")
    context = rng.normal(size=(2, 6, D)).astype("float32")
    context = np.pad(context, ((0, 0), (0, pads), (0, 0)), constant_values=0.7)
    src_tokens = np.pad(np.array([[5, 9, 3, 7, 2, 8], [4, 6, 1, 7, 0, 0]]), ((0, 0), (0, pads)))
    tgt_tokens = np.array([[1, 8, 4, 6, 2], [1, 5, 9, 3, 0]])
    return x, context, mt.decoder_self_mask(tgt_tokens), mt.padding_mask(src_tokens)


def _reference(seed, d=D, h=H, dff=DFF):
    """An mt.DecoderLayer with random weights; its three norms share one random gamma and beta."""
    rng = np.random.default_rng(seed)
    ref = mt.DecoderLayer(d, h, dff)
    ref.build((None, None, d), (None, None, d))
    for part in (ref.self_attention, ref.cross_attention, ref.ffn):
        part.set_weights([(rng.normal(size=w.shape) / np.sqrt(w.shape[0] if w.ndim == 2 else 9)).astype("float32")
                          for w in part.get_weights()])
    gamma_beta = [(1 + 0.3 * rng.normal(size=(d,))).astype("float32"), (0.3 * rng.normal(size=(d,))).astype("float32")]
    for norm in (ref.norm1, ref.norm2, ref.norm3):
        norm.set_weights(gamma_beta)
    return ref


def _build(FixedDecoderLayer, x, context, self_mask, cross_mask, dropout=0.1, d=D, h=H, dff=DFF):
    answered(FixedDecoderLayer, "FixedDecoderLayer")
    try:
        with refusing([mt.DecoderLayer], FixedDecoderLayer, RULE):  # made and built with the package's refused
            layer = call(FixedDecoderLayer, "FixedDecoderLayer", d, h, dff, dropout=dropout)
            out = call(layer, "FixedDecoderLayer(...)", x, context, self_mask=self_mask, cross_mask=cross_mask,
                       training=False)
    except AssertionError as error:
        if "ncompatible shapes" in str(error) or "broadcast" in str(error):
            raise AssertionError(
                f"{error}\n\nThe target has T = {x.shape[1]} positions and the context S = {context.shape[1]}. "
                "In cross-attention the queries come from the decoder and the keys and values from the "
                "context: cross_attention(z1, context, context) has the target's length.") from None
        raise
    shape = tuple(to_numpy(out, "The output").shape)
    if shape != x.shape:
        raise AssertionError(
            f"Your layer's output has shape {shape}; it must have the target's shape {x.shape}. In "
            "cross-attention the queries come from the decoder and the keys and values from the "
            "context: cross_attention(z1, context, context).")
    return layer


def _copy(layer, ref):
    for attribute, what in PARTS.items():
        part = getattr(layer, attribute, None)
        if part is None:
            raise AssertionError(f"Your layer has no attribute `{attribute}`: name the sub-layers as "
                                 f"mt.DecoderLayer does (`self.{attribute} = {what}`) so that the check "
                                 "can copy the package's weights into them.")
        try:
            part.set_weights(getattr(ref, attribute).get_weights())
        except Exception:
            raise AssertionError(f"`self.{attribute}` must be {what}, used in call: "
                                 "its weights do not match the package's.") from None


def _variant(ref, x, context, self_mask, cross_mask, order="self cross ffn", query_from_input=False,
             use_cross_mask=True):
    """A decoder layer's output, right or with a known mistake (post-norm, no dropout)."""
    norms = iter((ref.norm1, ref.norm2, ref.norm3))
    z = x
    for sublayer in order.split():
        if sublayer == "self":
            y = ref.self_attention(z, z, z, attention_mask=self_mask, training=False)
        elif sublayer == "cross":
            query = x if query_from_input else z
            y = ref.cross_attention(query, context, context,
                                    attention_mask=cross_mask if use_cross_mask else None, training=False)
        else:
            y = ref.ffn(z, training=False)
        z = next(norms)(z + y)
    return to_numpy(z, "")


@test_case(points=1)
def the_output_reads_the_source(FixedDecoderLayer):
    x, context, self_mask, cross_mask = _inputs(0)
    layer = _build(FixedDecoderLayer, x, context, self_mask, cross_mask)
    other = np.random.default_rng(1).normal(size=context.shape).astype("float32")
    a = to_numpy(call(layer, "FixedDecoderLayer(...)", x, context, self_mask=self_mask, cross_mask=cross_mask,
                      training=False), "The output")
    b = to_numpy(call(layer, "FixedDecoderLayer(...)", x, other, self_mask=self_mask, cross_mask=cross_mask,
                      training=False), "The output")
    change = np.abs(a - b).max(axis=(0, 2))  # (T,)
    if np.all(change == 0):
        raise AssertionError("Your layer's output does not change when the encoder output changes: it "
                             "never reads `context`, so it cannot translate. Add the cross-attention "
                             "sub-layer, MultiHead(z1, C, C), between self-attention and the FFN.")
    if not np.all(change > 1e-4):
        raise AssertionError(f"When the encoder output changes, some target positions keep their output "
                             f"(change per position {np.round(change, 4)}): every position must read the source.")


@test_case(points=1)
def same_as_the_package(FixedDecoderLayer):
    x, context, self_mask, cross_mask = _inputs(2)
    ref = _reference(3)
    layer = _build(FixedDecoderLayer, x, context, self_mask, cross_mask)
    _copy(layer, ref)
    out = call(layer, "FixedDecoderLayer(...)", x, context, self_mask=self_mask, cross_mask=cross_mask,
               training=False)
    expected = to_numpy(ref(x, context, self_mask=self_mask, cross_mask=cross_mask, training=False), "")
    if not like(out, expected, atol=1e-4):
        for order in ("cross self ffn", "self ffn cross"):
            if like(out, _variant(ref, x, context, self_mask, cross_mask, order=order), atol=1e-4):
                raise AssertionError(f"Your sub-layers run in the order {order.replace(' ', ', ')}: the "
                                     "paper's is self-attention, cross-attention, FFN.")
        if like(out, _variant(ref, x, context, self_mask, cross_mask, query_from_input=True), atol=1e-4):
            raise AssertionError("Your cross-attention's queries come from the layer's input y: they must "
                                 "come from z1, the output of the self-attention sub-layer.")
        if like(out, _variant(ref, x, context, self_mask, cross_mask, use_cross_mask=False), atol=1e-4):
            raise AssertionError("Your cross-attention ignores cross_mask: pass attention_mask=cross_mask to it.")
    close(out, expected, "Your decoder layer's output", atol=1e-4,
          hint="z1 = LN(y + MultiHead(y, y, y)), z2 = LN(z1 + MultiHead(z1, C, C)), "
               "out = LN(z2 + FFN(z2)), each sub-layer's output through dropout before the addition.")


@test_case(points=1)
def source_padding_changes_nothing(FixedDecoderLayer):
    x, context, self_mask, cross_mask = _inputs(4)
    layer = _build(FixedDecoderLayer, x, context, self_mask, cross_mask)
    x, longer, _, longer_mask = _inputs(4, pads=3)
    a = to_numpy(call(layer, "FixedDecoderLayer(...)", x, context, self_mask=self_mask, cross_mask=cross_mask,
                      training=False), "The output")
    b = to_numpy(call(layer, "FixedDecoderLayer(...)", x, longer, self_mask=self_mask, cross_mask=longer_mask,
                      training=False), "The output")
    close(b, a, "Your output with three more source pads", atol=1e-5,
          hint="The pads of the source must get weight 0 in cross-attention: pass "
               "attention_mask=cross_mask to it.")


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


def _placed(ref, x, context, self_mask, cross_mask, where):
    """The reference layer's training output with the fixed mask at ``where``: "output" (each
    sub-layer's output, right), "sum" (the residual sum), "normed" (after the norm), "input" (the
    sub-layer's input)."""
    drop = lambda v: _fixed_mask(v, training=True)  # noqa: E731
    sublayers = [
        lambda h: ref.self_attention(h, h, h, attention_mask=self_mask, training=False),
        lambda h: ref.cross_attention(h, context, context, attention_mask=cross_mask, training=False),
        lambda h: ref.ffn(h, training=False),
    ]
    z = x
    for sublayer, norm in zip(sublayers, (ref.norm1, ref.norm2, ref.norm3)):
        y = sublayer(drop(z) if where == "input" else z)
        total = z + (drop(y) if where == "output" else y)
        total = norm(drop(total) if where == "sum" else total)
        z = drop(total) if where == "normed" else total
    return to_numpy(z, "")


PLACES = {
    "sum": "on the whole sum z + Sublayer(z): that drops entries of the residual stream too, which the "
           "residual connection must carry through unchanged",
    "normed": "after the layer norm, on LayerNorm(z + Sublayer(z)): the paper drops the sub-layer's output "
              "\"before it is added to the sub-layer input and normalized\"",
    "input": "on the sub-layer's input: the paper drops the sub-layer's output, before the residual addition",
}


@test_case(points=1)
def residual_dropout(FixedDecoderLayer):
    # The attentions' and the FFN's own dropout turned off, and the layer's own Dropout given a mask
    # fixed in advance: the training output must then be the reference's with that mask on each
    # sub-layer's output, before its residual addition.
    x, context, self_mask, cross_mask = _inputs(5)
    ref = _reference(6)
    layer = _build(FixedDecoderLayer, x, context, self_mask, cross_mask, dropout=0.5)
    _copy(layer, ref)
    for part, inner in (("self_attention", "attention_dropout"), ("cross_attention", "attention_dropout"),
                        ("ffn", "inner_dropout")):
        dropout = getattr(getattr(layer, part, None), inner, None)
        if dropout is not None:
            dropout.rate = 0.0
    own = _own_dropouts(layer)
    if not own:
        raise AssertionError(
            "Your layer has no keras.layers.Dropout of its own: create one in __init__, "
            "keras.layers.Dropout(dropout), and apply it to each sub-layer's output before its residual "
            "addition, passing training=training, as the tutorial's layer does. (The check looks for a "
            "Dropout that is an attribute of the layer itself: one inside a Sequential or a helper layer "
            "is not found.)")
    if 0.5 not in [dropout.rate for dropout in own]:
        raise AssertionError(
            f"Your layer was built with dropout=0.5, but its Dropout has rate {own[0].rate}: create it with "
            "the layer's argument, keras.layers.Dropout(dropout), not a fixed rate.")
    other = _own_dropouts(_build(FixedDecoderLayer, x, context, self_mask, cross_mask, dropout=0.3))
    if other and 0.3 not in [dropout.rate for dropout in other]:  # a rate of 0.5 typed in passes the above
        raise AssertionError(
            f"Your layer was built with dropout=0.3, but its Dropout has rate {other[0].rate}: create it with "
            "the layer's argument, keras.layers.Dropout(dropout), not a fixed rate.")
    for dropout in own:
        dropout.call = _fixed_mask
    inference, training = (
        to_numpy(call(layer, "FixedDecoderLayer(...)", x, context, self_mask=self_mask, cross_mask=cross_mask,
                      training=mode), "The output")
        for mode in (False, True))
    if np.allclose(training, inference, atol=1e-6):
        raise AssertionError(
            "Your layer, built with dropout=0.5 and called with training=True, gives its inference output "
            "once the attentions' and the FFN's own dropout are off: it has no dropout on the sub-layers' "
            "outputs. Apply a keras.layers.Dropout(dropout) to each sub-layer's output before its residual "
            "addition, passing training=training, as the tutorial's layer does.")
    if like(training, _placed(ref, x, context, self_mask, cross_mask, "output"), atol=1e-4):
        return
    for where, message in PLACES.items():
        if like(training, _placed(ref, x, context, self_mask, cross_mask, where), atol=1e-4):
            raise AssertionError(f"Your layer applies its dropout {message}.")
    raise AssertionError(
        "Your layer's output with training=True is not the package's under the same dropout mask (the "
        "check fixes the mask of your Dropout): apply the dropout once to each sub-layer's output, before "
        "its residual addition, and nowhere else.")

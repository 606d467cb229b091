"""Exercise: the pre-norm decoder layer, recomputed from its sub-layers.

The public cases check the function and the form of cross_inputs_normalized; which names are right
is checked by a hidden case, when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-layers-prenorm-decoder"
points = 2

D, H, DFF = 8, 2, 16


_DO_NOT_CALL = ("do not call the layer itself: recompute its output from its sub-layers "
                "(layer.norm1, layer.self_attention, ...)")
RULE = ("`prenorm_decoder_layer` calls mt.DecoderLayer's own call or step: recompute the layer's output from "
        "its sub-layers (layer.norm1, layer.self_attention, ...), as the exercise asks.")


def _sub_layers(layer):
    """A decoder layer without its call: the student recomputes it from the sub-layers.

    The layer is held in a closure, not in an attribute that the student's code could reach.
    """
    class SubLayers:
        __slots__ = ()

        def __getattr__(self, attribute):  # every attribute but the layer's own computation
            if attribute in ("call", "step", "__call__"):
                raise RuntimeError(_DO_NOT_CALL)
            return getattr(layer, attribute)

        def __call__(self, *args, **kwargs):
            raise RuntimeError(_DO_NOT_CALL)

    return SubLayers()


TARGET = np.array([[1, 8, 4, 6, 2], [1, 5, 9, 3, 0]])
SOURCE = np.array([[5, 9, 3, 7, 2, 8], [4, 6, 1, 7, 0, 0]])


def _case(seed, target=TARGET, source=SOURCE, d=D, h=H, dff=DFF):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=target.shape + (d,)).astype("float32")
    context = rng.normal(size=source.shape + (d,)).astype("float32")
    self_mask = mt.decoder_self_mask(target)
    cross_mask = mt.padding_mask(source)
    layer = mt.DecoderLayer(d, h, dff, norm_first=True)
    layer.build((None, None, d), (None, None, d))
    for part in (layer.self_attention, layer.cross_attention, layer.ffn):
        part.set_weights([(rng.normal(size=w.shape) / np.sqrt(w.shape[0] if w.ndim == 2 else 9)).astype("float32")
                          for w in part.get_weights()])
    for norm in (layer.norm1, layer.norm2, layer.norm3):  # each its own gamma and beta
        norm.set_weights([(1 + 0.3 * rng.normal(size=(d,))).astype("float32"),
                          (0.3 * rng.normal(size=(d,))).astype("float32")])
    return layer, y, context, self_mask, cross_mask


def _variant(layer, y, context, self_mask, cross_mask, post_norm=False, norm_context=False, norm_output=False):
    """Known wrong versions of the pre-norm decoder layer."""
    if post_norm:
        z1 = layer.norm1(y + layer.self_attention(y, y, y, attention_mask=self_mask))
        z2 = layer.norm2(z1 + layer.cross_attention(z1, context, context, attention_mask=cross_mask))
        return to_numpy(layer.norm3(z2 + layer.ffn(z2)), "")
    n1 = layer.norm1(y)
    z1 = y + layer.self_attention(n1, n1, n1, attention_mask=self_mask)
    kv = layer.norm2(context) if norm_context else context
    z2 = z1 + layer.cross_attention(layer.norm2(z1), kv, kv, attention_mask=cross_mask)
    out = z2 + layer.ffn(layer.norm3(z2))
    return to_numpy(layer.norm3(out) if norm_output else out, "")


def _compare(prenorm_decoder_layer, seed, **case):
    layer, y, context, self_mask, cross_mask = _case(seed, **case)
    # mt.DecoderLayer.call(layer, ...) would run the package's layer on the sub-layers: refused too.
    with refusing([mt.DecoderLayer.call, mt.DecoderLayer.step], prenorm_decoder_layer, RULE, owners=[mt.DecoderLayer]):
        got = call(prenorm_decoder_layer, "prenorm_decoder_layer", _sub_layers(layer), y, context, self_mask,
                   cross_mask)
    expected = to_numpy(layer(y, context, self_mask=self_mask, cross_mask=cross_mask, training=False), "")
    args = (layer, y, context, self_mask, cross_mask)
    if like(got, _variant(*args, post_norm=True), atol=1e-4):
        raise AssertionError("This is the post-norm layer, LN(x + Sublayer(x)). Pre-norm normalizes the "
                             "sub-layer's input and adds the sub-layer's output to the raw x: "
                             "x + Sublayer(LN(x)).")
    if like(got, _variant(*args, norm_context=True), atol=1e-4):
        raise AssertionError("You passed the context C through norm2. norm2 belongs to the decoder layer's "
                             "own stream: trace each input of cross-attention back to where it comes from.")
    if like(got, _variant(*args, norm_output=True), atol=1e-4):
        raise AssertionError("You normalized the layer's output: a pre-norm layer returns the plain sum "
                             "residual sum of its last sub-layer; the stack's final_norm normalizes at the end.")
    close(got, expected, "Your pre-norm decoder layer's output", atol=1e-4,
          hint="Check each of the three sub-layers against the pre-norm rule x + Sublayer(LN(x)): which norm "
               "it uses, which inputs it reads, which mask it gets, and what is added to its output.")


@test_case(points=1)
def the_layer(prenorm_decoder_layer):
    _compare(prenorm_decoder_layer, 0)
    _compare(prenorm_decoder_layer, 1)


def _names(cross_inputs_normalized):
    answered(cross_inputs_normalized, "cross_inputs_normalized")
    if isinstance(cross_inputs_normalized, str):
        cross_inputs_normalized = [cross_inputs_normalized]
    try:
        got = {str(s).strip().lower() for s in cross_inputs_normalized}
    except TypeError:
        raise AssertionError("`cross_inputs_normalized` must be a list of names among "
                             "'queries', 'keys', 'values'.") from None
    if not got <= {"queries", "keys", "values"}:
        raise AssertionError(f"{sorted(got)}: use the names 'queries', 'keys', 'values'.")
    return got


@test_case(points=1)
def what_the_norms_see(cross_inputs_normalized):
    _names(cross_inputs_normalized)  # the form only: which names are right is for the graded notebook's hidden case

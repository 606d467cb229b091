"""Exercise: the number of parameters of the FFN and of a decoder layer, as formulas."""

from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, refusing

OK_FORMAT = False
name = "ex-layers-ffn-count"
points = 2

# (d_model, num_heads, dff): the base model, the big model, and two small layers.
SIZES = [(512, 8, 2048), (1024, 16, 4096), (16, 4, 64), (12, 3, 20)]


# Counting, not building: the package's layers are refused while the student's functions run.
_REFUSED = [mt.FeedForward, mt.MultiHeadAttention, mt.LayerNormalization, mt.EncoderLayer, mt.DecoderLayer,
            mt.Encoder, mt.Decoder, mt.MinTransformer]
_RULE = ("Derive the count as a formula in d_model and dff: do not build the package's layers "
         "(mt.FeedForward, mt.DecoderLayer, ...) to read their count_params().")


def _count(function, fname, d, dff):
    with refusing(_REFUSED, function, _RULE):
        value = call(function, fname, d, dff)
    try:
        return int(round(float(value)))
    except (TypeError, ValueError):
        raise AssertionError(f"`{fname}({d}, {dff})` must return a number, not {type(value).__name__}.") from None


def _truth(d, heads, dff):
    layer = mt.DecoderLayer(d, heads, dff)
    layer.build((None, None, d), (None, None, d))
    return layer.ffn.count_params(), layer.count_params()


def _check_ffn(ffn_params, sizes):
    answered(ffn_params, "ffn_params")
    for d, heads, dff in sizes:
        got, (ffn, _) = _count(ffn_params, "ffn_params", d, dff), _truth(d, heads, dff)
        if got == ffn:
            continue
        if got == 2 * d * dff:
            raise AssertionError(
                f"ffn_params({d}, {dff}) = {got:,} counts W_1 and W_2 only: add the biases, "
                f"b_1 with d_ff entries and b_2 with d_model entries.")
        if got in (2 * d * dff + dff, 2 * d * dff + d):
            raise AssertionError(
                f"ffn_params({d}, {dff}) = {got:,} has one bias only: b_1 has d_ff entries, b_2 has d_model.")
        if got in (d * dff + dff, d * dff + d, d * dff):
            raise AssertionError(
                f"ffn_params({d}, {dff}) = {got:,} counts one linear map: the FFN has two, "
                "W_1 (d_model x d_ff) and W_2 (d_ff x d_model), each with its bias.")
        side = "many" if got > ffn else "few"
        raise AssertionError(
            f"ffn_params({d}, {dff}) = {got:,} is too {side}. Count the entries of W_1, b_1, W_2 and b_2.")


def _check_decoder_layer(decoder_layer_params, sizes):
    answered(decoder_layer_params, "decoder_layer_params")
    for d, heads, dff in sizes:
        got, (ffn, total) = _count(decoder_layer_params, "decoder_layer_params", d, dff), _truth(d, heads, dff)
        if got == total:
            continue
        at = f"decoder_layer_params({d}, {dff}) = {got:,}"
        attention = 4 * (d * d + d)
        if got == total - attention - 2 * d:
            raise AssertionError(f"{at} counts an encoder layer: the decoder layer has a second attention, "
                                 "cross-attention, with its own four projections, and a third layer norm.")
        if got == total - attention:
            raise AssertionError(f"{at} has one attention: cross-attention is a second multi-head attention, "
                                 "with its own W_Q, W_K, W_V and W_O and their biases.")
        if got == total - 2 * d:
            raise AssertionError(f"{at} has two layer norms: the decoder layer has three, one per sub-layer, "
                                 "each with gamma and beta of d_model entries.")
        if got in (total - 2 * (d * d + d), total - d * d - d):
            raise AssertionError(f"{at} gives cross-attention too few projections. Its keys and values come "
                                 "from the encoder, but they are still projected by its own W_K and W_V, its "
                                 "queries by W_Q, and its output by W_O: four, as in self-attention.")
        if got in (total - 8 * d, total - 12 * d, total - 14 * d):
            raise AssertionError(f"{at} leaves out biases or the layer norms' gamma and beta: every projection "
                                 "has a bias of d_model entries, every layer norm 2 x d_model parameters.")
        if got == total - ffn:
            raise AssertionError(f"{at} leaves out the feed-forward network.")
        side = "many" if got > total else "few"
        raise AssertionError(
            f"{at} is too {side}. Count two "
            "multi-head attentions (W_Q, W_K, W_V, W_O with biases), the FFN, and three layer norms. The "
            "number of heads changes nothing: the heads split the same D x D matrices.")


@test_case(points=1)
def feed_forward(ffn_params):
    _check_ffn(ffn_params, sizes=SIZES)  # (the hidden cases use other sizes)


@test_case(points=1)
def decoder_layer(decoder_layer_params):
    _check_decoder_layer(decoder_layer_params, sizes=SIZES)

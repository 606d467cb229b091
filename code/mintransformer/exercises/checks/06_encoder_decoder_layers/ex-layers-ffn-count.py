"""Exercise: the number of parameters of the FFN and of an encoder layer, as formulas."""

from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call

OK_FORMAT = False
name = "ex-layers-ffn-count"
points = 2

# (d_model, num_heads, dff): the base model, the big model, and two small layers.
SIZES = [(512, 8, 2048), (1024, 16, 4096), (16, 4, 64), (12, 3, 20)]


def _count(function, fname, d, dff):
    value = call(function, fname, d, dff)
    try:
        return int(round(float(value)))
    except (TypeError, ValueError):
        raise AssertionError(f"`{fname}({d}, {dff})` must return a number, not {type(value).__name__}.") from None


def _truth(d, heads, dff):
    layer = mt.EncoderLayer(d, heads, dff)
    layer.build((None, None, d))
    return layer.ffn.count_params(), layer.count_params()


@test_case(points=1)
def feed_forward(ffn_params):
    answered(ffn_params, "ffn_params")
    for d, heads, dff in SIZES:
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
        raise AssertionError(
            f"ffn_params({d}, {dff}) = {got:,}; mt.FeedForward({d}, {dff}) has {ffn:,} parameters. "
            "Count the entries of W_1, b_1, W_2 and b_2.")


@test_case(points=1)
def encoder_layer(encoder_layer_params):
    answered(encoder_layer_params, "encoder_layer_params")
    for d, heads, dff in SIZES:
        got, (ffn, total) = _count(encoder_layer_params, "encoder_layer_params", d, dff), _truth(d, heads, dff)
        if got == total:
            continue
        at = f"encoder_layer_params({d}, {dff}) = {got:,}"
        if got == total - 4 * d:
            raise AssertionError(f"{at} is 4 x d_model short: the four biases of W_Q, W_K, W_V "
                                 "and W_O (d_model entries each), or the two layer norms' gamma and "
                                 "beta (d_model entries each), are missing.")
        if got == total - 8 * d:
            raise AssertionError(f"{at} leaves out the four attention biases and the two layer "
                                 "norms' gamma and beta (d_model entries each).")
        if got == total - 2 * d:
            raise AssertionError(f"{at} has one layer norm: the layer has two, one per sub-layer, "
                                 "each with gamma and beta of d_model entries.")
        if got in (total - d * d - d, total - d * d):
            raise AssertionError(f"{at} counts three attention projections: there are four, "
                                 "W_Q, W_K, W_V and the output projection W_O.")
        if got == total - ffn:
            raise AssertionError(f"{at} leaves out the feed-forward network.")
        raise AssertionError(
            f"{at}; mt.EncoderLayer({d}, {heads}, {dff}) has {total:,} parameters: multi-head "
            "attention (W_Q, W_K, W_V, W_O with biases), the FFN, and two layer norms. "
            "The number of heads changes nothing: the heads split the same D x D matrices.")

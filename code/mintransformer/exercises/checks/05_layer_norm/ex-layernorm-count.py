"""Exercise: count the layer-norm parameters of an encoder-decoder, post-norm and pre-norm."""

import numbers

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-layernorm-count"
points = 3


def _package_count(num_layers, d_model, norm_first):
    """The layer-norm parameters of mt.Encoder + mt.Decoder, counted on the built layers."""
    config = dict(num_layers=num_layers, d_model=d_model, num_heads=2, dff=2 * d_model, norm_first=norm_first)
    encoder, decoder = mt.Encoder(**config), mt.Decoder(**config)
    encoder.build((None, None, d_model))
    decoder.build((None, None, d_model), (None, None, d_model))
    return sum(int(np.prod(w.shape)) for w in encoder.weights + decoder.weights if "norm" in w.path)


def _check(count_norm_params, num_layers, d_model, norm_first, expected):
    got = call(count_norm_params, "count_norm_params", num_layers, d_model, norm_first)
    if not isinstance(got, numbers.Integral) and not (np.ndim(got) == 0 and float(got).is_integer()):
        raise AssertionError(f"`count_norm_params` must return a whole number, not {got!r}.")
    got = int(got)
    if got == expected:
        return
    n, d = num_layers, d_model
    finals = 2 if norm_first else 0
    known = {
        (2 * n + 3 * n + finals) * d: "You counted one number per feature for each layer norm; it has "
                                      "two, gamma and beta: 2 d_model parameters.",
        (2 * n + 2 * n + finals) * 2 * d: "A decoder layer has three sub-layers (self-attention, "
                                          "encoder-decoder attention, feed-forward), each with its own layer "
                                          "norm: 3 per decoder layer, 2 per encoder layer.",
        (2 * n + finals // 2) * 2 * d: "You counted the encoder only: count the decoder's layer norms too.",
        (2 * n + 3 * n) * 2 * d: "With norm_first=True the encoder and the decoder each end with a final "
                                 "layer norm (final_norm): 2 more.",
        (2 * n + 3 * n + 2) * 2 * d: "Post-norm (norm_first=False) has no final layer norm: the last "
                                     "sub-layer already ends with one.",
    }
    known.pop(expected, None)
    setting = f"num_layers={num_layers}, d_model={d_model}, norm_first={norm_first}"
    if got in known:
        raise AssertionError(f"With {setting}: you returned {got}. {known[got]}")
    raise AssertionError(
        f"With {setting}: you returned {got}, where the package's mt.Encoder and mt.Decoder have {expected} "
        "layer-norm parameters. Count the layer norms of each encoder layer and each decoder layer, the "
        "final ones (pre-norm only), and the parameters of one layer norm."
    )


@test_case(points=1)
def post_norm(count_norm_params):
    for num_layers, d_model in [(1, 8), (2, 6), (3, 4)]:
        _check(count_norm_params, num_layers, d_model, False, _package_count(num_layers, d_model, False))


@test_case(points=1)
def pre_norm(count_norm_params):
    for num_layers, d_model in [(1, 8), (2, 6), (3, 4)]:
        _check(count_norm_params, num_layers, d_model, True, _package_count(num_layers, d_model, True))


@test_case(points=1)
def the_base_model(count_norm_params):
    for norm_first in (False, True):
        per_feature = _package_count(6, 2, norm_first) // 2  # the same model at d_model = 2, per feature
        _check(count_norm_params, 6, 512, norm_first, per_feature * 512)

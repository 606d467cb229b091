"""Exercise: count the layer-norm parameters of an encoder and of a decoder, post-norm and pre-norm."""

import functools
import numbers

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-layernorm-count"
points = 3

# num_layers 5 and 7 first: there the wrong formulas below give different numbers.
SMALL = [(5, 8), (7, 6), (1, 4)]


@functools.lru_cache(maxsize=None)
def _built_counts(num_layers, d_model, norm_first):
    """(encoder, decoder): the layer-norm parameters of mt.Encoder and of mt.Decoder, built apart."""
    config = dict(num_layers=num_layers, d_model=d_model, num_heads=2, dff=2 * d_model, norm_first=norm_first)
    encoder, decoder = mt.Encoder(**config), mt.Decoder(**config)
    encoder.build((None, None, d_model))
    decoder.build((None, None, d_model), (None, None, d_model))  # its input and the encoder's output

    def norm_params(layer):
        return sum(int(np.prod(w.shape)) for w in layer.weights if "norm" in w.path)

    return norm_params(encoder), norm_params(decoder)


def _package_counts(num_layers, d_model, norm_first):
    """The package's counts at any size, from models of 1 and 2 layers with d_model = 2 (cheap to
    build): a stack of num_layers identical layers (plus a final norm) is linear in num_layers, and
    every layer norm has 2 d_model parameters."""
    one, two = _built_counts(1, 2, norm_first), _built_counts(2, 2, norm_first)
    return tuple((a + (num_layers - 1) * (b - a)) * d_model // 2 for a, b in zip(one, two))


def _formula(enc=2, dec=3, enc_final=1, dec_final=1, per_norm=2, finals_in_post=False):
    """(encoder, decoder) counts: `enc` and `dec` norms per layer, the final norms, per_norm * d each."""
    def count(n, d, norm_first):
        finals = norm_first or finals_in_post
        return ((enc * n + (enc_final if finals else 0)) * per_norm * d,
                (dec * n + (dec_final if finals else 0)) * per_norm * d)
    return count


# (wrong formula, message), named only when the answer matches it at every setting of a test case.
MISTAKES = [
    (_formula(enc=3, dec=2),
     "You swapped the encoder's and the decoder's counts. An encoder layer has 2 layer norms (after "
     "self-attention and after the feed-forward network); a decoder layer has 3 (it also has "
     "encoder-decoder attention)."),
    (_formula(per_norm=1),
     "You counted one number per feature for each layer norm; it has two, gamma and beta: 2 d_model "
     "parameters."),
    (_formula(dec=2),
     "Your decoder count has 2 layer norms per decoder layer. A decoder layer has three sub-layers "
     "(self-attention, encoder-decoder attention, feed-forward), each with its own layer norm: 3."),
    (_formula(enc=3),
     "Your encoder count has 3 layer norms per encoder layer. An encoder layer has two sub-layers "
     "(self-attention, feed-forward), each with its own layer norm: 2."),
    (_formula(enc_final=0, dec_final=0),
     "With norm_first=True the encoder and the decoder each end with a final layer norm "
     "(Encoder.final_norm, Decoder.final_norm): one more in each."),
    (_formula(finals_in_post=True),
     "Post-norm (norm_first=False) has no final layer norm: the last sub-layer already ends with one."),
    (_formula(enc_final=1, dec_final=0),
     "You gave the encoder a final layer norm but not the decoder: with norm_first=True each of them "
     "ends with its own (Encoder.final_norm, Decoder.final_norm), one in each, two in all."),
    (_formula(enc_final=0, dec_final=1),
     "You gave the decoder a final layer norm but not the encoder: with norm_first=True each of them "
     "ends with its own (Encoder.final_norm, Decoder.final_norm), one in each, two in all."),
    (_formula(enc_final=2, dec_final=0),
     "You put both final layer norms in the encoder: with norm_first=True the encoder and the decoder "
     "each end with their own (Encoder.final_norm, Decoder.final_norm), one in each."),
    (_formula(enc_final=0, dec_final=2),
     "You put both final layer norms in the decoder: with norm_first=True the encoder and the decoder "
     "each end with their own (Encoder.final_norm, Decoder.final_norm), one in each."),
]


def _whole(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    try:
        return np.ndim(value) == 0 and float(value).is_integer()
    except (TypeError, ValueError):
        return False


def _answer(count_norm_params, num_layers, d_model, norm_first, expected):
    """The student's (encoder, decoder) pair as two ints, or a failure saying what to return."""
    got = call(count_norm_params, "count_norm_params", num_layers, d_model, norm_first)
    setting = f"num_layers={num_layers}, d_model={d_model}, norm_first={norm_first}"
    if _whole(got) and int(got) == sum(expected):
        raise AssertionError(
            f"With {setting}: {int(got)} is the right total, but return the two parts apart, as a "
            "pair (encoder_params, decoder_params)."
        )
    try:
        encoder, decoder = got
        assert _whole(encoder) and _whole(decoder)
    except Exception:
        raise AssertionError(
            f"`count_norm_params` must return a pair of whole numbers (encoder_params, decoder_params), "
            f"not {got!r}."
        ) from None
    return int(encoder), int(decoder)


def _check(count_norm_params, settings, expected):
    """Compare at every (num_layers, d_model, norm_first); name a mistake that fits all of them."""
    got = [_answer(count_norm_params, *setting, want) for setting, want in zip(settings, expected)]
    if got == expected:
        return
    for wrong, message in MISTAKES:
        if all(g == wrong(*setting) for g, setting in zip(got, settings)):
            raise AssertionError(message)
    for (n, d, norm_first), g, want in zip(settings, got, expected):
        if g == want:
            continue
        # (Never the package's count: the student would copy it.)
        parts = [f"{which} count, {mine}, is too {'large' if mine > theirs else 'small'} for mt.{cls}"
                 for which, cls, mine, theirs in zip(("encoder", "decoder"), ("Encoder", "Decoder"), g, want)
                 if mine != theirs]
        raise AssertionError(
            f"With num_layers={n}, d_model={d}, norm_first={norm_first}: your " + ", and your ".join(parts)
            + ". Count the layer norms of one layer, times num_layers, plus the final one (pre-norm only), "
            "times the parameters of one layer norm."
        )


@test_case(points=1)
def post_norm(count_norm_params):
    settings = [(n, d, False) for n, d in SMALL]
    _check(count_norm_params, settings, [_package_counts(*setting) for setting in settings])


@test_case(points=1)
def pre_norm(count_norm_params):
    settings = [(n, d, True) for n, d in SMALL]
    _check(count_norm_params, settings, [_package_counts(*setting) for setting in settings])


@test_case(points=1)
def the_base_model(count_norm_params):
    settings = [(6, 512, False), (6, 512, True)]
    _check(count_norm_params, settings, [_package_counts(*setting) for setting in settings])

"""Exercise: find and fix the MinTransformer course chapter's layer calls (every mask None)."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-layers-fix-missing-masks"
points = 4

D, H, DFF, VOCAB = 8, 2, 16, 12
SOURCE = np.array([[5, 9, 3, 7, 2, 8], [4, 6, 11, 7, 0, 0]])  # (B, S); 0 = padding
TARGET = np.array([[1, 8, 4, 6, 2], [1, 5, 9, 3, 0]])  # (B, T)
REAL = TARGET != 0  # the target positions whose outputs are used


def _randomize(layer, rng):
    layer.set_weights([(rng.normal(size=w.shape) / np.sqrt(w.shape[0] if w.ndim == 2 else 9)).astype("float32")
                       for w in layer.get_weights()])


def _layers():
    """An embedding, an encoder layer and a decoder layer with fixed random weights."""
    rng = np.random.default_rng(0)
    embed = mt.PositionalEmbedding(VOCAB, D, max_length=16)
    encoder_layer, decoder_layer = mt.EncoderLayer(D, H, DFF), mt.DecoderLayer(D, H, DFF)
    context = encoder_layer(embed(SOURCE))
    decoder_layer(embed(TARGET), context)
    for layer in (embed, encoder_layer, decoder_layer):
        _randomize(layer, rng)
    return embed, encoder_layer, decoder_layer


def _run(fixed_layers, layers, source, target):
    embed, encoder_layer, decoder_layer = layers
    try:
        out = call(fixed_layers, "fixed_layers", encoder_layer, decoder_layer, embed, source, target,
                   training=False)
    except AssertionError as error:
        if "positional argument" in str(error):
            raise AssertionError(
                f"{error}\n\nPass `training=training` by keyword, and the masks too: Keras 3 refuses a "
                "Python bool as a positional argument, and in the package's layers the slot after the "
                "inputs is a mask, not `training`.") from None
        raise
    out = to_numpy(out, "The output of fixed_layers")
    if out.shape != (target.shape[0], target.shape[1], D):
        raise AssertionError(f"`fixed_layers` returned shape {out.shape}: it must return the decoder "
                             f"layer's output, (B, T, D) = {(target.shape[0], target.shape[1], D)}.")
    return out


def _first_run(fixed_layers, layers):
    """The output on SOURCE and TARGET, after checking that the function is not random."""
    out = _run(fixed_layers, layers, SOURCE, TARGET)
    again = _run(fixed_layers, layers, SOURCE, TARGET)
    if not np.allclose(out, again, atol=1e-6):
        raise AssertionError(
            "Called twice on the same tokens with training=False, `fixed_layers` returned two different "
            "outputs: dropout is on inside it. Pass training=training (by keyword) to both layers, "
            "not training=True.")
    return out


def _reference(layers, source, target, encoder_mask=True, cross_mask=True, cross_from_target=False):
    embed, encoder_layer, decoder_layer = layers
    src_mask = mt.padding_mask(source)
    cross = mt.padding_mask(target if cross_from_target else source)
    context = encoder_layer(embed(source), attention_mask=src_mask if encoder_mask else None, training=False)
    return to_numpy(decoder_layer(embed(target), context, self_mask=mt.decoder_self_mask(target),
                                  cross_mask=cross if cross_mask else None, training=False), "")


@test_case(points=1)
def the_future_does_not_leak(fixed_layers):
    layers = _layers()
    out = _first_run(fixed_layers, layers)
    for t in range(TARGET.shape[1] - 1):
        future = TARGET.copy()
        future[:, t + 1:] = np.arange(3, 3 + future.shape[1] - t - 1)  # new tokens after t
        changed = _run(fixed_layers, layers, SOURCE, future)
        change = np.abs(changed - out)[:, : t + 1].max()
        if change > 1e-5:
            raise AssertionError(
                f"Output {'position 0' if t == 0 else f'positions 0 to {t}'} changed (by up to {change:.3g}) "
                f"when only the target tokens "
                f"after position {t} changed: the decoder sees the future. Its self-attention must hide, from "
                "each query, every later position.")


@test_case(points=1)
def source_padding_changes_nothing(fixed_layers):
    layers = _layers()
    out = _first_run(fixed_layers, layers)
    padded = np.pad(SOURCE, ((0, 0), (0, 3)))  # three more pads (id 0)
    longer = _run(fixed_layers, layers, padded, TARGET)
    change = np.abs(longer - out)[REAL].max()
    if change > 1e-5:
        hints = []
        if like(out[REAL], _reference(layers, SOURCE, TARGET, encoder_mask=False)[REAL]):
            hints.append("the encoder layer's self-attention reads the source's pads")
        if like(out[REAL], _reference(layers, SOURCE, TARGET, cross_mask=False)[REAL]):
            hints.append("cross-attention reads the source's pads")
        if like(out[REAL], _reference(layers, SOURCE, TARGET, encoder_mask=False, cross_mask=False)[REAL]):
            hints.append("both the encoder layer's self-attention and cross-attention read the source's pads")
        raise AssertionError(
            f"Three more padding tokens at the end of the source changed the decoder's outputs (by up to "
            f"{change:.3g}): the pads are attended like words. "
            + ("; ".join(hints) if hints else "an attention whose keys include them does not hide them")
            + ". An attention whose keys are source positions must hide the source's pads.")


@test_case(points=1)
def same_as_the_package(fixed_layers):
    layers = _layers()
    real = REAL[..., None]  # (B, T, 1): the pad positions' outputs are unused, set to 0 on both sides
    out, expected = _first_run(fixed_layers, layers), _reference(layers, SOURCE, TARGET)
    close(np.where(real, out, 0), np.where(real, expected, 0),
          "The decoder output (B, T, D) at the real (non-pad) target positions", atol=1e-5,
          hint="Each of the three attentions needs a mask that hides, among its keys, the pads and (in the "
               "decoder's self-attention) the later positions; pass training= by keyword.")


SAME_LENGTH = np.array([[5, 9, 3, 7, 2], [4, 6, 11, 0, 0]])  # a source as long as TARGET, other pads


@test_case(points=1)
def a_source_as_long_as_the_target(fixed_layers):
    # S = T: a padding mask of the wrong sequence broadcasts silently.
    layers = _layers()
    out = _run(fixed_layers, layers, SAME_LENGTH, TARGET)
    expected = _reference(layers, SAME_LENGTH, TARGET)
    if like(out[REAL], _reference(layers, SAME_LENGTH, TARGET, cross_from_target=True)[REAL], atol=1e-5):
        raise AssertionError(
            "With a source as long as the target, your cross-attention's mask hides the wrong positions: it is "
            "built from the wrong tokens (with S != T it raised, with S = T it broadcasts without a word). "
            "Which sequence do cross-attention's keys come from?")
    real = REAL[..., None]
    close(np.where(real, out, 0), np.where(real, expected, 0),
          "With a source as long as the target, the decoder output (B, T, D) at the real target positions",
          atol=1e-5, hint="Each mask is built from the tokens of the sequence its KEYS come from.")

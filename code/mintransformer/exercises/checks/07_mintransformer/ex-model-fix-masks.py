"""Exercise: find and fix the bug of the MinTransformer course chapter: every mask is None."""

import contextlib
from unittest import mock

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-model-fix-masks"
points = 4

SOURCE = np.array([[5, 8, 3, 9, 12, 0, 0],
                   [7, 2, 6, 0, 0, 0, 0]])  # (B, S) = (2, 7); 0 = padding
TARGET = np.array([[1, 4, 6, 2, 7],
                   [1, 3, 11, 10, 0]])  # (B, T) = (2, 5)
FUTURE = TARGET.copy()
FUTURE[:, 3:4] = [[9], [5]]  # another token at position 3 (real in both sentences)
# A model whose padding id is 19: here 0 is a token like any other.
PAD = 19
SOURCE_19 = np.array([[5, 0, 3, 9, 12, PAD, PAD],
                      [7, 2, 6, PAD, PAD, PAD, PAD]])
TARGET_19 = np.array([[1, 4, 0, 2, 7],
                      [1, 3, 11, 10, PAD]])
MASKS = ("the encoder's mask", "the decoder's self-attention mask", "the cross-attention mask")


_MODELS = {}  # this run's models, by pad_id: every test case uses the same weights


def _model(pad_id=0):
    if pad_id in _MODELS:
        return _MODELS[pad_id]
    model = mt.MinTransformer(2, 16, 2, 32, 20, 20, max_length=12, share_embeddings=True, pad_id=pad_id)
    model((SOURCE, TARGET), training=False)  # builds the weights
    # Fixed weights from a NumPy generator (keras.utils.set_random_seed would reset the random
    # generators of the student's kernel, where the check runs).
    rng = np.random.default_rng(pad_id)
    for variable in model.trainable_weights:
        shape = tuple(variable.shape)
        if len(shape) == 2:  # kernels and the embedding matrix
            value = rng.normal(0, shape[0] ** -0.5, shape)
        else:  # biases around 0, layer-norm gains around 1
            value = float(variable.path.endswith("gamma")) + rng.normal(0, 0.1, shape)
        variable.assign(value.astype("float32"))
    _MODELS[pad_id] = model
    return model


def _logits(model, source, target, encoder_mask, self_mask, cross_mask):
    context = model.encoder(model.source_embedding(source), attention_mask=encoder_mask, training=False)
    H = model.decoder(model.target_embedding(target), context, self_mask=self_mask, cross_mask=cross_mask,
                      training=False)
    return to_numpy(model.output_projection(H), "")


def _masks(source, target, pad_id):
    source_mask = mt.padding_mask(source, pad_id)
    return [source_mask, mt.decoder_self_mask(target, pad_id), source_mask]


@contextlib.contextmanager
def _refused():
    """While the student's function runs, the model's own forward pass refuses to run."""
    used = []

    def refuse(self, *args, **kwargs):
        used.append(True)
        raise RuntimeError("build the masks yourself; do not call model(...), model.encode or model.decode")

    with contextlib.ExitStack() as stack:
        for method in ("call", "encode", "decode"):
            stack.enter_context(mock.patch.object(mt.MinTransformer, method, refuse))
        yield used


def _student(fixed_logits, model, source, target):
    with _refused() as used:
        try:
            got = call(fixed_logits, "fixed_logits", model, source, target)
        except AssertionError:
            if not used:
                raise
    if used:
        raise AssertionError(
            "`fixed_logits` calls the model's own forward pass: build the masks yourself; do not call "
            "model(...), model.encode or model.decode. Give model.encoder and model.decoder the masks "
            "made by mt.padding_mask and mt.decoder_self_mask."
        )
    got = to_numpy(got, "The logits of `fixed_logits`")
    if got.shape != (source.shape[0], target.shape[1], model.target_vocab_size):
        raise AssertionError(
            f"`fixed_logits` returns shape {got.shape}; logits have shape (B, T, V) = "
            f"{(source.shape[0], target.shape[1], model.target_vocab_size)}."
        )
    return got


_FIRST = {}  # this run's first calls, by batch: (logits or None, message or None)


def _first_call(fixed_logits, model, source, target):
    """The student's logits; called twice, since dropout left on makes every call different."""
    key = (model.pad_id, source.tobytes(), target.tobytes())
    if key not in _FIRST:
        try:
            got = _student(fixed_logits, model, source, target)
            change = np.abs(got - _student(fixed_logits, model, source, target)).max()
            if change > 1e-6:
                raise AssertionError(
                    f"`fixed_logits` is not deterministic: two calls on the same batch give logits that differ "
                    f"by up to {change:.3g}. Dropout is on: this is the inference-mode forward pass, so pass "
                    "training=False to model.encoder and model.decoder (and apply no dropout of your own)."
                )
            _FIRST[key] = (got, None)
        except AssertionError as error:
            _FIRST[key] = (None, error)
    got, error = _FIRST[key]
    if error is not None:
        raise type(error)(*error.args)
    return got


_WRONG = {}  # this run's logits of the known wrong masks


def _name_the_mistake(model, source, target, got):
    """Fail with a named mistake if ``got`` is the logits of a known wrong set of masks."""
    right = _masks(source, target, model.pad_id)
    source_mask, self_mask, _ = right

    def logits(variant, masks):
        key = (model.pad_id, source.tobytes(), target.tobytes(), variant)
        if key not in _WRONG:
            _WRONG[key] = _logits(model, source, target, *masks)
        return _WRONG[key]

    expected = logits("right", right)
    if like(got, expected, atol=1e-5):
        return

    def matches(variant, masks):
        wrong = logits(variant, masks)
        return like(got, wrong, atol=1e-5) and not like(expected, wrong, atol=1e-5)

    if matches("none", [None, None, None]):
        raise AssertionError(
            "Still the bug: these are the logits with every mask None. Build the masks from the token ids: "
            "mt.padding_mask(source, model.pad_id) for the encoder and for cross-attention, "
            "mt.decoder_self_mask(target, model.pad_id) for the decoder's self-attention."
        )
    # The source's padding mask serves the encoder and cross-attention; the decoder has its own.
    groups = [(True, True), (False, True), (True, False)]  # (the source's masks, the decoder's self mask)
    for flip_source, flip_self in groups:
        flips = (flip_source, flip_self, flip_source)
        if matches(("inverted", flips), [ops.logical_not(m) if f else m for m, f in zip(right, flips)]):
            which = ", ".join(name for name, f in zip(MASKS, flips) if f)
            raise AssertionError(
                f"Your masks are inverted ({which}): in the package True (or 1) = may attend; you pass "
                "1 = blocked. Use mt.padding_mask and mt.decoder_self_mask as they are."
            )
    if model.pad_id != 0:
        zero = _masks(source, target, 0)
        for zero_source, zero_self in groups:
            zeros = (zero_source, zero_self, zero_source)
            if matches(("pad 0", zeros), [z if o else r for r, z, o in zip(right, zero, zeros)]):
                raise AssertionError(
                    f"This model pads with {model.pad_id}, and you build masks with the padding id 0 "
                    "(the default of mt.padding_mask and mt.decoder_self_mask): use model.pad_id, not 0."
                )
    if (matches("no self mask", [source_mask, None, source_mask])
            or matches("target padding only", [source_mask, mt.padding_mask(target, model.pad_id), source_mask])):
        raise AssertionError(
            "No causal mask: the decoder's self-attention sees the whole target, so a later target token "
            "changes the logits at earlier positions, and in training the logits at position t can read "
            "the token they must predict. Use mt.decoder_self_mask(target, model.pad_id), look-ahead AND padding."
        )
    if matches("causal only", [source_mask, mt.causal_mask(target.shape[1]), source_mask]):
        raise AssertionError(
            "Your decoder self-attention has the look-ahead mask but not the target padding: at a pad "
            "position the query attends to the pads before it. Use mt.decoder_self_mask(target, model.pad_id), "
            "look-ahead AND padding."
        )
    if matches("no cross mask", [source_mask, self_mask, None]):
        raise AssertionError(
            "Cross-attention has no mask: the decoder attends to the source's pads. Pass "
            "cross_mask=mt.padding_mask(source, model.pad_id) to model.decoder."
        )
    if matches("no encoder mask", [None, self_mask, source_mask]):
        raise AssertionError(
            "The encoder's self-attention has no mask: the source's pads are attended. Give the encoder "
            "attention_mask=mt.padding_mask(source, model.pad_id)."
        )


@test_case(points=1)
def the_future_is_hidden(fixed_logits):
    model = _model()
    got = _first_call(fixed_logits, model, SOURCE, TARGET)
    changed = _student(fixed_logits, model, SOURCE, FUTURE)
    leak = np.abs(got[:, :3] - changed[:, :3]).max()
    if leak > 1e-5:
        _name_the_mistake(model, SOURCE, TARGET, got)
        raise AssertionError(
            f"The future is not hidden: changing the target token at position 3 changes the logits at "
            f"positions 0-2 (by up to {leak:.3g}), so the decoder sees the future, and in training it can read "
            "the token it must predict. Its self-attention needs the look-ahead mask: "
            "mt.decoder_self_mask(target, model.pad_id)."
        )


@test_case(points=1)
def the_source_padding_is_hidden(fixed_logits):
    model = _model()
    got = _first_call(fixed_logits, model, SOURCE, TARGET)
    padded = _student(fixed_logits, model, np.pad(SOURCE, ((0, 0), (0, 3))), TARGET)
    change = np.abs(got - padded).max()
    if change > 1e-5:
        _name_the_mistake(model, SOURCE, TARGET, got)
        raise AssertionError(
            f"Padding the source with 3 more pads changes the logits (by up to {change:.3g}): the pads are "
            "attended. Give the encoder attention_mask=mt.padding_mask(source, model.pad_id), and the decoder the same "
            "mask as cross_mask."
        )


@test_case(points=1)
def same_as_the_model(fixed_logits):
    model = _model()
    got = _first_call(fixed_logits, model, SOURCE, TARGET)
    _name_the_mistake(model, SOURCE, TARGET, got)
    close(got, model((SOURCE, TARGET), training=False), "Your logits", atol=1e-5,
          hint="They must equal model((source, target)), which builds the same masks from model.pad_id.")


@test_case(points=1)
def the_models_pad_id(fixed_logits):
    model = _model(pad_id=PAD)
    got = _first_call(fixed_logits, model, SOURCE_19, TARGET_19)
    _name_the_mistake(model, SOURCE_19, TARGET_19, got)
    close(got, model((SOURCE_19, TARGET_19), training=False), f"With a model whose pad_id is {PAD}, your logits",
          atol=1e-5, hint="Build every mask from the token ids and model.pad_id.")

"""Recipes for the two generated tasks: model sizes, the paper's optimizer, evaluation, pretrained weights.

Chapter 8 trains with these; chapter 9 loads the date model trained by
``scripts/train_date_model.py`` (shipped inside the package, so it reaches Colab too).
"""

import importlib.resources

import keras
import numpy as np

from . import data
from .decoding import greedy_decode
from .model import MinTransformer
from .training import MaskedAccuracy, MaskedLoss, TransformerSchedule

# Small enough to train on a CPU in minutes; tied embeddings (one shared character vocabulary).
# Chapter 8 trains both with ``compile_model`` and ``model.fit`` for ``epochs`` epochs of
# ``batch_size`` examples (scripts/train_date_model.py repeats the date run and ships its result)
# and averages the weights of the last ``average_last`` epochs (paper section 6.1).
# The settings were chosen by measuring, on CPUs with and without AVX-512, without oneDNN and
# with Colab's TensorFlow (chapter 8). Both end with a linear cool-down of the learning rate over
# their last ``cooldown_epochs`` (not in the paper): without it the rate is still high when the
# loss reaches the label-smoothing floor, Adam's normalised steps throw the model off again and
# again, and the result depended on the CPU (in our runs, with Keras's default embedding
# initialisation, reversal scored 98.6-100% exact match on the test split, and dates fell to
# 98.9% on the validation split on one CPU). Gradient clipping (97.9-99.2%) and pre-norm
# (95.5-98.0%) did not cure reversal. With the N(0, 1/d_model) embeddings reversal learns more
# slowly and needs 6 epochs (5 gave 98.3% exact match, 6 gave 99.85% on every CPU we tried).
# Reversal has no dropout, which would slow it down; a long warm-up keeps its rate low. Dates
# keep the paper's dropout of 0.1.
TASKS = {
    "reversal": dict(
        alphabet=data.REVERSAL_ALPHABET, pairs=lambda: data.reversal_pairs(20000, seed=0),
        model=dict(num_layers=1, d_model=128, num_heads=8, dff=256, max_length=32, dropout=0.0),
        output_length=14, warmup_steps=3000, cooldown_epochs=2, epochs=6, batch_size=64, average_last=2,
    ),
    "dates": dict(
        alphabet=data.DATE_ALPHABET, pairs=lambda: data.date_pairs(16000, seed=0),
        model=dict(num_layers=2, d_model=64, num_heads=4, dff=256, max_length=32, dropout=0.1),
        output_length=12, warmup_steps=400, cooldown_epochs=3, epochs=8, batch_size=64, average_last=3,
    ),
}


def task_data(name):
    """(tokenizer, (train, validation, test) pairs) of a task, fixed by its seeds."""
    task = TASKS[name]
    return data.CharTokenizer(task["alphabet"]), data.split(task["pairs"]())


def build_model(name, tokenizer):
    """A ``MinTransformer`` of the task's size with tied embeddings."""
    vocab = tokenizer.vocab_size
    return MinTransformer(**TASKS[name]["model"], input_vocab_size=vocab, target_vocab_size=vocab,
                          share_embeddings=True, pad_id=tokenizer.pad_id)


def compile_model(model, warmup_steps, total_steps=None, cooldown_steps=0):
    """The paper's training set-up (section 5.3-5.4): Adam(0.9, 0.98, 1e-9), the warm-up
    schedule, label smoothing 0.1; loss and token accuracy over non-pad tokens. With
    ``cooldown_steps``, the rate is multiplied by a factor that falls linearly from 1 towards 0
    over the last ``cooldown_steps`` of the ``total_steps`` updates (not in the paper; see
    ``TransformerSchedule``)."""
    schedule = TransformerSchedule(model.d_model, warmup_steps, total_steps, cooldown_steps)
    optimizer = keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    model.compile(optimizer=optimizer, loss=MaskedLoss(label_smoothing=0.1, pad_id=model.pad_id),
                  metrics=[MaskedAccuracy(pad_id=model.pad_id)])
    return model


def average_checkpoints(model, paths):
    """Set ``model``'s trainable weights to the mean of the checkpoints in ``paths``.

    The files are those of ``keras.callbacks.ModelCheckpoint``: ``.weights.h5`` files
    (``save_weights_only=True``) or complete ``.keras`` archives, whose weights ``load_weights``
    reads as well.
    The paper's base models average the last 5 checkpoints (section 6.1): the mean of several
    points along the noisy end of training lies closer to a minimum than any one of them.
    Non-trainable state (dropout seeds) is left as in the last file.

    Returns:
        ``model``, averaged in place.
    """
    total = None
    for path in paths:
        model.load_weights(path)
        values = [keras.ops.convert_to_numpy(v) for v in model.trainable_variables]
        total = values if total is None else [t + v for t, v in zip(total, values)]
    for variable, value in zip(model.trainable_variables, total):
        variable.assign(value / len(paths))
    return model


def translate(model, tokenizer, texts, output_length, batch_size=500, **decode_options):
    """Decode a list of source strings (greedy unless ``decoder=beam_search`` is passed)."""
    decoder = decode_options.pop("decoder", greedy_decode)
    results = []
    for start in range(0, len(texts), batch_size):
        source = data.pad([tokenizer.encode(t) for t in texts[start:start + batch_size]])
        tokens = decoder(model, source, tokenizer.start_id, tokenizer.end_id, output_length, **decode_options)
        results += [tokenizer.decode(row) for row in tokens]
    return results


def exact_match(model, tokenizer, pairs, output_length, **decode_options):
    """Fraction of pairs whose decoded output equals the target string exactly."""
    predictions = translate(model, tokenizer, [s for s, _ in pairs], output_length, **decode_options)
    return float(np.mean([p == t for p, (_, t) in zip(predictions, pairs)]))


PRETRAINED_DATE_WEIGHTS = "date_model.weights.h5"


def load_pretrained_date_model():
    """The date model trained by ``scripts/train_date_model.py``: (model, tokenizer)."""
    tokenizer, _ = task_data("dates")
    model = build_model("dates", tokenizer)
    model((np.ones((1, 4), "int32"), np.ones((1, 4), "int32")))
    path = importlib.resources.files("mintransformer") / "pretrained" / PRETRAINED_DATE_WEIGHTS
    with importlib.resources.as_file(path) as file:
        model.load_weights(file)
    return model, tokenizer

"""Chapter 12's language model: addition written as text ("12+345=357"), learned by a small MinGPT.

Every sum of two numbers below ``10**DIGITS`` is a problem. About a tenth of them are held out
and never trained on: a tenth of the unordered pairs {a, b}, drawn with a fixed seed, so that
``a+b=`` and ``b+a=`` are on the same side and the training set holds no held-out sum in the other
order. The model reads ``"a+b="`` and must write the sum and
``<end>``; the loss counts only those tokens (``data.encode_lm``).
"""

import keras
import numpy as np

from .. import data
from ..decoding import greedy_generate, sample_generate
from ..gpt import MinGPT
from .optimizer import compile_model

DIGITS = 2
# Sizes and budget measured on 2 CPU cores: under a minute of training (chapter 12).
MODEL = dict(num_layers=2, d_model=64, num_heads=4, dff=256, dropout=0.0)
TRAINING = dict(steps=3000, batch_size=64, warmup_steps=300, cooldown_steps=750)


def task(digits=DIGITS, held_out=0.1, seed=0):
    """``(tokenizer, train pairs, held-out pairs)``: every problem, split once by ``seed``.

    The split is over unordered pairs {a, b}: ``a+b=`` and ``b+a=`` are held out together. With
    ``seed=0`` the pairs {0, 0} and {0, 1} are held out, the only problems whose sum is 0 or 1: no
    training answer is ``"0"`` or ``"1"`` (chapter 12; ``tests/test_gpt.py`` checks it).
    """
    def pair(problem):
        a, b = problem[0][:-1].split("+")
        return tuple(sorted((int(a), int(b))))

    problems = data.addition_problems(digits)
    pairs = sorted({pair(p) for p in problems})
    train_pairs, _, test_pairs = data.split(pairs, (1 - held_out, 0.0, held_out), seed=seed)
    test_pairs = set(test_pairs)
    train = [p for p in problems if pair(p) not in test_pairs]
    test = [p for p in problems if pair(p) in test_pairs]
    return data.CharTokenizer(data.ADDITION_ALPHABET), train, test


def context_length(digits=DIGITS):
    """The longest text the model reads: ``99+99=198``, without the ``<end>`` it predicts last."""
    return 3 * digits + 3  # a, "+", b, "=", and a sum one digit longer than a


def build_model(tokenizer, digits=DIGITS, seed=0, **overrides):
    """A ``MinGPT`` of chapter 12's size, with ``MinGPT``'s defaults: GPT-2's architecture (pre-norm,
    learned positions, tied output), the package's activation, epsilon and initial weights, and
    ``tokenizer.pad_id`` masked as padding.

    ``seed`` fixes its initial weights: Keras draws each initializer's seed when a layer is made.
    """
    keras.utils.set_random_seed(seed)
    return MinGPT(**dict(MODEL, **overrides), vocab_size=tokenizer.vocab_size, max_length=context_length(digits),
                  pad_id=tokenizer.pad_id)


def train(model, tokenizer, pairs, seed=0, steps=TRAINING["steps"], batch_size=TRAINING["batch_size"],
          warmup_steps=TRAINING["warmup_steps"], cooldown_steps=TRAINING["cooldown_steps"], callbacks=()):
    """Train ``model`` on the problems ``pairs`` with the paper's optimizer and schedule.

    No label smoothing: the sum has one right answer, and the model should be sure of it.
    ``steps`` updates of ``batch_size`` problems, drawn in an order fixed by ``seed`` (which also
    fixes the dropout masks, if any; ``build_model``'s seed fixes the initial weights), the rate
    cooled down linearly over the last ``cooldown_steps`` (as in chapter 8). Returns the history.
    """
    keras.utils.set_random_seed(seed)
    compile_model(model, warmup_steps, total_steps=steps, cooldown_steps=cooldown_steps, label_smoothing=0.0)
    dataset = data.make_lm_dataset(pairs, tokenizer, batch_size, shuffle=True, seed=seed, repeat=True)  # full batches
    # (The dataset shuffles itself: shuffle=False only tells Keras not to warn that it would not.)
    return model.fit(dataset, epochs=1, steps_per_epoch=steps, verbose=0, shuffle=False, callbacks=list(callbacks))


def answers(model, tokenizer, prompts, digits=DIGITS, **sampling):
    """The model's answer to each prompt (``"12+34="``) as a string: greedy, or sampled when
    ``sampling`` (``temperature``, ``top_k``, ``top_p``, ``seed``) is given."""
    ids = [tokenizer.encode(p) for p in prompts]
    length = digits + 2  # the longest sum, and its <end>
    if sampling:
        out = sample_generate(model, ids, length, end_id=tokenizer.end_id, **sampling)
    else:
        out = greedy_generate(model, ids, length, end_id=tokenizer.end_id)
    return [tokenizer.decode(row) for row in out]


def accuracy(model, tokenizer, pairs, digits=DIGITS):
    """The fraction of problems whose greedy answer is exactly the sum."""
    got = answers(model, tokenizer, [p for p, _ in pairs], digits)
    return float(np.mean([g == a for g, (_, a) in zip(got, pairs)]))


PRETRAINED_WEIGHTS = "addition_model.weights.h5"


def load_pretrained():
    """The model trained by ``scripts/train_addition_model.py`` (this recipe, seed 0): (model, tokenizer)."""
    import importlib.resources

    tokenizer, _, _ = task()
    model = build_model(tokenizer)
    model(np.ones((1, 4), "int32"))
    path = importlib.resources.files("mintransformer") / "pretrained" / PRETRAINED_WEIGHTS
    with importlib.resources.as_file(path) as file:
        model.load_weights(file)
    return model, tokenizer

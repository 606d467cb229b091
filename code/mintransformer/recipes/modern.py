"""Chapter 13's experiment: does the modern block beat the paper's here, on a miniature's budget?

Task A is chapter 12's addition ("12+34=46"), learned by a decoder-only ``MinGPT`` of chapter 12's
size: the 2017 block ("paper": post-norm layer norm, sinusoids, sqrt(d_model) on the embeddings,
ReLU, biases, the tied output), each of the changes a model of today makes, one at a time, and all of
them together ("modern", Llama-style), every one trained for the same updates on the same batches
and scored on the held-out problems. Task B is length generalisation: reversal written as text
("abc=cba"), trained on strings of 3 to 10 letters and scored on longer ones, with models that
differ only in their positions. ``scripts/run_modern.py`` runs the grid and writes
``results/modern.json`` inside the package; chapter 13 loads that file (``load_results``), re-runs
one variant (``run``), and compares variants seed by seed (``paired``, ``COMPARISONS``,
``compare_all``, chapter 11's functions).
"""

import importlib.resources
import json
import time

import keras
import numpy as np

from .. import data
from ..decoding import greedy_generate
from ..gpt import LLAMA_STYLE, MinGPT, parameter_count
from ..training import MaskedLoss, StepLossHistory
from . import ablations, addition
from .ablations import REVERSAL_LONG_LENGTHS, REVERSAL_TRAIN_LENGTHS, paired, task_splits  # noqa: F401

RESULTS_FILE = "modern.json"

# The 2017 block as a decoder-only model: MinGPT's switches set to the paper's choices (MinGPT's own
# defaults are GPT-2's). Dropout 0, as in chapter 12.
PAPER = dict(norm_first=False, norm="layer", positions="sinusoidal", scale_embeddings=True, activation="relu",
             use_bias=True, share_embeddings=True)

# The budget: chapter 12's model and recipe (warm-up, then 1/sqrt(step) decay, no label smoothing,
# a linear cool-down over the last quarter), for a fraction of its 3000 updates of 64 problems,
# short enough that the paper's block does not learn every held-out sum (measured: chapter 13).
BUDGET = dict(steps=1000, batch_size=64, warmup_fraction=0.1, cooldown_fraction=0.25)

# Reversal as text for a decoder-only model: "abc=" is the prompt and "cba" the answer. The pairs
# are chapter 11's (``ablations.task_splits("reversal")``): trained on 3 to 10 letters, held out
# at those lengths and at 11 to 13. The model reads at most 13 + 1 + 13 tokens (the last letter
# predicts <end>), training texts at most 10 + 1 + 10: with learned positions, the table's rows
# past the first 21 are never trained, and the longer strings are read with untrained positions.
REVERSAL_ALPHABET = data.REVERSAL_ALPHABET + "="
REVERSAL_CONTEXT = 2 * REVERSAL_LONG_LENGTHS[1] + 1
REVERSAL_TRAINED_CONTEXT = 2 * REVERSAL_TRAIN_LENGTHS[1] + 1
REVERSAL_BUDGET = dict(steps=1500, batch_size=64, warmup_fraction=0.1, cooldown_fraction=0.25)


def _count(task, overrides):
    alphabet = data.ADDITION_ALPHABET if task == "addition" else REVERSAL_ALPHABET
    vocab = data.CharTokenizer(alphabet).vocab_size
    length = addition.context_length() if task == "addition" else REVERSAL_CONTEXT
    return parameter_count(**{**addition.MODEL, **PAPER, **overrides}, vocab_size=vocab, max_length=length)


def matched_dff(overrides, task="addition"):
    """The feed-forward width that brings a variant's parameter count closest to the paper block's.

    SwiGLU has three matrices where ReLU's network has two: at the same count its width is about 2/3
    of ``dff`` (Shazeer, 2020). Grouped-query attention's smaller W^K and W^V are given back to the
    feed-forward network, as Llama 2 does for its grouped models (Touvron et al., 2023).
    """
    target = _count(task, {})
    return min(range(1, 4 * addition.MODEL["dff"]),
               key=lambda dff: (abs(_count(task, dict(overrides, dff=dff)) - target), dff))


_GQA = dict(num_key_value_heads=2)
_MODERN = dict(LLAMA_STYLE, num_key_value_heads=2, pad_id=data.PAD)  # pad_id: the loss and masks need one

# variant -> (task, label, MinGPT keyword arguments changed from the paper block).
VARIANTS = {
    "paper": ("addition", "2017 block: post-norm, layer norm, sinusoids, ReLU, biases", {}),
    "pre_norm": ("addition", "pre-norm (and a final norm)", dict(norm_first=True)),
    "rms_norm": ("addition", "RMSNorm (post-norm)", dict(norm="rms")),
    "rope": ("addition", "rotary positions (RoPE)", dict(positions="rotary")),
    "swiglu": ("addition", "SwiGLU, width matched", dict(activation="swiglu",
                                                         dff=matched_dff(dict(activation="swiglu")))),
    "gqa": ("addition", "grouped-query attention, h_kv=2, width matched", dict(_GQA, dff=matched_dff(_GQA))),
    "no_bias": ("addition", "no biases", dict(use_bias=False)),
    "modern": ("addition", "all of them: Llama-style, width matched",
               dict(_MODERN, dff=matched_dff(_MODERN))),
    "reversal_sinusoidal": ("reversal", "reversal, sinusoids", {}),
    "reversal_learned": ("reversal", "reversal, learned positions", dict(positions="learned")),
    "reversal_rotary": ("reversal", "reversal, rotary positions", dict(positions="rotary")),
}

# Every comparison chapter 13 makes, as (variant, reference, score): the family whose number of
# comparisons Holm's adjustment counts. Each addition variant against the paper block, on exact match
# and on the answers' cross-entropy; rotary positions against each of the others on the longer strings,
# on the same two scores (exact match there is near 0 for every variant: the cross-entropy still moves).
_ADDITION = [n for n, (task, _, _) in VARIANTS.items() if task == "addition" and n != "paper"]
COMPARISONS = (
    [(n, "paper", key) for n in _ADDITION for key in ("exact", "cross_entropy")]
    + [("reversal_rotary", n, key) for n in ("reversal_sinusoidal", "reversal_learned")
       for key in ("exact_long", "cross_entropy_long")]
)


def config(name):
    """The MinGPT keyword arguments of a variant (sizes included, vocabulary and context excluded)."""
    return {**addition.MODEL, **PAPER, **VARIANTS[name][2]}


def parameters(name):
    """The number of weights of variant ``name``'s model (``mt.parameter_count``)."""
    return _count(VARIANTS[name][0], VARIANTS[name][2])


def reversal_task():
    """``(tokenizer, train, test, long)``: chapter 11's reversal pairs as text, ("abc=", "cba")."""
    _, train, test, long = task_splits("reversal")
    as_text = [[(s + "=", t) for s, t in pairs] for pairs in (train, test, long)]
    return (data.CharTokenizer(REVERSAL_ALPHABET), *as_text)


def cross_entropy(model, tokenizer, pairs, batch_size=500):
    """The mean cross-entropy (nats) of the answer tokens and ``<end>``, teacher-forced, per token."""
    loss = MaskedLoss(label_smoothing=0.0, pad_id=tokenizer.pad_id)
    total, count = 0.0, 0
    for inputs, labels in data.make_lm_dataset(pairs, tokenizer, batch_size=batch_size):
        tokens = float(np.sum(labels.numpy() != tokenizer.pad_id))
        total += float(loss(labels, model(inputs, training=False))) * tokens
        count += tokens
    return total / count


def answers(model, tokenizer, prompts, longest):
    """The model's greedy answer to each prompt, as a string (at most ``longest`` characters)."""
    out = greedy_generate(model, [tokenizer.encode(p) for p in prompts], longest + 1, end_id=tokenizer.end_id)
    return [tokenizer.decode(row) for row in out]


def exact_and_letters(model, tokenizer, pairs):
    """``(exact, letters)``: the fraction of prompts whose greedy answer is exactly the expected one, and
    the fraction of the expected answers' characters that the greedy answers have at the same place
    (a partial credit: a reversed string right but for its last letter scores 0 and nearly 1)."""
    got = answers(model, tokenizer, [p for p, _ in pairs], max(len(a) for _, a in pairs))
    exact = float(np.mean([g == a for g, (_, a) in zip(got, pairs)]))
    letters = float(np.mean([sum(x == y for x, y in zip(g, a)) / len(a) for g, (_, a) in zip(got, pairs)]))
    return exact, letters


def build(name, seed, eval_limit=None):
    """Variant ``name``'s model, its initial weights drawn from ``seed``, and its task's data:
    ``(model, tokenizer, train, test, long)`` (``long`` is empty for addition); ``eval_limit`` keeps
    only the first ``eval_limit`` pairs of ``test`` and ``long``."""
    if VARIANTS[name][0] == "addition":
        tokenizer, train, test = addition.task()
        long, length = [], addition.context_length()
    else:
        tokenizer, train, test, long = reversal_task()
        length = REVERSAL_CONTEXT
    if eval_limit is not None:
        test, long = test[:eval_limit], long[:eval_limit]
    settings = config(name)
    keras.utils.set_random_seed(seed)
    model = MinGPT(**settings, vocab_size=tokenizer.vocab_size, max_length=length,
                   **({} if "pad_id" in settings else dict(pad_id=tokenizer.pad_id)))
    return model, tokenizer, train, test, long


def run(name, seed, steps=None, loss_every=10, eval_limit=None):
    """Train variant ``name`` from ``seed`` and score it.

    Args:
        name: a key of ``VARIANTS``.
        seed: sets the initial weights and the order of the examples (the same batches for every
            variant of a task).
        steps: the number of updates; None for the task's budget. Warm-up and cool-down scale with it.
        loss_every: keep the training loss of every ``loss_every``-th update.
        eval_limit: score only the first ``eval_limit`` problems of each held-out set (a quick check);
            None for all.

    Returns:
        A dict: ``exact`` and ``letters`` (greedy exact match, and the share of right characters, on the
        ``held_out`` problems), ``cross_entropy`` (of their answers, teacher-forced); for reversal the
        same three on the ``held_out_long`` longer strings (``exact_long``, ...); ``parameters``,
        ``seconds`` (training time), ``losses`` and ``name``, ``seed``, ``steps``.
    """
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; known: {list(VARIANTS)}.")
    budget = BUDGET if VARIANTS[name][0] == "addition" else REVERSAL_BUDGET
    steps = budget["steps"] if steps is None else steps
    for value, what in ((steps, "steps"), (1 if eval_limit is None else eval_limit, "eval_limit")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{what}={value!r} must be a positive integer (eval_limit: or None).")
    model, tokenizer, train, test, long = build(name, seed, eval_limit)
    history = StepLossHistory(budget["batch_size"])
    start = time.perf_counter()
    addition.train(model, tokenizer, train, seed=seed, steps=steps, batch_size=budget["batch_size"],
                   warmup_steps=max(1, round(budget["warmup_fraction"] * steps)),
                   cooldown_steps=max(1, round(budget["cooldown_fraction"] * steps)), callbacks=[history])
    seconds = time.perf_counter() - start
    result = dict(name=name, seed=seed, steps=steps, held_out=len(test), parameters=model.count_params(),
                  seconds=round(seconds, 1))
    result["exact"], result["letters"] = exact_and_letters(model, tokenizer, test)
    result["cross_entropy"] = cross_entropy(model, tokenizer, test)
    if long:
        result["held_out_long"] = len(long)
        result["exact_long"], result["letters_long"] = exact_and_letters(model, tokenizer, long)
        result["cross_entropy_long"] = cross_entropy(model, tokenizer, long)
    result["losses"] = [round(x, 4) for x in history.losses[loss_every - 1::loss_every]]
    return result


SCORES = ("exact", "letters", "cross_entropy", "exact_long", "letters_long", "cross_entropy_long", "seconds")


def _spread(values):
    values = np.array(values, float)
    std = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return dict(mean=float(values.mean()), std=std, min=float(values.min()), max=float(values.max()))


def summarize(runs):
    """Per variant, in the order of ``VARIANTS``: its task, label, seeds and parameters, and the mean,
    standard deviation, min and max over seeds of each score."""
    summary = {}
    for name, (task, label, _) in VARIANTS.items():
        group = [r for r in runs if r["name"] == name]
        if group:
            summary[name] = dict(task=task, label=label, seeds=len(group), parameters=group[0]["parameters"],
                                 **{key: _spread([r[key] for r in group]) for key in SCORES if key in group[0]})
    return summary


def compare_all(runs, comparisons=None, confidence=0.95):
    """The paired t test and the sign test of each comparison, and Holm's adjustment over all of them:
    ``ablations.compare_all`` (chapter 11's) over this chapter's family.

    Args:
        runs: the stored runs (``load_results()["runs"]``), paired by seed (``ablations.paired``).
        comparisons: (variant, reference, score) triples; None for ``COMPARISONS``, the chapter's.
        confidence: of each comparison's own interval (0.95: each interval alone, not the family).

    Returns:
        A dict from each triple to a dict: ``test`` (``stats.PairedT`` of variant minus reference:
        a positive mean is a higher exact match, or a higher cross-entropy, which is worse; the
        cross-entropies are compared as they are, already on the log scale), ``sign`` (the exact
        sign test's p-value), ``holm`` (the t test's p-value adjusted for the whole family of
        ``len(comparisons)``) and ``seeds`` (the shared seeds).
    """
    return ablations.compare_all(runs, COMPARISONS if comparisons is None else comparisons, confidence)


def load_results():
    """The results shipped with the package (written by ``scripts/run_modern.py``)."""
    path = importlib.resources.files("mintransformer") / "results" / RESULTS_FILE
    return json.loads(path.read_text())


set_determinism = ablations.set_determinism  # deterministic kernels: one machine repeats a run exactly

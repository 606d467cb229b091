"""Chapter 11's experiments: the paper's Table 3 ablations, and norm placement, in miniature.

Every variant is the date model of chapter 8 (or a reversal model of the same size) with one
setting changed, trained for a fixed number of updates from a seed and scored on held-out data.
``scripts/run_ablations.py`` runs the grid and writes ``results/ablations.json`` inside the
package; chapter 11 loads that file (``load_results``), re-runs one variant (``run``), and compares
variants seed by seed (``paired``, ``COMPARISONS``, ``compare_all``).
"""

import importlib.resources
import json
import math
import os
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

from .. import data, stats
from ..model import MinTransformer
from ..training import MaskedLoss, StepLossHistory
from .checkpoints import average_checkpoints
from .evaluation import exact_match
from .optimizer import compile_model

RESULTS_FILE = "ablations.json"

# The base: chapter 8's date model and the paper's recipe (warm-up, then 1/sqrt(step) decay,
# dropout 0.1, label smoothing 0.1; no cool-down, no averaging), for a budget of ``steps``
# updates of 64 examples, a third of chapter 8's. A short budget keeps the variants apart: given
# long enough, nearly all of them learn the dates perfectly.
BASE = dict(
    task="dates",
    model=dict(num_layers=2, d_model=64, num_heads=4, dff=256, max_length=32, dropout=0.1),
    steps=600, batch_size=64, warmup_steps=150, warmup=True, label_smoothing=0.1,
    cooldown_fraction=0.0, average_last=0,
)

# Reversal, for length generalisation: trained on strings of 3 to 10 letters, scored on held-out
# strings of those lengths and on longer ones (11 to 13 letters), which no training example has.
REVERSAL_TRAIN_LENGTHS, REVERSAL_LONG_LENGTHS = (3, 10), (11, 13)

DEEP = dict(num_layers=6)

# variant -> (table row, label, changes to BASE; "model" changes are merged into BASE["model"]).
VARIANTS = {
    "base": ("base", "base: h=4, d_k=16, post-norm, sinusoids", {}),
    "heads_1": ("A", "h=1, d_k=64", dict(model=dict(num_heads=1))),
    "heads_2": ("A", "h=2, d_k=32", dict(model=dict(num_heads=2))),
    "heads_8": ("A", "h=8, d_k=8", dict(model=dict(num_heads=8))),
    "key_dim_4": ("B", "h=4, d_k=4 (d_v=16)", dict(model=dict(key_dim=4))),
    "no_attention_scale": ("scale", "no 1/sqrt(d_k) in attention", dict(model=dict(scale_attention=False))),
    "no_embedding_scale": ("scale", "no sqrt(d_model) on embeddings", dict(model=dict(scale_embeddings=False))),
    "dropout_0": ("D", "dropout 0", dict(model=dict(dropout=0.0))),
    "smoothing_0": ("D", "label smoothing 0", dict(label_smoothing=0.0)),
    "learned_positions": ("E", "learned positions", dict(model=dict(positions="learned"))),
    "no_positions": ("E", "no positions", dict(model=dict(positions="none"))),
    "cooldown": ("end", "cool-down (last 25%)", dict(cooldown_fraction=0.25)),
    "average": ("end", "average of last 5 checkpoints", dict(average_last=5)),
    "cooldown_average": ("end", "cool-down and averaging", dict(cooldown_fraction=0.25, average_last=5)),
    "reversal_sinusoidal": ("length", "reversal, sinusoids", dict(task="reversal")),
    "reversal_learned": ("length", "reversal, learned positions",
                         dict(task="reversal", model=dict(positions="learned"))),
    "reversal_none": ("length", "reversal, no positions", dict(task="reversal", model=dict(positions="none"))),
    # Norm placement at a depth where it matters, 6 layers in each stack, with chapter 8's warm-up of
    # 400 updates. Chosen after a first try: at the base's 150 (peak rate 0.0125) post-norm failed even
    # with its warm-up (those runs were not kept). Chapter 11 says so.
    "post_norm_warmup": ("norm", "6 layers, post-norm, warm-up", dict(model=DEEP, warmup_steps=400)),
    "post_norm_no_warmup": ("norm", "6 layers, post-norm, no warm-up",
                            dict(model=DEEP, warmup_steps=400, warmup=False)),
    "pre_norm_warmup": ("norm", "6 layers, pre-norm, warm-up",
                        dict(model=dict(DEEP, norm_first=True), warmup_steps=400)),
    "pre_norm_no_warmup": ("norm", "6 layers, pre-norm, no warm-up",
                           dict(model=dict(DEEP, norm_first=True), warmup_steps=400, warmup=False)),
}
ROWS = list(dict.fromkeys(row for row, _, _ in VARIANTS.values()))

# Every comparison chapter 11 makes, as (variant, reference, score): the family whose number of
# comparisons Holm's adjustment counts. Each date variant against the base; the reversal variants
# against sinusoids; the deep variants against post-norm with warm-up, and pre-norm with and
# without its warm-up against each other.
_DATES = [n for n, (row, _, c) in VARIANTS.items() if n != "base" and row not in ("length", "norm")]
COMPARISONS = (
    [(n, "base", key) for n in _DATES for key in ("exact", "perplexity")]
    + [(n, "reversal_sinusoidal", key) for n in ("reversal_learned", "reversal_none")
       for key in ("exact", "exact_long")]
    + [(n, "post_norm_warmup", key) for n in ("post_norm_no_warmup", "pre_norm_warmup", "pre_norm_no_warmup")
       for key in ("exact", "perplexity")]
    + [("pre_norm_no_warmup", "pre_norm_warmup", key) for key in ("exact", "perplexity")]
)


def config(name):
    """The full settings of a variant: BASE with the variant's changes."""
    changes = dict(VARIANTS[name][2])
    settings = dict(BASE, **{k: v for k, v in changes.items() if k != "model"})
    settings["model"] = dict(BASE["model"], **changes.get("model", {}))
    return settings


def task_splits(task):
    """(tokenizer, train, test, long) pairs of a task; ``long`` is empty for dates."""
    if task == "dates":
        pairs = data.date_pairs(16000, seed=0)
        train, _, test = data.split(pairs)
        return data.CharTokenizer(data.DATE_ALPHABET), train, test, []
    low, high = REVERSAL_TRAIN_LENGTHS
    train, _, test = data.split(data.reversal_pairs(16000, low, high, seed=0))
    seen = {s for s, _ in train}
    long = [p for p in data.reversal_pairs(1000, *REVERSAL_LONG_LENGTHS, seed=1) if p[0] not in seen]
    return data.CharTokenizer(data.REVERSAL_ALPHABET), train, test, long


def perplexity(model, tokenizer, pairs):
    """exp(mean cross-entropy per target token), without label smoothing, teacher-forced."""
    loss = MaskedLoss(label_smoothing=0.0, pad_id=tokenizer.pad_id)
    total, count = 0.0, 0
    for (source, target_in), target_out in data.make_dataset(pairs, tokenizer, batch_size=500):
        tokens = float(np.sum(target_out.numpy() != tokenizer.pad_id))
        total += float(loss(target_out, model((source, target_in), training=False))) * tokens
        count += tokens
    return float(np.exp(total / count))


def run(name, seed, steps=None, loss_every=10, eval_limit=None):
    """Train variant ``name`` from ``seed`` and score it.

    Args:
        name: a key of ``VARIANTS``.
        seed: sets the initial weights, the order of the examples and the dropout masks.
        steps: the number of updates; None for the variant's own (``BASE["steps"]``). Warm-up,
            cool-down and checkpoint intervals scale with it.
        loss_every: keep the training loss of every ``loss_every``-th update.
        eval_limit: score only the first ``eval_limit`` held-out pairs (and longer strings); None
            for all of them. For smoke tests: the chapter's results score every pair.

    Returns:
        A dict: ``exact`` (greedy exact match on held-out pairs), ``perplexity`` (teacher-forced,
        without smoothing, on the same pairs), ``exact_long`` (reversal: on longer strings),
        ``seconds`` (training time), ``losses`` (the kept training losses) and ``name``, ``seed``.
    """
    settings = config(name)
    steps = steps or settings["steps"]
    scale = steps / settings["steps"]
    tokenizer, train, test, long = task_splits(settings["task"])
    if eval_limit is not None:
        test, long = test[:eval_limit], long[:eval_limit]
    output_length = max(len(t) for _, t in test + long) + 2

    keras.utils.set_random_seed(seed)
    dataset = data.make_dataset(train, tokenizer, settings["batch_size"], shuffle=True, seed=seed).repeat()
    model = MinTransformer(**settings["model"], input_vocab_size=tokenizer.vocab_size,
                           target_vocab_size=tokenizer.vocab_size, share_embeddings=True,
                           pad_id=tokenizer.pad_id)
    cooldown = int(settings["cooldown_fraction"] * steps)
    compile_model(model, max(1, round(settings["warmup_steps"] * scale)), total_steps=steps,
                  cooldown_steps=cooldown, label_smoothing=settings["label_smoothing"],
                  warmup=settings["warmup"])
    history = StepLossHistory(settings["batch_size"])
    callbacks = [history]
    with tempfile.TemporaryDirectory() as folder:
        average = settings["average_last"]
        interval = max(1, steps // 25)  # with 600 steps: a checkpoint every 24 updates
        if average:
            callbacks.append(keras.callbacks.ModelCheckpoint(
                os.path.join(folder, "{batch:06d}.weights.h5"), save_weights_only=True, save_freq=interval))
        start = time.perf_counter()
        model.fit(dataset, epochs=1, steps_per_epoch=steps, callbacks=callbacks, shuffle=False, verbose=0)
        seconds = time.perf_counter() - start
        if average:
            files = sorted(os.listdir(folder))[-average:]
            average_checkpoints(model, [os.path.join(folder, f) for f in files])
    result = dict(name=name, seed=seed, steps=steps, seconds=round(seconds, 1),
                  exact=exact_match(model, tokenizer, test, output_length),
                  perplexity=perplexity(model, tokenizer, test),
                  losses=[round(x, 4) for x in history.losses[loss_every - 1::loss_every]])
    if long:
        result["exact_long"] = exact_match(model, tokenizer, long, output_length)
    return result


def summarize(runs):
    """Per variant: mean, standard deviation, min and max over seeds of each score."""
    by_name = {}
    for r in runs:
        by_name.setdefault(r["name"], []).append(r)
    summary = {}
    for name, group in by_name.items():
        stats = dict(row=VARIANTS[name][0], label=VARIANTS[name][1], seeds=len(group))
        for key in ("exact", "exact_long", "perplexity", "seconds"):
            if key in group[0]:
                values = np.array([r[key] for r in group])
                stats[key] = dict(mean=float(values.mean()), std=float(values.std(ddof=1)) if len(values) > 1
                                  else 0.0, min=float(values.min()), max=float(values.max()))
        summary[name] = stats
    return summary


def paired(runs, a, b, key="exact"):
    """The scores ``key`` of variants ``a`` and ``b`` from the seeds both were run from.

    Returns:
        ``(seeds, values_a, values_b)``: the shared seeds in increasing order and two float64 arrays,
        ``values_a[j]`` and ``values_b[j]`` from seed ``seeds[j]``. Runs of one seed share their
        initial weights, the order of the examples and the dropout masks, so ``values_a - values_b``
        is one measurement of the difference per seed.
    """
    scores = {name: {r["seed"]: r[key] for r in runs if r["name"] == name and key in r} for name in (a, b)}
    for name in (a, b):
        if not scores[name]:
            raise ValueError(f"no run of {name!r} has the score {key!r}.")
    seeds = sorted(set(scores[a]) & set(scores[b]))
    if len(seeds) < 2:
        raise ValueError(f"{a!r} and {b!r} share {len(seeds)} seed(s); a paired comparison needs at least 2.")
    return seeds, np.array([scores[a][s] for s in seeds], float), np.array([scores[b][s] for s in seeds], float)


def compare_all(runs, comparisons=None, confidence=0.95):
    """The paired t test of each comparison, and Holm's adjustment over all of them.

    Perplexities are compared on the log scale (as differences of cross-entropy per token, that is,
    as ratios of perplexities), where a change that multiplies them is one size whatever their level.

    Args:
        runs: the stored runs (``load_results()["runs"]``).
        comparisons: (variant, reference, score) triples; None for ``COMPARISONS``, the chapter's.
        confidence: of each comparison's own interval.

    Returns:
        A dict from each triple to a dict: ``test`` (``stats.PairedT`` of variant minus reference,
        on the log scale for perplexity), ``sign`` (the exact sign test's p-value), ``holm`` (the
        p-value adjusted for the whole family) and ``seeds`` (the shared seeds).
    """
    comparisons = COMPARISONS if comparisons is None else list(comparisons)
    results = {}
    for a, b, key in comparisons:
        seeds, values_a, values_b = paired(runs, a, b, key)
        if key == "perplexity":
            # math.log, not np.log: NumPy's vectorised log may differ in the last bit between processors.
            values_a, values_b = (np.array([math.log(v) for v in values]) for values in (values_a, values_b))
        test = stats.paired_t(values_a, values_b, confidence)
        results[(a, b, key)] = dict(test=test, sign=stats.sign_test(values_a - values_b), seeds=seeds)
    for triple, adjusted in zip(results, stats.holm([r["test"].p for r in results.values()])):
        results[triple]["holm"] = adjusted
    return results


def load_results():
    """The results shipped with the package (written by ``scripts/run_ablations.py``)."""
    path = importlib.resources.files("mintransformer") / "results" / RESULTS_FILE
    return json.loads(path.read_text())


def set_determinism():
    """Deterministic kernels, so that one machine repeats a run exactly."""
    tf.config.experimental.enable_op_determinism()

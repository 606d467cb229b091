"""Chapter 10's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import collections

import keras
import numpy as np
import pytest

import mintransformer as mt
from mintransformer import data

CHAPTER = "10_ablations"


def check(label, **env):
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,name", [
    ("ex-ablations-saturation", "mean_top_weight"),
    ("ex-ablations-compare", "compare"),
    ("ex-ablations-bag-bound", "bag_bound"),
    ("ex-ablations-fix-perplexity", "fixed_perplexity"),
])
def test_blank_answers_fail_and_say_so(label, name):
    passed, text = check(label)
    assert not passed and "is not defined" in text
    passed, text = check(label, **{name: stub})
    assert not passed and "NotImplementedError" in text


def _top_weight(divide):
    def mean_top_weight(d_k, scaled):
        rng = np.random.default_rng(5)
        q, k = rng.standard_normal((6000, 1, d_k)), rng.standard_normal((6000, 10, d_k))
        logits = (q * k).sum(-1) / (divide(d_k) if scaled else 1.0)
        w = np.exp(logits - logits.max(-1, keepdims=True))
        return float((w / w.sum(-1, keepdims=True)).max(-1).mean())
    return mean_top_weight


def test_saturation_accepts_another_draw_and_names_the_mistakes():
    assert check("ex-ablations-saturation", mean_top_weight=_top_weight(np.sqrt))[0]
    passed, text = check("ex-ablations-saturation", mean_top_weight=_top_weight(lambda d: d))
    assert not passed and "you divide by d_k" in text, text
    passed, text = check("ex-ablations-saturation", mean_top_weight=_top_weight(lambda d: 1.0))
    assert not passed and "is the unscaled value" in text, text
    passed, text = check("ex-ablations-saturation",
                         mean_top_weight=lambda d_k, scaled: _top_weight(np.sqrt)(d_k, not scaled))
    assert not passed and "unscaled value" in text, text


def _compare(touching_is_apart=False, reverse=False, median=False):
    def compare(runs, a, b, key="exact"):
        va = np.array([r[key] for r in runs if r["name"] == a])
        vb = np.array([r[key] for r in runs if r["name"] == b])
        center = np.median if median else np.mean
        difference = center(va) - center(vb)
        if touching_is_apart:
            apart = va.min() >= vb.max() or vb.min() >= va.max()
        else:
            apart = va.min() > vb.max() or vb.min() > va.max()
        return (-difference if reverse else difference), bool(apart)
    return compare


@pytest.mark.parametrize("wrong,message", [
    (_compare(touching_is_apart=True), "overlap or touch"),
    (_compare(reverse=True), "sign of the difference reversed"),
    (_compare(median=True), "Average each variant"),
])
def test_compare_rejects_the_known_mistakes(wrong, message):
    assert check("ex-ablations-compare", compare=_compare())[0]
    passed, text = check("ex-ablations-compare", compare=wrong)
    assert not passed and message in text, text


def test_bag_bound_rejects_counting_only_unambiguous_bags():
    def unique_only(pairs):
        groups = collections.defaultdict(set)
        for s, t in pairs:
            groups["".join(sorted(s))].add(t)
        return sum(len(groups["".join(sorted(s))]) == 1 for s, _ in pairs) / len(pairs)

    def right(pairs):
        groups = collections.defaultdict(collections.Counter)
        for s, t in pairs:
            groups["".join(sorted(s))][t] += 1
        return sum(max(c.values()) for c in groups.values()) / len(pairs)

    assert check("ex-ablations-bag-bound", bag_bound=right)[0]
    passed, text = check("ex-ablations-bag-bound", bag_bound=unique_only)
    assert not passed and "counts only the sources whose bag has one target" in text, text
    passed, text = check("ex-ablations-bag-bound", bag_bound=lambda pairs: len({s for s, _ in pairs}) / len(pairs))
    assert not passed


def test_the_perplexity_check_catches_the_unmasked_mean():
    def buggy(model, tokenizer, pairs):
        sources, targets_in, targets_out = data.encode_pairs(pairs, tokenizer)
        source, target_in, target_out = data.pad(sources), data.pad(targets_in), data.pad(targets_out)
        logits = model((source, target_in), training=False)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(target_out, logits)
        return float(np.exp(loss))

    def smoothed(model, tokenizer, pairs):
        sources, targets_in, targets_out = data.encode_pairs(pairs, tokenizer)
        source, target_in, target_out = data.pad(sources), data.pad(targets_in), data.pad(targets_out)
        loss = mt.masked_loss(target_out, model((source, target_in)), label_smoothing=0.1)
        return float(np.exp(loss))

    passed, text = check("ex-ablations-fix-perplexity", fixed_perplexity=buggy)
    assert not passed and "still averages over the padding positions" in text, text
    passed, text = check("ex-ablations-fix-perplexity", fixed_perplexity=smoothed)
    assert not passed and "no label smoothing" in text, text

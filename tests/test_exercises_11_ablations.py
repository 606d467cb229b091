"""Chapter 11's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import collections
import datetime
import statistics

import keras
import numpy as np
import pytest

import mintransformer as mt
from mintransformer import data
from exercise_messages import assert_hides, shown_lines_that_compute
from public_check_contents import assert_tuned_answer_caught, hidden_path, public_and_merged

CHAPTER = "11_ablations"


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


def _scores(runs, name, key):
    return {r["seed"]: r[key] for r in runs if r["name"] == name}


def _compare(rule="paired", quantile="t", use_comparisons=True, difference="paired"):
    """compare() as a student may write it: the right one by default, or with one known mistake."""
    def compare(runs, a, b, key="exact", comparisons=1):
        sa, sb = _scores(runs, a, key), _scores(runs, b, key)
        va, vb = np.array(list(sa.values())), np.array(list(sb.values()))
        seeds = sorted(set(sa) & set(sb))
        d = np.array([sa[s] - sb[s] for s in seeds])
        m = comparisons if use_comparisons else 1
        if difference == "paired":
            mean = d.mean()
        elif difference == "unpaired":
            mean = va.mean() - vb.mean()
        elif difference == "by position":
            mean = np.mean([x - y for x, y in zip([r[key] for r in runs if r["name"] == a],
                                                  [r[key] for r in runs if r["name"] == b])])
        else:  # reversed
            mean = -d.mean()
        if rule == "ranges":
            different = va.min() > vb.max() or vb.min() > va.max()
        elif rule == "one sd":
            different = (va.mean() - va.std(ddof=1) > vb.mean() + vb.std(ddof=1)
                         or vb.mean() - vb.std(ddof=1) > va.mean() + va.std(ddof=1))
        elif rule == "welch":
            error2 = va.var(ddof=1) / va.size + vb.var(ddof=1) / vb.size
            df = error2 ** 2 / ((va.var(ddof=1) / va.size) ** 2 / (va.size - 1)
                                + (vb.var(ddof=1) / vb.size) ** 2 / (vb.size - 1))
            critical = mt.stats.t_quantile(1 - 0.05 / m / 2, max(1, round(df)))
            different = abs(va.mean() - vb.mean()) > critical * np.sqrt(error2)
        else:
            q = (statistics.NormalDist().inv_cdf(1 - 0.05 / m / 2) if quantile == "z"
                 else mt.stats.t_quantile(1 - 0.05 / m / 2, d.size - 1))
            different = abs(d.mean()) > q * d.std(ddof=1) / np.sqrt(d.size)
        return float(mean), bool(different)
    return compare


def test_compare_accepts_the_paired_test():
    passed, text = check("ex-ablations-compare", compare=_compare())
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (_compare(rule="ranges"), "compares the ranges of the seeds"),
    (_compare(rule="one sd"), "compares mean +/- one standard deviation"),
    (_compare(rule="welch"), "as if they were independent"),
    (_compare(use_comparisons=False), "ignores `comparisons`"),
    (_compare(quantile="z"), "normal distribution's quantile"),
    (_compare(difference="unpaired"), "difference of the two means over all"),
    (_compare(difference="by position"), "pairs the runs by their place in the list"),
    (_compare(difference="reversed"), "sign of the difference reversed"),
], ids=["ranges", "one-sd", "welch", "no-bonferroni", "normal-quantile", "unpaired-mean", "by-position",
        "reversed"])
def test_compare_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-ablations-compare", compare=wrong)
    assert not passed and message in text, text


def _every_date():
    days = (data.LAST_DAY - data.FIRST_DAY).days + 1
    return [(write(day), day.isoformat()) for write in data.DATE_FORMATS
            for day in (data.FIRST_DAY + datetime.timedelta(days=i) for i in range(days))]


def _right_bound(pairs):
    groups = collections.defaultdict(collections.Counter)
    for s, t in pairs:
        groups["".join(sorted(s))][t] += 1
    return sum(max(c.values()) for c in groups.values()) / len(pairs)


def test_the_order_blind_bound_is_a_third():
    # Over every day of 1950-2049 in the 12 formats, the best any function of the bag can do; the
    # chapter quotes it, and "03/04/98" shares its bag with 30 dates.
    pairs = _every_date()
    assert len(pairs) == 36525 * 12
    assert round(_right_bound(pairs), 3) == 0.330
    bag = sorted("03/04/98")
    assert len({t for s, t in pairs if sorted(s) == bag}) == 30


def test_bag_bound_accepts_the_right_answer_and_rejects_the_mistakes():
    assert check("ex-ablations-bag-bound", every_date=_every_date, bag_bound=_right_bound)[0]

    def unique_only(pairs):
        groups = collections.defaultdict(set)
        for s, t in pairs:
            groups["".join(sorted(s))].add(t)
        return sum(len(groups["".join(sorted(s))]) == 1 for s, _ in pairs) / len(pairs)

    passed, text = check("ex-ablations-bag-bound", every_date=_every_date, bag_bound=unique_only)
    assert not passed and "counts only the sources whose bag has one target" in text, text
    passed, text = check("ex-ablations-bag-bound", every_date=_every_date,
                         bag_bound=lambda pairs: len({s for s, _ in pairs}) / len(pairs))
    assert not passed
    # The in-sample "bound": the test split grouped by bag.
    test_split = data.split(data.date_pairs(16000, seed=0))[2]
    passed, text = check("ex-ablations-bag-bound", every_date=lambda: test_split, bag_bound=_right_bound)
    assert not passed and "only part of what the task can draw" in text, text
    one_format = [p for p in _every_date() if "/" in p[0] and len(p[0]) == 8]
    passed, text = check("ex-ablations-bag-bound", every_date=lambda: one_format, bag_bound=_right_bound)
    assert not passed and "only part of what the task can draw" in text, text
    for wrong in [("x", "y"), ("17/03/1998", "1998-03-17"), ("17 March 1998", "19980317"),
                  ("1 January 2050", "2050-01-01")]:
        passed, text = check("ex-ablations-bag-bound", every_date=lambda: _every_date()[:-1] + [wrong],
                             bag_bound=_right_bound)
        assert not passed and "which the task does not draw" in text, text
    passed, text = check("ex-ablations-bag-bound", every_date=lambda: _every_date()[:-1], bag_bound=_right_bound)
    assert not passed and "leaves out 2049-12-31 written in format 11" in text, text


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


# ---------------------------------------------------------------- no message hands out the answer
def test_compare_does_not_say_which_verdict_is_right():
    right = _compare()

    def inverted(runs, a, b, key="exact", comparisons=1):
        difference, different = right(runs, a, b, key, comparisons)
        return difference, not different

    passed, text = check("ex-ablations-compare", compare=inverted)
    assert not passed and "that is not what the paired t interval" in text, text
    assert "leaves out 0" not in text and "holds 0" not in text, text


@pytest.mark.parametrize("bound", [lambda pairs: 0.25, lambda pairs: 0.5, lambda pairs: 0.33])
def test_bag_bound_messages_give_no_bound(bound):
    passed, text = check("ex-ablations-bag-bound", every_date=_every_date, bag_bound=bound)
    assert not passed, text
    test_split = data.split(data.date_pairs(16000, seed=0))[2]
    assert_hides(text, _right_bound(_every_date()), _right_bound(test_split), 5 / 7)


def test_fix_perplexity_refuses_the_packages_perplexity():
    from mintransformer.recipes import ablations

    result = mt.exercises.run_check(CHAPTER, "ex-ablations-fix-perplexity", {
        "fixed_perplexity": lambda model, tokenizer, pairs: ablations.perplexity(model, tokenizer, pairs)})
    text = result.summary()
    assert result.score == 0 and "calls ablations.perplexity" in text, text
    assert ablations.perplexity.__name__ == "perplexity" and "refused" not in repr(ablations.perplexity)


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden)
def test_saturation_hidden_cases_catch_values_looked_up_for_the_public_dimensions():
    right = _top_weight(np.sqrt)
    public = {(d_k, scaled): right(d_k, scaled) for d_k in (1, 4, 16, 64, 256) for scaled in (True, False)}
    assert_tuned_answer_caught(CHAPTER, "ex-ablations-saturation",
                               mean_top_weight=lambda d_k, scaled: public.get((d_k, scaled), 0.5))
    assert public_and_merged(CHAPTER, "ex-ablations-saturation", mean_top_weight=right)[1].passed_all


def test_compare_hidden_cases_catch_an_answer_that_ignores_key():
    # The public cases' second score, perplexity, is 1 + exact: the same differences.
    def exact_always(runs, a, b, key="exact", comparisons=1):
        return _compare()(runs, a, b, "exact", comparisons)

    assert_tuned_answer_caught(CHAPTER, "ex-ablations-compare", compare=exact_always)
    assert public_and_merged(CHAPTER, "ex-ablations-compare", compare=_compare())[1].passed_all


def test_bag_bound_hidden_cases_catch_every_pair_twice_and_a_bound_tuned_to_the_public_lists():
    assert_tuned_answer_caught(CHAPTER, "ex-ablations-bag-bound", every_date=lambda: _every_date() * 2,
                               bag_bound=_right_bound)
    public_sizes = (len(SMALL_PUBLIC), 36525 * 12)
    assert_tuned_answer_caught(CHAPTER, "ex-ablations-bag-bound", every_date=_every_date,
                               bag_bound=lambda pairs: _right_bound(pairs) if len(pairs) in public_sizes else 0.5)
    # (The right answer passes the merged check: tests/test_editions.py grades the key.)


SMALL_PUBLIC = [("ab", "1"), ("ba", "2"), ("ab", "1"), ("cd", "3"), ("dc", "3"), ("ba", "2"), ("abc", "4")]


def test_bag_bound_public_check_no_longer_holds_every_pair():
    path = mt.exercises.check_path(CHAPTER, "ex-ablations-bag-bound")
    text = path.read_text()
    assert "timedelta" not in text and "every_pair" not in text
    assert_hides(text, 36525 * 12, 36525)
    namespace = {"__name__": "public_check"}
    exec(compile(text, str(path), "exec"), namespace)
    answer = collections.Counter(_every_date())
    for key, value in namespace.items():
        results = [value]
        if callable(value) and getattr(value, "__module__", None) == "public_check":
            try:
                results.append(value())
            except Exception:  # a helper that needs its arguments
                pass
        for result in results:
            if isinstance(result, (list, tuple, set)) and len(result) > 1000:
                assert collections.Counter(result) != answer, key


def test_fix_perplexity_hidden_cases_catch_an_answer_right_on_400_pairs_only():
    def masked(model, tokenizer, pairs):
        sources, targets_in, targets_out = data.encode_pairs(pairs, tokenizer)
        source, target_in, target_out = data.pad(sources), data.pad(targets_in), data.pad(targets_out)
        loss = mt.masked_loss(target_out, model((source, target_in)), label_smoothing=0.0, pad_id=tokenizer.pad_id)
        return float(np.exp(keras.ops.convert_to_numpy(loss)))

    assert_tuned_answer_caught(CHAPTER, "ex-ablations-fix-perplexity",
                               fixed_perplexity=lambda model, tokenizer, pairs: masked(model, tokenizer, pairs)
                               if len(pairs) == 400 else 1.0)
    assert public_and_merged(CHAPTER, "ex-ablations-fix-perplexity", fixed_perplexity=masked)[1].passed_all
    assert hidden_path(CHAPTER, "ex-ablations-fix-perplexity").is_file()

"""Appendix A's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import itertools
import pathlib

import numpy as np
import pytest

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute

CHAPTER = "appendix_a_distribute"
HIDDEN = pathlib.Path(__file__).resolve().parents[1] / "grading" / "hidden" / CHAPTER


def check(label, **env):
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def check_merged(label, **env):
    """The check with its hidden cases, as the instructor grades."""
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=HIDDEN / f"{label}.py")
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,name", [
    ("ex-dist-by-hand", "data_parallel_gradient"),
    ("ex-dist-cost", "training_cost"),
    ("ex-dist-accumulate", "accumulated_gradient"),
])
def test_blank_answers_fail_and_say_so(label, name):
    passed, text = check(label)
    assert not passed and "is not defined" in text
    passed, text = check(label, **{name: stub})
    assert not passed and "NotImplementedError" in text


def _by_hand(weighting):
    def data_parallel_gradient(model, inputs, labels, replicas):
        n = np.count_nonzero(labels)
        total = None
        for source, target_in, target_out in zip(*(np.array_split(a, replicas) for a in (*inputs, labels))):
            scale = {"share": np.count_nonzero(target_out) / n, "own mean": 1.0, "mean of means": 1 / replicas,
                     "source share": np.count_nonzero(source) / np.count_nonzero(inputs[0])}[weighting]
            grads = mt.distribute.gradients(model, lambda y, p: mt.masked_loss(y, p) * scale, (source, target_in),
                                            target_out)
            total = grads if total is None else [t + g for t, g in zip(total, grads)]
        return total
    return data_parallel_gradient


def test_by_hand_accepts_the_tokens_share_and_names_the_two_mistakes():
    assert check("ex-dist-by-hand", data_parallel_gradient=_by_hand("share"))[0]
    passed, text = check("ex-dist-by-hand", data_parallel_gradient=_by_hand("own mean"))
    assert not passed and "the sum of R means is not one mean" in text, text
    passed, text = check("ex-dist-by-hand", data_parallel_gradient=_by_hand("mean of means"))
    assert not passed and "the mean of the slices' means" in text, text


def test_by_hand_refuses_a_weight_by_the_source_tokens():
    # Each row's source and target have different lengths in the check's batches, so the slices' shares of the
    # source tokens are not their shares of the labels' tokens.
    passed, text = check("ex-dist-by-hand", data_parallel_gradient=_by_hand("source share"))
    assert not passed and "SOURCE tokens" in text and "target tokens (the labels)" in text, text


def test_by_hand_refuses_the_whole_batch_at_once():
    def whole(model, inputs, labels, replicas):
        return mt.distribute.gradients(model, mt.masked_loss, inputs, labels)

    passed, text = check("ex-dist-by-hand", data_parallel_gradient=whole)
    assert not passed and "call mt.distribute.gradients once per slice" in text, text


def _cost(skip=""):
    def training_cost(num_layers, d_model, dff, vocab_size, steps, tokens, length):
        d, n = d_model, num_layers
        cross = 0 if skip == "cross" else 4 * d * d
        attention = 0 if skip == "attention" else 1
        source = n * (8 * d * d + cross + attention * 4 * length * d + 4 * d * dff)
        target = n * (12 * d * d + attention * 8 * length * d + 4 * d * dff)
        target += 0 if skip == "output" else 2 * d * vocab_size
        return steps * (1 if skip == "backward" else 3) * tokens * (source + target)
    return training_cost


@pytest.mark.parametrize("skip,message", [
    ("backward", "backward pass costs two more"), ("cross", "keys and values"), ("output", "output layer"),
    ("attention", "attention scores"),
])
def test_cost_names_what_is_missing(skip, message):
    assert check("ex-dist-cost", training_cost=_cost())[0]
    passed, text = check("ex-dist-cost", training_cost=_cost(skip))
    assert not passed and message in text, text


@pytest.mark.parametrize("function", ["training_flops", "forward_flops"])
def test_cost_refuses_the_package_s_count(function):
    def training_cost(num_layers, d_model, dff, vocab_size, steps, tokens, length):
        if function == "training_flops":
            return steps * mt.distribute.training_flops(num_layers, d_model, dff, vocab_size, tokens, tokens, length,
                                                        length)
        return 3 * steps * sum(mt.distribute.forward_flops(num_layers, d_model, dff, vocab_size, tokens, tokens,
                                                           length, length).values())

    passed, text = check("ex-dist-cost", training_cost=training_cost)
    assert not passed and "must not call mt.distribute.training_flops" in text, text
    assert mt.distribute.training_flops.__name__ == "training_flops"  # restored after the check
    assert mt.distribute.training_flops(1, 8, 16, 10, 2, 2, 1, 1) > 0


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_cost_says_what_is_wrong_without_the_expected_value(factor):
    def scaled(*args):
        return factor * _cost()(*args)

    passed, text = check("ex-dist-cost", training_cost=scaled)
    expected = _cost()(6, 512, 2048, 37_000, 100_000, 25_000, 25)
    assert not passed and ("too small" if factor < 1 else "too large") in text, text
    assert f"{expected:.4g}" not in text and f"{expected:.3g}" not in text, text


def _accumulated(mistake=""):
    """A streaming answer: each micro-batch read once, its gradient taken before the next is read."""
    def accumulated_gradient(model, micro_batches):
        total, n, source, count = None, 0, 0, 0
        for inputs, labels in micro_batches:
            weight = {"": np.count_nonzero(labels), "mean of means": 1,
                      "source": np.count_nonzero(inputs[0])}.get(mistake, np.count_nonzero(labels))
            grads = mt.distribute.gradients(model, lambda y, p, w=weight: mt.masked_loss(y, p) * w, inputs, labels)
            if mistake == "twice":  # a second gradient of the same micro-batch
                mt.distribute.gradients(model, mt.masked_loss, inputs, labels)
            total = grads if total is None else [t + g for t, g in zip(total, grads)]
            n, source, count = n + np.count_nonzero(labels), source + np.count_nonzero(inputs[0]), count + 1
        return [t / {"mean of means": count, "source": source}.get(mistake, n) for t in total]
    return accumulated_gradient


def test_accumulate_accepts_the_streaming_sum_over_the_tokens():
    passed, text = check("ex-dist-accumulate", accumulated_gradient=_accumulated())
    assert passed, text

    def running_mean(model, micro_batches):  # another streaming answer: a running token-weighted mean
        total, n = None, 0
        for inputs, labels in micro_batches:
            grads = mt.distribute.gradients(model, mt.masked_loss, inputs, labels)
            n_r = np.count_nonzero(labels)
            keep, add = n / (n + n_r), n_r / (n + n_r)
            total = grads if total is None else [t * keep + g * add for t, g in zip(total, grads)]
            n += n_r
        return total

    passed, text = check("ex-dist-accumulate", accumulated_gradient=running_mean)
    assert passed, text


def test_accumulate_refuses_the_mean_of_means():
    passed, text = check("ex-dist-accumulate", accumulated_gradient=_accumulated("mean of means"))
    assert not passed and "still averages" in text and "gradient_accumulation_steps" in text, text


def test_accumulate_refuses_a_weight_by_the_source_tokens():
    passed, text = check("ex-dist-accumulate", accumulated_gradient=_accumulated("source"))
    assert not passed and "SOURCE tokens" in text and "target tokens (the labels)" in text, text


def test_accumulate_refuses_reading_ahead():
    # Counting the tokens first (the answer to ex-dist-by-hand, in time) reads the stream twice.
    def counted_first(model, micro_batches):
        micro_batches = list(micro_batches)
        n = sum(np.count_nonzero(labels) for _, labels in micro_batches)
        total = None
        for inputs, labels in micro_batches:
            share = np.count_nonzero(labels) / n
            grads = mt.distribute.gradients(model, lambda y, p: mt.masked_loss(y, p) * share, inputs, labels)
            total = grads if total is None else [t + g for t, g in zip(total, grads)]
        return total

    def one_batch(model, micro_batches):  # no accumulation: every micro-batch in one batch
        batches = list(micro_batches)
        pad = lambda a: np.pad(a, ((0, 0), (0, 12 - a.shape[1])))  # noqa: E731  (right padding changes nothing)
        inputs = tuple(np.concatenate([pad(b[0][k]) for b in batches]) for k in (0, 1))
        return mt.distribute.gradients(model, mt.masked_loss, inputs, np.concatenate([pad(b[1]) for b in batches]))

    for answer in (counted_first, one_batch):
        passed, text = check("ex-dist-accumulate", accumulated_gradient=answer)
        assert not passed and "asked for micro-batch 2 before" in text and "stream" in text, text


def test_accumulate_takes_one_gradient_per_micro_batch():
    passed, text = check("ex-dist-accumulate", accumulated_gradient=_accumulated("twice"))
    assert not passed and "one gradient per micro-batch" in text, text


# ---------------------------------------------------------------- no message hands out the answer
@pytest.mark.parametrize("skip", ["backward", "cross", "output", "attention", None])
def test_cost_messages_give_no_count(skip):
    wrong = _cost(skip) if skip else (lambda *args: 1.3 * _cost()(*args))
    passed, text = check("ex-dist-cost", training_cost=wrong)
    assert not passed, text
    base = (6, 512, 2048, 37_000, 100_000, 25_000, 25)
    assert_hides(text, _cost()(*base))
    assert "forward_flops(" not in text.split("AssertionError")[-1], text


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden)
def test_by_hand_hidden_cases_catch_slices_that_only_split_evenly():
    def even_split(model, inputs, labels, replicas):  # np.split: right for the public 6 rows in 1, 2 or 3
        n, total = np.count_nonzero(labels), None
        for source, target_in, target_out in zip(*(np.split(a, replicas) for a in (*inputs, labels))):
            share = np.count_nonzero(target_out) / n
            grads = mt.distribute.gradients(model, lambda y, p: mt.masked_loss(y, p) * share, (source, target_in),
                                            target_out)
            total = grads if total is None else [t + g for t, g in zip(total, grads)]
        return total

    assert check("ex-dist-by-hand", data_parallel_gradient=even_split)[0]
    passed, text = check_merged("ex-dist-by-hand", data_parallel_gradient=even_split)
    assert not passed and "array split does not result in an equal division" in text, text
    assert check_merged("ex-dist-by-hand", data_parallel_gradient=_by_hand("share"))[0]


def test_cost_hidden_cases_catch_a_feed_forward_of_4_d_model():
    def four_d(num_layers, d_model, dff, vocab_size, steps, tokens, length):  # dff taken as 4 d_model, as in public
        return _cost()(num_layers, d_model, 4 * d_model, vocab_size, steps, tokens, length)

    assert check("ex-dist-cost", training_cost=four_d)[0]
    passed, text = check_merged("ex-dist-cost", training_cost=four_d)
    assert not passed and "d_model 96, dff 200" in text, text
    assert check_merged("ex-dist-cost", training_cost=_cost())[0]


def test_accumulate_hidden_cases_catch_three_micro_batches_assumed():
    def three(model, micro_batches):  # reads the three micro-batches that both public streams hold
        return _accumulated()(model, itertools.islice(micro_batches, 3))

    assert check("ex-dist-accumulate", accumulated_gradient=three)[0]
    passed, text = check_merged("ex-dist-accumulate", accumulated_gradient=three)
    assert not passed and "gradients of batches of [2, 1, 3] rows" in text, text
    assert check_merged("ex-dist-accumulate", accumulated_gradient=_accumulated())[0]

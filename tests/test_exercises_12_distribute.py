"""Appendix A's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import numpy as np
import pytest

import mintransformer as mt

CHAPTER = "12_distribute"


def check(label, **env):
    result = mt.exercises.run_check(CHAPTER, label, env)
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
            scale = {"share": np.count_nonzero(target_out) / n, "own mean": 1.0,
                     "mean of means": 1 / replicas}[weighting]
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


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_cost_says_what_is_wrong_without_the_expected_value(factor):
    def scaled(*args):
        return factor * _cost()(*args)

    passed, text = check("ex-dist-cost", training_cost=scaled)
    expected = _cost()(6, 512, 2048, 37_000, 100_000, 25_000, 25)
    assert not passed and ("too small" if factor < 1 else "too large") in text, text
    assert f"{expected:.4g}" not in text and f"{expected:.3g}" not in text, text


def test_accumulate_refuses_the_mean_of_means():
    def mean_of_means(model, micro_batches):
        grads = [mt.distribute.gradients(model, mt.masked_loss, x, y) for x, y in micro_batches]
        return [sum(g) / len(grads) for g in zip(*grads)]

    passed, text = check("ex-dist-accumulate", accumulated_gradient=mean_of_means)
    assert not passed and "still averages" in text and "gradient_accumulation_steps" in text, text

    def weighted(model, micro_batches):
        n = sum(np.count_nonzero(y) for _, y in micro_batches)
        grads = [mt.distribute.gradients(model, lambda t, p, s=np.count_nonzero(y) / n: mt.masked_loss(t, p) * s, x, y)
                 for x, y in micro_batches]
        return [sum(g) for g in zip(*grads)]

    assert check("ex-dist-accumulate", accumulated_gradient=weighted)[0]

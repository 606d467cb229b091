"""mintransformer.stats: Student's t, the paired t test, the sign test, Holm's adjustment, seeds needed."""

import math

import mintransformer as mt  # noqa: F401  (first: it silences TensorFlow's start-up log)

import numpy as np
import pytest
import tensorflow as tf
from mintransformer import stats

# Two-sided 95% and 99% quantiles of Student's t from printed tables.
TABLE = {1: (12.706, 63.657), 2: (4.303, 9.925), 3: (3.182, 5.841), 4: (2.776, 4.604), 5: (2.571, 4.032),
         10: (2.228, 3.169), 20: (2.086, 2.845), 30: (2.042, 2.750)}


@pytest.mark.parametrize("df", TABLE)
def test_quantiles_match_the_printed_tables(df):
    assert round(stats.t_quantile(0.975, df), 3) == TABLE[df][0]
    assert round(stats.t_quantile(0.995, df), 3) == TABLE[df][1]
    assert stats.t_quantile(0.025, df) == -stats.t_quantile(0.975, df)
    assert stats.t_quantile(0.5, df) == 0.0


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 12, 51])
def test_the_cdf_is_a_distribution_and_inverts_the_quantile(df):
    ts = np.linspace(-30, 30, 301)
    values = [stats.t_cdf(t, df) for t in ts]
    assert all(0 <= v <= 1 for v in values)
    assert np.all(np.diff(values) >= -1e-15)  # increasing, to the float64 rounding of the tails
    for t in (0.3, 1.0, 2.5, 10.0):
        assert stats.t_cdf(t, df) + stats.t_cdf(-t, df) == pytest.approx(1, abs=1e-14)
    for p in (0.6, 0.9, 0.975, 0.9999):
        assert stats.t_cdf(stats.t_quantile(p, df), df) == pytest.approx(p, abs=1e-10)
    assert stats.t_cdf(math.inf, df) == 1.0 and stats.t_cdf(-math.inf, df) == 0.0


def test_many_degrees_of_freedom_approach_the_normal():
    assert stats.t_cdf(1.959964, 100_000) == pytest.approx(0.975, abs=1e-5)


def test_paired_t_by_hand():
    a, b = [0.80, 0.78, 0.76], [0.71, 0.70, 0.73]
    d = np.subtract(a, b)
    result = stats.paired_t(a, b)
    error = d.std(ddof=1) / math.sqrt(3)
    assert result.n == 3 and result.mean == pytest.approx(d.mean()) and result.sd == pytest.approx(d.std(ddof=1))
    assert result.t == pytest.approx(d.mean() / error)
    assert result.low == pytest.approx(d.mean() - 4.302653 * error, rel=1e-6)
    assert result.high == pytest.approx(d.mean() + 4.302653 * error, rel=1e-6)
    assert result.p == pytest.approx(2 * (1 - stats.t_cdf(result.t, 2)))
    reverse = stats.paired_t(b, a)
    assert reverse.mean == -result.mean and reverse.p == pytest.approx(result.p)


@pytest.mark.parametrize("seed", range(20))
def test_the_interval_leaves_out_zero_exactly_when_p_is_below_alpha(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    a, b = rng.normal(0.3, 1, n), rng.normal(0, 1, n)
    for confidence in (0.9, 0.95, 0.99):
        r = stats.paired_t(a, b, confidence)
        assert (r.low > 0 or r.high < 0) == (r.p < 1 - confidence)


def test_identical_differences():
    assert stats.paired_t([1.0, 2.0], [0.5, 1.5]) == stats.PairedT(2, 0.5, 0.0, 0.5, 0.5, math.inf, 0.0)
    assert stats.paired_t([1.0, 2.0], [1.0, 2.0]).p == 1.0


def test_the_t_test_holds_its_level():
    rng = np.random.default_rng(0)
    rejections = [stats.paired_t(*rng.normal(size=(2, 4))).p < 0.05 for _ in range(4000)]
    assert 0.04 < np.mean(rejections) < 0.06


def test_sign_test():
    assert stats.sign_test([0.1, 0.2, 0.3]) == 0.25
    assert stats.sign_test([-1, -2, -3, -4, -5]) == 0.0625
    assert stats.sign_test([1, -1, 1, 1, 1]) == pytest.approx(2 * 6 / 32)
    assert stats.sign_test([1, -1]) == 1.0
    assert stats.sign_test([0, 0, 1, 1, 1]) == 0.25  # zeros dropped
    assert stats.sign_test([0.0, 0.0]) == 1.0


def test_holm():
    assert stats.holm([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    rng = np.random.default_rng(1)
    p = rng.uniform(0, 0.2, 30)
    adjusted = np.array(stats.holm(p))
    assert np.all(adjusted >= p) and np.all(adjusted <= np.minimum(1, p * 30) + 1e-15)
    order = np.argsort(p)
    assert np.all(np.diff(adjusted[order]) >= 0)  # the order of the p-values is kept
    assert stats.holm([0.5]) == [0.5] and stats.holm([0.6, 0.6]) == [1.0, 1.0]


def test_seeds_needed():
    # A paired t test at 5% detects a difference of one standard deviation of the differences with
    # 80% power from about 10 pairs (the usual tables give 10).
    assert stats.seeds_needed(1.0, 1.0) in (9, 10, 11)
    assert stats.seeds_needed(0.5, 1.0) > stats.seeds_needed(1.0, 1.0)
    assert stats.seeds_needed(1.0, 1.0, alpha=0.001) > stats.seeds_needed(1.0, 1.0)
    assert stats.seeds_needed(-1.0, 1.0) == stats.seeds_needed(1.0, 1.0)
    # checked by simulation: the power at the answer is about 80%
    n = stats.seeds_needed(1.0, 1.0, alpha=0.01)
    rng = np.random.default_rng(2)
    d = rng.normal(1.0, 1.0, (20000, n))
    t = d.mean(1) / (d.std(1, ddof=1) / math.sqrt(n))
    assert 0.78 < np.mean(np.abs(t) > stats.t_quantile(0.995, n - 1)) < 0.9


@pytest.mark.parametrize("call,message", [
    (lambda: stats.paired_t([1.0], [0.5]), "at least two pairs"),
    (lambda: stats.paired_t([1.0, 2.0], [0.5]), "one value per seed"),
    (lambda: stats.paired_t([[1.0, 2.0]], [[0.5, 1.0]]), "one-dimensional"),
    (lambda: stats.paired_t([1.0, math.nan], [0.5, 1.0]), "not finite"),
    (lambda: stats.paired_t([1.0, 2.0], [0.5, 1.0], confidence=95), "strictly between 0 and 1"),
    (lambda: stats.paired_t([1.0, 2.0], [0.5, 1.0], confidence=True), "strictly between 0 and 1"),
    (lambda: stats.paired_t(["a", "b"], [0.5, 1.0]), "sequence of numbers"),
    (lambda: stats.t_quantile(1.0, 3), "strictly between 0 and 1"),
    (lambda: stats.t_cdf(1.0, 0), "positive whole number"),
    (lambda: stats.t_cdf(1.0, 2.5), "positive whole number"),
    (lambda: stats.t_cdf(1.0, True), "positive whole number"),
    (lambda: stats.t_cdf(math.nan, 3), "not a number"),
    (lambda: stats.holm([0.5, 1.5]), "between 0 and 1"),
    (lambda: stats.seeds_needed(0.0, 1.0), "cannot be detected"),
    (lambda: stats.seeds_needed(1.0, -1.0), "sd finite and >= 0"),
])
def test_clear_errors(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


@pytest.mark.parametrize("df", [3, np.int64(3), np.int32(3)])
def test_degrees_of_freedom_as_python_or_numpy_ints(df):
    assert stats.t_quantile(0.975, df) == pytest.approx(3.182446, rel=1e-6)


def test_eager_tensors_are_numbers():
    a, b = tf.constant([0.8, 0.78, 0.76]), tf.constant([0.71, 0.70, 0.73])
    assert stats.paired_t(a, b).mean == pytest.approx(stats.paired_t([0.8, 0.78, 0.76], [0.71, 0.70, 0.73]).mean)
    assert stats.sign_test(tf.constant([1, 2, 3])) == 0.25
    assert stats.holm(tf.constant([0.01, 0.02])) == pytest.approx([0.02, 0.02])
    assert stats.t_quantile(0.975, 3) == stats.t_quantile(np.float64(0.975), np.int64(3))


@pytest.mark.parametrize("jit_compile", [False, True], ids=["tf.function", "XLA"])
@pytest.mark.parametrize("name", ["paired_t", "sign_test", "holm"])
def test_symbolic_tensors_are_refused_clearly(name, jit_compile):
    def use(x):
        if name == "paired_t":
            stats.paired_t(x, x)
        else:
            getattr(stats, name)(x)
        return x

    traced = tf.function(use, jit_compile=jit_compile)
    with pytest.raises(TypeError, match="outside the traced function|outside tf.function"):
        traced(tf.constant([0.1, 0.2, 0.3]))

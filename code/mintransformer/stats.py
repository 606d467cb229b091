"""Statistics for comparing training runs: paired differences over seeds, and many comparisons at once.

Chapter 11 compares variants of a model that were trained from the same seeds. Two runs from one
seed share their initial weights, the order of the examples and the dropout masks, so the
difference between them is measured on a common footing: the test looks at the per-seed
differences (``paired_t``, ``sign_test``), and a chapter that makes many comparisons controls the
chance of any false claim among them (``holm``). Everything is computed in float64 with Python's
``math`` module, so the printed numbers are the same on every processor; no SciPy is needed.
"""

import math
from typing import NamedTuple

import numpy as np

__all__ = ["t_cdf", "t_quantile", "paired_t", "PairedT", "sign_test", "holm", "seeds_needed"]


def _values(x, what):
    """A 1-D float64 NumPy array from a list, a NumPy array or an eager tensor; a clear error otherwise."""
    if hasattr(x, "numpy") and callable(x.numpy):
        try:
            x = x.numpy()
        except Exception as error:  # a symbolic tensor inside tf.function or XLA has no value yet
            raise TypeError(f"{what} must hold numbers known now (a list, a NumPy array or an eager tensor); "
                            "a symbolic tensor inside tf.function has no values to test: call this after "
                            "the runs, outside the traced function.") from error
    elif type(x).__module__.startswith(("tensorflow", "keras")):
        raise TypeError(f"{what} must hold numbers known now (a list, a NumPy array or an eager tensor), "
                        f"not a {type(x).__name__}: call this after the runs, outside tf.function.")
    try:
        array = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{what} must be a sequence of numbers, not {type(x).__name__}.") from error
    if array.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional (one value per seed); it has shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} holds a value that is not finite: {array.tolist()}.")
    return array


def _degrees(df):
    if isinstance(df, (bool, np.bool_)) or not isinstance(df, (int, np.integer)) or df < 1:
        raise ValueError(f"the degrees of freedom must be a positive whole number, not {df!r}.")
    return int(df)


def _probability(p, what):
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)) \
            or not 0 < float(p) < 1:
        raise ValueError(f"{what} must be a number strictly between 0 and 1, not {p!r}.")
    return float(p)


def t_cdf(t, df):
    """P(T <= t) for Student's t distribution with a whole number ``df`` of degrees of freedom.

    Exact closed forms (Abramowitz and Stegun 26.7.3 and 26.7.4): with theta = atan(t / sqrt(df)),
    a finite sum of powers of cos(theta). Float64 throughout: the absolute error is about 1e-15, so a
    p-value far below that is not resolved (none of chapter 11's is).
    """
    df = _degrees(df)
    t = float(t)
    if math.isnan(t):
        raise ValueError("t is not a number.")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    theta = math.atan(abs(t) / math.sqrt(df))
    c, s = math.cos(theta), math.sin(theta)
    if df % 2:  # odd
        total, term = 0.0, 0.0
        if df > 1:
            total = term = c
            for j in range(1, (df - 3) // 2 + 1):
                term *= c * c * (2 * j) / (2 * j + 1)
                total += term
        inside = 2 / math.pi * (theta + s * total)  # P(|T| <= |t|)
    else:
        total = term = 1.0
        for j in range(1, (df - 2) // 2 + 1):
            term *= c * c * (2 * j - 1) / (2 * j)
            total += term
        inside = s * total
    inside = min(1.0, inside)  # rounding may carry the sum a hair past 1
    return 0.5 + inside / 2 if t >= 0 else 0.5 - inside / 2


def t_quantile(p, df):
    """The t with ``t_cdf(t, df) == p`` (for example ``t_quantile(0.975, 2)`` = 4.303), by bisection."""
    p, df = _probability(p, "p"), _degrees(df)
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return (low + high) / 2


class PairedT(NamedTuple):
    """The paired t test of ``paired_t``: the mean difference, its confidence interval and p-value."""

    n: int  # pairs (seeds)
    mean: float  # mean of the differences a - b
    sd: float  # their standard deviation (n - 1 in the denominator)
    low: float  # the confidence interval of the mean difference
    high: float
    t: float  # mean / (sd / sqrt(n))
    p: float  # two-sided p-value: the chance of a |t| this large if the true mean difference were 0


def paired_t(a, b, confidence=0.95):
    """Student's paired t test and interval for the mean of ``a - b``, one pair per seed.

    Args:
        a, b: the scores of two variants, in the same order of seeds (``a[j]`` and ``b[j]`` come from
            seed j); at least two pairs.
        confidence: of the two-sided interval, for example 0.95, or ``1 - 0.05 / m`` for one of
            ``m`` comparisons (Bonferroni).

    Returns:
        A ``PairedT``: ``mean +/- t_{(1+confidence)/2, n-1} * sd / sqrt(n)`` is the interval. It assumes
        the differences are independent draws from one normal distribution; where all of them are
        equal (``sd == 0``), the interval is that one value and p is 0 (or 1 if they are all 0).
    """
    a, b = _values(a, "a"), _values(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one value per seed each, in the same order; they have {a.size} "
                         f"and {b.size} values.")
    if a.size < 2:
        raise ValueError(f"a paired t test needs at least two pairs (seeds); it got {a.size}.")
    confidence = _probability(confidence, "confidence")
    d = (a - b).tolist()
    n = len(d)
    mean = math.fsum(d) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in d) / (n - 1))
    if sd == 0:
        return PairedT(n, mean, 0.0, mean, mean, math.copysign(math.inf, mean) if mean else 0.0,
                       0.0 if mean else 1.0)
    error = sd / math.sqrt(n)
    half = t_quantile((1 + confidence) / 2, n - 1) * error
    t = mean / error
    p = min(1.0, 2 * t_cdf(-abs(t), n - 1))
    return PairedT(n, mean, sd, mean - half, mean + half, t, p)


def sign_test(differences):
    """Exact two-sided sign test: the chance, if positive and negative differences were equally likely,
    of a split at least as uneven as the one observed. Zero differences are dropped.

    With n non-zero differences the smallest p it can give is ``2 / 2**n`` (all of one sign): 0.25 with
    3 seeds, 0.0625 with 5. Unlike the t test it assumes nothing about the shape of the distribution.
    """
    d = _values(differences, "differences")
    d = d[d != 0]
    n = int(d.size)
    if n == 0:
        return 1.0
    k = int(min(np.sum(d > 0), np.sum(d < 0)))
    tail = math.fsum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def holm(p_values):
    """Holm's step-down adjustment of the p-values of a family of m comparisons.

    Sort the p-values, multiply the i-th smallest (i from 0) by m - i, and keep the running maximum
    (capped at 1). Calling a comparison significant when its adjusted p-value is below alpha makes
    the chance of any false claim in the whole family at most alpha, whatever the dependence between
    the tests (Holm 1979); it is never less powerful than Bonferroni's ``p * m``.
    """
    p = _values(p_values, "p_values")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"p-values lie between 0 and 1; got {p.tolist()}.")
    m = p.size
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: (p[i], i))):
        running = max(running, min(1.0, (m - rank) * float(p[index])))
        adjusted[index] = running
    return adjusted


def seeds_needed(difference, sd, alpha=0.05, power=0.8, most=10_000):
    """How many paired seeds a two-sided paired t test at level ``alpha`` needs to detect a true mean
    difference ``difference`` with probability ``power``, when the differences have standard
    deviation ``sd``.

    Uses the usual approximation of the power by a shifted central t distribution,
    ``P(T_{n-1} > t_{1-alpha/2, n-1} - |difference| sqrt(n) / sd)``; it is slightly optimistic for
    very few seeds. ``difference`` and ``sd`` estimated from a few seeds are themselves uncertain:
    read the answer as an order of magnitude.
    """
    alpha, power = _probability(alpha, "alpha"), _probability(power, "power")
    difference, sd = float(difference), float(sd)
    if not math.isfinite(difference) or not math.isfinite(sd) or sd < 0:
        raise ValueError(f"difference must be finite and sd finite and >= 0; got {difference}, {sd}.")
    if difference == 0:
        raise ValueError("a true difference of 0 cannot be detected with any number of seeds.")
    if sd == 0:
        return 2
    for n in range(2, most + 1):
        shift = abs(difference) * math.sqrt(n) / sd
        if 1 - t_cdf(t_quantile(1 - alpha / 2, n - 1) - shift, n - 1) >= power:
            return n
    raise ValueError(f"more than {most} seeds would be needed.")

"""Chapter 9, inference: per-student numbers."""

import math

from mintransformer.exercises.per_student import exercise


def _score(log_p, length, alpha):
    return log_p / ((5 + length) / 6) ** alpha


@exercise("ex-inference-length-penalty", book={"length_a": 5, "log_p_a": -2.0, "length_b": 9, "log_p_b": -2.6})
def _(draw):
    # The shorter A is the more likely (it wins at alpha = 0), the longer B the less. They tie below the
    # paper's alpha = 0.6 (B wins at 0.6 and 1), between 0.6 and 1 (A at 0.6, B at 1: the book's case) or
    # above 1 (A at all three), each winner clear enough to tell by hand, so that the winners differ from
    # student to student too. The tie of the wrong penalty |Y|^alpha is far from the right one, so that
    # the check can name it.
    while True:
        length_a = draw.integer(3, 8)
        length_b = length_a + draw.integer(2, 10)
        log_p_a = -draw.integer(10, 40) / 10
        log_p_b = -draw.integer(-int(log_p_a * 10) + 1, 60) / 10
        tie = math.log(log_p_b / log_p_a) / math.log((5 + length_b) / (5 + length_a))
        power_tie = math.log(log_p_b / log_p_a) / math.log(length_b / length_a)
        margins = [abs(_score(log_p_a, length_a, alpha) - _score(log_p_b, length_b, alpha)) for alpha in (0.6, 1.0)]
        if (0.15 <= tie <= 0.5 or 0.68 <= tie <= 0.92 or 1.1 <= tie <= 1.8) and min(margins) >= 0.02 \
                and abs(power_tie - tie) > 0.05:
            return {"length_a": length_a, "log_p_a": log_p_a, "length_b": length_b, "log_p_b": log_p_b}


@exercise("ex-inference-cache-memory", book={"batch": 32, "target_length": 100, "source_length": 100})
def _(draw):
    # The base model (6 layers, d_model = 512) stays; the batch and the two lengths vary, as in serving.
    return {"batch": draw.choice((8, 16, 24, 32, 48, 64, 96, 128)),
            "target_length": 10 * draw.integer(5, 25), "source_length": 10 * draw.integer(5, 25)}

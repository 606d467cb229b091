"""Chapter 4, the positional encoding: per-student numbers."""

import math

from mintransformer.exercises.per_student import exercise

D_MODEL = 512  # the base model's width, in both exercises' text
PAIRS = D_MODEL // 2


def _omega(i):
    return 10000.0 ** (-2 * i / D_MODEL)


@exercise("ex-positional-wavelength", book={"wavelength": 100, "tokens": 50})
def _(draw):
    # A round target wavelength and a sentence length. The draw is kept when the closest pair is clearly
    # the closer of its two neighbours, no pair turns by almost exactly a quarter turn over the sentence
    # (so that both answers are unique, whatever the rounding), and the pair that the wavelength without
    # its 2 pi gives is no feature index of the right pair (the check names each mistake).
    while True:
        wavelength = draw.choice(range(20, 1001, 5))
        tokens = draw.integer(20, 200)
        distances = sorted(abs(2 * math.pi / _omega(i) - wavelength) for i in range(PAIRS))
        closest = min(range(PAIRS), key=lambda i: abs(2 * math.pi / _omega(i) - wavelength))
        no_two_pi = min(range(PAIRS), key=lambda i: abs(1 / _omega(i) - wavelength))
        turns = [_omega(i) * (tokens - 1) / (math.pi / 2) for i in range(PAIRS)]
        if (distances[1] - distances[0] > 0.005 * wavelength and no_two_pi not in (2 * closest, 2 * closest + 1)
                and all(abs(t - 1) > 1e-3 for t in turns)):
            return {"wavelength": wavelength, "tokens": tokens}


@exercise("ex-positional-dot", book={"query_position": 30, "look_ahead": 3})
def _(draw):
    # Part (b): the query PE_p M_k^T looks k positions ahead, to p + k, on the table of 64 positions. p + k
    # is at most 62, so that both of its neighbours are keys of the table and tie for second place (p >= 0
    # keeps it at least 2); k is from 2 to 9, so that the query's own position p is not one of them.
    look_ahead = draw.integer(2, 9)
    target = draw.integer(look_ahead, 62)
    return {"query_position": target - look_ahead, "look_ahead": look_ahead}

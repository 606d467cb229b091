"""Hidden cases of ex-modern-online-by-hand: the running quantities and the output, for the student's numbers.

Merged after the public check (mt.exercises.merged_source), so its helpers (name, _triple) are in scope.
"""

import math

from otter.test_files import test_case

from mintransformer.exercises.checking import student_numbers


def _online(logits, values, rescale=True):
    """(m, l, acc) after each tile of two keys (eq-modern-online); rescale=False leaves acc's factor out."""
    m = l = acc = None
    found = []
    for start in (0, 2):
        s, v = logits[start:start + 2], values[start:start + 2]
        m_new = max(s) if m is None else max(m, max(s))
        p = [math.exp(x - m_new) for x in s]
        if m is None:
            l, acc = sum(p), sum(a * b for a, b in zip(p, v))
        else:
            factor = math.exp(m - m_new)
            l = factor * l + sum(p)
            acc = (factor if rescale else 1.0) * acc + sum(a * b for a, b in zip(p, v))
        m = m_new
        found.append((m, l, acc))
    return found


def _near(a, b):
    return abs(a - b) <= 1e-3 + 1e-3 * abs(b)


@test_case(points=1, hidden=True)
def hidden_the_two_tiles(tile_1, tile_2, STUDENT_ID, online_numbers):
    n = student_numbers(name, STUDENT_ID, online_numbers)  # noqa: F821 (the public check's name)
    right = _online(n["logits"], n["values"])
    wrong = _online(n["logits"], n["values"], rescale=False)[1]
    for key, answer, expected in (("tile_1", tile_1, right[0]), ("tile_2", tile_2, right[1])):
        got = _triple(answer, key)  # noqa: F821
        for what, a, b in zip(("m", "l", "acc"), got, expected):
            if _near(a, b):
                continue
            if key == "tile_2" and what == "acc" and _near(a, wrong[2]):
                raise AssertionError("tile_2's acc adds the second tile to the first tile's acc as it was: the first "
                                     "tile's terms were computed under the old maximum.")
            raise AssertionError(f"{key}'s {what} is not right for your logits and values (to three decimals).")


@test_case(points=1, hidden=True)
def hidden_the_output(output, STUDENT_ID, online_numbers):
    n = student_numbers(name, STUDENT_ID, online_numbers)  # noqa: F821
    weights = [math.exp(s) for s in n["logits"]]
    right = sum(w * v for w, v in zip(weights, n["values"])) / sum(weights)  # the full softmax's
    if not _near(output, right):
        raise AssertionError("output is not the attention of your query (to three decimals).")

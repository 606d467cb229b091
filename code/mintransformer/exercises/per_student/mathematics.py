"""Chapter 1, the mathematics of attention: per-student numbers."""

from mintransformer.exercises.per_student import exercise


def _half(units):
    """A multiple of 1/2, given in halves: an int when it is whole (2 -> 1), a float otherwise (3 -> 1.5)."""
    return units // 2 if units % 2 == 0 else units / 2


@exercise("ex-mathematics-shift", book={"z": (0, 1)})
def _(draw):
    # Two different logits, multiples of 1/2 between -2 and 2: softmax(z) depends only on their gap,
    # which runs from -4 to 4 (never 0, so that doubling z changes its softmax, the point of part 2),
    # and the larger of the two may be either one.
    # A gap of +1 (second minus first) would give the book's answer, printed in its solution: redrawn.
    while True:
        first, second = draw.sample(range(-4, 5), 2)  # in halves
        if second - first != 2:
            return {"z": (_half(first), _half(second))}

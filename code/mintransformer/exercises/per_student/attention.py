"""Chapter 2, scaled dot-product attention: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-attention-by-hand", book={
    "q_1": (1, 1, 0, 0), "q_2": (0, 0, 0, 0),
    "k_1": (1, 1, 0, 0), "k_2": (0, 0, 1, 1),
    "v_1": (4, 0), "v_2": (0, 4),
})
def _(draw):
    # q_2 stays the zero query: the written part asks what it does. q_1 has small whole entries,
    # the keys are made of 0s and 1s, and q_1's two scaled logits differ, by 2 at most (e^2 is
    # still arithmetic by hand), so that its weights are not uniform; the values are (a, 0) and
    # (0, b). d_k = 4, so the scale stays 1/2.
    while True:
        q_1 = tuple(draw.integer(0, 2) for _ in range(4))
        k_1 = tuple(draw.integer(0, 1) for _ in range(4))
        k_2 = tuple(draw.integer(0, 1) for _ in range(4))
        logits = [sum(a * b for a, b in zip(q_1, k)) for k in (k_1, k_2)]
        if any(q_1) and k_1 != k_2 and 0 < abs(logits[0] - logits[1]) <= 4:
            break
    return {"q_1": q_1, "q_2": (0, 0, 0, 0), "k_1": k_1, "k_2": k_2,
            "v_1": (draw.choice((2, 3, 4, 5, 6, 8)), 0), "v_2": (0, draw.choice((2, 3, 4, 5, 6, 8)))}


@exercise("ex-attention-causal-independence", book={"length": 6, "first_changed": 4})
def _(draw):
    # A sequence of 6 to 11 positions, changed from a position past the first on, to its end.
    length = draw.integer(6, 11)
    return {"length": length, "first_changed": draw.integer(1, length - 1)}

"""Chapter 7, the MinTransformer model: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-model-untied-share", book={"N": 6, "D": 256, "h": 8, "dff": 1024, "V": 37_000})
def _(draw):
    # A model smaller than the base model (N <= 6, D < 512, d_ff = 4 D as there) with its vocabulary,
    # V = 37,000, so that the comparison with the base model's shares shows the effect of size alone:
    # the vocabulary-sized share is larger than the base model's, tied and untied. D is a multiple
    # of 32, so that h = 8 heads divide it.
    d_model = 32 * draw.integer(4, 12)  # 128 to 384
    return {"N": draw.integer(2, 6), "D": d_model, "h": 8, "dff": 4 * d_model, "V": 37_000}


@exercise("ex-model-start-token", book={"target": (0, 4, 6, 2)})
def _(draw):
    # A target of 4 to 8 tokens that begins with 0, the padding id used as the start token, then 2
    # or more real tokens (ids 2 to 19, below every vocabulary of the chapter and the check) and up
    # to 3 pads: query 0 still has no key at all, and every query loses key 0 and the pads.
    length = draw.integer(4, 8)
    pads = draw.integer(0, min(3, length - 3))
    return {"target": (0,) + tuple(draw.integer(2, 19) for _ in range(length - pads - 1)) + (0,) * pads}

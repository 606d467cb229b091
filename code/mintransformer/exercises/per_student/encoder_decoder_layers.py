"""Chapter 6, encoder and decoder layers: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-layers-which-positions", book={
    "target": (1, 5, 9, 3, 0), "t": 1,
    "source": (4, 6, 1, 7, 0, 0), "s": 1,
})
def _(draw):
    # The second sentences of the set-up cell, drawn: a target of 5 to 8 tokens that begins with the
    # start token 1 and ends in 1 to 3 pads (id 0), a source of 5 to 8 tokens ending in 1 to 3 pads,
    # the other ids from 2 to 9 (the set-up's embedding has 10). The changed positions t and s are
    # real tokens, not the start token (t >= 1, so the look-ahead mask keeps some outputs unchanged)
    # and not a pad (a changed pad would change the padding mask too).
    target_length, target_pads = draw.integer(5, 8), draw.integer(1, 3)
    source_length, source_pads = draw.integer(5, 8), draw.integer(1, 3)
    target = (1,) + tuple(draw.integer(2, 9) for _ in range(target_length - target_pads - 1)) + (0,) * target_pads
    source = tuple(draw.integer(2, 9) for _ in range(source_length - source_pads)) + (0,) * source_pads
    return {"target": target, "t": draw.integer(1, target_length - target_pads - 1),
            "source": source, "s": draw.integer(1, source_length - source_pads - 1)}

"""Chapter 13, the modern block: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-modern-gqa-cache", book={"num_layers": 80, "d_model": 8192, "num_heads": 64, "num_key_value_heads": 8,
                                      "batch_size": 8, "bytes_per_value": 2, "memory_gib": 16})
def _(draw):
    # The book's is Llama 2 70B's configuration (80 layers, d_model = 8,192, 64 query heads, 8 key/value heads),
    # a batch of 8 sequences in bfloat16, and 16 GiB for the cache. A student's: a model of another size, d_k = 64
    # or 128 as in the released models, a number of key/value heads that divides h and is neither h nor 1 (so that
    # the three answers differ), a batch, 2 (bfloat16) or 4 (float32) bytes per value, and a memory budget such
    # that multi-head attention fits at least 64 tokens and neither multi-head nor grouped-query attention fills
    # the budget exactly (so that the longest context is a rounding down, not a division).
    while True:
        num_heads = draw.choice((8, 12, 16, 24, 32, 40, 48, 64))
        d_k = draw.choice((64, 128))
        groups = [g for g in range(2, num_heads) if num_heads % g == 0]
        values = {"num_layers": 4 * draw.integer(4, 20), "d_model": num_heads * d_k, "num_heads": num_heads,
                  "num_key_value_heads": draw.choice(groups), "batch_size": draw.choice((1, 2, 4, 8, 16, 32)),
                  "bytes_per_value": draw.choice((2, 4)), "memory_gib": draw.choice((8, 16, 24, 40, 48, 80))}
        budget = values["memory_gib"] * 2**30
        per_token = [2 * values["num_layers"] * values["batch_size"] * heads * d_k * values["bytes_per_value"]
                     for heads in (num_heads, values["num_key_value_heads"])]
        if (budget // per_token[0] >= 64 and all(budget % size for size in per_token)
                and (values["num_layers"], values["d_model"], values["num_heads"]) != (80, 8192, 64)):
            return values


@exercise("ex-modern-swiglu-width", book={"d_model": 4096, "multiple_of": 256})
def _(draw):
    # Llama 2 7B's width and rounding in the book (11,008). A student's: a width, a multiple of 128 from 512
    # to 8,192, and a rounding multiple, such that 2/3 of 4 d_model is not already a multiple (so that rounding
    # up and rounding down differ) and the width is not the book's.
    while True:
        d_model = 128 * draw.integer(4, 64)
        multiple_of = draw.choice((32, 64, 128, 256, 512))
        if int(8 * d_model / 3) % multiple_of and (d_model, multiple_of) != (4096, 256):
            return {"d_model": d_model, "multiple_of": multiple_of}


@exercise("ex-modern-online-by-hand", book={"logits": (0, 1, 3, 2), "values": (2, 4, -1, 3)})
def _(draw):
    # One query's four logits and four scalar values, read in two tiles of two keys. The second tile raises the
    # running maximum (so that the rescaling of the online softmax matters, and leaving it out gives other
    # numbers), by 1 to 3 so that e^(m - m') stays readable; the values are not all equal, and the first tile's
    # weighted sum is not 0 (so that forgetting to rescale it shows).
    while True:
        logits = tuple(draw.integer(-3, 3) for _ in range(4))
        values = tuple(draw.integer(-4, 4) for _ in range(4))
        rise = max(logits[2:]) - max(logits[:2])
        first = sum(v * 2.718281828459045 ** (s - max(logits[:2])) for s, v in zip(logits[:2], values[:2]))
        if 1 <= rise <= 3 and len(set(values)) > 2 and abs(first) > 0.5 and (logits, values) != ((0, 1, 3, 2),
                                                                                                  (2, 4, -1, 3)):
            return {"logits": logits, "values": values}

"""Chapter 3, multi-head attention: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-multihead-params", book={"d_model": 512, "num_heads": 6, "key_dim": 85, "num_layers": 6})
def _(draw):
    # Part (c): a width that the number of heads does not divide, so that the package refuses it, and
    # Keras's key_dim = d_model // num_heads, so that the concatenation of the heads, num_heads * key_dim,
    # is narrower than the model. Parts (a) and (b) keep the big model's width and heads (Table 3:
    # d_model = 1024, h = 16) with a number of layers N of the student's own, never the paper's 6.
    while True:
        d_model = draw.choice((256, 384, 512, 640, 768, 1024))
        num_heads = draw.integer(3, 12)
        if d_model % num_heads:
            return {"d_model": d_model, "num_heads": num_heads, "key_dim": d_model // num_heads,
                    "num_layers": draw.choice((2, 3, 4, 5, 8, 10, 12))}


@exercise("ex-multihead-shapes", book={"B": 2, "T": 7, "S": 9, "d_model": 512, "h": 8})
def _(draw):
    # Encoder-decoder attention of another size: a batch, a target length T (the queries) and a source
    # length S (the keys and values), a width and a number of heads that divides it. The six sizes
    # (d_k included) differ, so that every axis of every shape says which size it is.
    while True:
        d_model = draw.choice((256, 384, 512, 640, 768, 1024))
        h = draw.choice((4, 6, 8, 12, 16))
        sizes = {"B": draw.integer(2, 6), "T": draw.integer(3, 13), "S": draw.integer(3, 13), "d_model": d_model,
                 "h": h}
        if d_model % h == 0 and len(set(sizes.values()) | {d_model // h}) == 6:
            return sizes

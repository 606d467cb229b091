"""Chapter 3, multi-head attention: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-multihead-params", book={"d_model": 512, "num_heads": 6, "key_dim": 85})
def _(draw):
    # Part (c) only: a width that the number of heads does not divide, so that the package refuses it, and
    # Keras's key_dim = d_model // num_heads, so that the concatenation of the heads, num_heads * key_dim,
    # is narrower than the model. Parts (a) and (b) stay the paper's big model (Table 3).
    while True:
        d_model = draw.choice((256, 384, 512, 640, 768, 1024))
        num_heads = draw.integer(3, 12)
        if d_model % num_heads:
            return {"d_model": d_model, "num_heads": num_heads, "key_dim": d_model // num_heads}

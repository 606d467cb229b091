"""Chapter 5, layer normalization: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-layernorm-epsilon", book={"ratio": 1.01, "eps_small": 1e-6, "eps_keras": 1e-3})
def _(draw):
    # The two epsilons stay this book's (1e-6) and Keras's default (1e-3), which the text names; the
    # ratio r(sigma) must exceed is 1 + p/100 with p from 0.5% to 5% by 0.05%. The point holds for
    # every p: the first-order estimate sqrt(eps / (2 (ratio - 1))) is close for 1e-6 and clearly too
    # large for 1e-3 (the + eps of sigma + eps takes about eps / sigma off r - 1, which is 2 sigma
    # times the first-order eps / (2 sigma^2): 18% to 46% of it here), and the threshold stays
    # below 0.5, where r decreases through the ratio once.
    percent = draw.integer(10, 100) / 20
    return {"ratio": round(1 + percent / 100, 4), "eps_small": 1e-6, "eps_keras": 1e-3}

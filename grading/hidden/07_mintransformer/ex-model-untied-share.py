"""Hidden cases of ex-model-untied-share: the two shares themselves.

Merged after the public check (mt.exercises.merged_source), so its helpers (_share, _fraction,
V, BASE_LAYERS, BASE_D, TOLERANCE) are in scope.
"""

from otter.test_files import test_case

N, D, DFF = 6, 256, 1024
F = 2 * D * DFF + DFF + D  # the FFN
LAYERS = N * ((4 * (D * D + D) + F + 4 * D) + (8 * (D * D + D) + F + 6 * D))  # (tests build the model)
UNTIED_VOCAB, TIED_VOCAB = 3 * V * D + V, V * D  # noqa: F821 (the public check's V)


def _named(share, what, vocabulary, wrong):
    """Fail with the message of the first known mistake that `share` matches, or say which way it is off."""
    for value, message in wrong:
        if abs(share - value) < TOLERANCE:  # noqa: F821
            raise AssertionError(f"`{what}`: {message}")
    right = _fraction(LAYERS, vocabulary)  # noqa: F821
    if abs(share - right) <= TOLERANCE:  # noqa: F821
        return
    if abs(share - right) < 0.01:
        raise AssertionError(
            f"`{what}` is {share:g}: close, so probably the right count, rounded too much (or with a small "
            "term missing). Let Python compute the fraction: the check allows 1e-4."
        )
    side = "too large" if share > right else "too small"
    raise AssertionError(
        f"`{what}` is {share:.4f}: that is {side}. Count the layers at D = 256 and d_ff = 1024 with the "
        "closed form of the chapter, then the vocabulary-sized components, and divide by the total."
    )


def _common(vocabulary):
    """(wrong share, message) for the mistakes that either share can make."""
    return [
        (1 - _fraction(LAYERS, vocabulary),  # noqa: F821
         "that is the share of the layers: give the share of the vocabulary-sized components."),
        (_fraction(BASE_LAYERS / 4, vocabulary),  # noqa: F821
         "you divided the base model's layers by 4 because D halves. The weight matrices shrink by 4, but "
         "the biases and the layer norms, which grow like D, only by 2: count the layers at D = 256 "
         "themselves."),
    ]


@test_case(points=1, hidden=True)
def hidden_untied_share(untied_share):
    share = _share(untied_share, "untied_share")  # noqa: F821
    wrong = _common(UNTIED_VOCAB) + [
        (_fraction(LAYERS, 2 * V * D),  # noqa: F821
         "you counted the two embeddings only: untied, the output layer is a third vocabulary-sized "
         "component (a D x V matrix and a bias)."),
        (_fraction(LAYERS, 3 * V * D),  # noqa: F821
         "the output layer has a bias of V numbers too, beside its D x V matrix."),
    ]
    _named(share, "untied_share", UNTIED_VOCAB, wrong)


@test_case(points=1, hidden=True)
def hidden_tied_share(tied_share):
    share = _share(tied_share, "tied_share")  # noqa: F821
    wrong = _common(TIED_VOCAB) + [
        (TIED_VOCAB / (LAYERS + UNTIED_VOCAB),
         "divide by the TIED model's total: tying removes parameters from the total too."),
    ]
    _named(share, "tied_share", TIED_VOCAB, wrong)

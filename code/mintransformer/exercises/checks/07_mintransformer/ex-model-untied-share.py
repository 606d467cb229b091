"""Exercise: the share of a half-width model's parameters in vocabulary-sized components."""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered, to_numpy

OK_FORMAT = False
name = "ex-model-untied-share"
points = 2

V, N, D, DFF = 37_000, 6, 256, 1024
F = 2 * D * DFF + DFF + D  # the FFN
LAYERS = N * ((4 * (D * D + D) + F + 4 * D) + (8 * (D * D + D) + F + 6 * D))  # 11,059,200 (tests build it)
UNTIED_VOCAB, TIED_VOCAB = 3 * V * D + V, V * D
BASE_LAYERS, BASE_D = 44_138_496, 512  # the base model, whose shares the chapter prints
TOLERANCE = 1e-4


def _share(value, what):
    answered(value, what)
    share = to_numpy(value, what)
    if share.shape != ():
        raise AssertionError(f"`{what}` must be one number, a fraction between 0 and 1.")
    share = float(share)
    if 1 < share <= 100:
        raise AssertionError(f"`{what}` is {share:g}: give a fraction between 0 and 1, not a percentage.")
    return share


def _fraction(layers, vocabulary):
    return vocabulary / (layers + vocabulary)


def _named(share, what, vocabulary, wrong):
    """Fail with the message of the first known mistake that `share` matches, or say which way it is off."""
    for value, message in wrong:
        if abs(share - value) < TOLERANCE:
            raise AssertionError(f"`{what}`: {message}")
    right = _fraction(LAYERS, vocabulary)
    if abs(share - right) <= TOLERANCE:
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


def _common(vocabulary, base_vocabulary):
    """(wrong share, message) for the mistakes that either share can make."""
    return [
        (_fraction(BASE_LAYERS, base_vocabulary),
         "that is the base model's share (D = 512). This model has D = 256 and d_ff = 1024: count its "
         "layers and its embeddings at that width."),
        (1 - _fraction(LAYERS, vocabulary),
         "that is the share of the layers: give the share of the vocabulary-sized components."),
        (_fraction(BASE_LAYERS / 4, vocabulary),
         "you divided the base model's layers by 4 because D halves. The weight matrices shrink by 4, but "
         "the biases and the layer norms, which grow like D, only by 2: count the layers at D = 256 "
         "themselves."),
    ]


@test_case(points=1)
def untied(untied_share):
    share = _share(untied_share, "untied_share")
    wrong = _common(UNTIED_VOCAB, 3 * V * BASE_D + V) + [
        (_fraction(LAYERS, 2 * V * D),
         "you counted the two embeddings only: untied, the output layer is a third vocabulary-sized "
         "component (a D x V matrix and a bias)."),
        (_fraction(LAYERS, 3 * V * D), "the output layer has a bias of V numbers too, beside its D x V matrix."),
    ]
    _named(share, "untied_share", UNTIED_VOCAB, wrong)


@test_case(points=1)
def tied(tied_share):
    share = _share(tied_share, "tied_share")
    wrong = _common(TIED_VOCAB, V * BASE_D) + [
        (TIED_VOCAB / (LAYERS + UNTIED_VOCAB),
         "divide by the TIED model's total: tying removes parameters from the total too."),
    ]
    _named(share, "tied_share", TIED_VOCAB, wrong)

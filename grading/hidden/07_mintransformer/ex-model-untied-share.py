"""Hidden cases of ex-model-untied-share: the two shares themselves, for the student's sizes.

Merged after the public check (mt.exercises.merged_source), so its helpers (_share, _fraction,
name, BASE_LAYERS, BASE_D, TOLERANCE) are in scope.
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import student_numbers


def _counts(STUDENT_ID, share_numbers):
    """(the numbers, the layers' count, the untied and the tied vocabulary-sized counts)."""
    n = student_numbers(name, STUDENT_ID, share_numbers)  # noqa: F821 (the public check's)
    N, D, DFF, V = n["N"], n["D"], n["dff"], n["V"]
    F = 2 * D * DFF + DFF + D  # the FFN
    layers = N * ((4 * (D * D + D) + F + 4 * D) + (8 * (D * D + D) + F + 6 * D))  # (tests build the model)
    return n, layers, 3 * V * D + V, V * D


def _named(share, what, right, wrong, n):
    """Fail with the message of the first known mistake that `share` matches, or say which way it is off.

    A mistake is named only where it differs from the right share by more than the tolerance."""
    for value, message in wrong:
        if abs(share - value) < TOLERANCE and abs(value - right) > TOLERANCE:  # noqa: F821
            raise AssertionError(f"`{what}`: {message}")
    if abs(share - right) <= TOLERANCE:  # noqa: F821
        return
    if abs(share - right) < 0.01:
        raise AssertionError(
            f"`{what}` is {share:g}: close, so probably the right count, rounded too much (or with a small "
            "term missing). Let Python compute the fraction: the check allows 1e-4."
        )
    side = "too large" if share > right else "too small"
    raise AssertionError(
        f"`{what}` is {share:.4f}: that is {side}. Count the layers at N = {n['N']}, D = {n['D']} and d_ff = "
        f"{n['dff']} with the closed form of the chapter, then the vocabulary-sized components, and divide by "
        "the total."
    )


def _common(n, layers, vocabulary):
    """(wrong share, message) for the mistakes that either share can make."""
    scale = (n["D"] / BASE_D) ** 2 * n["N"] / 6  # noqa: F821
    return [
        (1 - _fraction(layers, vocabulary),  # noqa: F821
         "that is the share of the layers: give the share of the vocabulary-sized components."),
        (_fraction(BASE_LAYERS * scale, vocabulary),  # noqa: F821
         "you scaled the base model's layers by (D / 512)^2 (and N / 6). The weight matrices shrink that "
         "way, but the biases and the layer norms, which grow like D, do not: count the layers at your D "
         "themselves."),
    ]


@test_case(points=1, hidden=True)
def hidden_untied_share(untied_share, STUDENT_ID, share_numbers):
    share = _share(untied_share, "untied_share")  # noqa: F821
    n, layers, untied_vocabulary, _ = _counts(STUDENT_ID, share_numbers)
    V, D = n["V"], n["D"]
    wrong = _common(n, layers, untied_vocabulary) + [
        (_fraction(layers, 2 * V * D),  # noqa: F821
         "you counted the two embeddings only: untied, the output layer is a third vocabulary-sized "
         "component (a D x V matrix and a bias)."),
        (_fraction(layers, 3 * V * D),  # noqa: F821
         "the output layer has a bias of V numbers too, beside its D x V matrix."),
    ]
    right = _fraction(layers, untied_vocabulary)  # noqa: F821
    _named(share, "untied_share", right, wrong, n)


@test_case(points=1, hidden=True)
def hidden_tied_share(tied_share, STUDENT_ID, share_numbers):
    share = _share(tied_share, "tied_share")  # noqa: F821
    n, layers, untied_vocabulary, tied_vocabulary = _counts(STUDENT_ID, share_numbers)
    wrong = _common(n, layers, tied_vocabulary) + [
        (tied_vocabulary / (layers + untied_vocabulary),
         "divide by the TIED model's total: tying removes parameters from the total too."),
    ]
    right = _fraction(layers, tied_vocabulary)  # noqa: F821
    _named(share, "tied_share", right, wrong, n)

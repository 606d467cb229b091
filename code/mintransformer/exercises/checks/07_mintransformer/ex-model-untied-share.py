"""Exercise: the share of the base model's parameters in vocabulary-sized components."""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered, to_numpy

OK_FORMAT = False
name = "ex-model-untied-share"
points = 2

V, D = 37_000, 512
LAYERS = 44_138_496  # the base model without its embeddings (the chapter's table)
UNTIED_VOCAB, TIED_VOCAB = 3 * V * D + V, V * D


def _share(value, what):
    answered(value, what)
    share = to_numpy(value, what)
    if share.shape != ():
        raise AssertionError(f"`{what}` must be one number, a fraction between 0 and 1.")
    share = float(share)
    if 1 < share <= 100:
        raise AssertionError(f"`{what}` is {share:g}: give a fraction between 0 and 1, not a percentage.")
    return share


def _too_rounded(share, right, what):
    if abs(share - right) < 0.01:
        raise AssertionError(
            f"`{what}` is {share:g}: close, so probably the right formula, rounded too much. Give at least "
            "3 decimals (the check allows 0.002), or let Python compute the fraction."
        )


@test_case(points=1)
def untied(untied_share):
    share = _share(untied_share, "untied_share")
    right = UNTIED_VOCAB / (LAYERS + UNTIED_VOCAB)
    if abs(share - 2 * V * D / (LAYERS + 2 * V * D)) < 2e-3:
        raise AssertionError(
            "You counted the two embeddings only: untied, the output layer is a third vocabulary-sized "
            "component (a D x V matrix and a bias of V)."
        )
    if abs(share - (1 - right)) < 2e-3:
        raise AssertionError("That is the share of the layers: give the share of the three vocabulary-sized components.")
    if abs(share - right) > 2e-3:
        _too_rounded(share, right, "untied_share")
        raise AssertionError(
            f"untied_share is {share:.4f}. Untied: (2VD + DV + V) / (layers + 2VD + DV + V), with V = 37,000, "
            "D = 512 and the layers' 44,138,496 parameters."
        )


@test_case(points=1)
def tied(tied_share):
    share = _share(tied_share, "tied_share")
    right = TIED_VOCAB / (LAYERS + TIED_VOCAB)
    if abs(share - TIED_VOCAB / (LAYERS + UNTIED_VOCAB)) < 2e-3:
        raise AssertionError("Divide by the TIED model's total: tying removes parameters from the total too.")
    if abs(share - (1 - right)) < 2e-3:
        raise AssertionError("That is the share of the layers: give the share of the one tied matrix E.")
    if abs(share - right) > 2e-3:
        _too_rounded(share, right, "tied_share")
        raise AssertionError(
            f"tied_share is {share:.4f}. Tied, the one matrix E (V x D) is the only vocabulary-sized component."
        )

"""Exercise: the share of a smaller model's parameters in vocabulary-sized components.

The model's sizes are the student's own (mt.exercises.parameters, drawn from STUDENT_ID): N = 6,
D = 256, d_ff = 1024, V = 37,000 in the book. The public cases check the form of the two shares and
name the known mistakes that show without the model's count (the base model's shares, which the
chapter prints; an untied share that is not the larger); the shares themselves are compared by
hidden cases, when the notebook is graded.
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers, to_numpy

OK_FORMAT = False
name = "ex-model-untied-share"
points = 2

BASE_LAYERS, BASE_D, BASE_V = 44_138_496, 512, 37_000  # the base model, whose shares the chapter prints
TOLERANCE = 1e-4


def _share(value, what):
    answered(value, what)
    share = to_numpy(value, what)
    if share.shape != ():
        raise AssertionError(f"`{what}` must be one number, a fraction between 0 and 1.")
    share = float(share)
    if 1 < share <= 100:
        raise AssertionError(f"`{what}` is {share:g}: give a fraction between 0 and 1, not a percentage.")
    if not 0 < share < 1:
        raise AssertionError(f"`{what}` is {share:g}: a share of the parameters is a fraction between 0 and 1.")
    return share


def _fraction(layers, vocabulary):
    return vocabulary / (layers + vocabulary)


def _not_the_base_models(share, what, base_vocabulary, n):
    if abs(share - _fraction(BASE_LAYERS, base_vocabulary)) < TOLERANCE:
        raise AssertionError(
            f"`{what}`: that is the base model's share (D = 512). This model has N = {n['N']}, D = {n['D']} and "
            f"d_ff = {n['dff']}: count its layers and its embeddings at that size.")


@test_case(points=1)
def untied(untied_share, STUDENT_ID, share_numbers):
    n = student_numbers(name, STUDENT_ID, share_numbers)
    _not_the_base_models(_share(untied_share, "untied_share"), "untied_share", 3 * BASE_V * BASE_D + BASE_V, n)


@test_case(points=1)
def tied(tied_share, untied_share, STUDENT_ID, share_numbers):
    n = student_numbers(name, STUDENT_ID, share_numbers)
    share = _share(tied_share, "tied_share")
    _not_the_base_models(share, "tied_share", BASE_V * BASE_D, n)
    try:
        untied_share = float(to_numpy(untied_share, "untied_share"))
    except Exception:  # (the untied case says what is wrong with it)
        return
    if share >= untied_share:
        raise AssertionError(
            "`tied_share` is not smaller than `untied_share`: untied, the model has three vocabulary-sized "
            "components instead of one, on the same layers.")

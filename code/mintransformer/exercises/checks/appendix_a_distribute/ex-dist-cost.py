"""Exercise: the operations of a whole training run, from the model's shape (the chapter's equation)."""

from otter.test_files import test_case

from mintransformer import distribute
from mintransformer.exercises.checking import call, refusing

OK_FORMAT = False
name = "ex-dist-cost"
points = 2


def reference(num_layers, d_model, dff, vocab_size, steps, tokens, length):
    return steps * distribute.training_flops(num_layers, d_model, dff, vocab_size, tokens, tokens, length, length)


RULE = ("Write the count from the equation yourself: training_cost must not call mt.distribute.training_flops or "
        "mt.distribute.forward_flops, which compute it for you.")


def _check(training_cost, config, what):
    expected = reference(*config)
    with refusing([distribute.training_flops, distribute.forward_flops], training_cost, RULE):
        got = float(call(training_cost, "training_cost", *config))
    if abs(got - expected) <= 1e-6 * expected:
        return
    n, d, dff, v, steps, tokens, length = config
    forward = expected / 3
    hints = [
        (forward, "that is one forward pass per step: the backward pass costs two more (factor 3)"),
        (expected - 3 * steps * tokens * n * 4 * d * d, "the cross-attention's keys and values (4 d^2 per source "
                                                        "token, in every decoder layer) are missing"),
        (expected - 3 * steps * tokens * 2 * d * v, "the output layer (2 d V per target token) is missing"),
        (expected - 3 * steps * tokens * n * 3 * 4 * length * d,
         "the attention scores and weighted sums (4 L d per token and attention layer) are missing"),
    ]
    for wrong, hint in hints:
        if abs(got - wrong) <= 1e-6 * expected:
            raise AssertionError(f"training_cost({what}) = {got:.4g} is too small: {hint}.")
    direction = "too small" if got < expected else "too large"
    raise AssertionError(f"training_cost({what}) = {got:.4g} is {direction} for the chapter's equation: check each "
                         "term per token and layer, the output layer, and the factor 3 for the backward pass.")


@test_case(points=1)
def the_base_model(training_cost):
    _check(training_cost, (6, 512, 2048, 37_000, 100_000, 25_000, 25), "the base model")


@test_case(points=1)
def the_big_model_and_a_small_one(training_cost):
    _check(training_cost, (6, 1024, 4096, 37_000, 300_000, 25_000, 25), "the big model")
    _check(training_cost, (2, 64, 256, 29, 3_000, 640, 10), "a small model")

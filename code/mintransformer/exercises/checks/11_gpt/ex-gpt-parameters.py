"""Exercise: the parameter count of a GPT from its configuration (the chapter's equation, tied or not)."""

from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-gpt-parameters"
points = 3


def reference(num_layers, d_model, dff, vocab_size, max_length, tied=True):
    d = d_model
    layers = num_layers * (4 * d * d + 4 * d + 2 * d * dff + dff + d + 4 * d)
    output = 0 if tied else d * vocab_size + vocab_size
    return vocab_size * d + max_length * d + layers + 2 * d + output


HINTS = [
    (lambda c: reference(*c) - c[4] * c[1], "the position embedding, max_length x d_model, is missing"),
    (lambda c: reference(*c) - 2 * c[1], "the final layer norm (2 d_model) is missing"),
    (lambda c: reference(*c) - c[0] * (4 * c[1] + c[2] + c[1]),
     "the biases are missing: 4 d_model in attention, dff + d_model in the feed-forward network"),
    (lambda c: reference(*c) - c[0] * 4 * c[1], "the two layer norms of each layer (4 d_model) are missing"),
]


def _check(gpt_parameters, config, tied, expected, what):
    got = call(gpt_parameters, "gpt_parameters", *config, tied=tied)
    if int(got) == expected:
        return
    for wrong, hint in HINTS:
        if tied and int(got) == wrong(config):
            raise AssertionError(f"gpt_parameters({what}) is {int(got):,}, not {expected:,}: {hint}.")
    if not tied and int(got) == reference(*config, tied=True):
        raise AssertionError(f"gpt_parameters({what}, tied=False) ignores tied: an untied output layer adds "
                             "d_model x vocab_size weights and vocab_size biases.")
    raise AssertionError(f"gpt_parameters({what}) is {int(got):,}, not {expected:,}. Count the embeddings, "
                         "N layers of attention, feed-forward and two norms, and the final norm.")


@test_case(points=1)
def small_models_against_keras(gpt_parameters):
    for config, tied in [((2, 16, 40, 11, 9), True), ((1, 8, 24, 7, 5), False), ((3, 12, 12, 30, 20), True)]:
        model = mt.MinGPT(config[0], config[1], 2, config[2], config[3], config[4], share_embeddings=tied)
        model.build((None, None))
        _check(gpt_parameters, config, tied, model.count_params(), f"{config}")


@test_case(points=1)
def gpt2_small(gpt_parameters):
    _check(gpt_parameters, (12, 768, 3072, 50257, 1024), True, 124_439_808, "GPT-2 small")


@test_case(points=1)
def gpt2_larger(gpt_parameters):
    for what, config in [("GPT-2 medium", (24, 1024, 4096, 50257, 1024)),
                         ("GPT-2 large", (36, 1280, 5120, 50257, 1024)),
                         ("GPT-2 XL", (48, 1600, 6400, 50257, 1024))]:
        _check(gpt_parameters, config, True, reference(*config), what)

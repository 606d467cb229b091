"""Exercise: greedy generation with the key/value cache, written by hand (a prefill, then one step a token)."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, refusing
from mintransformer.recipes import addition

OK_FORMAT = False
name = "ex-gpt-generate-by-hand"
points = 3


RULE = ("greedy_by_hand calls one of the package's generation loops (mt.greedy_generate, mt.decode_tokens, ...): "
        "write the loop yourself, with model.start_cache and model.decode_step, as the exercise asks.")
LOOPS = [mt.greedy_generate, mt.sample_generate, mt.decode_tokens, mt.greedy_tokens, mt.greedy_decode,
         mt.beam_search, mt.beam_tokens, mt.sample_decode]


def _cache_only(model):
    """The model, with its full pass (``model(tokens)``) refused: the exercise asks for the cache.

    The model is held in a closure, not in an attribute that the student's code could call instead.
    """
    class CacheOnly:
        __slots__ = ()

        def __getattr__(self, attribute):
            return getattr(model, attribute)

        def __call__(self, *args, **kwargs):
            raise AssertionError("greedy_by_hand called the model on the whole text (model(tokens)). The "
                                 "exercise asks for the cache: model.start_cache, then model.decode_step, one "
                                 "call for the prompt and one per new token.")

    return CacheOnly()


def _check(greedy_by_hand, model, prompt, steps, what):
    with refusing(LOOPS, greedy_by_hand, RULE):
        got = call(greedy_by_hand, "greedy_by_hand", _cache_only(model), list(prompt), steps)
    got = [int(t) for t in np.asarray(got).reshape(-1)]
    expected = mt.greedy_generate(model, [prompt], steps)[0].tolist()
    if len(got) != steps:
        raise AssertionError(f"greedy_by_hand({what}) returned {len(got)} tokens; it must return the "
                             f"{steps} new tokens only, not the prompt.")
    if got != expected:
        first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        hint = ("Token 0 is already wrong: it is the argmax of the logits that decode_step returns for the "
                "prompt's LAST token, at position len(prompt) - 1." if first == 0 else
                "Each new token goes in at the next position: the prompt fills 0 .. P - 1, and new token i "
                "(counting from 0) is fed back at position P + i.")
        if 0 in got:
            hint += " Never pick <pad> (id 0): set its logit to -inf before the argmax, as the package does."
        raise AssertionError(f"greedy_by_hand({what}) gives {got}, mt.greedy_generate gives {expected}: they "
                             f"differ first at new token {first}. {hint}")


@test_case(points=1)
def a_sum(greedy_by_hand):
    model, tokenizer = addition.load_pretrained()
    prompt = tokenizer.encode("47+38=")
    _check(greedy_by_hand, model, prompt, 3, '"47+38=", 3 tokens')


@test_case(points=1)
def a_one_token_prompt(greedy_by_hand):
    model, tokenizer = addition.load_pretrained()
    _check(greedy_by_hand, model, tokenizer.encode("9"), 8, '"9", 8 tokens')


@test_case(points=1)
def an_untrained_model(greedy_by_hand):
    import keras

    keras.utils.set_random_seed(11)
    model = mt.MinGPT(2, 32, 4, 64, 17, 24, dropout=0.0)
    _check(greedy_by_hand, model, [5, 9, 3, 3, 12], 12, "an untrained model, 12 tokens")

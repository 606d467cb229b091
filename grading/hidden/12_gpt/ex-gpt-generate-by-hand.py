"""Hidden cases of ex-gpt-generate-by-hand: a longer text on another model, and a single new token.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
"""

from otter.test_files import test_case

import mintransformer as mt
from mintransformer.recipes import addition


@test_case(points=1, hidden=True)
def hidden_a_longer_text_and_one_new_token(greedy_by_hand):
    import keras

    keras.utils.set_random_seed(23)
    model = mt.MinGPT(3, 24, 2, 48, 9, 48, dropout=0.0)
    prompt = [3, 8, 1, 1, 5, 7, 2, 6, 4, 8, 3]
    _check(greedy_by_hand, model, prompt, 25, "another untrained model, an 11-token prompt, 25 tokens")  # noqa: F821
    model, tokenizer = addition.load_pretrained()
    _check(greedy_by_hand, model, tokenizer.encode("83+19="), 1, '"83+19=", 1 token')  # noqa: F821

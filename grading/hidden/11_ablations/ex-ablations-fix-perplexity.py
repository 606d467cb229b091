"""Hidden cases of ex-ablations-fix-perplexity: other pairs, batches of other sizes, another untrained model.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _date_model) are in scope.
"""

import keras
from otter.test_files import test_case

from mintransformer.model import MinTransformer
from mintransformer.recipes import ablations


@test_case(points=1, hidden=True)
def hidden_other_pairs_and_another_model(fixed_perplexity):
    model, tokenizer = _date_model()  # noqa: F821 (the public check's)
    _, _, test, _ = ablations.task_splits("dates")
    _check(fixed_perplexity, model, tokenizer, test[1000:1037], "37 other test dates")  # noqa: F821
    tokenizer, _, test, _ = ablations.task_splits("reversal")
    keras.utils.set_random_seed(7)
    model = MinTransformer(2, 24, 3, 48, tokenizer.vocab_size, tokenizer.vocab_size, 32, dropout=0.0)
    _check(fixed_perplexity, model, tokenizer, test[100:163], "63 reversal strings, another untrained model")  # noqa: F821

"""Hidden cases of ex-inference-greedy: a model whose pad_id is not 0, five sources, and a max_length that
cuts every row before its end.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _variant, _date_model)
are in scope. The public models all pad with id 0.
"""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer import data


@test_case(points=1, hidden=True)
def hidden_another_pad_id_and_lengths(my_greedy_decode):
    keras.utils.set_random_seed(37)
    model = mt.MinTransformer(num_layers=2, d_model=24, num_heads=3, dff=48, input_vocab_size=9, target_vocab_size=9,
                              max_length=16, dropout=0.0, pad_id=4)
    source = np.array([[5, 6, 7, 8, 4, 4], [1, 2, 3, 4, 4, 4], [8, 8, 8, 8, 8, 8], [0, 1, 4, 4, 4, 4],
                       [7, 3, 2, 1, 0, 5]], "int32")  # rows end at steps 0, 2, 1 and never
    model((source, source[:, :2]))
    expected = _variant(model, source, 6, 2, 9)  # noqa: F821 (the public check's)
    _check(my_greedy_decode, model, source, 6, 2, 9, "An untrained model whose pad_id is 4, start_id=6, "  # noqa: F821
           "end_id=2", variants=("first", "ban", "banned", "row"), expected=expected)
    model, tokenizer = _date_model()  # noqa: F821
    source = data.pad([tokenizer.encode("3 Nov 2011")])
    _check(my_greedy_decode, model, source, tokenizer.start_id, tokenizer.end_id, 3,  # noqa: F821
           "The date model on one date, max_length=3")

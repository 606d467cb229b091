"""Exercise: the start token given the padding id, predicted by hand and checked on a model."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, close, like, to_numpy

OK_FORMAT = False
name = "ex-model-start-token"
points = 2

TARGET = np.array([[0, 4, 6, 2]])  # the start token is 0, the padding id


@test_case(points=1)
def the_mask(start_mask_by_hand):
    answered(start_mask_by_hand, "start_mask_by_hand")
    got = to_numpy(start_mask_by_hand, "start_mask_by_hand")
    expected = to_numpy(mt.decoder_self_mask(TARGET), "")[0, 0]  # (T, T)
    causal = np.tril(np.ones((4, 4)))
    if like(got, causal, atol=0):
        raise AssertionError(
            "That is the look-ahead mask alone. The mask is look-ahead AND target padding, and the start "
            "token 0 is the padding id: which column does the padding mask block?"
        )
    if like(got, np.tile([0, 1, 1, 1], (4, 1)), atol=0):
        raise AssertionError(
            "That is the padding mask alone. The decoder's self-attention mask is look-ahead AND padding: "
            "query t may not see the keys after t either."
        )
    row_blocked = causal.copy()
    row_blocked[0] = 0  # query 0 blocked instead of key 0
    if like(got, row_blocked, atol=0):
        raise AssertionError(
            "You block row 0, query 0's row, and let the other queries see key 0. The padding mask blocks "
            "a KEY: the start token 0 is hidden from every query, in its column."
        )
    if like(got, expected.T, atol=0) or like(got, causal.T, atol=0):
        raise AssertionError("Row t is query t and column s is key s: query t may see keys s <= t.")
    close(got, expected, "start_mask_by_hand (rows: queries, columns: keys, 1 = may attend)", atol=0,
          hint="The mask is look-ahead AND padding. Which column does the padding mask block?")


@test_case(points=1)
def the_weights_of_query_0(query_0_weights):
    answered(query_0_weights, "query_0_weights")
    got = to_numpy(query_0_weights, "query_0_weights")
    # Any weights will do: query 0 has no key, whatever the model. (No keras.utils.set_random_seed:
    # the check runs in the student's kernel, whose random generators it would reset.)
    model = mt.MinTransformer(1, 16, 2, 32, 20, 20, max_length=8, share_embeddings=True)
    weights = model.attention_scores(np.array([[5, 8, 3]]), TARGET)["decoder/layer_0/self_attention"]
    expected = weights[0, 0, 0]  # head 0, query 0: (keys,); the same in every head
    if got.shape != (4,):
        raise AssertionError(f"query_0_weights has shape {got.shape}: give query 0's 4 weights over the keys.")
    if np.any(np.isnan(got)):
        raise AssertionError(
            "Your weights hold a NaN. Query 0 has no key it may attend to: what does the package's attention "
            "return for such a row? (Chapter 2: a row with nothing to attend to.)"
        )
    if like(got, [1, 0, 0, 0], atol=1e-6):
        raise AssertionError(
            "Query 0 may see only key 0, but key 0 holds the padding id: it is blocked too. "
            "What is left for query 0 to attend to?"
        )
    if like(got, [0.25] * 4, atol=1e-6):
        raise AssertionError(
            "Uniform weights would let query 0 read the padding and the future, the keys its mask blocks. "
            "What does the package's attention return for a row in which every key is blocked? (Chapter 2: a "
            "row with nothing to attend to.)"
        )
    close(got, expected, "query_0_weights", atol=1e-6, hint="Which keys may query 0 see?")

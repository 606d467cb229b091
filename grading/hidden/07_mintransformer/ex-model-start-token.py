"""Hidden cases of ex-model-start-token: the mask and the weights themselves, for the student's target.

Merged after the public check (mt.exercises.merged_source), so its helpers (_target, _mask, _weights)
are in scope.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import close, to_numpy


@test_case(points=1, hidden=True)
def hidden_the_mask(start_mask_by_hand, STUDENT_ID, start_numbers):
    target = np.array([_target(STUDENT_ID, start_numbers)])  # noqa: F821 (the public check's); the start token is 0
    got = _mask(start_mask_by_hand, target[0])  # noqa: F821
    expected = to_numpy(mt.decoder_self_mask(target), "")[0, 0]  # (T, T)
    close(got, expected, "start_mask_by_hand (rows: queries, columns: keys, 1 = may attend)", atol=0,
          hint="The mask is look-ahead AND padding. Which columns does the padding mask block?")


@test_case(points=1, hidden=True)
def hidden_the_weights_of_query_0(query_0_weights, STUDENT_ID, start_numbers):
    target = np.array([_target(STUDENT_ID, start_numbers)])  # noqa: F821
    got = _weights(query_0_weights, target[0])  # noqa: F821
    # Any weights will do: query 0 has no key, whatever the model. (No keras.utils.set_random_seed:
    # the check runs in the student's kernel, whose random generators it would reset.)
    model = mt.MinTransformer(1, 16, 2, 32, 20, 20, max_length=8, share_embeddings=True)
    weights = model.attention_scores(np.array([[5, 8, 3]]), target)["decoder/layer_0/self_attention"]
    expected = weights[0, 0, 0]  # head 0, query 0: (keys,); the same in every head
    close(got, expected, "query_0_weights", atol=1e-6, hint="Which keys may query 0 see?")

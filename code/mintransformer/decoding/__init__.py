"""Decoding a trained model: greedy search, sampling and beam search, each one compiled loop.

Each decoder runs its whole loop inside one TensorFlow graph (``tf.while_loop``): no Python
between steps, no copy of the logits to NumPy, and the loop stops as soon as every sequence is
done. The modules, in reading order:

- ``loop``: ``decode_tokens``, one token per step, greedy or sampled (chapters 9 and 12);
- ``beam``: ``beam_tokens``, beam search with alive and finished hypotheses, and ``length_penalty``;
- ``steps``: where a step's logits come from: with the key/value cache (the default), the
  encoder output computed once and the decoder re-run on the prefix (``encode_once``), or the
  whole model re-run on the prefix (``use_cache=False``); all three give the same tokens;
- ``sampling``: temperature, top-k and top-p, drawn reproducibly from a seed;
- ``checks``: clear errors for lengths past the model's positions, in every mode;
- ``run``: ``greedy_decode``, ``sample_decode``, ``beam_search``, ``greedy_generate`` and
  ``sample_generate``, which check their arguments in Python, compile a loop once per model,
  setting and input length, and return NumPy arrays.

``decode_tokens`` and ``beam_tokens`` are tensors in, tensors out, to call inside any
``tf.function`` (chapter 9 exports one in a SavedModel).
"""

from . import beam, checks, loop, run, sampling, steps
from .beam import beam_tokens, length_penalty
from .checks import check_lengths, fixed_length_source
from .loop import decode_tokens
from .run import beam_search, greedy_decode, greedy_generate, sample_decode, sample_generate

greedy_tokens = decode_tokens  # its former name, which it outgrew when it learnt to sample (chapter 12 uses it)
_prompt_stepper = steps.prompt_stepper  # chapter 12 shows it under this name

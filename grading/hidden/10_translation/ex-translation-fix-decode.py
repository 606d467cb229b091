"""Hidden cases of ex-translation-fix-decode: another tokenizer, other texts, specials inside the ids.

Merged after the public check (mt.exercises.merged_source), so its helpers (_decoded, _diagnose) are in scope.
"""

import sys
import types

import numpy as np
from otter.test_files import test_case

from mintransformer.translation import bpe

OTHER_TRAINING = ["Bienaventurados los pobres en espíritu.", "Blessed are the poor in spirit.",
                  "Al principio era el Verbo.", "In the beginning was the Word.", "Amén. Amen."]
OTHER_TEXTS = ["Blessed are the meek", "\tEl Verbo\n\nera\r\n", "Ωμέγα, 北京, ß and 🙂🙂", "a", "   "]


def _other_tokenizer():
    """A tokenizer of 300 ids, learned on other texts, once per Python process."""
    store = sys.modules.setdefault("_mintransformer_checks_10_translation", types.ModuleType("store"))
    if not hasattr(store, "other_tokenizer"):
        store.other_tokenizer = bpe.learn_bpe(OTHER_TRAINING, 300)
    return store.other_tokenizer


@test_case(points=1, hidden=True)
def hidden_another_tokenizer(fixed_decode):
    tokenizer = _other_tokenizer()
    for text in OTHER_TEXTS:
        ids = tokenizer.encode(text)
        got = _decoded(fixed_decode, tokenizer, tuple(ids))  # noqa: F821 (the public check's)
        if got != text:
            _diagnose(got, text, tokenizer, ids, f"Another tokenizer, the text {text!r}")  # noqa: F821
    # <start> and <pad> inside the ids are skipped; what follows the first <end> is dropped.
    text = OTHER_TEXTS[2]
    pieces = tokenizer.encode(text)
    middle = len(pieces) // 2
    ids = ([tokenizer.pad_id, tokenizer.start_id] + pieces[:middle] + [tokenizer.pad_id, tokenizer.start_id]
           + pieces[middle:] + [tokenizer.end_id, tokenizer.end_id] + pieces)
    got = _decoded(fixed_decode, tokenizer, np.array(ids, dtype="int64"))  # noqa: F821
    if got != text:
        raise AssertionError(f"Another tokenizer, the ids of {text!r} with <pad> and <start> among them and more "
                             "after <end>: skip every <pad> and <start>, stop at the first <end>.")

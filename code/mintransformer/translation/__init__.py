"""Translating real text (chapter 10): a parallel corpus, byte-pair encoding, batches by length, BLEU.

- ``corpus``: the shipped Spanish-English Bible verses, split by book, and any tab-separated file;
- ``bpe``: byte-pair encoding learned from scratch (``learn_bpe``, ``BPE``);
- ``batching``: batches of about the same number of tokens, grouped by length;
- ``evaluation``: translating a list of sentences, BLEU and chrF with sacreBLEU;
- ``recipe``: the shipped model's settings, ``load_pretrained_translation_model`` and
  ``load_translation_evaluation``;
- ``analysis``: the chapter's measurements (segmentations compared, BLEU by length, rare words).
"""

from . import analysis, batching, bpe, corpus, evaluation, recipe
from .batching import length_batches, padding_fraction, random_batches, token_dataset
from .bpe import BPE, PATTERN, learn_bpe, merge_pair, pre_tokenize
from .corpus import (DEV_BOOKS, TEST_BOOKS, Verse, bible_verses, books, leak_bleu, load_pairs,
                     nearest_training_translation, split_by_book)
from .evaluation import bleu, chrf, translate
from .recipe import (TRANSLATION, build_translation_model, encode_split, load_pretrained_translation_model,
                     load_translation_evaluation)

__all__ = ["analysis", "batching", "bpe", "corpus", "evaluation", "recipe", "length_batches", "padding_fraction",
           "random_batches", "token_dataset", "BPE", "learn_bpe", "PATTERN", "merge_pair", "pre_tokenize", "DEV_BOOKS", "TEST_BOOKS", "Verse",
           "bible_verses", "books", "leak_bleu", "load_pairs", "nearest_training_translation", "split_by_book",
           "bleu", "chrf", "translate", "TRANSLATION", "build_translation_model", "encode_split",
           "load_pretrained_translation_model", "load_translation_evaluation"]

r"""Byte-pair encoding (Sennrich, Haddow and Birch, 2016), written to be read, and fast enough to run.

Learning starts from characters and repeatedly merges the most frequent adjacent pair of tokens
into a new token, until the vocabulary has the size asked for. Encoding splits a text into
pre-tokens and applies the learned merges to each, in the order they were learned.

Choices, each made so that ``decode(encode(text)) == text`` for every string:

- **Pre-tokenization** by the regular expression ``PATTERN``, GPT-2's idea without its English
  contractions: a word keeps its leading space (``" house"``), numbers are split into single
  digits, runs of other symbols are one pre-token, and whitespace that does not precede a word is
  kept as it is. Every character of the text lands in exactly one pre-token, so joining them gives
  the text back. Merges never cross a pre-token's edge: no token holds the end of one word and the
  start of the next. No normalization: the text is encoded as it is (the corpus is in Unicode NFC).
  The pattern names Unicode categories (``\p{L}`` letters, ``\p{M}`` combining marks, ``\p{N}``
  numbers), which the ``regex`` module reads and Python's ``re`` does not: with ``re``'s ``\w``,
  a combining accent (NFD text, Hindi's vowel signs) would split its word in two. Oniguruma, the
  engine of Hugging Face tokenizers, reads the same pattern the same way for every character.
- **Ids**: 0, 1, 2 are ``<pad>``, ``<start>``, ``<end>``, as in ``mintransformer.data``; 3 to 258
  are the 256 byte tokens ``<0x00>`` ... ``<0xFF>``; then the characters seen in training, in
  code-point order; then one id per new token, in the order the merges made them.
- **Characters never seen in training** are written as their UTF-8 bytes (byte fallback, as
  sentencepiece and Hugging Face tokenizers do it), so nothing ever becomes ``<unk>``.
- **Tie-break**: of the pairs with the highest count, the one whose left token has the smallest
  id, then the one whose right token has: the rule of Hugging Face tokenizers' BpeTrainer, so that
  both learn the same merges from the same text.
"""

import collections
import heapq
import json

import numpy as np
import regex

from ..data import END, PAD, SPECIALS, START

# Letters and marks, with one leading space | one digit | a run of other symbols (punctuation,
# emoji, "_"), with one leading space | whitespace up to the space before a word | other whitespace.
PATTERN = r" ?[\p{L}\p{M}]+| ?\p{N}| ?[^\s\p{L}\p{M}\p{N}]+|\s+(?!\S)|\s+"
_PRE_TOKEN = regex.compile(PATTERN)

BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]
FIRST_CHARACTER_ID = len(SPECIALS) + len(BYTE_TOKENS)  # 259: the first id that is not reserved


def _check_text(text):
    """The string itself, or a clear error for anything that is not a string of Unicode characters."""
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {type(text).__name__}")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(f"not a Unicode character (a lone surrogate) at position {error.start}") from None
    return text


def pre_tokenize(text):
    """Split ``text`` into pre-tokens; ``"".join(pre_tokenize(text)) == text`` for every string.

    >>> pre_tokenize("In the  beginning, 12 days")
    ['In', ' the', ' ', ' beginning', ',', ' 1', '2', ' days']
    """
    return _PRE_TOKEN.findall(_check_text(text))


def count_pre_tokens(texts):
    """How often each pre-token occurs in ``texts`` (a list of strings): a ``collections.Counter``."""
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string (it would be read one character per text)")
    counts = collections.Counter()
    for text in texts:
        counts.update(pre_tokenize(text))
    return counts


def merge_pair(symbols, pair, new):
    """Replace each occurrence of ``pair`` in ``symbols``, scanning left to right, by ``new``.

    >>> merge_pair(["l", "o", "w", "e", "r"], ("l", "o"), "lo")
    ('lo', 'w', 'e', 'r')
    >>> merge_pair(["a", "a", "a"], ("a", "a"), "aa")
    ('aa', 'a')
    """
    left, right = pair
    merged, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
            merged.append(new)
            i += 2
        else:
            merged.append(symbols[i])
            i += 1
    return tuple(merged)


def _count_pairs(words, freqs):
    """Count of each adjacent pair over all words, and the index: pair -> the words that hold it."""
    counts, where = collections.Counter(), collections.defaultdict(set)
    for i, (word, freq) in enumerate(zip(words, freqs)):
        for pair in zip(word, word[1:]):
            counts[pair] += freq
            where[pair].add(i)
    return counts, where


def _best_pair(heap, counts):
    """Pop the pair with the highest count, ties to the smallest (left id, right id); None if none left.

    The heap holds (-count, left, right) entries; an entry whose count is no longer the pair's
    current count is stale (a fresher one was pushed when the count changed) and is dropped.
    """
    while heap:
        negative_count, left, right = heapq.heappop(heap)
        if -negative_count == counts.get((left, right), 0) > 0:
            return left, right
    return None


def _apply_merge(pair, new, words, freqs, counts, where):
    """Merge ``pair`` into ``new`` in the words that hold it; update counts and index; return changed pairs.

    Only the words listed in ``where[pair]`` are touched: each one's pairs are counted out before the
    merge and in after it, so the counts stay exact without recounting the corpus.
    """
    delta = collections.Counter()
    for i in where.pop(pair):
        word = words[i]
        merged = merge_pair(word, pair, new)
        if len(merged) == len(word):  # the index still lists a word the pair has left: skip it
            continue
        for old in zip(word, word[1:]):
            delta[old] -= freqs[i]
        for fresh in zip(merged, merged[1:]):
            delta[fresh] += freqs[i]
            where[fresh].add(i)
        words[i] = merged
    changed = [p for p, d in delta.items() if d]
    for p in changed:
        counts[p] += delta[p]
    counts.pop(pair, None)
    return changed


def learn_bpe(texts, vocab_size):
    """Learn byte-pair merges from ``texts`` (a list of strings) until the vocabulary has ``vocab_size`` ids.

    Each step merges the adjacent pair with the highest count over all pre-tokens (a pre-token
    counts as often as it occurs); of pairs with equal counts, the one with the smallest
    (left id, right id), so the oldest tokens first and characters in code-point order.

    The vocabulary counts every id: the 3 special tokens, the 256 byte tokens, the characters of
    the texts and the merged tokens. It can end smaller than ``vocab_size`` if no pair is left to
    merge (every pre-token of the texts already one token).

    Returns:
        a ``BPE`` tokenizer.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an integer, got {type(vocab_size).__name__}")
    pre_token_counts = count_pre_tokens(texts)
    alphabet = sorted({c for word in pre_token_counts for c in word})
    tokenizer = BPE(alphabet, [])
    if vocab_size < tokenizer.vocab_size:
        raise ValueError(f"vocab_size={vocab_size} is smaller than the {tokenizer.vocab_size} ids the "
                         f"{len(SPECIALS)} special tokens, {len(BYTE_TOKENS)} byte tokens and the texts' "
                         f"{len(alphabet)} characters need")
    words = [tuple(tokenizer.token_to_id[c] for c in word) for word in pre_token_counts]
    freqs = list(pre_token_counts.values())
    counts, where = _count_pairs(words, freqs)
    heap = [(-count, left, right) for (left, right), count in counts.items()]
    heapq.heapify(heap)
    while tokenizer.vocab_size < vocab_size:
        pair = _best_pair(heap, counts)
        if pair is None:
            break
        new = tokenizer._add_merge(*pair)
        for changed in _apply_merge(pair, new, words, freqs, counts, where):
            if counts[changed] > 0:
                heapq.heappush(heap, (-counts[changed], *changed))
    return tokenizer


class BPE:
    """A byte-pair encoding tokenizer: text <-> ids, with pad/start/end at 0/1/2.

    Made by ``learn_bpe`` or ``BPE.load``; ``BPE(alphabet, merges)`` rebuilds one from its
    characters and its merges (pairs of token strings, in the order they were learned).
    """

    def __init__(self, alphabet, merges):
        self.pad_id, self.start_id, self.end_id = PAD, START, END
        self.id_to_token = SPECIALS + BYTE_TOKENS
        self._bytes = [b""] * len(SPECIALS) + [bytes([b]) for b in range(256)]  # what each id decodes to
        self.token_to_id = {}  # learned tokens only (characters and merges): their strings may look like specials
        self.alphabet = []
        self.merges = []
        self._ranks = {}  # (left id, right id) -> (rank of the merge, id of the merged token)
        self._cache = {}  # pre-token -> its ids
        for character in alphabet:
            self._add_character(character)
        for left, right in merges:
            for token in (left, right):
                if token not in self.token_to_id:
                    raise ValueError(f"merge {left!r} + {right!r}: {token!r} is not a token (yet)")
            self._add_merge(self.token_to_id[left], self.token_to_id[right])

    def _add_token(self, token):
        """The id of ``token``, a new one if it is not yet in the vocabulary."""
        if token not in self.token_to_id:
            self.token_to_id[token] = len(self.id_to_token)
            self.id_to_token.append(token)
            self._bytes.append(token.encode("utf-8"))
        return self.token_to_id[token]

    def _add_character(self, character):
        if not isinstance(character, str) or len(character) != 1 or character in self.token_to_id:
            raise ValueError(f"the alphabet must hold distinct single characters, got {character!r}")
        self.alphabet.append(character)
        self._add_token(character)

    def _add_merge(self, left, right):
        """Learn the merge of ids ``left`` and ``right``; return the merged token's id.

        Two merges can make the same string ("ab" + "c", "a" + "bc"): the second reuses its id.
        """
        new = self._add_token(self.id_to_token[left] + self.id_to_token[right])
        self._ranks[left, right] = len(self.merges), new
        self.merges.append((self.id_to_token[left], self.id_to_token[right]))
        self._cache.clear()
        return new

    @classmethod
    def learn(cls, texts, vocab_size):
        """``learn_bpe(texts, vocab_size)``: learn a tokenizer from a list of strings."""
        return learn_bpe(texts, vocab_size)

    @property
    def vocab_size(self):
        return len(self.id_to_token)

    def __repr__(self):
        return f"BPE(vocab_size={self.vocab_size}, characters={len(self.alphabet)}, merges={len(self.merges)})"

    # ---------------------------------------------------------------- encoding
    def _character_ids(self, pre_token):
        """One id per character; a character never seen in training becomes its UTF-8 byte tokens."""
        ids = []
        for character in pre_token:
            if character in self.token_to_id:
                ids.append(self.token_to_id[character])
            else:
                ids.extend(len(SPECIALS) + b for b in character.encode("utf-8"))
        return ids

    def _encode_pre_token(self, pre_token):
        """Apply the merges to one pre-token: always the adjacent pair learned earliest, until none is left."""
        ids = self._cache.get(pre_token)
        if ids is None:
            ids = self._character_ids(pre_token)
            while len(ids) > 1:
                ranked = [(self._ranks[p][0], p) for p in zip(ids, ids[1:]) if p in self._ranks]
                if not ranked:
                    break
                pair = min(ranked)[1]
                ids = merge_pair(ids, pair, self._ranks[pair][1])
            self._cache[pre_token] = ids = tuple(ids)
        return ids

    def encode(self, text, add_start=False, add_end=False):
        """String -> list of ids (with ``<start>`` and ``<end>`` around it if asked)."""
        ids = [START] if add_start else []
        for pre_token in pre_tokenize(text):
            ids.extend(self._encode_pre_token(pre_token))
        return ids + [END] if add_end else ids

    # ---------------------------------------------------------------- decoding
    def _check_ids(self, ids):
        """``ids`` (a list, NumPy array or eager tensor of integers, one dimension) as a list of Python ints."""
        if isinstance(ids, str):
            raise TypeError("decode takes ids, not a string")
        try:
            array = np.asarray(ids)
        except NotImplementedError:  # what NumPy meets inside tf.function: a tensor without a value
            raise TypeError("a tokenizer works on values, in Python: decode outside tf.function") from None
        if array.ndim != 1 or not (array.size == 0 or np.issubdtype(array.dtype, np.integer)):
            raise TypeError(f"ids must be one sequence of integers, got shape {array.shape} of {array.dtype}")
        bad = array[(array < 0) | (array >= self.vocab_size)]
        if bad.size:
            raise ValueError(f"id {bad[0]} is out of range: this vocabulary has ids 0 to {self.vocab_size - 1}")
        return array.tolist()

    def decode(self, ids):
        """Ids -> string: stops at the first ``<end>``, skips ``<pad>`` and ``<start>``.

        Byte tokens are joined before they are read as UTF-8, so a character encoded as bytes comes
        back whole; bytes that are no valid UTF-8 (a model can emit them) become U+FFFD.
        """
        pieces = []
        for i in self._check_ids(ids):
            if i == END:
                break
            pieces.append(self._bytes[i])
        return b"".join(pieces).decode("utf-8", errors="replace")

    def tokens(self, text_or_ids):
        """The tokens' strings (for display): of a text, as encoded, or of a sequence of ids."""
        ids = self.encode(text_or_ids) if isinstance(text_or_ids, str) else self._check_ids(text_or_ids)
        return [self.id_to_token[i] for i in ids]

    # ---------------------------------------------------------------- files
    def to_json(self):
        """Everything needed to rebuild the tokenizer, as a JSON-ready dict (``vocab`` is for readers and checks)."""
        return {"format": "mintransformer.translation.bpe", "version": 1, "pattern": PATTERN,
                "specials": SPECIALS, "byte_tokens": len(BYTE_TOKENS), "alphabet": self.alphabet,
                "merges": [list(pair) for pair in self.merges], "vocab": self.id_to_token}

    def save(self, path):
        """Write the tokenizer to ``path`` as JSON (UTF-8), one character, merge or token a line."""
        def dump(value):
            if isinstance(value, list):
                return "[\n" + ",\n".join(json.dumps(v, ensure_ascii=False) for v in value) + "\n]"
            return json.dumps(value)
        with open(path, "w", encoding="utf-8") as f:
            f.write("{\n" + ",\n".join(f"{json.dumps(k)}: {dump(v)}" for k, v in self.to_json().items()) + "\n}\n")

    @classmethod
    def from_json(cls, saved):
        """Rebuild a tokenizer from ``to_json()``'s dict; refuse one made with other conventions."""
        if saved.get("format") != "mintransformer.translation.bpe" or saved.get("version") != 1:
            raise ValueError("not a mintransformer BPE tokenizer (format and version 1 expected)")
        expected = {"pattern": PATTERN, "specials": SPECIALS, "byte_tokens": len(BYTE_TOKENS)}
        for key, value in expected.items():
            if saved.get(key) != value:
                raise ValueError(f"saved with another {key} ({saved.get(key)!r}); this version uses {value!r}")
        tokenizer = cls(saved["alphabet"], [tuple(pair) for pair in saved["merges"]])
        if saved.get("vocab") != tokenizer.id_to_token:
            raise ValueError("the saved vocab does not match the one its alphabet and merges make")
        return tokenizer

    @classmethod
    def load(cls, path):
        """Read a tokenizer written by ``save``."""
        if hasattr(path, "read_text"):  # a pathlib.Path, or a file inside the package (importlib.resources)
            return cls.from_json(json.loads(path.read_text(encoding="utf-8")))
        with open(path, encoding="utf-8") as f:
            return cls.from_json(json.load(f))

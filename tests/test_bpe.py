"""Byte-pair encoding (mintransformer.translation.bpe): exact round trips, the merge rule on a
textbook example, incremental counts against a full recount, agreement with Hugging Face
tokenizers, errors, files."""

import collections
import json
import lzma
import random
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from mintransformer import data
from mintransformer.translation import bpe

CORPUS = Path(bpe.__file__).resolve().parents[1] / "corpora" / "bible_es_en.tsv.xz"

# Characters a round trip must survive: accents (composed and combining), other scripts, emoji
# (astral, with a zero-width joiner and a skin tone), whitespace of every kind, controls,
# "_", the replacement character, and text that looks like our special and byte tokens.
AWKWARD = (list("aeiouAEIOU ñÑáéíóúüÁÉ¿¡.,;:!?'\"“”‘’—-()[]_0123456789") + ["\t", "\n", "\r", "  ", "\u00a0",
           "\u2028", "\x00", "\x1c", "\ufffd", "e\u0301", "ß", "ﬁ", "中文", "Ελληνικά", "עברית", "हिन्दी",
           "😀", "👩\u200d👩\u200d👧", "👍🏽", "²", "Ⅻ", "<pad>", "<end>", "<0x41>", "\U0010fffd"])


def random_text(rng, length):
    """A string of ``length`` pieces drawn from AWKWARD, or any Unicode character (no surrogate)."""
    pieces = []
    for _ in range(length):
        if rng.random() < 0.8:
            pieces.append(rng.choice(AWKWARD))
        else:
            code = rng.randrange(0x110000 - 0x800)
            pieces.append(chr(code + 0x800 if code >= 0xD800 else code))
    return "".join(pieces)


def synthetic_texts(count=3000, seed=0):
    """Sentences of made-up words with Zipf-like frequencies (many pair counts tie), accents,
    punctuation, digits, emoji and irregular whitespace."""
    rng = random.Random(seed)
    syllables = ["la", "de", "que", "el", "en", "ción", "ñu", "the", "ing", "er", "ó", "pé", "gü", "wh", "st",
                 "ka", "mi", "o", "a", "r", "s", "e\u0301", "_"]
    lexicon = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(500)]
    weights = [1 / (rank + 1) for rank in range(len(lexicon))]
    texts = []
    for _ in range(count):
        words = rng.choices(lexicon, weights, k=rng.randint(3, 15))
        pieces = []
        for word in words:
            word = word.capitalize() if rng.random() < 0.1 else word
            pieces.append(word + rng.choice(["", "", "", ",", ".", ";", "?", "”", "!", "😀"]))
            pieces.append(rng.choice([" "] * 20 + ["  ", "\t", "\n", " \n", " 12 ", " 1909: "]))
        texts.append("".join(pieces))
    return texts


def corpus_texts():
    """The Spanish and English sides of every verse of the shipped corpus."""
    lines = lzma.decompress(CORPUS.read_bytes()).decode("utf-8").splitlines()
    header = lines[0].split("\t")
    spanish, english = header.index("spanish"), header.index("english")
    rows = [line.split("\t") for line in lines[1:]]
    return [row[spanish] for row in rows] + [row[english] for row in rows]


@pytest.fixture(scope="module")
def synthetic():
    texts = synthetic_texts()
    return texts, bpe.learn_bpe(texts, 1500)


# ---------------------------------------------------------------- round trips
def test_pre_tokens_join_back_to_the_text():
    rng = random.Random(0)
    for _ in range(2000):
        text = random_text(rng, rng.randint(0, 30))
        assert "".join(bpe.pre_tokenize(text)) == text
    assert bpe.pre_tokenize("In the  beginning,\tGod 12") == ["In", " the", " ", " beginning", ",", "\t", "God",
                                                             " 1", "2"]
    assert bpe.pre_tokenize("cafe\u0301 día") == ["cafe\u0301", " día"]  # a combining accent stays in its word


def test_decode_of_encode_is_the_text_exactly(synthetic):
    texts, tokenizer = synthetic
    rng = random.Random(1)
    samples = texts[:300] + [random_text(rng, rng.randint(0, 40)) for _ in range(3000)] + ["", " ", "\n\n", "😀"]
    for text in samples:
        ids = tokenizer.encode(text)
        assert tokenizer.decode(ids) == text
        assert all(0 <= i < tokenizer.vocab_size for i in ids) and min(ids, default=bpe.END + 1) > bpe.END
        assert tokenizer.decode(tokenizer.encode(text, add_start=True, add_end=True) + [5, 6]) == text


def test_unseen_characters_fall_back_to_their_utf8_bytes(synthetic):
    _, tokenizer = synthetic
    assert "中" not in tokenizer.alphabet
    assert tokenizer.tokens("中") == ["<0xE4>", "<0xB8>", "<0xAD>"]
    assert tokenizer.decode(tokenizer.encode(" 中 la")) == " 中 la"
    assert tokenizer.decode([tokenizer.token_to_id["la"], 3 + 0xE4]) == "la\ufffd"  # a cut character


def test_special_ids_follow_the_package():
    assert (bpe.PAD, bpe.START, bpe.END) == (data.PAD, data.START, data.END) == (0, 1, 2)
    tokenizer = bpe.learn_bpe(["ab ab"], 300)
    assert tokenizer.id_to_token[:4] == ["<pad>", "<start>", "<end>", "<0x00>"]
    assert tokenizer.id_to_token[bpe.FIRST_CHARACTER_ID:] == [" ", "a", "b", "ab", " ab"]
    assert tokenizer.encode("ab", add_start=True, add_end=True) == [1, tokenizer.token_to_id["ab"], 2]
    assert tokenizer.decode([0, 1, 262, 2, 263]) == "ab"  # pad and start skipped, stops at end


# ---------------------------------------------------------------- the merge rule
def test_merge_pair_scans_left_to_right():
    assert bpe.merge_pair(list("lower"), ("l", "o"), "lo") == ("lo", "w", "e", "r")
    assert bpe.merge_pair(list("aaaa"), ("a", "a"), "aa") == ("aa", "aa")
    assert bpe.merge_pair(list("aaa"), ("a", "a"), "aa") == ("aa", "a")
    assert bpe.merge_pair([5, 6, 5, 6], (5, 6), 9) == (9, 9)


def test_textbook_example_merges_by_hand():
    # Sennrich et al.'s example (low x5, lower x2, newest x6, widest x3), with our pre-tokenization:
    # the space in front of each word marks its start, as "</w>" marks the end in the paper.
    # First pair counts: (e,s) 9, (s,t) 9, (w,e) 8, (" ",l) (l,o) (o,w) 7, (" ",n) (n,e) (e,w) 6, ...
    text = " low" * 5 + " lower" * 2 + " newest" * 6 + " widest" * 3
    by_hand = [
        ("e", "s"),  # 9, tied with (s,t) 9: left token e has the smaller id (characters by code point)
        ("es", "t"),  # 9 (newest 6 + widest 3)
        (" ", "l"),  # 7, tied with (l,o) and (o,w): " " is the smallest id
        ("o", "w"),  # 7, tied with (" l", o): the character o is older than the new token " l"
        (" l", "ow"),  # 7
        (" ", "n"),  # 6, tied with (n,e), (e,w), (w,est)
        ("e", "w"),  # 6, tied with (" n",e), (w,est): e is the oldest left token
        (" n", "ew"),  # 6, tied with (ew,est): " n" was made before "ew"
        (" new", "est"),  # 6
        (" ", "w"),  # 3, tied with (w,i), (i,d), (d,est); (" low",e) and (e,r) have 2
    ]
    tokenizer = bpe.learn_bpe([text], bpe.FIRST_CHARACTER_ID + len(set(text)) + len(by_hand))
    assert tokenizer.merges == by_hand
    assert tokenizer.tokens(" lowest newer") == [" low", "est", " new", "e", "r"]


def learn_by_recounting(texts, merges):
    """The definition, slowly: recount every pair of the corpus before each merge; return each
    merge's (pair as strings, its count, how many pairs had that count)."""
    words = {tuple(word): freq for word, freq in bpe.count_pre_tokens(texts).items()}
    order = {c: i for i, c in enumerate(sorted({c for word in words for c in word}))}
    steps = []
    for _ in range(merges):
        counts = collections.Counter()
        for word, freq in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += freq
        if not counts:
            break
        top = max(counts.values())
        tied = [pair for pair, count in counts.items() if count == top]
        pair = min(tied, key=lambda p: (order[p[0]], order[p[1]]))
        order["".join(pair)] = len(order)
        steps.append((pair, top, len(tied)))
        words = {bpe.merge_pair(word, pair, "".join(pair)): freq for word, freq in words.items()}
    return steps


def test_incremental_counts_match_a_full_recount():
    texts = synthetic_texts(count=150, seed=3)
    steps = learn_by_recounting(texts, 250)
    tokenizer = bpe.learn_bpe(texts, bpe.FIRST_CHARACTER_ID + len(set("".join(texts))) + len(steps))
    assert tokenizer.merges == [pair for pair, _, _ in steps]
    ties = sum(tied > 1 for _, _, tied in steps)
    assert ties > 100  # the tie-break decides most of these merges, so the test checks it too


def test_a_merge_that_makes_an_existing_string_reuses_its_id():
    tokenizer = bpe.BPE(["a", "b", "c"], [("a", "b"), ("ab", "c"), ("b", "c"), ("a", "bc")])
    assert tokenizer.vocab_size == bpe.FIRST_CHARACTER_ID + 3 + 3  # ab, abc, bc
    assert tokenizer.tokens("abc") == ["abc"] and tokenizer.tokens("xbc") == ["<0x78>", "bc"]


# ---------------------------------------------------------------- the reference: Hugging Face tokenizers
# The same pre-tokenization (our PATTERN, read by Oniguruma in HF's Split), no normalizer, the same
# special and byte tokens first (so the characters get the same ids), the same vocabulary size.
# HF's BpeTrainer takes the pair with the highest count and, among equal counts, the smallest
# (left id, right id) (tokenizers/src/models/bpe/trainer.rs, `impl Ord for Merge`: `other.pair.cmp(&self.pair)`;
# its alphabet is sorted by code point, `kept.sort_unstable_by_key(|k| *k.0 as u32)`). Ours
# breaks ties the same way, so ALL merges must agree, not only those up to the first tie, and
# then the encoded ids too: the token counts differ by 0%, not within a margin. Ties are the rule,
# not the exception: on the corpus, 6,308 of the 7,653 merges are chosen among pairs of equal count,
# the first at merge 131 (benchmarks/bpe.py counts them).
def hf_learn(texts, vocab_size):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    trained = Tokenizer(models.BPE(byte_fallback=True))
    trained.pre_tokenizer = pre_tokenizers.Split(Regex(bpe.PATTERN), behavior="isolated")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=bpe.SPECIALS + bpe.BYTE_TOKENS,
                                  show_progress=False)
    trained.train_from_iterator(texts, trainer)
    model = json.loads(trained.to_str())["model"]
    merges = [tuple(pair) for pair in model["merges"]]
    # Encode with the learned model alone: no added tokens, so "<pad>" in a text is plain text, as for us.
    tokenizer = Tokenizer(models.BPE(vocab=model["vocab"], merges=merges, byte_fallback=True))
    tokenizer.pre_tokenizer = trained.pre_tokenizer
    vocab = sorted(model["vocab"], key=model["vocab"].get)
    return tokenizer, merges, vocab


def assert_agrees_with_hugging_face(texts, vocab_size, probes=()):
    tokenizer = bpe.learn_bpe(texts, vocab_size)
    reference, merges, vocab = hf_learn(texts, vocab_size)
    split = reference.pre_tokenizer.pre_tokenize_str
    assert all([piece for piece, _ in split(text)] == bpe.pre_tokenize(text) for text in texts)
    assert merges == tokenizer.merges
    assert vocab == tokenizer.id_to_token and tokenizer.vocab_size == vocab_size
    for text in list(texts) + list(probes):
        assert reference.encode(text).ids == tokenizer.encode(text), text
    return tokenizer


def test_agrees_with_hugging_face_on_synthetic_text():
    pytest.importorskip("tokenizers")
    texts = synthetic_texts()
    rng = random.Random(2)
    probes = [random_text(rng, 30) for _ in range(300)]  # unseen characters: byte fallback on both sides
    tokenizer = assert_agrees_with_hugging_face(texts, 1500, probes)
    assert len(tokenizer.merges) == 1500 - bpe.FIRST_CHARACTER_ID - len(tokenizer.alphabet)


@pytest.mark.skipif(not CORPUS.exists(), reason="the corpus (scripts/make_parallel_corpus.py) is not built yet")
def test_agrees_with_hugging_face_on_the_bible_corpus():
    pytest.importorskip("tokenizers")
    assert_agrees_with_hugging_face(corpus_texts(), 8000)


def test_pattern_reads_the_same_in_oniguruma_for_every_assigned_character():
    # Python's regex module and Oniguruma know different Unicode versions, so characters that are
    # unassigned in Python's table are left out; every other one is tried in four contexts.
    tokenizers = pytest.importorskip("tokenizers")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(bpe.PATTERN), behavior="isolated").pre_tokenize_str
    assigned = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c)) != "Cn"
                and unicodedata.category(chr(c)) != "Co"]
    text = "".join(f"a{c}b1{c}. {c} x{c}{c}\t" for c in assigned)
    assert [piece for piece, _ in split(text)] == bpe.pre_tokenize(text)


# ---------------------------------------------------------------- errors
def test_learning_refuses_bad_arguments():
    with pytest.raises(ValueError, match=r"vocab_size=261 is smaller than the 262 ids"):
        bpe.learn_bpe(["abc"], 261)
    with pytest.raises(TypeError, match="vocab_size must be an integer"):
        bpe.learn_bpe(["abc"], 300.0)
    with pytest.raises(TypeError, match="not one string"):
        bpe.learn_bpe("abc", 300)
    with pytest.raises(TypeError, match="expected a string, got bytes"):
        bpe.learn_bpe(["abc", b"abc"], 300)
    assert bpe.learn_bpe(["abc"], np.int64(300)).vocab_size == 264  # ab, abc: no pair left, it stops


def test_encoding_refuses_what_is_not_text(synthetic):
    _, tokenizer = synthetic
    with pytest.raises(TypeError, match="expected a string, got int"):
        tokenizer.encode(12)
    with pytest.raises(ValueError, match=r"not a Unicode character \(a lone surrogate\) at position 1"):
        tokenizer.encode("a\ud800")


@pytest.mark.parametrize("kind", ["python", "numpy", "tensor"])
def test_decode_takes_ints_numpy_and_tensors_and_refuses_ids_out_of_range(synthetic, kind):
    _, tokenizer = synthetic
    convert = {"python": list, "numpy": lambda x: np.array(x, np.int32), "tensor": tf.constant}[kind]
    ids = tokenizer.encode("la que")
    assert tokenizer.decode(convert(ids)) == "la que"
    assert tokenizer.tokens(convert(ids)) == tokenizer.tokens("la que")
    for bad in (tokenizer.vocab_size, -1):
        with pytest.raises(ValueError, match=f"id {bad} is out of range: this vocabulary has ids 0 to 1499"):
            tokenizer.decode(convert(ids + [bad]))
    with pytest.raises(TypeError, match="one sequence of integers"):
        tokenizer.decode(convert([ids]))


@pytest.mark.parametrize("jit_compile", [False, True])
def test_decode_refuses_floats_strings_and_symbolic_tensors(synthetic, jit_compile):
    _, tokenizer = synthetic
    with pytest.raises(TypeError, match="one sequence of integers"):
        tokenizer.decode([1.0, 2.0])
    with pytest.raises(TypeError, match="decode takes ids, not a string"):
        tokenizer.decode("la")

    @tf.function(jit_compile=jit_compile)
    def traced(ids):
        return tokenizer.decode(ids)

    with pytest.raises(TypeError, match="a tokenizer works on values, in Python: decode outside tf.function"):
        traced(tf.constant([5, 6]))


def test_rebuilding_refuses_unknown_tokens():
    with pytest.raises(ValueError, match="merge 'ab' \\+ 'c': 'ab' is not a token"):
        bpe.BPE(["a", "b", "c"], [("ab", "c")])
    with pytest.raises(ValueError, match="distinct single characters"):
        bpe.BPE(["a", "a"], [])


# ---------------------------------------------------------------- files
def test_save_and_load_give_the_same_tokenizer(synthetic, tmp_path):
    texts, tokenizer = synthetic
    path = tmp_path / "bpe.json"
    tokenizer.save(path)
    for loaded in (bpe.BPE.load(path), bpe.BPE.load(str(path))):
        assert loaded.merges == tokenizer.merges and loaded.id_to_token == tokenizer.id_to_token
        assert all(loaded.encode(text) == tokenizer.encode(text) for text in texts[:200])
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["vocab"][:3] == ["<pad>", "<start>", "<end>"] and len(saved["merges"]) == len(tokenizer.merges)
    assert repr(tokenizer) == "BPE(vocab_size=1500, characters=58, merges=1183)"


def test_load_refuses_other_files_and_conventions(synthetic):
    _, tokenizer = synthetic
    saved = tokenizer.to_json()
    with pytest.raises(ValueError, match="not a mintransformer BPE tokenizer"):
        bpe.BPE.from_json({**saved, "format": "huggingface"})
    with pytest.raises(ValueError, match="saved with another pattern"):
        bpe.BPE.from_json({**saved, "pattern": r"\S+|\s+"})
    with pytest.raises(ValueError, match="the saved vocab does not match"):
        bpe.BPE.from_json({**saved, "vocab": saved["vocab"][:-1]})

"""The shipped parallel corpus: reproduced by its script, clean, split by book; the pair loader."""

import bz2
import gzip
import importlib.util
import lzma
import random
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from mintransformer.translation import corpus

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "make_parallel_corpus.py"
SHIPPED = ROOT / "code" / "mintransformer" / "corpora" / "bible_es_en.tsv.xz"

# What scripts/make_parallel_corpus.py prints and corpora/README.md reports.
VERSES, BOOKS = 30_787, 66
SPANISH_CHARACTERS, ENGLISH_CHARACTERS = 3_744_059, 3_906_535
SPANISH_WORDS, ENGLISH_WORDS = 696_682, 742_884
DROPPED_CHAPTERS = {("Num", 13), ("Num", 30), ("1Sam", 24), ("1Kgs", 22), ("1Chr", 21), ("2Chr", 33),
                    ("Job", 39), ("Job", 40), ("Hos", 12), ("Jonah", 2)}
# Markup the script strips, and characters no verse may hold: tags and their brackets, braces
# (ThML/GBF), Strong's and morphology tags, entities, pilcrows, control and invisible characters.
FORBIDDEN = re.compile(r"[<>{}\[\]\\|\x00-\x1f\x7f\u00ad\u00b6\u200b-\u200f\u2028\u2029\ufeff]"
                       r"|&[A-Za-z]+;|&#|strong:|lemma|morph|osisID|sID|eID|[GH]\d{3,4}")


def _script():
    spec = importlib.util.spec_from_file_location("make_parallel_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def verses():
    return corpus.bible_verses()


# ---------------------------------------------------------------- the script
def test_the_script_reproduces_the_shipped_file_byte_for_byte(tmp_path):
    if shutil.which("mod2imp") is None:
        pytest.skip("mod2imp absent: apt-get install sword-text-sparv sword-text-web libsword-utils")
    for conf in ("spaRV1909eb.conf", "engWEB2015eb.conf"):
        if not (Path("/usr/share/sword/mods.d") / conf).exists():
            pytest.skip(f"SWORD module {conf} absent: apt-get install sword-text-sparv sword-text-web")
    out = tmp_path / "bible_es_en.tsv.xz"
    run = subprocess.run([sys.executable, str(SCRIPT), "--output", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert f"kept: {VERSES:,}" in run.stdout
    rebuilt, shipped = out.read_bytes(), SHIPPED.read_bytes()
    assert lzma.decompress(rebuilt) == lzma.decompress(shipped), "the rebuilt corpus holds another text"
    assert rebuilt == shipped, "same text, compressed differently (another liblzma?)"


def test_strip_osis_keeps_words_apart_and_drops_notes_titles_speakers():
    strip = _script().strip_osis
    raw = ('<w lemma="strong:H0430">God</w><note placement="foot"><reference type="annotateRef">1:1 '
           '</reference>The Hebrew word rendered “God” is “אֱלֹהִ֑ים”.</note><w lemma="strong:H1254">created'
           '</w>,<note type="crossReference"><reference>Ps 8:3</reference></note> <w>the</w>  earth.')
    assert strip(raw) == "God created, the earth."
    assert strip('<title type="x-heading">Heading</title><speaker>Beloved</speaker> <l level="1" sID="a"/>'
                 'Let him<l eID="a" level="1"/><l level="2" sID="b"/>kiss me') == "Let him kiss me"
    assert strip('<title canonical="true" type="psalm">A Psalm by David.</title> <l sID="x"/>Yahweh') \
        == "A Psalm by David. Yahweh"
    assert strip('<w>preguntándo</w><transChange type="added">le</transChange>,') == "preguntándole,"
    assert strip('<w>hay allí</w><transChange type="added">también</transChange><w>bdelio</w>') \
        == "hay allí también bdelio"
    assert strip('Amen. <div sID="g1" type="glossary"/><title>Glossary</title> Abba: Father <div eID="g1" '
                 'type="glossary"/>') == "Amen."
    assert strip("¿Quién<note>n</note>? «<note>n</note>Sí»") == "¿Quién? «Sí»"


def test_strip_osis_refuses_unknown_or_unbalanced_markup():
    module = _script()
    with pytest.raises(module.MarkupError, match="unknown tag <table"):
        module.strip_osis("a <table>b</table>", "Gen 1:1")
    with pytest.raises(module.MarkupError, match="unclosed <note>"):
        module.strip_osis("a <note>b", "Gen 1:1")
    with pytest.raises(module.MarkupError, match="unbalanced </title>"):
        module.strip_osis("a </title> b", "Gen 1:1")


# ---------------------------------------------------------------- the shipped file
def test_shipped_file_counts(verses):
    assert SHIPPED.stat().st_size < 5_000_000
    assert len(verses) == VERSES
    assert len(corpus.books(verses)) == BOOKS
    assert corpus.books(verses)[0] == "Gen" and corpus.books(verses)[-1] == "Rev"
    assert sum(len(v.spanish) for v in verses) == SPANISH_CHARACTERS
    assert sum(len(v.english) for v in verses) == ENGLISH_CHARACTERS
    assert sum(len(v.spanish.split()) for v in verses) == SPANISH_WORDS
    assert sum(len(v.english.split()) for v in verses) == ENGLISH_WORDS
    assert not {(v.book, v.chapter) for v in verses} & DROPPED_CHAPTERS
    assert verses[0] == corpus.Verse("Gen", 1, 1, "EN el principio crió Dios los cielos y la tierra.",
                                     "In the beginning, God created the heavens and the earth.")


def test_shipped_file_has_no_markup_and_clean_fields(verses):
    header = lzma.decompress(SHIPPED.read_bytes()).decode("utf-8").split("\n", 1)[0]
    assert header == "\t".join(corpus.BIBLE_COLUMNS)
    for v in verses:
        for text in (v.spanish, v.english):
            assert text and text == text.strip() and "  " not in text, v
            assert "\t" not in text and "\n" not in text, v
            assert not FORBIDDEN.search(text), v
            assert unicodedata.is_normalized("NFC", text), v
        assert v.chapter > 0 and v.verse > 0
    keys = [(v.book, v.chapter, v.verse) for v in verses]
    assert len(set(keys)) == len(keys)
    order = {b: i for i, b in enumerate(corpus.books(verses))}
    assert keys == sorted(keys, key=lambda k: (order[k[0]], k[1], k[2]))


def test_load_pairs_reads_the_shipped_file_by_column_name(verses):
    pairs = corpus.load_pairs(corpus.bible_path(), "spanish", "english")
    assert pairs == [(v.spanish, v.english) for v in verses]
    assert corpus.load_pairs(SHIPPED, 4, 3, header=True)[0] == (verses[0].english, verses[0].spanish)


# ---------------------------------------------------------------- the split
def test_split_by_book_is_disjoint_by_book_and_covers_everything(verses):
    train, dev, test = corpus.split_by_book(verses)
    assert len(train) + len(dev) + len(test) == len(verses)
    assert sorted(train + dev + test) == sorted(verses)
    train_books, dev_books, test_books = ({v.book for v in part} for part in (train, dev, test))
    assert dev_books == set(corpus.DEV_BOOKS) and test_books == set(corpus.TEST_BOOKS)
    assert not train_books & dev_books and not train_books & test_books and not dev_books & test_books
    assert (len(train), len(dev), len(test)) == (28_828, 999, 960)
    assert 800 <= len(dev) <= 1500 and 800 <= len(test) <= 1500


def test_split_by_book_refuses_bad_book_lists(verses):
    with pytest.raises(ValueError, match=r"not in the corpus: \['Genesis'\]"):
        corpus.split_by_book(verses, ["Genesis"], ["Ruth"])
    with pytest.raises(ValueError, match=r"in both dev and test: \['Ruth'\]"):
        corpus.split_by_book(verses, ["Ruth"], ["Ruth", "Jonah"])
    with pytest.raises(ValueError, match="list distinct book names"):
        corpus.split_by_book(verses, ["Ruth", "Ruth"], ["Jonah"])
    with pytest.raises(ValueError, match="list distinct book names"):
        corpus.split_by_book(verses, "Ruth", ["Jonah"])


def test_the_book_split_leaks_four_times_less_than_a_random_one(verses):
    """The numbers of corpora/README.md: the nearest-verse baseline on each split."""
    train, dev, test = corpus.split_by_book(verses)
    assert round(corpus.leak_bleu(train, test).score, 1) == 4.5
    assert round(corpus.leak_bleu(train, dev).score, 1) == 5.7
    order = list(range(len(verses)))
    random.Random(0).shuffle(order)
    held_out = set(order[:len(test)])
    random_train = [v for i, v in enumerate(verses) if i not in held_out]
    random_test = [v for i, v in enumerate(verses) if i in held_out]
    assert round(corpus.leak_bleu(random_train, random_test).score, 1) == 18.6


# ---------------------------------------------------------------- the nearest-verse baseline
def test_nearest_training_translation_by_jaccard_with_deterministic_ties():
    train = [("el perro come", "the dog eats"), ("el gato come", "the cat eats"),
             ("el gato duerme mucho", "the cat sleeps a lot"), ("Perro", "Dog")]
    sources = ["el gato come", "gato come pan", "perro", "nada aquí", "duerme"]
    assert corpus.nearest_training_translation(train, sources) == [
        "the cat eats",  # identical
        "the cat eats",  # 2/4 beats "el gato duerme mucho" 1/6
        "Dog",  # lowercased: {perro} == {perro}
        "the dog eats",  # shares no word: the first pair
        "the cat sleeps a lot",
    ]
    # A tie (1/3 each for "el perro come" and "el gato come") goes to the earlier pair.
    assert corpus.nearest_training_translation(train, ["come"]) == ["the dog eats"]
    characters = corpus.nearest_training_translation(train, ["gatos"], tokenize=list)
    assert characters == ["the cat eats"]
    verse = corpus.Verse("Gen", 1, 1, "el perro come", "the dog eats")
    assert corpus.nearest_training_translation([verse], ["perro"]) == ["the dog eats"]


def test_nearest_training_translation_refuses_bad_arguments():
    with pytest.raises(ValueError, match="no training pairs"):
        corpus.nearest_training_translation([], ["a"])
    with pytest.raises(ValueError, match="not one string"):
        corpus.nearest_training_translation([("a", "b")], "a")
    with pytest.raises(ValueError, match=r"training: expected \(source, target\) pairs"):
        corpus.nearest_training_translation([("a", "b", "c")], ["a"])
    with pytest.raises(ValueError, match=r"training: expected \(source, target\) pairs"):
        corpus.nearest_training_translation([("a", 1)], ["a"])
    assert corpus.nearest_training_translation([("a", "b")], []) == []


def test_leak_bleu_of_a_test_set_inside_training_is_100():
    pairs = [("uno dos tres cuatro", "one two three four"), ("cinco seis siete ocho", "five six seven eight")]
    assert corpus.leak_bleu(pairs, pairs).score == pytest.approx(100.0)
    with pytest.raises(ValueError, match="no test pairs"):
        corpus.leak_bleu(pairs, [])


# ---------------------------------------------------------------- a reader's own corpus
def _write(path, text):
    data = text.encode("utf-8")
    opener = {".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress}.get(path.suffix)
    path.write_bytes(opener(data) if opener else data)
    return path


@pytest.mark.parametrize("suffix", [".tsv", ".tsv.gz", ".tsv.xz", ".tsv.bz2"])
def test_load_pairs_reads_plain_and_compressed_files(tmp_path, suffix):
    path = _write(tmp_path / f"pairs{suffix}", 'id\tsrc\ttgt\n1\tHola, "mundo".\tHello, "world".\n2\t¿Qué?\tWhat?\n')
    assert corpus.load_pairs(path, "src", "tgt") == [('Hola, "mundo".', 'Hello, "world".'), ("¿Qué?", "What?")]
    assert corpus.load_pairs(path, 1, 2, header=True) == corpus.load_pairs(path, "src", "tgt")
    assert corpus.load_pairs(path, np.int64(2), np.int32(1), header=True)[1] == ("What?", "¿Qué?")
    assert corpus.load_pairs(path, 1, 2)[0] == ("src", "tgt")  # no header: the first line is a pair


def test_load_pairs_handles_windows_line_ends_a_bom_and_no_final_newline(tmp_path):
    path = _write(tmp_path / "pairs.tsv", "\ufeffa\tb\r\nc\td")
    assert corpus.load_pairs(path) == [("a", "b"), ("c", "d")]


@pytest.mark.parametrize("text, kwargs, message", [
    ("a\tb\nc\td\te\n", {}, r"line 2: 3 tab-separated fields, expected 2 \(as on line 1\)"),
    ("s\tt\na\tb\nc\n", {"source_column": "s", "target_column": "t"},
     r"line 3: 1 tab-separated fields, expected 2 \(as on the header\)"),
    ("a\tb\n\nc\td\n", {}, "line 2: empty line"),
    ("a\tb\n\tc\n", {}, "line 2: empty source"),
    ("a\tb\nc\t \n", {}, "line 2: empty target"),
    ("s\tt\na\tb\n", {"source_column": "source", "target_column": "t"}, "no column 'source' in the header"),
    ("a\tb\n", {"source_column": 0, "target_column": 2}, "column 2 asked for, but lines have 2 fields"),
    ("a\tb\n", {"source_column": -1, "target_column": 1}, "a name or an index >= 0"),
    ("a\tb\n", {"source_column": 1.0, "target_column": 0}, "a name or an index >= 0"),
    ("a\tb\n", {"source_column": "a", "target_column": "b", "header": False}, "need a header line"),
    ("s\tt\n", {"source_column": "s", "target_column": "t"}, "no pairs"),
    ("", {}, "no pairs"),
    ("", {"header": True}, "empty file, no header line"),
])
def test_load_pairs_names_the_malformed_line(tmp_path, text, kwargs, message):
    path = _write(tmp_path / "pairs.tsv", text)
    with pytest.raises(ValueError, match=message):
        corpus.load_pairs(path, **kwargs)


def test_bible_verses_refuses_a_file_of_another_form(tmp_path):
    with pytest.raises(ValueError, match="header"):
        corpus.bible_verses(_write(tmp_path / "a.tsv", "src\ttgt\na\tb\n"))
    bad = "\t".join(corpus.BIBLE_COLUMNS) + "\nGen\t1\t1\tEn\n"
    with pytest.raises(ValueError, match="line 2: expected 5 non-empty fields"):
        corpus.bible_verses(_write(tmp_path / "b.tsv", bad))

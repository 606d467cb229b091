#!/usr/bin/env python3
"""Build the Spanish-English parallel corpus that ships with the package.

Exports the Reina-Valera 1909 (SWORD module ``spaRV1909eb``) and the World English Bible
(``engWEB2015eb``), both public domain, with ``mod2imp`` (Debian: ``apt-get install sword-text-sparv
sword-text-web libsword-utils``), strips their OSIS markup, aligns them verse by verse and writes
``code/mintransformer/corpora/bible_es_en.tsv.xz``: a header line, then one line per verse,
``book<TAB>chapter<TAB>verse<TAB>spanish<TAB>english``, in canonical book order.

What is stripped (see ``strip_osis``): every tag; the content of footnotes and cross-references
(``<note>``), of headings and book titles (``<title>``, except the psalms' canonical
superscriptions, which the Spanish text carries as part of verse 1), of the Song of Solomon's
speaker labels (``<speaker>``), and of the front matter, introductions and the glossary that the
World English Bible keeps inside verse entries (``<div type="front|introduction|glossary">``).
Tags that carry words inline (``<w>`` with Strong's numbers, ``<transChange>``, ``<q>``,
``<l>`` lines of poetry...) keep their words. An unknown tag stops the script, so a new module
version cannot leak markup silently.

What is dropped, and counted (see ``build``): book and chapter introductions (verse 0), the
deuterocanonical books that only the English module has, verses missing or empty on either side
and the verse before one missing on one side only (a verse range printed as one verse), a verse
whose text repeats the previous one, the last verse of an epistle where the Spanish adds the
King James tradition's subscription, entries longer than any verse of the canon (``MAX_CHARS``:
the odd entry that holds a preface or a glossary), verses whose lengths disagree too much to be
translations of each other (``MAX_LENGTH_RATIO``), the chapters where the Reina-Valera keeps
another verse numbering, and verses in swapped order (``misaligned``, from a word-translation
lexicon learned on the corpus itself).

The output is reproducible byte for byte: sorted canonical order, Unicode NFC, ``lzma`` with a
fixed preset, and the xz format stores no time stamp. ``--check`` rebuilds the file in memory and
compares it with the shipped one.
"""

from __future__ import annotations

import argparse
import collections
import lzma
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "code" / "mintransformer" / "corpora" / "bible_es_en.tsv.xz"

SPANISH_MODULE = "spaRV1909eb"
ENGLISH_MODULE = "engWEB2015eb"
# The module versions this corpus was built from (their .conf files, Debian packages
# sword-text-sparv 2.60-1 and sword-text-web 426.0-1); another version may change the text.
EXPECTED_VERSIONS = {SPANISH_MODULE: "2.60", ENGLISH_MODULE: "426.0"}

HEADER = ("book", "chapter", "verse", "spanish", "english")
XZ_PRESET = 9 | lzma.PRESET_EXTREME

# SWORD's English book names (what mod2imp prints in its keys, C locale) -> OSIS names, in the
# canonical order of the 66 books common to both modules.
BOOKS = (
    ("Genesis", "Gen"), ("Exodus", "Exod"), ("Leviticus", "Lev"), ("Numbers", "Num"),
    ("Deuteronomy", "Deut"), ("Joshua", "Josh"), ("Judges", "Judg"), ("Ruth", "Ruth"),
    ("I Samuel", "1Sam"), ("II Samuel", "2Sam"), ("I Kings", "1Kgs"), ("II Kings", "2Kgs"),
    ("I Chronicles", "1Chr"), ("II Chronicles", "2Chr"), ("Ezra", "Ezra"), ("Nehemiah", "Neh"),
    ("Esther", "Esth"), ("Job", "Job"), ("Psalms", "Ps"), ("Proverbs", "Prov"),
    ("Ecclesiastes", "Eccl"), ("Song of Solomon", "Song"), ("Isaiah", "Isa"), ("Jeremiah", "Jer"),
    ("Lamentations", "Lam"), ("Ezekiel", "Ezek"), ("Daniel", "Dan"), ("Hosea", "Hos"),
    ("Joel", "Joel"), ("Amos", "Amos"), ("Obadiah", "Obad"), ("Jonah", "Jonah"), ("Micah", "Mic"),
    ("Nahum", "Nah"), ("Habakkuk", "Hab"), ("Zephaniah", "Zeph"), ("Haggai", "Hag"),
    ("Zechariah", "Zech"), ("Malachi", "Mal"),
    ("Matthew", "Matt"), ("Mark", "Mark"), ("Luke", "Luke"), ("John", "John"), ("Acts", "Acts"),
    ("Romans", "Rom"), ("I Corinthians", "1Cor"), ("II Corinthians", "2Cor"),
    ("Galatians", "Gal"), ("Ephesians", "Eph"), ("Philippians", "Phil"), ("Colossians", "Col"),
    ("I Thessalonians", "1Thess"), ("II Thessalonians", "2Thess"), ("I Timothy", "1Tim"),
    ("II Timothy", "2Tim"), ("Titus", "Titus"), ("Philemon", "Phlm"), ("Hebrews", "Heb"),
    ("James", "Jas"), ("I Peter", "1Pet"), ("II Peter", "2Pet"), ("I John", "1John"),
    ("II John", "2John"), ("III John", "3John"), ("Jude", "Jude"), ("Revelation of John", "Rev"),
)
OSIS_OF = dict(BOOKS)
BOOK_INDEX = {osis: i for i, (_, osis) in enumerate(BOOKS)}

# Outlier rules. The character lengths of a verse and of its translation agree closely: the
# Spanish is on average 4% shorter, and 99.8% of the ratios lie between 0.59 and 1.62. A ratio
# of the lengths (each plus LENGTH_SLACK characters, so that a short verse is not judged on a
# few characters) beyond MAX_LENGTH_RATIO either way means the two entries do not hold the
# same text: a verse range printed as one verse, a verse split differently.
MAX_LENGTH_RATIO = 2.0
LENGTH_SLACK = 10
# The longest verse of the canon (Esther 8:9) has 448 characters in Spanish, 491 in English; an
# entry longer than MAX_CHARS holds something else (the glossary the World English Bible keeps
# in Revelation 22:21, were it not stripped).
MAX_CHARS = 1000

# --- OSIS markup -----------------------------------------------------------------------------
# Elements whose whole content is dropped: footnotes and cross-references, headings, speaker
# labels. (<reference>, <rdg>, <catchWord> and <seg type="x-usfm-fl"> occur only inside notes.)
DROP_CONTENT = {"note", "title", "speaker"}
# Milestone divisions (<div sID=... type=.../> ... <div eID=... type=.../>) whose content is
# dropped: the front matter, book introductions and the glossary.
DROP_DIVISIONS = {"front", "introduction", "glossary"}
# Tags that only mark up words the text keeps, inside a line of text.
INLINE = {"w", "transChange", "q", "seg", "name", "reference", "rdg", "catchWord", "hi",
          "foreign", "divineName"}
# Tags that mark a boundary (line, paragraph, chapter, list item...).
BOUNDARY = {"l", "lg", "lb", "div", "milestone", "chapter", "p", "verse", "br", "item", "list"}
KNOWN_TAGS = DROP_CONTENT | INLINE | BOUNDARY
TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[A-Za-z:-]+=\"[^\"]*\")*)\s*(/?)>")
ATTR = re.compile(r'([A-Za-z:-]+)="([^"]*)"')
# The Reina-Valera marks words the translators added with <transChange>; inside a word it holds
# an enclitic pronoun (preguntándo<transChange>le</transChange>), elsewhere the export lost the
# space before or after it (allí<transChange>también</transChange><w>bdelio</w>).
ENCLITICS = {"me", "te", "se", "le", "lo", "la", "les", "los", "las", "nos", "os"}
GAP = "\x00"  # where markup was removed between two pieces of text
DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015"
OPENING = set("“‘(¡¿[«" + DASHES)
CLOSING = set(",.;:!?)]”’»" + DASHES)
ENTITIES = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'", "&amp;": "&"}
# What no field of the output may contain: markup, entities, control and invisible characters.
FORBIDDEN = re.compile(r"[<>{}\\|\x00-\x1f\x7f\u00ad\u00b6\u200b-\u200f\u2028\u2029\ufeff]|&[A-Za-z]+;|&#")


class MarkupError(ValueError):
    """The export holds markup this script does not know how to strip."""


def strip_osis(raw: str, where: str = "") -> str:
    """The plain text of one verse entry of an OSIS module, whitespace normalized, NFC.

    Removed markup leaves a gap that becomes one space between two pieces of text, or nothing
    next to whitespace, after opening or before closing punctuation (``_close_gaps``).
    """
    parts: list[str] = []
    open_elements: list[tuple[str, bool]] = []  # open DROP_CONTENT elements, kept or not
    dropping = False  # inside an element whose content is dropped
    dropped_division: str | None = None  # sID of an open DROP_DIVISIONS milestone
    pos = 0
    for m in TAG.finditer(raw):
        if not dropping and dropped_division is None:
            parts.append(raw[pos:m.start()])
        pos = m.end()
        closing, name, attr_text, selfclosing = m.group(1), m.group(2), m.group(3), m.group(4)
        if name not in KNOWN_TAGS:
            raise MarkupError(f"{where}: unknown tag {m.group(0)}")
        attrs = dict(ATTR.findall(attr_text))
        gap = True
        if name == "div" and attrs.get("type") in DROP_DIVISIONS:
            if "sID" in attrs and dropped_division is None:
                dropped_division = attrs["sID"]
            elif attrs.get("eID") == dropped_division:
                dropped_division = None
        elif name in DROP_CONTENT and not selfclosing:
            if closing:
                if not open_elements or open_elements[-1][0] != name:
                    raise MarkupError(f"{where}: unbalanced </{name}>")
                open_elements.pop()
            else:  # a psalm's canonical superscription is text (the Spanish has it in verse 1)
                keep = name == "title" and attrs.get("canonical") == "true"
                open_elements.append((name, keep))
            dropping = any(not keep for _, keep in open_elements)
        elif name == "transChange" and not closing:
            end = raw.find("</transChange>", pos)
            gap = raw[pos:end].strip().lower() not in ENCLITICS
        elif name in INLINE and name != "transChange":
            gap = False
        if gap:
            parts.append(GAP)
    if open_elements:
        raise MarkupError(f"{where}: unclosed <{open_elements[-1][0]}>")
    rest = raw[pos:]
    if "<" in rest or ">" in rest:
        raise MarkupError(f"{where}: stray angle bracket in {rest!r}")
    if dropped_division is None:
        parts.append(rest)
    text = re.sub(r"&[A-Za-z]+;", lambda e: ENTITIES.get(e.group(0), e.group(0)), "".join(parts))
    return normalize(_close_gaps(text))


def _close_gaps(text: str) -> str:
    """Turn each run of removed markup into a space, or into nothing beside punctuation."""
    def gap(m: re.Match) -> str:
        if m.group(0).strip(GAP):  # whitespace on either side: one space
            return " "
        before = text[m.start() - 1] if m.start() > 0 else ""
        after = text[m.end()] if m.end() < len(text) else ""
        if not before or not after or before in OPENING or after in CLOSING:
            return ""
        return " "
    return re.sub(r"\s*\x00[\s\x00]*", gap, text)


def normalize(text: str) -> str:
    """NFC, whitespace runs to one space, stripped; punctuation and accents left as they are."""
    return " ".join(unicodedata.normalize("NFC", text).split())


# --- SWORD export ----------------------------------------------------------------------------
KEY = re.compile(r"^(.+) (\d+):(\d+)$")


def export_module(module: str) -> str:
    """The raw native export of one SWORD module (mod2imp, C locale: English book names)."""
    exe = shutil.which("mod2imp")
    if exe is None:
        raise SystemExit("mod2imp not found: apt-get install libsword-utils "
                         "sword-text-sparv sword-text-web")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    env.update(LC_ALL="C.UTF-8", LANG="C.UTF-8")
    out = subprocess.run([exe, module], capture_output=True, env=env, check=True).stdout
    text = out.decode("utf-8")
    if "$$$" not in text:
        raise SystemExit(f"mod2imp {module} exported nothing: is the module installed?")
    return text


def module_version(module: str) -> str | None:
    """The Version= line of the module's .conf file, where SWORD keeps it."""
    for d in ("/usr/share/sword/mods.d", os.path.expanduser("~/.sword/mods.d")):
        for conf in (Path(d) / f"{module}.conf", Path(d) / f"{module.lower()}.conf"):
            if conf.exists():
                for line in conf.read_text(encoding="utf-8").splitlines():
                    if line.startswith("Version="):
                        return line.split("=", 1)[1].strip()
    return None


def parse_export(text: str, module: str):
    """{(osis, chapter, verse): raw markup} for the 66 books, and the books skipped."""
    verses: dict[tuple[str, int, int], str] = {}
    other_books: collections.Counter = collections.Counter()
    key = None
    for line in text.split("\n"):
        if line.startswith("$$$"):
            key = line[3:].strip()
            continue
        if key is None or key.startswith("["):  # module and testament headings
            continue
        m = KEY.match(key)
        if m is None:
            raise SystemExit(f"{module}: unexpected key {key!r}")
        name, chapter, verse = m.group(1), int(m.group(2)), int(m.group(3))
        osis = OSIS_OF.get(name)
        if osis is None:
            other_books[name] += 1
            continue
        k = (osis, chapter, verse)
        verses[k] = (verses[k] + "\n" + line) if k in verses else line
    return verses, other_books


# --- alignment check -------------------------------------------------------------------------
WORD = re.compile(r"\w+")
MAX_DOCUMENT_FREQUENCY = 1500  # words in more verses than this say little about alignment
MIN_DICE = 0.1
NEIGHBOURS = 6  # how far a shifted verse numbering is looked for
MARGIN = 0.1  # how much better a neighbour must match to count against the verse
RUN = 3  # consecutive verses matched better by a neighbour that condemn their chapter
SWAP_MARGIN = 0.4  # how much better two consecutive verses must match once swapped


def _lexicon(pairs):
    """Word translations learned from the aligned verses: Dice association of word types.

    For each word (in at most MAX_DOCUMENT_FREQUENCY verses), the words of the other language
    whose Dice coefficient 2 c(s, e) / (c(s) + c(e)) over verse pairs is at least MIN_DICE and
    at least half the best one of either word.
    """
    spanish = [set(WORD.findall(s.lower())) for s, _ in pairs]
    english = [set(WORD.findall(e.lower())) for _, e in pairs]
    fs = collections.Counter(w for ws in spanish for w in ws)
    fe = collections.Counter(w for ws in english for w in ws)
    co: collections.Counter = collections.Counter()
    for a, b in zip(spanish, english):
        a = [w for w in a if 2 <= fs[w] <= MAX_DOCUMENT_FREQUENCY]
        b = [w for w in b if 2 <= fe[w] <= MAX_DOCUMENT_FREQUENCY]
        co.update((x, y) for x in a for y in b)
    dice = {(x, y): 2 * c / (fs[x] + fe[y]) for (x, y), c in co.items() if c >= 2}
    best_s: dict = collections.defaultdict(float)
    best_e: dict = collections.defaultdict(float)
    for (x, y), d in dice.items():
        best_s[x] = max(best_s[x], d)
        best_e[y] = max(best_e[y], d)
    es_en: dict = collections.defaultdict(set)
    en_es: dict = collections.defaultdict(set)
    for (x, y), d in dice.items():
        if d >= MIN_DICE and (d >= 0.5 * best_s[x] or d >= 0.5 * best_e[y]):
            es_en[x].add(y)
            en_es[y].add(x)
    return es_en, en_es


def misaligned(es: dict, en: dict) -> tuple[list, list]:
    """Chapters whose verse numbering differs between the two translations, and swapped verses.

    The Reina-Valera module keeps the Spanish (Hebrew) chapter and verse divisions in places
    (Numbers 13, Job 39-40, Jonah 2...), so that verse n of one side is verse n + k of the other.
    Each verse's match, the share of its words (on both sides) that have a translation on the
    other side, is compared with its matches with the verses up to NEIGHBOURS away; a chapter
    is misaligned where RUN consecutive verses match a neighbour better by MARGIN. Two
    consecutive verses are swapped (the World English Bible reverses Matthew 23:13 and 14) when
    their matches crossed beat their matches in place by SWAP_MARGIN.
    """
    keys = sorted(set(es) & set(en), key=lambda k: (BOOK_INDEX[k[0]], k[1], k[2]))
    es_en, en_es = _lexicon([(es[k], en[k]) for k in keys])
    sw = {k: {w for w in WORD.findall(t.lower()) if w in es_en} for k, t in es.items()}
    ew = {k: {w for w in WORD.findall(t.lower()) if w in en_es} for k, t in en.items()}

    def match(ks, ke):
        s, e = sw.get(ks), ew.get(ke)
        if not s or not e:
            return 0.0
        return (sum(1 for w in s if es_en[w] & e) + sum(1 for w in e if en_es[w] & s)) / (len(s) + len(e))

    offsets = [o for o in range(-NEIGHBOURS, NEIGHBOURS + 1) if o]
    bad, swapped = [], []
    run, chapter = 0, None
    for b, c, v in keys:
        if (b, c) != chapter:
            run, chapter = 0, (b, c)
        k, after = (b, c, v), (b, c, v + 1)
        here = match(k, k)
        there = max(max(match(k, (b, c, v + o)), match((b, c, v + o), k)) for o in offsets)
        run = run + 1 if there > here + MARGIN else 0
        if run == RUN:
            bad.append((b, c))
        if after in es and (match(k, after) + match(after, k)
                            > here + match(after, after) + SWAP_MARGIN):
            swapped += [k, after]
    return bad, swapped


# --- the corpus ------------------------------------------------------------------------------
# The Reina-Valera ends Paul's letters and Hebrews with the King James tradition's subscription
# ("... Amén. Fué escrita de Corinto á los Romanos, ..."), which the World English Bible lacks.
SUBSCRIPTION = re.compile(r"\bAm[ée]n\.\s.*\b(?:[Ee]scrita|[Ee]nviada)\b")


def length_ratio(spanish: str, english: str) -> float:
    """The longer length over the shorter one, each plus LENGTH_SLACK characters."""
    a, b = len(spanish) + LENGTH_SLACK, len(english) + LENGTH_SLACK
    return max(a, b) / min(a, b)


def _order(k):
    return (BOOK_INDEX[k[0]],) + tuple(k[1:])


def build() -> tuple[bytes, dict]:
    """The compressed corpus and its statistics."""
    stats: dict = {}
    for module, expected in EXPECTED_VERSIONS.items():
        found = module_version(module)
        stats[f"{module} version"] = found
        if found != expected:
            print(f"warning: {module} version {found}, the shipped corpus was built from "
                  f"{expected}", file=sys.stderr)
    plain = {}
    for lang, module in (("spanish", SPANISH_MODULE), ("english", ENGLISH_MODULE)):
        raw, other = parse_export(export_module(module), module)
        texts = {}
        intro = 0
        for k, markup in raw.items():
            if k[2] == 0:  # book and chapter introductions, headings
                intro += 1
                continue
            texts[k] = strip_osis(markup, f"{module} {k[0]} {k[1]}:{k[2]}")
        plain[lang] = texts
        stats[f"{lang}: verse entries in the 66 books"] = len(texts)
        stats[f"{lang}: non-empty verses"] = sum(1 for t in texts.values() if t)
        stats[f"{lang}: verse-0 entries (introductions) skipped"] = intro
        stats[f"{lang}: entries of other books skipped"] = sum(other.values())
    es = {k: t for k, t in plain["spanish"].items() if t}
    en = {k: t for k, t in plain["english"].items() if t}
    keys = sorted(set(es) | set(en), key=_order)
    stats["verses in both modules (non-empty)"] = len(set(es) & set(en))
    rules = ("missing or empty in Spanish", "missing or empty in English",
             "next verse missing on one side (its text may be here)",
             "repeats the previous verse (linked range)", "Spanish has an epistle's subscription",
             f"longer than {MAX_CHARS} characters", f"length ratio beyond {MAX_LENGTH_RATIO}",
             "in a chapter whose verse numbering differs", "two verses in swapped order")
    drops: dict[str, list] = {r: [] for r in rules}
    candidates = {}
    previous = (None, None)
    for k in keys:
        s, e = es.get(k, ""), en.get(k, "")
        following = (k[0], k[1], k[2] + 1)
        if not s:
            rule = rules[0]
        elif not e:
            rule = rules[1]
        elif (following in es) != (following in en):
            rule = rules[2]
        elif s == previous[0] or e == previous[1]:
            rule = rules[3]
        elif SUBSCRIPTION.search(s):
            rule = rules[4]
        elif max(len(s), len(e)) > MAX_CHARS:
            rule = rules[5]
        elif length_ratio(s, e) > MAX_LENGTH_RATIO:
            rule = rules[6]
        else:
            rule = None
            candidates[k] = (s, e)
        if rule is not None:
            drops[rule].append(k)
        previous = (s, e)
    bad, swapped = misaligned({k: v[0] for k, v in candidates.items()},
                              {k: v[1] for k, v in candidates.items()})
    bad, swapped = set(bad), set(swapped)
    stats["chapters whose verse numbering differs"] = [f"{b} {c}" for b, c in sorted(bad, key=_order)]
    rows = []
    for k in sorted(candidates, key=_order):
        if k[:2] in bad:
            drops[rules[7]].append(k)
            continue
        if k in swapped:
            drops[rules[8]].append(k)
            continue
        s, e = candidates[k]
        for t in (s, e):
            if FORBIDDEN.search(t):
                raise MarkupError(f"{k}: left-over markup or control character in {t!r}")
        rows.append((k[0], str(k[1]), str(k[2]), s, e))
    for rule, dropped in drops.items():
        stats[f"dropped: {rule}"] = len(dropped)
        stats[f"dropped: {rule}: verses"] = [f"{b} {c}:{v}" for b, c, v in dropped]
    stats["kept"] = len(rows)
    stats["spanish characters"] = sum(len(r[3]) for r in rows)
    stats["english characters"] = sum(len(r[4]) for r in rows)
    stats["spanish words"] = sum(len(r[3].split()) for r in rows)
    stats["english words"] = sum(len(r[4].split()) for r in rows)
    stats["books"] = len({r[0] for r in rows})
    tsv = "".join("\t".join(r) + "\n" for r in [HEADER] + rows).encode("utf-8")
    stats["uncompressed bytes"] = len(tsv)
    data = lzma.compress(tsv, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=XZ_PRESET)
    stats["compressed bytes"] = len(data)
    return data, stats


def print_stats(stats: dict) -> None:
    for name, value in stats.items():
        if isinstance(value, list):
            shown = ", ".join(value[:12]) + (f", ... ({len(value)} in all)" if len(value) > 12 else "")
            if name.endswith(": verses"):
                if value:
                    print(f"    {shown}")
            else:
                print(f"{name}: {len(value)}" + (f": {shown}" if value else ""))
        else:
            print(f"{name}: {value:,}" if isinstance(value, int) else f"{name}: {value}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                        help=f"where to write the corpus (default: {DEFAULT_OUTPUT.relative_to(ROOT)})")
    parser.add_argument("--check", action="store_true",
                        help="rebuild in memory and compare with --output; exit 1 if they differ")
    parser.add_argument("--quiet", action="store_true", help="print no statistics")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    data, stats = build()
    if not args.quiet:
        print_stats(stats)
        print(f"built in {time.perf_counter() - start:.1f} s")
    if args.check:
        if not args.output.exists():
            print(f"{args.output} does not exist", file=sys.stderr)
            return 1
        shipped = args.output.read_bytes()
        if shipped == data:
            print(f"{args.output}: reproduced byte for byte")
            return 0
        same_text = lzma.decompress(shipped) == lzma.decompress(data)
        print(f"{args.output} differs from the rebuilt corpus"
              + (" (same text: only the compression differs; another liblzma?)" if same_text
                 else " (the text differs)"), file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(data)
    print(f"wrote {args.output} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

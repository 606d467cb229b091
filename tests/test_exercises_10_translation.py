"""Chapter 10's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import collections
import math
import pathlib
import sys

import numpy as np
import pytest

import mintransformer as mt
from mintransformer.translation import bpe

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from exercise_messages import assert_hides, shown_lines_that_compute  # noqa: E402

CHAPTER = "10_translation"
ROOT = pathlib.Path(__file__).resolve().parents[1]


def check(label, **env):
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("label,names", [
    ("ex-translation-merge", ["merge_step"]),
    ("ex-translation-bleu-by-hand", ["bleu_by_hand"]),
    ("ex-translation-fix-decode", ["fixed_decode"]),
])
def test_blank_answers_fail_and_say_so(label, names):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    passed, text = check(label, **{name: stub for name in names})
    assert not passed and "NotImplementedError" in text
    passed, text = check(label, **{name: ... for name in names})
    assert not passed and "still `...`" in text


def test_a_submission_is_graded_by_the_prefix_of_its_name(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    import grade

    for name, chapter in [("10_translation-ana.ipynb", CHAPTER), ("09_inference_ana.ipynb", "09_inference"),
                          ("11_ablations.ipynb", "11_ablations"), ("09.ipynb", None), ("1_x.ipynb", None),
                          ("appendix_a_distribute-bo.ipynb", "appendix_a_distribute"),
                          ("appendix_b.ipynb", None)]:
        (tmp_path / name).write_text("not a notebook")  # no metadata: the file name decides
        assert grade.chapter_of(tmp_path / name) == chapter, name


# One merge step.

def _counts(words, freqs):
    counts = collections.Counter()
    for word, freq in zip(words, freqs):
        for pair in zip(word, word[1:]):
            counts[pair] += freq
    return counts


def _merge(word, pair, new_id, overlap=False):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_id)
            i += 1 if overlap else 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def _merge_step(weighted=True, tie="smallest", overlap=False, counts_after=True, keep_zero=False):
    """A merge step with one known mistake."""
    def merge_step(words, freqs, new_id):
        counts = _counts(words, freqs if weighted else [1] * len(words))
        if tie == "smallest":
            pair = min(counts, key=lambda p: (-counts[p], p))
        elif tie == "largest":
            pair = max(counts, key=lambda p: (counts[p], p))
        merged = [_merge(w, pair, new_id, overlap) for w in words]
        if not counts_after:
            return pair, merged, dict(_counts(words, freqs))
        after = dict(_counts(merged, freqs))
        if keep_zero:
            after[pair] = 0
        return pair, merged, after
    return merge_step


def test_merge_step_accepts_a_correct_step_and_an_incremental_one():
    passed, text = check("ex-translation-merge", merge_step=_merge_step())
    assert passed, text

    def incremental(words, freqs, new_id):  # the chapter's solution: counts updated where the pair was
        counts = _counts(words, freqs)
        pair = min(counts, key=lambda p: (-counts[p], p))
        merged = list(words)
        for i, word in enumerate(words):
            if pair in zip(word, word[1:]):
                new = _merge(word, pair, new_id)
                counts.subtract({p: freqs[i] * k for p, k in collections.Counter(zip(word, word[1:])).items()})
                counts.update({p: freqs[i] * k for p, k in collections.Counter(zip(new, new[1:])).items()})
                merged[i] = new
        return list(pair), [list(w) for w in merged], {p: n for p, n in counts.items() if n}

    passed, text = check("ex-translation-merge", merge_step=incremental)
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (_merge_step(weighted=False), "occurs freqs[i] times counts freqs[i] times"),
    (_merge_step(tie="largest"), "the smallest (left, right)"),
    (_merge_step(overlap=True), "occurrences of the pair overlap"),
    (_merge_step(counts_after=False), "the counts before the merge"),
    (_merge_step(keep_zero=True), "no longer occur (count 0)"),
])
def test_merge_step_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-translation-merge", merge_step=wrong)
    assert not passed and message in text, text


def test_merge_step_names_a_pair_across_two_words():
    def across(words, freqs, new_id):  # "low" + "lower": (w, l), the end of a word and the start of the next
        return (words[0][-1], words[1][0]), list(words), dict(_counts(words, freqs))

    passed, text = check("ex-translation-merge", merge_step=across)
    assert not passed and "never cross the edge of a word" in text, text


def test_merge_step_refuses_the_package():
    def with_package(words, freqs, new_id):
        counts = _counts(words, freqs)
        pair = min(counts, key=lambda p: (-counts[p], p))
        merged = [bpe.merge_pair(w, pair, new_id) for w in words]
        return pair, merged, dict(_counts(merged, freqs))

    passed, text = check("ex-translation-merge", merge_step=with_package)
    assert not passed and "calls the package's byte-pair encoding" in text, text
    passed, text = check("ex-translation-merge", merge_step=lambda w, f, n: (1, 2))
    assert not passed and "must return three things" in text, text


# BLEU of one sentence by hand.

def _ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _bleu(clip=True, recall=False, bp_rule="right", mean="geometric", scale=100.0, percent=False):
    """BLEU of one tokenized sentence with one known mistake."""
    def bleu_by_hand(hypothesis, reference):
        h, r = hypothesis.split(), reference.split()
        precisions = []
        for n in range(1, 5):
            hyp, ref = _ngrams(h, n), _ngrams(r, n)
            matched = sum((hyp & ref).values()) if clip else sum(k for g, k in hyp.items() if g in ref)
            precisions.append(matched / max((len(r) if recall else len(h)) - n + 1, 1))
        c, rl = len(h), len(r)
        bp = {"right": 1.0 if c >= rl else math.exp(1 - rl / c), "inverted": 1.0 if c >= rl else math.exp(1 - c / rl),
              "always": math.exp(1 - rl / c), "none": 1.0}[bp_rule]
        if min(precisions) == 0:
            combined = 0.0
        elif mean == "geometric":
            combined = math.exp(sum(math.log(p) for p in precisions) / 4)
        else:
            combined = float(np.mean(precisions))
        score = scale * (1.0 if bp_rule == "none" else bp) * combined
        right_bp = 1.0 if c >= rl else math.exp(1 - rl / c)
        shown = [100 * p for p in precisions] if percent else precisions
        return shown, right_bp if bp_rule == "none" else bp, score
    return bleu_by_hand


def test_bleu_by_hand_accepts_a_correct_answer():
    passed, text = check("ex-translation-bleu-by-hand", bleu_by_hand=_bleu())
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (_bleu(clip=False), "clip the counts"),
    (_bleu(recall=True), "not of the reference"),
    (_bleu(bp_rule="inverted"), "exp(1 - r/c), with r the reference length"),
    (_bleu(bp_rule="always"), "BLEU does not reward length"),
    (_bleu(bp_rule="none"), "multiply the geometric mean of the precisions by the brevity penalty"),
    (_bleu(mean="arithmetic"), "geometric mean"),
    (_bleu(scale=1.0), "sacreBLEU's scale, 0 to 100"),
    (_bleu(percent=True), "as fractions between 0 and 1"),
])
def test_bleu_by_hand_rejects_the_known_mistakes(wrong, message):
    import sacrebleu

    passed, text = check("ex-translation-bleu-by-hand", bleu_by_hand=wrong)
    assert not passed and message in text, text
    first = sacrebleu.sentence_bleu("and the lord said unto moses , speak to the children of israel",
                                    ["the lord spoke to moses , saying , speak to the children of israel"],
                                    tokenize="none", smooth_method="none")
    assert_hides(text, first.score, first.bp, *[p / 100 for p in first.precisions])


def test_bleu_by_hand_refuses_sacrebleu_and_the_package():
    import sacrebleu

    from mintransformer.translation import evaluation

    def with_sacrebleu(hypothesis, reference):
        score = sacrebleu.sentence_bleu(hypothesis, [reference], tokenize="none", smooth_method="none")
        return [p / 100 for p in score.precisions], score.bp, score.score

    def with_package(hypothesis, reference):
        score = evaluation.bleu([hypothesis], [reference])
        return [p / 100 for p in score.precisions], score.bp, score.score

    for answer in (with_sacrebleu, with_package):
        passed, text = check("ex-translation-bleu-by-hand", bleu_by_hand=answer)
        assert not passed and "calls sacreBLEU's BLEU" in text, text
    # The refusal is undone: sacreBLEU works again after the check.
    assert sacrebleu.sentence_bleu("a b c d", ["a b c d"]).score == pytest.approx(100.0)


# Decoding subwords.

BYTES = range(3, 259)


def _decode(join=" ", bytes_as="whole", stop=True, skip=True, errors="replace"):
    """A decode with one known mistake (join=" " is the bug of the exercise)."""
    def decode(tokenizer, ids):
        pieces = []
        for i in (int(x) for x in ids):
            if stop and i == tokenizer.end_id:
                break
            if skip and i in (tokenizer.pad_id, tokenizer.start_id, tokenizer.end_id):
                continue
            token = tokenizer.id_to_token[i]
            if i in BYTES and bytes_as != "names":
                piece = bytes([i - 3])
                pieces.append(piece if bytes_as == "whole" else piece.decode("utf-8", errors="replace").encode())
            else:
                pieces.append(token.encode("utf-8"))
        return join.encode().join(pieces).decode("utf-8", errors=errors)
    return decode


def test_fixed_decode_accepts_a_correct_answer():
    passed, text = check("ex-translation-fix-decode", fixed_decode=_decode(join=""))
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (_decode(), "still the bug: the tokens are joined with spaces"),
    (_decode(join="", bytes_as="names"), "byte tokens' names"),
    (_decode(join="", bytes_as="each"), "Join the bytes of all tokens first"),
    (_decode(join="", stop=False), "stop at the first <end>"),
    (_decode(join="", skip=False), "skip <pad> and <start>"),
    (_decode(join="", errors="strict"), "errors=\"replace\""),
    (lambda tokenizer, ids: " ".join("".join(tokenizer.id_to_token[i] for i in ids).split()), "right whitespace"),
])
def test_fixed_decode_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-translation-fix-decode", fixed_decode=wrong)
    assert not passed and message in text, text


def test_fixed_decode_refuses_tokenizer_decode():
    passed, text = check("ex-translation-fix-decode", fixed_decode=lambda tokenizer, ids: tokenizer.decode(ids))
    assert not passed and "calls tokenizer.decode" in text, text
    tokenizer = bpe.learn_bpe(["abc abc"], 300)
    assert tokenizer.decode(tokenizer.encode("abc ab")) == "abc ab"  # restored after the check


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden)
HIDDEN = pathlib.Path(__file__).resolve().parents[1] / "grading" / "hidden" / CHAPTER


def check_merged(label, **env):
    """The check with its hidden cases, as the instructor grades."""
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=HIDDEN / f"{label}.py")
    return result.passed_all, result.summary()


def _key(args):
    """The arguments of a call, as a key (objects other than ids, words and texts by their identity)."""
    def part(a):
        if isinstance(a, (str, int, np.integer)):
            return a if isinstance(a, str) else int(a)
        if isinstance(a, (list, tuple, np.ndarray)):
            return tuple(part(x) for x in (a.tolist() if isinstance(a, np.ndarray) else a))
        return id(a)
    return tuple(part(a) for a in args)


def _tuned_to_the_public_cases(label, name, right):
    """An answer that gives ``right``'s result for the inputs of the public check only (looked up), and
    nothing for any other input."""
    seen = {}

    def recording(*args):
        seen[_key(args)] = right(*args)
        return seen[_key(args)]

    assert check(label, **{name: recording})[0]
    return lambda *args: seen.get(_key(args))


@pytest.mark.parametrize("label,name,right", [
    ("ex-translation-merge", "merge_step", _merge_step()),
    ("ex-translation-bleu-by-hand", "bleu_by_hand", _bleu()),
    ("ex-translation-fix-decode", "fixed_decode", _decode(join="")),
])
def test_hidden_cases_catch_an_answer_tuned_to_the_public_ones(label, name, right):
    tuned = _tuned_to_the_public_cases(label, name, right)
    public = mt.exercises.run_check(CHAPTER, label, {name: tuned})
    assert public.passed_all, public.summary()
    merged = mt.exercises.run_check(CHAPTER, label, {name: tuned}, hidden=HIDDEN / f"{label}.py")
    # The public cases pass, every hidden case fails.
    assert [r.passed for r in merged.test_case_results] == [True] * len(public.test_case_results) + [False] * (
        len(merged.test_case_results) - len(public.test_case_results)), merged.summary()
    passed, text = check_merged(label, **{name: right})
    assert passed, text

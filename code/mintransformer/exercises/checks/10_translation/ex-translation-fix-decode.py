"""Exercise: find and fix the bug of a decode that joins subword tokens with spaces."""

import contextlib
import sys
import types

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call
from mintransformer.translation import bpe

OK_FORMAT = False
name = "ex-translation-fix-decode"
points = 3

RULE = ("`fixed_decode` calls tokenizer.decode, the package's own: fix spaced_decode instead, from the "
        "tokens' strings (tokenizer.id_to_token).")
TRAINING = ["En el principio creó Dios los cielos y la tierra.", "In the beginning, God created the heavens and "
            "the earth.", "Y dijo Dios: Sea la luz; y fué la luz.", "God said, \"Let there be light,\" and there was "
            "light.", "Jesús lloró.", "Jesus wept.", "12 tribus, 144 mil"]
# Texts the tokenizer can encode with its learned tokens only, then ones with characters it never
# saw (each written as its UTF-8 bytes: "ñ" as 2 bytes, "中" as 3, an emoji as 4).
PLAIN = ["In the beginning God created light.", "Y dijo Dios:  Sea la luz.", "  leading, trailing  ",
         "line one\nline two\ttab", "Jesus wept. Jesús lloró."]
UNSEEN = ["El niño comió.", "中文 y español", "light 🕯 and ½", "Zz ¿qué? ¡ñ!"]


def _tokenizer():
    """A small tokenizer, learned once per Python process."""
    store = sys.modules.setdefault("_mintransformer_checks_10_translation", types.ModuleType("store"))
    if not hasattr(store, "tokenizer"):
        store.tokenizer = bpe.learn_bpe(TRAINING, 400)
    return store.tokenizer


class _Refused(Exception):
    pass


@contextlib.contextmanager
def _no_decode():
    """BPE.decode refused while the student's function runs."""
    saved, used = bpe.BPE.__dict__["decode"], []

    def refused(self, ids):
        used.append(True)
        raise _Refused("this exercise asks you not to call tokenizer.decode")

    bpe.BPE.decode = refused
    try:
        yield used
    except Exception:
        if not used:
            raise
    finally:
        bpe.BPE.decode = saved
    if used:
        raise AssertionError(RULE)


def _decoded(fixed_decode, tokenizer, ids):
    with _no_decode():
        got = call(fixed_decode, "fixed_decode", tokenizer, list(ids))
    if not isinstance(got, str):
        raise AssertionError(f"`fixed_decode` must return a string, not a {type(got).__name__}.")
    return got


def _diagnose(got, text, tokenizer, ids, case):
    tokens = [tokenizer.id_to_token[i] for i in tokenizer.encode(text)]  # the text's own tokens, no specials
    if " ".join(tokens) in got and len(tokens) > 1:
        raise AssertionError(f"{case}: still the bug: the tokens are joined with spaces. Each token already "
                             f"holds its own spaces (\" the\", \" begin\" + \"ning\"): join them with nothing.")
    if "<0x" in got:
        raise AssertionError(f"{case}: your text holds byte tokens' names (<0x..>): a token with an id from "
                             f"3 to 258 stands for one byte, and the bytes of a character must be joined and "
                             f"read as UTF-8 together.")
    if "\ufffd" in got and "\ufffd" not in text:
        raise AssertionError(f"{case}: your text holds U+FFFD (\ufffd) where a character was: a character "
                             f"unseen in training is 2 to 4 byte tokens, and each byte alone is no valid UTF-8. "
                             f"Join the bytes of all tokens first, then decode the whole.")
    for special in ("<pad>", "<start>", "<end>"):
        if special in got and special not in text:
            raise AssertionError(f"{case}: your text holds {special}: stop at the first <end> and skip <pad> and "
                                 f"<start>; they are no text.")
    if got.split() == text.split():
        raise AssertionError(f"{case}: your text has the right words but not the right whitespace: "
                             f"decode(encode(text)) must give the text back exactly, every space, tab and "
                             f"newline included.")
    first = next(i for i, (a, b) in enumerate(zip(got + "\0", text + "\0")) if a != b)
    raise AssertionError(f"{case}: your text differs from the one that was encoded (first difference at "
                         f"character {first}).")


def _round_trip(fixed_decode, texts, what):
    tokenizer = _tokenizer()
    for text in texts:
        ids = tokenizer.encode(text)
        got = _decoded(fixed_decode, tokenizer, ids)
        if got != text:
            _diagnose(got, text, tokenizer, ids, f"{what} {text!r}")


@test_case(points=1)
def known_tokens(fixed_decode):
    _round_trip(fixed_decode, PLAIN, "The text")


@test_case(points=1)
def characters_never_seen(fixed_decode):
    tokenizer = _tokenizer()
    assert any(3 <= i < 259 for text in UNSEEN for i in tokenizer.encode(text))  # the case tests byte tokens
    _round_trip(fixed_decode, UNSEEN, "The text, with characters the tokenizer never saw,")


@test_case(points=1)
def model_output(fixed_decode):
    """What a decoder writes: <start>, the text, <end>, then padding (or anything) after it."""
    tokenizer = _tokenizer()
    for text in PLAIN[:2] + UNSEEN[:2]:
        ids = tokenizer.encode(text, add_start=True, add_end=True) + [tokenizer.pad_id] * 3
        ids += tokenizer.encode(" after the end")
        got = _decoded(fixed_decode, tokenizer, np.array(ids))
        if got != text:
            if got.startswith(text) and len(got) > len(text):
                raise AssertionError(f"Output ids of {text!r} with <end> and more after it: stop at the first "
                                     f"<end>; what follows it is no part of the text.")
            _diagnose(got, text, tokenizer, ids, f"Output ids of {text!r}")
    lone = [tokenizer.start_id, 3 + 0xC3, tokenizer.end_id]  # one byte that starts a 2-byte character, alone
    try:
        got = _decoded(fixed_decode, tokenizer, lone)
    except AssertionError as error:
        if "UnicodeDecodeError" not in str(error):
            raise
        got = None
    if got != "\ufffd":
        raise AssertionError("A model can write bytes that are no valid UTF-8 (here <0xC3> alone, half of a "
                             "character): decode them with errors=\"replace\", which makes each bad sequence "
                             "U+FFFD, as the package does.")

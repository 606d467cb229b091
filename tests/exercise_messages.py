"""A check's message says what is wrong and why, never the answer: helpers for the exercise tests.

``assert_hides(text, *answers)`` fails if the text of a failed check (``result.summary()``) holds an
answer in any form a message would print it: a number rounded to 3 to 6 significant digits or
decimals, a whole number (also with thousands separators), a shape or a list of integers, a quoted
string. ``assert_same_message`` is for choices between two or three options: a message that
depended on which option is wrong would name the right one.
"""

import re

import numpy as np

# otter's own lines: "Error at line 67 in test ..." holds numbers that are no part of a message.
_OTTER_LINES = re.compile(r"^.*(Error at line \d+|Test case (passed|failed)|results:|- \d+ result:).*$", re.M)


def _significant(form):
    """The number of significant digits a printed number shows."""
    digits = re.sub(r"[^0-9]", "", form.split("e")[0]).lstrip("0")
    return len(digits)


def answer_forms(value):
    """The strings in which a message could hand out ``value``."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return set()  # too short to tell apart from other words: use assert_same_message
    if isinstance(value, str):
        return {f'"{value}"', f"'{value}'", f"`{value}`"} | ({value} if len(value) > 3 else set())
    if isinstance(value, dict):
        return set().union(*(answer_forms(v) for v in value.values())) if value else set()
    forms = set()
    if isinstance(value, (list, tuple, set, frozenset)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value) and len(value) > 1:
        items = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        forms |= {str(list(int(v) for v in items)), str(tuple(int(v) for v in items)), ", ".join(map(str, items))}
        return forms
    if isinstance(value, (list, tuple, set, frozenset)) and value and all(isinstance(v, str) for v in value):
        return set().union(*(answer_forms(v) for v in value))
    array = np.asarray(value, dtype="float64").reshape(-1)
    for v in array:
        if not np.isfinite(v):
            continue
        if float(v).is_integer():
            if abs(v) >= 10:  # one digit would match too much
                forms |= {str(int(v)), f"{int(v):,}", f"{v:.1f}"}
            if abs(v) >= 1e5:  # a count printed the way a float is, 2.297e+18
                forms |= {f"{v:.{digits}g}" for digits in range(4, 7)} | {f"{v:.{digits}e}" for digits in range(3, 6)}
            continue
        for digits in range(3, 7):
            for form in (f"{v:.{digits}g}", f"{v:.{digits}f}", f"{100 * v:.{digits - 1}f}%"):
                # "100" from 100.3 would be any round number: a rounded float shows its point
                if _significant(form) >= 3 and ("." in form or "e" in form):
                    forms.add(form)
    return forms


def _found(form, text):
    """Whether ``form`` stands in ``text`` as a whole (a number not inside a longer one)."""
    if re.fullmatch(r"-?[\d,.]+%?", form):
        return re.search(rf"(?<![\d.]){re.escape(form)}(?!\d|\.\d)", text) is not None
    return form in text


def assert_hides(text, *answers):
    """Fail if the check's ``text`` holds one of the ``answers`` in a printed form."""
    message = _OTTER_LINES.sub("", text)
    leaked = sorted({form for answer in answers for form in answer_forms(answer) if _found(form, message)})
    assert not leaked, f"the check's message hands out the answer {leaked}:\n{text}"


def assert_same_message(texts):
    """Fail unless every text says the same: which option was wrong must not show."""
    found = [_OTTER_LINES.sub("", text).strip() for text in texts]
    assert all(f == found[0] for f in found), "the messages differ with the wrong option:\n" + "\n\n".join(texts)


def shown_lines_that_compute(chapter):
    """The lines of a chapter's checks that otter may show under a failure and that compute an answer.

    otter prints, above a failed case's message, the line of the test case that raised. A
    ``close(got, np.sqrt(3) / limit, ...)`` there prints the formula of the answer: the expected value
    of every ``close`` called in a test case must be a name computed on a line of its own.
    """
    import ast
    import pathlib

    import mintransformer as mt

    found = []
    for path in sorted(pathlib.Path(mt.exercises.tests_dir(chapter)).glob("ex-*.py")):
        lines = path.read_text().split("\n")
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.FunctionDef) and any(
                    getattr(getattr(d, "func", None), "id", None) == "test_case" for d in node.decorator_list)):
                continue
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "close" and len(call.args) > 1:
                    expected = call.args[1]
                    if any(isinstance(n, (ast.BinOp, ast.Lambda)) for n in ast.walk(expected)):
                        found.append(f"{path.name}:{call.lineno}: {lines[call.lineno - 1].strip()}")
    return found

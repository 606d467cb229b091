"""The hidden test cases (grading/hidden/): well formed, and out of the package students install.

Hidden cases count only when an instructor grades (scripts/grade.py adds them to the public
checks, mt.exercises.merged_source). That every chapter's reference solutions pass them, public
and hidden cases together, to full marks, is tested where it matters, through the grader:
tests/test_editions.py grades each chapter's instructor edition (under an id of its own, so the
per-student numbers are drawn too), and tests/test_per_student.py runs the solutions of the
per-student exercises for the book's numbers and 12 ids.
"""

import ast
import contextlib
import io
import os
import pathlib
import subprocess
import sys
import zipfile

import nbformat
import pytest

import mintransformer as mt

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIDDEN = ROOT / "grading" / "hidden"


def hidden_file(chapter, label):
    path = HIDDEN / chapter / f"{label}.py"
    return path if path.is_file() else None


def test_every_hidden_file_belongs_to_a_check():
    for path in HIDDEN.glob("*/*.py"):
        chapter, label = path.parent.name, path.stem
        assert chapter in mt.exercises.chapters(), path
        assert label in mt.exercises.labels(chapter), path
        mt.exercises.merged_source(chapter, label, path)  # well formed: raises otherwise


def hidden_cases(source):
    """The names of the test cases of a check's source marked ``hidden=True``."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and any(
                        k.arg == "hidden" and getattr(k.value, "value", None) is True
                        for k in decorator.keywords):
                    names.append(node.name)
    return names


def test_no_hidden_case_ships_in_the_wheel(tmp_path):
    # The wheel that pip builds from this checkout (what students install), read as a zip.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = tmp_path.glob("mintransformer-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        checks = [n for n in archive.namelist() if "/exercises/checks/" in n and n.endswith(".py")]
        assert len(checks) == sum(len(mt.exercises.labels(c)) for c in mt.exercises.chapters())
        assert not any("hidden" in n for n in archive.namelist())
        for name in checks:
            assert not hidden_cases(archive.read(name).decode()), name
    for path in HIDDEN.glob("*/*.py"):  # and the hidden files are what the test looks for
        assert hidden_cases(path.read_text()), path

"""The hidden test cases (grading/hidden/): well formed, out of the package, passed by every reference solution.

Hidden cases count only when an instructor grades (scripts/grade.py adds them to the public
checks, mt.exercises.merged_source). Here each chapter's reference solutions (the cells tagged
``exercise-solution``, run after the chapter's set-up cell, as the instructor's edition runs them)
must pass every check, public and hidden cases together, to full marks.
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


def solutions_namespace(chapter):
    """The names the exercises define in the instructor's edition: set-up, work and solution cells, in order."""
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    cells, started = [], False
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        started = started or "exercise-setup" in tags
        if started and cell.cell_type == "code" and "exercise-check" not in tags:
            cells.append(cell.source)
    namespace = {"__name__": "__main__", "STUDENT_ID": ""}  # the book's numbers (tests/test_per_student.py: others)
    cwd = os.getcwd()
    os.chdir(ROOT / "chapters")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for source in cells:
                # (IPython magics do not occur after the set-up cell.)
                exec(compile(source, f"<{chapter}>", "exec"), namespace)
    finally:
        os.chdir(cwd)
    return namespace


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


@pytest.mark.parametrize("chapter", mt.exercises.chapters())
def test_reference_solutions_pass_public_and_hidden_cases(chapter):
    namespace = solutions_namespace(chapter)
    failures = []
    for label in mt.exercises.labels(chapter):
        result = mt.exercises.run_check(chapter, label, namespace, hidden=hidden_file(chapter, label))
        if not result.passed_all:
            failures.append(result.summary())
    assert not failures, "\n\n".join(failures)

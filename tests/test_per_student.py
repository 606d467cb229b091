"""Per-student numbers (mt.exercises.parameters): drawn from STUDENT_ID, the same everywhere, and
such that a copied answer fails.

For every exercise with per-student numbers, its work and solution cells are run, after the
chapter's set-up cell, for 12 ids: the reference solution, which computes from the numbers, passes
the public and hidden cases for each; the book's answers, and a classmate's, pass for at most 3.
"""

import ast
import contextlib
import io
import os
import pathlib
import re

import nbformat
import numpy as np
import pytest

import mintransformer as mt
from mintransformer.exercises import per_student
from mintransformer.exercises.checking import student_numbers

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIDDEN = ROOT / "grading" / "hidden"
IDS = [f"s{i:03d}" for i in range(12)]
LABELS = per_student.labels()
NUMBERS_CALL = re.compile(r"^(\w+_numbers) = mt\.exercises\.parameters\(\"(ex-[\w-]+)\", STUDENT_ID\)$", re.M)


def chapter_of(label):
    (chapter,) = [c for c in mt.exercises.chapters() if label in mt.exercises.labels(c)]
    return chapter


# ---------------------------------------------------------------- the draw
def test_the_draw_is_pinned():
    # SHA-256 in counter mode: the same numbers on any machine, Python or NumPy. These values were
    # computed once; a change here would change every student's numbers in the middle of a term.
    draw = per_student.Draw("ex-attention-by-hand", "s001")
    assert [draw.integer(0, 9) for _ in range(8)] == PINNED_DIGITS
    assert {label: dict(mt.exercises.parameters(label, "s001")) for label in LABELS} == PINNED_S001


PINNED_DIGITS = [8, 4, 3, 4, 5, 3, 3, 2]
PINNED_S001 = {  # every exercise's numbers for STUDENT_ID "s001": a draw changed mid-term fails here
    "ex-attention-by-hand": {"q_1": (1, 2, 2, 1), "q_2": (0, 0, 0, 0), "k_1": (1, 1, 0, 0), "k_2": (1, 1, 1, 1),
                             "v_1": (5, 0), "v_2": (0, 8)},
    "ex-attention-causal-independence": {"length": 9, "first_changed": 2},
    "ex-gpt-cache-memory": {"model": "GPT-2 small", "num_layers": 12, "d_model": 768, "parameters": 124439808,
                            "length": 320},
    "ex-modern-gqa-cache": {"num_layers": 24, "d_model": 768, "num_heads": 12, "num_key_value_heads": 3,
                            "batch_size": 8, "bytes_per_value": 2, "memory_gib": 16},
    "ex-modern-online-by-hand": {"logits": (-1, -2, 0, 2), "values": (0, -2, 0, -1)},
    "ex-modern-swiglu-width": {"d_model": 1280, "multiple_of": 64},
    "ex-inference-cache-memory": {"batch": 32, "target_length": 220, "source_length": 170},
    "ex-inference-length-penalty": {"length_a": 3, "log_p_a": -1.3, "length_b": 13, "log_p_b": -3.7},
    "ex-layernorm-epsilon": {"ratio": 1.0385, "eps_small": 1e-06, "eps_keras": 0.001},
    "ex-layers-which-positions": {"target": (1, 2, 4, 4, 7, 2, 5, 0), "t": 6, "source": (2, 2, 3, 2, 9, 2, 9, 0),
                                  "s": 5},
    "ex-mathematics-shift": {"z": (-2, 0)},
    "ex-model-start-token": {"target": (0, 11, 8, 0, 0)},
    "ex-model-untied-share": {"N": 6, "D": 352, "h": 8, "dff": 1408, "V": 37000},
    "ex-multihead-params": {"d_model": 768, "num_heads": 11, "key_dim": 69, "num_layers": 10},
    "ex-multihead-shapes": {"B": 6, "T": 11, "S": 10, "d_model": 640, "h": 4},
    "ex-positional-dot": {"query_position": 47, "look_ahead": 4},
    "ex-positional-wavelength": {"wavelength": 405, "tokens": 151},
    "ex-training-base-schedule": {"d_model": 768, "warmup_steps": 3000, "train_steps": 200000},
}


def test_ids_are_read_as_the_grader_reads_them():
    label = LABELS[0]
    assert mt.exercises.parameters(label, " s001 ") == mt.exercises.parameters(label, "s001")
    assert mt.exercises.parameters(label, 12345) == mt.exercises.parameters(label, "12345")
    assert mt.exercises.parameters(label, np.int64(7)) == mt.exercises.parameters(label, "7")
    assert mt.exercises.parameters(label, "") == mt.exercises.parameters(label)
    numbers = mt.exercises.parameters(label, "s001")
    assert numbers.label == label and numbers.student_id == "s001" and "STUDENT_ID 's001'" in repr(numbers)
    assert "the book's numbers" in repr(mt.exercises.parameters(label, ""))


@pytest.mark.parametrize("bad", [None, True, 1.5, b"s001", ["s001"]])
def test_an_id_that_is_not_text_is_refused(bad):
    with pytest.raises(TypeError, match="STUDENT_ID must be a string"):
        mt.exercises.parameters(LABELS[0], bad)


def test_an_unknown_exercise_is_refused():
    with pytest.raises(ValueError, match="has no per-student numbers; those that do"):
        mt.exercises.parameters("ex-attention-implement", "s001")


def test_the_check_helper_says_what_is_missing_or_stale():
    label = LABELS[0]
    with pytest.raises(AssertionError, match="defines no STUDENT_ID"):
        student_numbers(label, None)
    with pytest.raises(AssertionError, match="must be a string"):
        student_numbers(label, 1.5)
    stale = mt.exercises.parameters(label, "")
    with pytest.raises(AssertionError, match="printed the numbers of STUDENT_ID ''.*run the work cell again"):
        student_numbers(label, "s001", stale)
    assert student_numbers(label, "s001", mt.exercises.parameters(label, "s001")) == \
        mt.exercises.parameters(label, "s001")


@pytest.mark.parametrize("label", LABELS)
def test_numbers_are_drawn_with_the_books_names_and_differ_between_students(label):
    book = mt.exercises.parameters(label, "")
    drawn = [mt.exercises.parameters(label, f"id{i}") for i in range(100)]
    assert all(list(d) == list(book) for d in drawn)
    assert drawn[0] == mt.exercises.parameters(label, "id0")  # the same id, the same numbers
    distinct = {repr(dict(d)) for d in drawn}
    assert len(distinct) >= 20, f"{label}: only {len(distinct)} different sets of numbers in 100 ids"


# ---------------------------------------------------------------- the exercises
def exercise_cells(chapter, label):
    """(set-up source, the exercise's work and solution sources, the numbers' variable)."""
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    setup, cells, current = None, [], None
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        match = re.search(r":label: (ex-[\w-]+)", cell.source) if cell.cell_type == "markdown" else None
        if match and cell.source.lstrip().startswith(":::{exercise}"):
            current = match.group(1)
        if "exercise-setup" in tags:
            setup = cell.source
        elif current == label and cell.cell_type == "code" and (
                "exercise-work" in tags or "exercise-solution" in tags):
            cells.append((tags, cell.source))
    work = [source for tags, source in cells if "exercise-work" in tags]
    assert len(work) == 1, f"{label}: {len(work)} work cells"
    (found,) = [m for m in NUMBERS_CALL.finditer(work[0])]
    assert found.group(2) == label, f"{label}'s work cell draws the numbers of {found.group(2)}"
    assert f"print({found.group(1)})" in work[0], f"{label}: the work cell does not print the numbers"
    assert any("exercise-solution" in tags for tags, _ in cells), f"{label}: no solution cell"
    return setup, [source for _, source in cells], found.group(1)


def answer_names(work_source, numbers_name):
    """The names the work cell asks for: what it assigns and defines, the numbers left out."""
    names = set()
    for node in ast.parse(work_source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names - {numbers_name}


@contextlib.contextmanager
def in_chapters():
    cwd = os.getcwd()
    os.chdir(ROOT / "chapters")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("label", LABELS)
def test_reference_passes_for_every_id_and_copied_answers_fail(label):
    chapter = chapter_of(label)
    setup, sources, numbers_name = exercise_cells(chapter, label)
    hidden = HIDDEN / chapter / f"{label}.py"
    assert hidden.is_file(), hidden
    base = {"__name__": "__main__"}
    with in_chapters():
        exec(compile(setup, f"<{chapter} set-up>", "exec"), base)
    names = answer_names(sources[0], numbers_name)

    def run(student_id):
        namespace = dict(base, STUDENT_ID=student_id)
        with in_chapters():
            for source in sources:
                exec(compile(source, f"<{label}>", "exec"), namespace)
        return namespace

    def graded(namespace):
        return mt.exercises.run_check(chapter, label, namespace, hidden=hidden)

    runs = {student_id: run(student_id) for student_id in [""] + IDS}
    for student_id, namespace in runs.items():
        result = graded(namespace)
        assert result.passed_all, f"{label}, STUDENT_ID {student_id!r}:\n{result.summary()}"

    def copied(source_id, student_id):
        env = dict(runs[student_id])
        env.update({name: runs[source_id][name] for name in names})
        return graded(env).passed_all

    book_copies = sum(copied("", student_id) for student_id in IDS)
    classmate_copies = sum(copied(IDS[0], student_id) for student_id in IDS[1:])
    assert book_copies <= 3, f"{label}: the book's answers pass for {book_copies} of {len(IDS)} ids"
    assert classmate_copies <= 3, f"{label}: a classmate's answers pass for {classmate_copies} of {len(IDS) - 1} ids"
    # A notebook with no id (the grader passes None): the book's answers earn nothing, and it says why.
    result = graded(dict(runs[""], STUDENT_ID=None))
    assert result.score == 0 and "defines no STUDENT_ID" in result.summary(), result.summary()
    # The numbers of another id, printed by a work cell that was not run again: the check says so.
    stale = dict(runs[IDS[1]], STUDENT_ID=IDS[2])
    summary = mt.exercises.run_check(chapter, label, stale).summary()
    assert "run the work cell again" in summary, summary


@pytest.mark.parametrize("label", LABELS)
def test_numbers_are_plain_python(label):
    # Printed as a student reads them, and the same for the check: no array, no tensor.
    for student_id in ("", "s001"):
        for value in mt.exercises.parameters(label, student_id).values():
            items = value if isinstance(value, tuple) else (value,)
            assert all(isinstance(v, (int, float, str)) for v in items), (label, value)


def test_numbers_of_another_version_are_named():
    label = LABELS[0]
    stale = per_student.Parameters({k: v for k, v in mt.exercises.parameters(label, "s001").items()}, label, "s001")
    stale[next(iter(stale))] = "changed"
    with pytest.raises(AssertionError, match="this version of the book's package does not draw"):
        student_numbers(label, "s001", stale)

"""The three editions and the grader, end to end (scripts/editions.py, student_edition.py, grade.py).

- the student edition holds no line of any solution;
- the instructor's edition grades to full marks, the blank student edition to 0, and a broken
  submission is graded (0, with its error) without stopping the run;
- the reader's Colab notebooks hold no MyST, every link in them is absolute, and the committed
  ones (colab/chapters/, what the launch buttons open) are those the chapters give today;
- a student notebook runs as in Colab: alone in an empty folder, the package installed
  non-editable, its checks found and run.
"""

import csv
import json
import os
import pathlib
import re
import subprocess
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import editions  # noqa: E402
import grade  # noqa: E402

import mintransformer as mt  # noqa: E402

CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Every chapter in every edition, written once for this module."""
    out = tmp_path_factory.mktemp("editions")
    return {edition: {p.stem: p for p in editions.write(edition, out / edition)}
            for edition in editions.EDITIONS}


def source_cells(chapter):
    return nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4).cells


def solution_lines(chapter):
    """Lines of the chapter's solutions (code and text) that appear nowhere else in it."""
    inside, elsewhere, in_solution = set(), set(), False
    for cell in source_cells(chapter):
        start = cell.cell_type == "markdown" and editions._solution_start(cell.source)
        lines = {line.strip() for line in cell.source.splitlines() if len(line.strip()) > 12}
        if start:
            in_solution = True
        is_solution = in_solution or "exercise-solution" in editions.tags(cell)
        (inside if is_solution else elsewhere).update(lines)
        if cell.cell_type == "markdown" and editions._is_solution_end(cell.source):
            in_solution = False
    return {line for line in inside - elsewhere if not line.startswith("```")}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_student_edition_holds_no_solution(made, chapter):
    student = nbformat.read(made["student"][chapter], as_version=4)
    text = "\n".join(cell.source for cell in student.cells)
    student_lines = {line.strip() for line in text.splitlines()}
    lines = solution_lines(chapter)
    assert lines, f"{chapter}: no solution found in the chapter"
    leaked = sorted(lines & student_lines)
    assert not leaked, f"{chapter}: solution lines in the student edition: {leaked[:3]}"
    assert "<details>" not in text and editions.BEGIN not in text
    kinds = [editions.tags(cell) for cell in student.cells if cell.cell_type == "code"]
    assert sum("exercise-work" in k for k in kinds) >= 3
    assert sum("exercise-check" in k for k in kinds) >= 3
    assert not any("exercise-solution" in k for k in kinds)


@pytest.fixture(scope="module")
def graded(made, tmp_path_factory):
    """The instructor's and the blank student's editions of every chapter, graded in one run."""
    submissions = tmp_path_factory.mktemp("submissions")
    for edition in ("instructor", "student"):
        for chapter, path in made[edition].items():
            (submissions / f"{chapter}-{edition}.ipynb").write_bytes(path.read_bytes())
    (submissions / "02_attention-broken.ipynb").write_text('{"cells": [')  # not even JSON
    # Half done: one solution raises, one exercise left blank, under a name that says nothing.
    half = nbformat.read(made["instructor"]["02_attention"], as_version=4)
    for cell in half.cells:
        if "exercise-solution" in editions.tags(cell) and "def my_attention" in cell.source:
            cell.source = "def my_attention(q, k, v, mask=None):\n    return 1 / 0"
        if "exercise-solution" in editions.tags(cell) and "def my_decoder_mask" in cell.source:
            cell.source = "raise RuntimeError('not finished')"
    nbformat.write(half, submissions / "half-done.ipynb")
    out = submissions / "grades.csv"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(submissions), str(out)],
                   check=True, cwd=submissions, timeout=1800)
    with open(out) as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_instructors_edition_grades_to_full_marks(graded, chapter):
    row = graded[f"{chapter}-instructor.ipynb"]
    assert row["chapter"] == chapter and not row["error"], row
    for label in mt.exercises.labels(chapter):
        assert float(row[label]) == mt.exercises.points(chapter, label), (label, row)
    assert float(row["total"]) == float(row["possible"]) > 0


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_blank_student_edition_grades_to_zero(graded, chapter):
    row = graded[f"{chapter}-student.ipynb"]
    assert row["chapter"] == chapter and not row["error"], row
    labels = mt.exercises.labels(chapter)
    assert len(labels) >= 3
    assert all(float(row[label]) == 0 for label in labels), row
    assert float(row["total"]) == 0


def test_a_broken_submission_is_graded_and_named(graded):
    row = graded["02_attention-broken.ipynb"]
    assert float(row["total"]) == 0 and "not a readable notebook" in row["error"]


def test_a_half_done_submission_gets_the_points_of_what_works(graded):
    row = graded["half-done.ipynb"]
    assert row["chapter"] == "02_attention" and not row["error"], row
    assert float(row["ex-attention-implement"]) == 0 and float(row["ex-attention-combine-masks"]) == 0
    for label in ("ex-attention-by-hand", "ex-attention-identical-keys", "ex-attention-fix-additive-mask"):
        assert float(row[label]) == mt.exercises.points("02_attention", label), (label, row)


def test_a_submission_that_hangs_is_stopped_and_named(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(600)")])
    nb.metadata["mintransformer"] = {"chapter": "02_attention"}
    (tmp_path / "subs").mkdir()
    nbformat.write(nb, tmp_path / "subs" / "forever.ipynb")
    rows = grade.grade(tmp_path / "subs", tmp_path / "grades.csv", timeout=5, log=lambda _: None)
    assert rows[0]["error"] == "grading took longer than 5 s" and rows[0]["total"] == 0


MYST = [r"\{(eq|cite|cite:\w+|ref|numref|doc|term|download|math)\}`", r"^:::", r"^```\{",
        r"^:label:", r"^:class:", r"\$\$ *\([\w-]+\) *$", r"\{exercise\}", r"\{solution", r"\{admonition\}"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_colab_notebooks_hold_no_myst_and_only_absolute_links(made, chapter):
    url = editions.book_url()
    for edition in editions.EDITIONS:
        nb = nbformat.read(made[edition][chapter], as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for pattern in MYST:
                found = re.search(pattern, cell.source, re.M)
                assert not found, f"{chapter} ({edition}): MyST left: {found.group()!r} in {cell.source[:120]!r}"
            for link in re.findall(r"\]\(([^)\s]+)\)", editions.CODE.sub("", cell.source)):
                assert re.match(r"https?://", link), f"{chapter} ({edition}): relative link {link}"
                if link.startswith(url):
                    page = link[len(url):].split("#")[0]
                    assert (ROOT / page).with_suffix(".ipynb").exists() or (ROOT / page).with_suffix(".md").exists(), link
    reader = nbformat.read(made["reader"][chapter], as_version=4)
    folded = sum("<details>" in cell.source for cell in reader.cells)
    starts = sum(bool(editions._solution_start(c.source)) for c in source_cells(chapter) if c.cell_type == "markdown")
    assert folded == starts >= 3, f"{chapter}: {folded} folded solutions for {starts} exercises"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_committed_colab_notebooks_are_current(made, chapter):
    committed = ROOT / "colab" / "chapters" / f"{chapter}.ipynb"
    assert committed.exists(), "run: python scripts/colab_edition.py, and commit colab/chapters"
    strip = lambda nb: [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in nb.cells]  # noqa: E731
    assert strip(nbformat.read(committed, as_version=4)) == strip(
        nbformat.read(made["reader"][chapter], as_version=4)
    ), f"{committed.relative_to(ROOT)} is out of date: run python scripts/colab_edition.py and commit it"


def test_a_student_notebook_runs_as_in_colab(made, tmp_path):
    """Alone in an empty folder, with the package installed non-editable: the checks run."""
    from nbclient import NotebookClient

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(ROOT)], check=True, timeout=600)
    folder = tmp_path / "empty"
    folder.mkdir()
    path = folder / "02_attention.ipynb"
    nb = nbformat.read(made["student"]["02_attention"], as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print(mt.__file__)\nprint(mt.exercises.tests_dir('02_attention'))"))
    nbformat.write(nb, path)
    assert [p.name for p in folder.iterdir()] == [path.name]  # alone in the folder
    env = dict(os.environ, PYTHONPATH=str(site))
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute(env=env)
    checks = [c for c in nb.cells if c.cell_type == "code" and "exercise-check" in editions.tags(c)]
    assert len(checks) >= 3
    for cell in checks:
        text = json.dumps(cell.outputs)
        assert "results:" in text and "Test case failed" in text, text[:300]
    where = nb.cells[-1].outputs[0]["text"]
    assert str(site) in where and str(ROOT) not in where, where


@pytest.mark.skipif(not (ROOT / "_build" / "html").is_dir(), reason="the book is not built")
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_launch_button_opens_the_colab_notebook(chapter):
    page = (ROOT / "_build" / "html" / "chapters" / f"{chapter}.html").read_text()
    links = set(re.findall(r'href="(https://colab\.research\.google\.com/github/[^"]+)"', page))
    assert len(links) == 1, links
    assert links.pop().endswith(f"/blob/main/colab/chapters/{chapter}.ipynb")


def test_the_html_book_without_solutions(tmp_path):
    """student_edition.py --html: the book builds with no solution in it, work cells shown."""
    index = editions.html_without_solutions(tmp_path / "html")
    assert index.is_file()
    for chapter in CHAPTERS:
        page = (tmp_path / "html" / "chapters" / f"{chapter}.html").read_text()
        assert 'class="solution' not in page and "Solution to" not in page, chapter
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))
        assert text.count("raise NotImplementedError") + text.count("= ...") >= 3, chapter
        assert "passed!" not in page, f"{chapter}: a check's output made with the solutions"

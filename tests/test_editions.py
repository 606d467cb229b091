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
from markdown_it import MarkdownIt

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
            nb = nbformat.read(path, as_version=4)
            # An id, as a student's: the reference solutions compute from the numbers drawn for it.
            (cell,) = [c for c in nb.cells if "student-id" in editions.tags(c)]
            cell.source = cell.source.replace('STUDENT_ID = ""', f'STUDENT_ID = "key-{chapter}"')
            nbformat.write(nb, submissions / f"{chapter}-{edition}.ipynb")
    (submissions / "02_attention-broken.ipynb").write_text('{"cells": [')  # not even JSON
    # Half done: one solution raises, one exercise left blank, under a name that says nothing.
    half = nbformat.read(made["instructor"]["02_attention"], as_version=4)
    for cell in half.cells:
        if "student-id" in editions.tags(cell):  # an id, as a student's (the by-hand numbers are drawn from it)
            cell.source = cell.source.replace('STUDENT_ID = ""', 'STUDENT_ID = "s-half"')
        if "exercise-solution" in editions.tags(cell) and "def my_attention" in cell.source:
            cell.source = "def my_attention(q, k, v, mask=None):\n    return 1 / 0"
        if "exercise-solution" in editions.tags(cell) and "def my_decoder_mask" in cell.source:
            cell.source = "raise RuntimeError('not finished')"
    nbformat.write(half, submissions / "half-done.ipynb")
    out = tmp_path_factory.mktemp("graded")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), "run", str(submissions), str(out), "--jobs", "2"],
                   check=True, cwd=submissions, timeout=1800)
    with open(out / "grades.csv") as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


def full_points(chapter, label):
    """An exercise's points when graded: its public and hidden test cases."""
    return mt.exercises.points(chapter, label, grade.hidden_file(chapter, label))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_instructors_edition_grades_to_full_marks(graded, chapter):
    row = graded[f"{chapter}-instructor.ipynb"]
    assert row["chapter"] == chapter and not row["error"], row
    assert row["edition"] == "instructor" and "instructor's edition" in row["flags"]
    for label in mt.exercises.labels(chapter):
        assert float(row[label]) == full_points(chapter, label), (label, row)
        hidden, possible = row[f"{label} hidden"].split("/")
        assert hidden == possible, (label, row)
    assert float(row["auto"]) == sum(full_points(chapter, label) for label in mt.exercises.labels(chapter)) > 0


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
        assert float(row[label]) == full_points("02_attention", label), (label, row)


def test_a_submission_that_hangs_is_stopped_and_named(tmp_path):
    setup = nbformat.v4.new_code_cell('grader = mt.exercises.grader("02_attention")')
    setup.metadata["tags"] = ["exercise-setup"]
    nb = nbformat.v4.new_notebook(cells=[setup, nbformat.v4.new_code_cell("import time\ntime.sleep(600)")])
    nb.metadata["mintransformer"] = {"chapter": "02_attention"}
    (tmp_path / "subs").mkdir()
    nbformat.write(nb, tmp_path / "subs" / "forever.ipynb")
    rows = grade.grade(tmp_path / "subs", tmp_path / "out", timeout=20, log=lambda _: None)
    assert rows[0]["error"] == "grading took longer than 20 s" and rows[0]["total"] == 0


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


# What Jupyter and Colab render a markdown cell with: CommonMark and GitHub's tables.
MARKDOWN = MarkdownIt("commonmark").enable("table")
ROLE = re.compile(r"\{[\w:-]+\}$")  # a MyST role before its `target`: {cite}, {eq}, {ref}...
TYPOGRAPHY = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "--", "—": "---", "…": "..."})


def _cell_content(inline):
    """(text, code spans, link texts, roles, emphases) of a table cell: what it shows, markup aside.

    Spaces are dropped and Sphinx's typography undone ($x$ is $ x $, ' is ’ in the editions).
    A MyST role of the source (resolved to a link in the editions) is None in ``text``.
    """
    text, codes, links, roles, emphases, link = [], [], [], 0, 0, None
    tokens = inline.children or []
    for i, token in enumerate(tokens):
        after_role = token.type == "code_inline" and i and tokens[i - 1].type == "text" and \
            ROLE.search(tokens[i - 1].content)
        if token.type == "text" and i + 1 < len(tokens) and tokens[i + 1].type == "code_inline" \
                and ROLE.search(token.content):
            piece = ROLE.sub("", token.content)
        elif after_role:
            text.append(None)
            roles += 1
            continue
        elif token.type in ("text", "code_inline"):
            piece = token.content
        elif token.type in ("em_open", "strong_open"):
            emphases += 1
            continue
        elif token.type == "link_open":
            link = []
            continue
        elif token.type == "link_close":
            links.append("".join(link))
            link = None
            continue
        else:
            continue
        piece = re.sub(r"\s+", "", piece.translate(TYPOGRAPHY))
        if token.type == "code_inline":
            codes.append(piece)
        if link is not None:
            link.append(piece)
        text.append(piece)
    return text, codes, links, roles, emphases


def rendered_tables(markdown):
    """The tables Jupyter renders from a markdown text: each a list of rows of cells' inline tokens."""
    tables, cell_open = [], False
    for token in MARKDOWN.parse(markdown):
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            tables[-1].append([])
        elif token.type in ("th_open", "td_open"):
            cell_open = True
        elif token.type == "inline" and cell_open:
            tables[-1][-1].append(token)
            cell_open = False
    return tables


def code_blocks(markdown):
    """The contents of the code blocks (fenced or indented) a markdown text renders, MyST's directives aside."""
    return [token.content.strip() for token in MARKDOWN.parse(markdown)
            if token.type == "code_block" or (token.type == "fence" and not token.info.startswith("{"))]


def source_parts(chapter):
    """Each of the chapter's cells with whether it is part of an exercise's solution."""
    parts, in_solution = [], False
    for cell in source_cells(chapter):
        start = cell.cell_type == "markdown" and editions._solution_start(cell.source)
        in_solution = in_solution or bool(start)
        parts.append((cell, in_solution or "exercise-solution" in editions.tags(cell)))
        if cell.cell_type == "markdown" and editions._is_solution_end(cell.source):
            in_solution = False
    return parts


def test_the_chapters_tables_are_found():
    """The check below sees every table of the book: each delimiter row of a chapter is a table's."""
    found = 0
    for chapter in CHAPTERS:
        for cell in source_cells(chapter):
            if cell.cell_type == "markdown":
                delimiters = len(re.findall(r"^\|(?: *:?-+:? *\|)+ *$", cell.source, re.M))
                assert len(rendered_tables(cell.source)) == delimiters, (chapter, cell.source[:200])
                found += delimiters
    assert found >= 8


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_table_renders_as_a_table_in_every_edition(made, chapter):
    """Each table of the chapter is a table in each edition: its rows, columns and cells' contents.

    sphinx-tojupyter 0.6 wrote the cells' inline markup (backticks, links, citations, emphasis)
    before the table; scripts/tojupyter_tables.py fixes it. And no edition has a code block its
    chapter has not: a stray run of backticks opens one that swallows the rest of the cell.
    """
    parts = source_parts(chapter)
    for edition in editions.EDITIONS:
        keeps = (lambda in_solution: not in_solution) if edition == "student" else (lambda _: True)
        expected = [table for cell, in_solution in parts if cell.cell_type == "markdown" and keeps(in_solution)
                    for table in rendered_tables(cell.source)]
        blocks = [block for cell, in_solution in parts if cell.cell_type == "markdown" and keeps(in_solution)
                  for block in code_blocks(cell.source)]
        if edition == "reader":  # the solutions' code, folded into markdown as ```python blocks
            blocks += [cell.source.strip() for cell, in_solution in parts
                       if cell.cell_type == "code" and in_solution and cell.source.strip()]
        markdown = [cell.source for cell in nbformat.read(made[edition][chapter], as_version=4).cells
                    if cell.cell_type == "markdown"]
        tables = [table for text in markdown for table in rendered_tables(text)]
        where = f"{chapter} ({edition})"
        assert len(tables) == len(expected), f"{where}: {len(tables)} tables rendered, {len(expected)} in the chapter"
        for number, (table, source) in enumerate(zip(tables, expected), 1):
            shape = (len(table), len(table[0]))
            assert shape == (len(source), len(source[0])), f"{where}, table {number}: {shape} rows, columns"
            for r, (row, source_row) in enumerate(zip(table, source)):
                assert len(row) == len(source_row), f"{where}, table {number}, row {r}: {len(row)} cells"
                for cell, source_cell in zip(row, source_row):
                    text, codes, links, _, emphases = _cell_content(cell)
                    want, want_codes, want_links, roles, want_emphases = _cell_content(source_cell)
                    pattern = "".join(".+?" if piece is None else re.escape(piece) for piece in want)
                    assert re.fullmatch(pattern, "".join(text)), \
                        f"{where}, table {number}, row {r}: {cell.content!r} shows {source_cell.content!r}"
                    assert codes == want_codes, f"{where}, table {number}: code {codes} in {cell.content!r}"
                    assert len(links) == len(want_links) + roles and set(want_links) <= set(links), \
                        f"{where}, table {number}: links {links} in {cell.content!r}"
                    # (a citation's text may bring an emphasis of its own: *et al.*)
                    assert emphases == want_emphases or (roles and emphases > want_emphases), \
                        f"{where}, table {number}: emphasis lost in {cell.content!r}"
        found = [block for text in markdown for block in code_blocks(text)]
        assert sorted(found) == sorted(blocks), \
            f"{where}: code blocks not in the chapter: {[b[:80] for b in found if b not in blocks]}"


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

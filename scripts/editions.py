"""The book's chapters as notebooks for Colab: the reader's, the student's and the instructor's.

One source, the chapter notebooks in ``chapters/``, gives every edition. The MyST in them
(equations and their numbers, ``{eq}`` and ``{cite}`` references, admonitions, exercises, links
to other pages) is turned into plain Jupyter markdown by QuantEcon's sphinx-tojupyter, a Sphinx
builder made for this, run by ``jupyter-book build --builder custom --custom-builder jupyter``,
with scripts/tojupyter_tables.py, a Sphinx extension that keeps its tables' cells whole (inline code,
links and citations inside the cells: sphinx-tojupyter 0.6 writes their markup before the table).
Before it runs, this module rewrites a temporary copy of the book for the edition; afterwards it
folds or drops the solutions and tags the cells for grading.

An exercise in a chapter is a run of cells (CONTRIBUTING.md, "Exercises"):

    markdown  :::{exercise} ... :label: ex-...            the task
    code      tags exercise-work, remove-cell             the student's starting point
    markdown  ```{solution-start} ex-...                  the worked solution, folded in the book
    code      tag exercise-solution                       the reference solution (run by the tests)
    markdown  ```{solution-end}
    code      tag exercise-check                          grader.check("ex-...")

Editions:

- ``reader``: what the book's Colab buttons open. The work cell, the solution folded in a
  ``<details>`` block (text and code), the check.
- ``student``: the work cell and the check; no solution, neither code nor text.
- ``instructor``: the student's notebook with the reference solutions in place: it grades to
  full marks (tests/test_editions.py).

In the student's and the instructor's notebooks every code cell before the exercises' set-up cell
is tagged ``otter_ignore``: grading runs the set-up cell and the exercises only.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

import nbformat
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
EDITIONS = ("reader", "student", "instructor")
BEGIN, END = "MT-SOLUTION-BEGIN", "MT-SOLUTION-END"
PIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")  # a tag or commit the install cell may name
INSTALLED_PIN = re.compile(r'git\+https?://[^"@\s]+@([A-Za-z0-9._/-]+)"')  # the one a notebook names
CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)  # fenced blocks and inline code spans
# The book's files that the Sphinx build reads (the package and the tests are not needed).
BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib")


def book_url():
    """The rendered book's address (ends with '/').

    ``html.baseurl`` in _config.yml when it is set (a book published elsewhere); otherwise the
    GitHub Pages address of ``repository.url``, where .github/workflows/pages.yml publishes it:
    https://github.com/OWNER/REPO is read at https://OWNER.github.io/REPO/.
    """
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    if config.get("html", {}).get("baseurl"):
        return config["html"]["baseurl"].rstrip("/") + "/"
    owner, repo = urllib.parse.urlparse(config["repository"]["url"]).path.strip("/").split("/")
    return f"https://{owner.lower()}.github.io/{repo}/"


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _solution_start(source):
    """(label, the solution's text) of a ``{solution-start}`` cell, or None."""
    match = re.match(r"```\{solution-start\}\s*(\S+)\n(?::[^\n]*\n)*```\n?(.*)", source, re.S)
    return (match.group(1), match.group(2).strip()) if match else None


def _is_solution_end(source):
    return source.strip().startswith("```{solution-end}")


def prepare_chapter(nb, edition, keep_outputs=False):
    """The chapter rewritten for ``edition``, still in MyST: sphinx-tojupyter converts it next."""
    cells, in_solution = [], False
    for cell in nb.cells:
        cell = nbformat.from_dict(json.loads(json.dumps(cell)))  # a copy
        kind = tags(cell)
        if cell.cell_type == "code" and (not keep_outputs or "exercise-check" in kind):
            cell.outputs, cell.execution_count = [], None
        starts = cell.cell_type == "markdown" and _solution_start(cell.source)
        ends = cell.cell_type == "markdown" and _is_solution_end(cell.source)
        if edition == "student" and (starts or ends or in_solution or "exercise-solution" in kind):
            in_solution = bool(starts) or (in_solution and not ends)  # every cell of a solution goes
            continue
        if "exercise-work" in kind:
            cell.metadata["tags"] = [t for t in kind if t != "remove-cell"]  # shown in every edition
        elif starts:
            label, text = starts
            cell.source = f"{BEGIN} {label}\n\n{text}" if text else f"{BEGIN} {label}"
        elif ends:
            cell.source = END
        cells.append(cell)
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.cells = cells
    return nb


def _config(book_root, url):
    """The book's _config.yml, plus the sphinx-tojupyter settings."""
    text = (ROOT / "_config.yml").read_text()
    extension = "    - sphinx_exercise\n"
    assert extension in text, "_config.yml no longer lists sphinx_exercise where expected"
    text = text.replace(extension, extension + "    - sphinx_tojupyter\n")
    # scripts/tojupyter_tables.py, copied into the book's _ext: table cells keep their markup.
    local = "  local_extensions:\n"
    assert local in text, "_config.yml no longer lists local_extensions where expected"
    text = text.replace(local, local + "    tojupyter_tables: _ext\n", 1)
    settings = (
        "  config:\n"
        "    tojupyter_target_html: true\n"
        '    tojupyter_lang_synonyms: ["ipython3"]\n'
        "    tojupyter_drop_solutions: false\n"
    )
    assert "  config:\n" in text
    text = text.replace("  config:\n", settings, 1)
    (book_root / "_config.yml").write_text(text)


def copy_book(book, edition, keep_outputs=False, tojupyter=True):
    """A copy of the book in ``book``, its chapters prepared for ``edition``; the originals."""
    if book.exists():
        shutil.rmtree(book)
    (book / "chapters").mkdir(parents=True)
    for name in BOOK_FILES:
        shutil.copy(ROOT / name, book / name)
    for page in ROOT.glob("*.md"):
        if page.name not in ("README.md", "CONTRIBUTING.md"):
            shutil.copy(page, book / page.name)
    shutil.copytree(ROOT / "paper_imgs", book / "paper_imgs")  # the pages' pictures
    shutil.copytree(ROOT / "_ext", book / "_ext")  # the local Sphinx extension _config.yml loads
    if tojupyter:
        shutil.copy(ROOT / "scripts" / "tojupyter_tables.py", book / "_ext")
        _config(book, book_url())
    originals = {}
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):  # every chapter: links resolve
        nb = nbformat.read(path, as_version=4)
        originals[path.stem] = nb
        nbformat.write(prepare_chapter(nb, edition, keep_outputs), book / "chapters" / path.name)
    return originals


def _jupyter_book(*args):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    run = subprocess.run([str(pathlib.Path(sys.executable).with_name("jupyter-book")), *args],
                         capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise RuntimeError(f"jupyter-book {' '.join(args)} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")


def convert(edition, chapters=None, workdir=None, pin=None):
    """{chapter stem: notebook} for ``edition``: the book's chapters, converted and post-processed."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, not {edition!r}")
    url = book_url()
    sources = sorted((ROOT / "chapters").glob("*.ipynb"))
    if chapters:
        sources = [p for p in sources if p.stem in chapters]
    with tempfile.TemporaryDirectory() as tmp:
        book = pathlib.Path(workdir or tmp) / "book"
        originals = copy_book(book, edition)
        _jupyter_book("build", str(book), "--builder", "custom", "--custom-builder", "jupyter",
                      "--keep-going", "-q")
        built = book / "_build" / "jupyter" / "chapters"
        return {p.stem: finish(nbformat.read(built / p.name, as_version=4), originals[p.stem],
                               p.stem, edition, url, pin)
                for p in sources}


def html_without_solutions(out_dir):
    """The book as HTML with no solution: each exercise shows its work cell and its check.

    (sphinx-exercise's own ``hide_solutions`` fails on gated solutions, its issue 89: the
    solutions are removed from a copy of the chapters instead.) The stored outputs stay, but for
    the checks', which were made with the solutions.
    """
    out_dir = pathlib.Path(out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        book = pathlib.Path(tmp) / "book"
        copy_book(book, "student", keep_outputs=True, tojupyter=False)
        _jupyter_book("build", str(book), "-W", "-n", "--keep-going", "-q")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        shutil.copytree(book / "_build" / "html", out_dir)
    return out_dir / "index.html"


def _code_cells_by_source(original):
    """The source chapter's code cells, by their (stripped) source, in order."""
    table = {}
    for cell in original.cells:
        if cell.cell_type == "code":
            table.setdefault(cell.source.strip(), []).append(cell)
    return table


def _fold(cells):
    """One markdown cell: a solution's text and code inside <details>."""
    parts = []
    for cell in cells:
        text = cell.source.strip()
        if cell.cell_type == "code":
            text = f"```python\n{text}\n```"
        if text:
            parts.append(text)
    body = "\n\n".join(parts)
    return nbformat.v4.new_markdown_cell(
        f"<details>\n<summary><b>Solution</b> (click to show)</summary>\n\n{body}\n\n</details>")


def _clean_markdown(text, page_url):
    """The few things sphinx-tojupyter leaves that Jupyter does not render as the book does."""
    text = text.replace("Solution to[ ", "Solution to [")
    # Every link points at the rendered book: Colab has no other page, and no equation anchors.
    # (Not inside code: `formats[fmt](date)` is a call, not a link.)
    parts = CODE.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"\]\((?!https?://|mailto:)([^)\s]+)\)",
                          lambda m: f"]({urllib.parse.urljoin(page_url, m.group(1))})", parts[i])
    return "".join(parts)


def _split_at_markers(cells):
    """sphinx-tojupyter merges adjacent markdown: give each solution marker a cell of its own."""
    for cell in cells:
        if cell.cell_type != "markdown" or (BEGIN not in cell.source and END not in cell.source):
            yield cell
            continue
        for part in re.split(rf"(?m)^(?=(?:{BEGIN}|{END}))", cell.source):
            if part.startswith(END) and part[len(END):].strip():  # text after the end marker
                yield nbformat.v4.new_markdown_cell(END)
                part = part[len(END):]
            if part.strip():
                yield nbformat.v4.new_markdown_cell(part.strip("\n"))


def student_id_source(original):
    """The source of the chapter's ``STUDENT_ID`` cell (tag ``student-id``; the book hides it)."""
    (cell,) = [c for c in original.cells if "student-id" in tags(c)]
    return cell.source


def _answer_cells(original):
    """{id of a work cell: the answer cells that follow it} in the source chapter.

    An answer cell (tag ``exercise-answer``) is markdown that the book hides (``remove-cell``), so
    the conversion drops it: it is put back, as it is, under its work cell.
    """
    answers, work = {}, None
    for cell in original.cells:
        if cell.cell_type == "code" and "exercise-work" in tags(cell):
            work = id(cell)
        elif "exercise-answer" in tags(cell):
            if work is None:
                raise ValueError(f"an answer cell comes before any work cell: {cell.source[:60]!r}")
            copy = nbformat.v4.new_markdown_cell(cell.source)
            copy.metadata = {"tags": ["exercise-answer"],
                             "mintransformer": dict(cell.metadata.get("mintransformer", {}))}
            answers.setdefault(work, []).append(copy)
    return answers


def finish(converted, original, chapter, edition, url, pin=None):
    """Restore the cells' tags, fold or drop the solutions, mark what grading skips.

    Every edition gets the chapter's ``STUDENT_ID`` cell under the title and the install cell; with ``pin`` (a commit or
    tag), the install cell installs the package at that version.
    """
    by_source = _code_cells_by_source(original)
    answers = _answer_cells(original)
    cells, folding, in_setup = [], None, False
    for cell in _split_at_markers(converted.cells):
        following = []
        if cell.cell_type == "code":
            matches = by_source.get(cell.source.strip())
            if matches:
                source_cell = matches.pop(0)
                cell.metadata["tags"] = [t for t in tags(source_cell) if t != "remove-cell"]
                following = answers.pop(id(source_cell), [])
            if pin and "git+" in cell.source:
                cell.source, count = re.subn(r'(git\+https?://[^"@\s]+?)(")', rf"\1@{pin}\2", cell.source)
                assert count, f"{chapter}: the install cell names no git+ address to pin"
        else:
            cell.source = _clean_markdown(cell.source, f"{url}chapters/{chapter}.html")
        text = cell.source.strip()
        if cell.cell_type == "markdown" and text.startswith(BEGIN):
            folding = [nbformat.v4.new_markdown_cell(text[len(BEGIN):].split("\n", 1)[1]
                                                     if "\n" in text else "")]
            continue
        if cell.cell_type == "markdown" and text.startswith(END):
            if edition == "reader":
                cells.append(_fold(folding))
            else:  # instructor: the solution stays, as cells that run
                cells.extend(c for c in folding if c.source.strip())
            folding = None
            continue
        if folding is not None:
            folding.append(cell)
            continue
        cells.append(cell)
        cells.extend(following)
    assert folding is None, f"{chapter}: a solution is not closed"
    assert not answers, f"{chapter}: answer cells whose work cell was not found"
    # The STUDENT_ID cell, which the book hides (the conversion drops it), under the title and the
    # install cell of every edition, as in the chapter: the exercises with per-student numbers read it.
    student = nbformat.v4.new_code_cell(student_id_source(original))
    student.metadata["tags"] = ["student-id"]
    install = [i for i, c in enumerate(cells[:3]) if c.cell_type == "code" and "google.colab" in c.source]
    cells.insert(install[0] + 1 if install else 1, student)
    if edition != "reader":
        for cell in cells:
            if cell.cell_type == "code":
                in_setup = in_setup or "exercise-setup" in tags(cell)
                if not in_setup and "student-id" not in tags(cell):  # otter's own grading runs it
                    cell.metadata["tags"] = tags(cell) + ["otter_ignore"]
    for index, cell in enumerate(cells):
        cell.id = f"cell-{index:03d}"  # the same every time: a regenerated notebook differs only where its chapter does
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "colab": {"provenance": []},
        "mintransformer": {"chapter": chapter, "edition": edition,
                           "made_by": "scripts/editions.py from chapters/" + chapter + ".ipynb"},
    }
    return notebook


def write(edition, out_dir, chapters=None, pin=None):
    """Write one notebook per chapter of ``edition`` into ``out_dir``; return their paths.

    ``pin``: a commit or tag of the book's repository that the install cell installs.
    """
    if pin is not None and not PIN.fullmatch(str(pin)):
        raise ValueError(f"pin must be a commit or a tag (letters, digits, . _ / -), not {pin!r}")
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for chapter, nb in convert(edition, chapters, pin=pin).items():
        path = out_dir / f"{chapter}.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    return paths

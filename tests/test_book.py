"""The book's own rules, checked on the stored notebooks (no kernel needed)."""

import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from run_notebook import colab_cell_source, repository_url  # noqa: E402

CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("*.ipynb"))
TOC = (ROOT / "_toc.yml").read_text()


def cells(path):
    return json.loads(path.read_text())["cells"]


def markdown(path):
    return "\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown")


def code_cells(path):
    return [c for c in cells(path) if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def test_toc_and_chapters_agree():
    listed = re.findall(r"file:\s*(chapters/\S+)", TOC)
    assert sorted(listed) == [p.relative_to(ROOT).with_suffix("").as_posix() for p in CHAPTERS]
    assert len(CHAPTERS) >= 5


def book_numbers():
    """{file stem: the number the built book gives it}: numbered parts count on across parts
    (Jupyter Book's multitoc numbering); unnumbered parts (the appendix) get none."""
    import yaml

    numbers, count = {}, 0
    for part in yaml.safe_load(TOC)["parts"]:
        for chapter in part["chapters"]:
            if part.get("numbered"):
                count += 1
                numbers[pathlib.Path(chapter["file"]).name] = str(count)
    return numbers


def test_file_names_carry_the_book_s_numbers():
    """A chapter's file starts with the number the book shows, so that the order stays obvious;
    an appendix's with ``appendix_`` and its letter."""
    numbers = book_numbers()
    for path in CHAPTERS:
        if path.stem in numbers:
            assert path.stem.split("_")[0] == f"{int(numbers[path.stem]):02d}", path.name
        else:
            assert re.match(r"appendix_[a-z]_", path.stem), path.name


def _chapter_links(text):
    """(number or letter as written, linked file stem) for each link such as [chapter 8](08_training.ipynb)."""
    return re.findall(r"\[(?:[Cc]hapter|[Aa]ppendix) (\w+)(?:'s)?\]\((?:chapters/)?(\w+)\.ipynb[^)]*\)", text)


def test_chapter_links_give_the_book_s_numbers():
    """"[chapter 11](11_ablations.ipynb)" names the number the book prints for that file."""
    numbers = book_numbers()
    texts = {path.name: markdown(path) for path in CHAPTERS}
    texts.update({path.name: path.read_text() for path in ROOT.glob("*.md")})
    links = [(name, written, stem) for name, text in texts.items() for written, stem in _chapter_links(text)]
    assert len(links) > 20
    for name, written, stem in links:
        expected = numbers.get(stem) or stem.split("_")[1].upper()  # appendix_a_... is appendix A
        assert written.upper() == expected, f"{name}: chapter {written} links to {stem}, which is {expected}"
    table = re.findall(r"^\| (\w+) \| \[[^]]+\]\(chapters/(\w+)\.ipynb\)", (ROOT / "intro.md").read_text(), re.M)
    assert [stem for _, stem in table] == [p.stem for p in CHAPTERS]
    for written, stem in table:
        assert written == (numbers.get(stem) or stem.split("_")[1].upper()), stem


def test_repository_url_is_a_github_url():
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repository_url())


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_first_code_cell_installs_the_package_in_colab_only(path):
    assert cells(path)[0]["cell_type"] == "markdown", "the chapter must open with its title"
    first = "".join(code_cells(path)[0]["source"])
    assert first == colab_cell_source(), (
        f"{path.name}: the first code cell must be the Colab install cell for "
        f"{repository_url()}; run scripts/colab_edition.py to set it."
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_outputs_are_stored_in_order_and_clean(path):
    code = code_cells(path)
    counts = [c["execution_count"] for c in code]
    assert None not in counts, f"{path.name}: a code cell has no stored output"
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: not run top to bottom once"
    text = json.dumps([c["outputs"] for c in code])
    for noise in ("cpu_feature_guard", "absl::InitializeLog", "cudart_stub", "Traceback"):
        assert noise not in text, f"{path.name}: '{noise}' in the stored outputs"
    # A TensorFlow C++ log line ("E0000 00:00:1795495868.515963 12661 util.cc:131] ...") depends on
    # the CPU: wrap the call that logs it in `with mt.quiet_stderr():`.
    logged = re.search(r"[EWIF]\d{4} \d\d:\d\d:[\d.]+ +\d+ \w+\.cc:\d+\]", text)
    assert not logged, f"{path.name}: TensorFlow's C++ log in the stored outputs: {logged.group()}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_standard(path):
    md = markdown(path)
    code = "\n".join("".join(c["source"]) for c in code_cells(path))
    assert re.match(r"# [^\d\s]", md), "the chapter must open with '# Title' (unnumbered: the toc numbers it)"
    assert re.search(r"learning objectives", md, re.I), "no learning objectives"
    assert re.search(r"^#+ .*summary", md, re.I | re.M), "no summary section"
    assert re.search(r"\{admonition\}.*pitfall", md, re.I), "no pitfalls box"
    exercises = re.findall(r"\{exercise\}", md)
    solutions = re.findall(r"\{solution(?:-start)?\}[^\n]*\n(?::label:[^\n]*\n)?:class: dropdown", md)
    assert len(exercises) >= 3, f"{len(exercises)} exercises"
    assert len(solutions) >= len(exercises), "every exercise needs a solution hidden in a dropdown"
    assert re.search(r"\$\$\s*\(eq-[\w-]+\)", md), "no numbered equation"
    assert re.search(r"\{eq\}`eq-", md), "no equation is referenced from the text"
    assert "import mintransformer" in code, "the chapter does not use the package"
    images = [o for c in code_cells(path) for o in c["outputs"] if "image/png" in o.get("data", {})]
    assert images, "no figure"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_cells_kept_out_of_the_comparison_still_assert(path):
    # CONTRIBUTING.md, "What strict nbval compares": a cell whose output depends on the machine
    # carries the nbval-ignore-output tag, and its assertions are then what the test checks.
    for index, cell in enumerate(cells(path)):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code" and "nbval-ignore-output" in tags:
            source = "".join(cell["source"])
            assert re.search(r"^\s*assert\b", source, re.M), (
                f"{path.name}, cell {index}: its output is not compared (nbval-ignore-output) and it "
                f"asserts nothing, so no test checks it; assert the claim the text makes"
            )
        assert "nbval-skip" not in tags, f"{path.name}, cell {index}: a skipped cell is never run by the tests"



# The five tutorials the book corrects are named for readers and described on sources.md, never
# called by the internal labels "seed 000" ... "seed 004" (random seeds in code are fine).
SOURCE_NAMES = {
    "the Keras functional-API tutorial": "the-keras-functional-api-tutorial",
    "the PyTorch-sketch chapter": "the-pytorch-sketch-chapter",
    "the from-scratch TensorFlow tutorial": "the-from-scratch-tensorflow-tutorial",
    "the head-splitting walkthrough": "the-head-splitting-walkthrough",
    "the MinTransformer course chapter": "the-mintransformer-course-chapter",
}
PAGES = CHAPTERS + [ROOT / name for name in ("intro.md", "notation.md", "instructors.md", "sources.md",
                                             "references.md")]


def _texts(path):
    """(where, text) of a page: a Markdown file, or every cell source and text output of a notebook."""
    if path.suffix == ".md":
        yield "", path.read_text()
        return
    for i, cell in enumerate(cells(path)):
        yield f"cell {i}", "".join(cell["source"])
        for output in cell.get("outputs", []):
            text = output.get("text", "") or output.get("data", {}).get("text/plain", "")
            yield f"cell {i} output", "".join(text)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_sources_are_never_called_by_their_internal_label(path):
    label = re.compile(r"\bseeds?[ _-]*0\d\d\b|\bthe seeds\b", re.IGNORECASE)
    found = [f"{where}: {m.group()!r}" for where, text in _texts(path) for m in label.finditer(text)]
    assert not found, f"{path.name} calls a source by its internal label: {found}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_source_a_chapter_names_is_linked_to_its_description(path):
    text = markdown(path)
    for name, anchor in SOURCE_NAMES.items():
        if name.split(" ", 1)[1].lower() in text.lower():
            assert f"../sources.md#{anchor}" in text, f"{path.name} names {name!r} without linking it"


def test_the_sources_page_describes_each_source_under_its_name():
    headings = re.findall(r"^## (.+)$", (ROOT / "sources.md").read_text(), re.MULTILINE)
    assert [h.lower() for h in headings] == [n.lower() for n in SOURCE_NAMES]
    assert "sources" in TOC


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def exercises(path):
    """[(label, exercise text, [cells of the exercise])] of a chapter's Exercises section."""
    found = []
    for cell in cells(path):
        source = "".join(cell["source"])
        match = re.search(r"\{exercise\}[^\n]*\n:label: (\S+)\n(.*?)\n:::", source, re.S)
        if cell["cell_type"] == "markdown" and match:
            found.append((match.group(1), match.group(2), []))
        elif (found and cell["cell_type"] == "markdown" and re.match(r"#+ ", source)
              and "exercise-answer" not in _tags(cell)):
            break  # the next section (an answer cell's heading is part of its exercise)
        elif found:
            found[-1][2].append(cell)
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_are_done_and_checked(path):
    # CONTRIBUTING.md, "Exercises": each is a task, a work cell, a folded solution that runs, and
    # a check (or *Graded by hand.*), and the chapter has at least 3 checked ones.
    import mintransformer as mt

    chapter, found = path.stem, exercises(path)
    assert found, f"{path.name}: no exercise"
    setup = [c for c in cells(path) if "exercise-setup" in _tags(c)]
    assert len(setup) == 1 and f'mt.exercises.grader("{chapter}")' in "".join(setup[0]["source"])
    checked = []
    for label, text, group in found:
        kinds = [t for c in group for t in _tags(c)]
        sources = ["".join(c["source"]) for c in group]
        assert kinds.count("exercise-work") == 1, f"{label}: needs one work cell"
        assert "remove-cell" in kinds, f"{label}: its work cell must be hidden in the book (remove-cell)"
        assert "exercise-solution" in kinds, f"{label}: its solution must be code that runs"
        assert any(s.startswith("```{solution-start} " + label) for s in sources), f"{label}: no folded solution"
        checks = [s for c, s in zip(group, sources) if "exercise-check" in _tags(c)]
        if checks:
            assert checks == [f'grader.check("{label}")'], f"{label}: its check cell is {checks}"
            checked.append(label)
        else:
            assert text.lstrip().startswith("*Graded by hand.*"), f"{label}: no check and not graded by hand"
    assert sorted(checked) == mt.exercises.labels(chapter), "check cells and check files disagree"
    assert len(checked) >= 3, f"{path.name}: {len(checked)} checked exercises"
    texts = [text for _, text, _ in found]
    assert any(t.lstrip().startswith("**Implement it.**") for t in texts), f"{path.name}: no 'Implement it'"
    if re.search(r"\{admonition\}.*pitfall", markdown(path), re.I):
        assert any(t.lstrip().startswith("**Find and fix the bug.**") for t in texts), (
            f"{path.name} has pitfalls but no 'Find and fix the bug' exercise")
    for label in checked:  # instructors.md: each test case is worth one point
        from otter.test_files import ExceptionTestFile

        check = ExceptionTestFile.from_file(str(pathlib.Path(mt.exercises.tests_dir(chapter)) / f"{label}.py"))
        assert check.name == label and all(tc.points == 1 for tc in check.test_cases), label


ANSWER_PLACEHOLDER = "Replace this line with your answer, in markdown; equations in `$...$` or `$$...$$`."


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_parts_graded_by_hand_have_one_answer_cell(path):
    # CONTRIBUTING.md, "Exercises": an exercise with a part graded by hand has one markdown answer
    # cell right after its work cell, found by its metadata or its first line, its prompt on one line
    # (scripts/grade.py drops that line from the answer); no work cell asks for an answer in comments.
    for label, text, group in exercises(path):
        answers = [i for i, c in enumerate(group) if "exercise-answer" in _tags(c)]
        if "graded by hand" not in text.lower():
            assert not answers, f"{label}: an answer cell, but no part graded by hand"
            continue
        assert len(answers) == 1, f"{label}: {len(answers)} answer cells"
        cell = group[answers[0]]
        work = [i for i, c in enumerate(group) if "exercise-work" in _tags(c)]
        assert answers[0] == work[-1] + 1, f"{label}: the answer cell must follow the work cell"
        assert cell["cell_type"] == "markdown" and _tags(cell) == ["exercise-answer", "remove-cell"], label
        assert cell["metadata"].get("mintransformer") == {"answer": label}, label
        source = "".join(cell["source"])
        assert re.fullmatch(rf"#### Written answer: {re.escape(label)}\n\n\*Graded by hand:\* \S[^\n]*\n\n"
                            + re.escape(ANSWER_PLACEHOLDER), source, re.S), f"{label}: {source[:80]!r}"
        assert "as comments" not in text, f"{label}: answers go in the answer cell, not in comments"
        assert not re.search(r"(?im)^#.*graded by hand", "".join(group[work[-1]]["source"])), label


PER_STUDENT_SENTENCE = ("These are the book's numbers: the work cell prints yours, drawn from your `STUDENT_ID` (the "
                        "cell near the top of the notebook; with no id, they are the book's).")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_per_student_numbers_are_announced_and_printed(path):
    # mt.exercises.parameters: the chapter holds one STUDENT_ID cell under its title, hidden in the
    # book and shown in every Colab edition (scripts/editions.py); each exercise with per-student
    # numbers says so in its text, and its work cell draws and prints them.
    import mintransformer as mt
    from mintransformer.exercises import per_student

    chapter = cells(path)
    ids = [i for i, c in enumerate(chapter) if "student-id" in _tags(c)]
    assert ids == [2] and "google.colab" in "".join(chapter[1]["source"]), (
        f"{path.name}: the STUDENT_ID cell must be the one right under the title and the install cell")
    cell = chapter[2]
    assert cell["cell_type"] == "code" and _tags(cell) == ["student-id", "remove-cell"] and not cell["outputs"]
    assert "".join(cell["source"]).rstrip().endswith('\nSTUDENT_ID = ""')
    labels = set(mt.exercises.labels(path.stem)) if path.stem in mt.exercises.chapters() else set()
    for label, text, group in exercises(path):
        work = "".join("".join(c["source"]) for c in group if "exercise-work" in _tags(c))
        drawn = f'mt.exercises.parameters("{label}", STUDENT_ID)' in work
        assert drawn == (label in per_student.labels()), f"{label}: the work cell and per_student disagree"
        assert drawn == (PER_STUDENT_SENTENCE in " ".join(text.split())), f"{label}: text and numbers disagree"
        assert not drawn or label in labels, f"{label}: per-student numbers, but no check"

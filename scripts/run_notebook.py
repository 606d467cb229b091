"""Execute chapters top to bottom in a fresh kernel and store their outputs.

    python scripts/run_notebook.py chapters/02_attention.ipynb [more.ipynb ...]
    python scripts/run_notebook.py --all      # every chapter of _toc.yml, in order

``--all`` is the command to run after the pinned stack (constraints.txt) is bumped; see
CONTRIBUTING.md.

Before running, the canonical Colab install cell, built from the repository URL in
``_config.yml``, is put as the first code cell, after the opening markdown
(tests/test_book.py checks the same thing).
"""

import pathlib
import re
import sys
import time

import nbclient
import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]


def repository_url():
    for line in (ROOT / "_config.yml").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("url:"):
            return stripped.split("url:", 1)[1].strip()
    raise SystemExit("_config.yml has no repository url")


def colab_cell_source(url=None):
    url = url or repository_url()
    return (
        "# In Colab, install this book's package from its repository; elsewhere, do nothing.\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install -q "mintransformer[exercises] @ git+{url}"\n'
        "    # otter-grader (the exercise checks) installs wrapt<2, with which TensorFlow cannot save a\n"
        "    # SavedModel on Colab's Python 3.13 (chapter 9); wrapt 2 can. pip may warn of the conflict.\n"
        '    %pip install -q "wrapt>=2"'
    )


def run(path):
    path = pathlib.Path(path)
    nb = nbformat.read(path, as_version=4)
    # The Colab cell is the first code cell, right after the opening markdown (title, objectives).
    is_colab = [c.cell_type == "code" and "google.colab" in c.source for c in nb.cells]
    old_ids = [c.id for c, colab in zip(nb.cells, is_colab) if colab]
    nb.cells = [c for c, colab in zip(nb.cells, is_colab) if not colab]
    first_code = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), len(nb.cells))
    cell = nbformat.v4.new_code_cell(colab_cell_source())
    if old_ids:
        cell.id = old_ids[0]  # keep the cell's id: a re-run should not change it
    nb.cells.insert(first_code, cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    start = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    print(f"{path}: executed in {time.perf_counter() - start:.1f} s")


def toc_chapters():
    """The chapter notebooks listed in ``_toc.yml``, in book order."""
    toc = (ROOT / "_toc.yml").read_text()
    return [ROOT / f"{name}.ipynb" for name in re.findall(r"file:\s*(chapters/\S+)", toc)]


if __name__ == "__main__":
    names = sys.argv[1:]
    if not names:
        raise SystemExit(__doc__)
    for name in toc_chapters() if names == ["--all"] else names:
        run(name)

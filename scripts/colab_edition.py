"""Write the reader's Colab edition: the chapters as the book's Colab buttons open them.

    python scripts/colab_edition.py [OUT_DIR]     (default: colab/chapters, which is committed)

The chapters with their MyST turned into plain markdown (scripts/editions.py): equations numbered
as in the book, references and citations resolved to text, admonitions as plain markdown, every
link pointing at the rendered book. Each exercise has its work cell, its solution folded in a
``<details>`` block, and its check. The book's launch buttons open ``colab/chapters/`` on GitHub
(``repository.path_to_book: colab`` in _config.yml); tests/test_editions.py fails when those
notebooks are older than the chapters: rerun this script and commit them.

First, each chapter's Colab install cell is set to install the package from ``repository.url``
in _config.yml, so that after changing the repository's address this one command updates every
notebook (README, "Publishing the book").
"""

import argparse

import nbformat

import editions
from run_notebook import colab_cell_source, toc_chapters


def set_install_cells():
    """Point every chapter's Colab install cell at ``repository.url``; return the changed paths.

    Only the cell's source changes: outside Colab the cell does nothing and stores no output.
    """
    changed = []
    for path in toc_chapters():
        nb = nbformat.read(path, as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "code" and "google.colab" in c.source)
        if cell.source != colab_cell_source():
            cell.source = colab_cell_source()
            nbformat.write(nb, path)
            changed.append(path)
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", default=str(editions.ROOT / "colab" / "chapters"))
    args = parser.parse_args(argv)
    for path in set_install_cells():
        print(f"{path}: install cell set to {editions.ROOT.joinpath('_config.yml').name}'s repository.url")
    for path in editions.write("reader", args.out_dir):
        print(path)


if __name__ == "__main__":
    main()

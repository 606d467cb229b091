"""A Sphinx extension for the Colab, student and instructor editions: tables whose cells hold markup.

sphinx-tojupyter 0.6.0 (the newest release, and its main branch and v1.0-refactor branch as of
November 2025) writes a table cell by cell into ``table_builder['line_pending']``, but only the
cells' plain text goes there (``JupyterTranslator.visit_Text`` and ``visit_math``, which check
``self.table_builder``). Every other inline node appends its markup to ``self.markdown_lines``
unconditionally: the backticks of ``visit_literal``/``depart_literal``, the ``[`` and ``](url)`` of
``visit_reference``/``depart_reference`` (links, citations, equation references), the ``*`` of
emphasis and the ``**`` of strong. See sphinx_tojupyter/writers/translate_all.py, ``visit_Text``
(line 264), ``visit_entry``/``depart_entry`` (lines 504-508) and ``visit_literal`` (line 630), at
https://github.com/QuantEcon/sphinx-tojupyter/blob/v0.6.0/sphinx_tojupyter/writers/translate_all.py
So the markup lands before the table, stripped of its text: rendered, the table is no table, and a
run of backticks at the start of a line opens a code block that swallows the rest of the cell.
Its ``depart_table`` also ends the table without a blank line, so the next paragraph's first line
is read as one more row.

The fix, here rather than in the installed package: a subclass of ``JupyterTranslator`` that
translates each table cell like any other markdown, into a buffer of its own, then writes the
cell's markdown, on one line and with its ``|`` escaped, into the row; and ends a table with a
blank line. ``JupyterWriter`` picks its translator itself (``_identify_translator``), ignoring
Sphinx's ``app.set_translator``, so ``setup`` makes it return the subclass. scripts/editions.py
adds this extension to the temporary book it converts; tests/test_editions.py renders every table
of every edition.
"""

import re

from sphinx_tojupyter.writers import jupyter as tojupyter_writer
from sphinx_tojupyter.writers.translate_all import JupyterTranslator


def table_cell(markdown):
    """A table cell's markdown on one line (a cell cannot span lines), its ``|`` escaped."""
    text = " ".join(line.strip() for line in markdown.splitlines() if line.strip())
    return re.sub(r"(?<!\\)\|", r"\\|", text)


class TableCellTranslator(JupyterTranslator):
    """sphinx-tojupyter's translator, with each table cell's inline markup inside the cell."""

    def __init__(self, builder, document):
        super().__init__(builder, document)
        self.outside_cells = []  # (markdown_lines, table_builder) of the table around each open cell

    def visit_entry(self, node):
        # With no table_builder, every node of the cell writes to markdown_lines, as in a paragraph.
        self.outside_cells.append((self.markdown_lines, self.table_builder))
        self.markdown_lines, self.table_builder = [], None

    def depart_entry(self, node):
        markdown = "".join(self.markdown_lines)
        self.markdown_lines, self.table_builder = self.outside_cells.pop()
        self.table_builder["line_pending"] += table_cell(markdown) + "|"

    def depart_table(self, node):
        super().depart_table(node)
        self.markdown_lines.append("\n")  # the rows end with a newline: a blank line ends the table


def setup(app):
    app.setup_extension("sphinx_tojupyter")
    identify = tojupyter_writer.JupyterWriter._identify_translator

    def identify_translator(self, builder):
        chosen = identify(self, builder)
        return TableCellTranslator if chosen is JupyterTranslator else chosen

    tojupyter_writer.JupyterWriter._identify_translator = identify_translator
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The book as PDF (scripts/book_pdf.py), read as a reader would: text, outline, links, pages as images.

The PDFs are made from the built HTML by the system Chromium: ``_build/pdf/book.pdf`` and one per
chapter. CI makes them before the tests (.ci/run); here they are made if they are missing.
"""

import html
import pathlib
import re
import subprocess
import sys

import numpy as np
import pypdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import book_pdf  # noqa: E402
import editions  # noqa: E402
from run_notebook import toc_chapters  # noqa: E402

PDF = ROOT / "_build" / "pdf"
HTML = ROOT / "_build" / "html"
DOCUMENTS = re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text())  # in the book's order
CHAPTERS = [p.stem for p in toc_chapters()]
A4 = (595.0, 842.0)  # points
MARGIN = 14 / 25.4 * 72  # the print style's left and right margins, in points
RAW_TEX = re.compile(r"\\(frac|sqrt|mathrm|text|begin|end|sum|left|right|cdot|infty|mathbb)\b|\$\$|\\\(|\\\[")


@pytest.fixture(scope="module")
def pdfs():
    if not (PDF / "book.pdf").is_file() or not all((PDF / f"{c}.pdf").is_file() for c in CHAPTERS):
        if not (HTML / "intro.html").is_file():
            subprocess.run(["jupyter-book", "build", "-W", "-n", "--keep-going", str(ROOT)], check=True)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "book_pdf.py")], check=True)
    return PDF


def title(document):
    """A page's title as the HTML shows it (its section number included)."""
    text = (HTML / f"{document}.html").read_text()
    heading = re.search(r"<h1>(.*?)</h1>", text[text.index('class="bd-article"'):], re.S).group(1)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>|#", "", heading)).strip()


def code_text():
    """Every code block, output and inline code of the single-page book, spaces removed (to tell code
    from prose; a hit's surroundings may run out of an inline code span, so each span stands alone)."""
    source = (ROOT / "_build" / "singlehtml" / "intro.html").read_text()
    blocks = re.findall(r"<pre[^>]*>(.*?)</pre>", source, re.S) + re.findall(r"<code[^>]*>(.*?)</code>", source, re.S)
    return "\x00" + "\x00".join(re.sub(r"\s", "", html.unescape(re.sub(r"<[^>]+>", "", b))) for b in blocks) + "\x00"


def raw_tex(texts, code):
    """[(page, the text around it)] of the raw TeX in pages' ``texts`` that is not code: a hit counts
    unless its surroundings (spaces aside) are in a code block, or it is a whole inline code span."""
    def in_code(text, match):
        around = re.sub(r"\s", "", text[max(0, match.start() - 12):match.end() + 12])
        return around in code or "\x00" + re.sub(r"\s", "", match.group(0)) + "\x00" in code
    return [(i + 1, text[max(0, m.start() - 20):m.end() + 20]) for i, text in enumerate(texts)
            for m in RAW_TEX.finditer(text) if not in_code(text, m)]


def test_raw_tex_is_found_in_prose_and_allowed_in_code():
    code = "\x00" + "ax.set_xlabel(r\"$q\\cdotk$\")" + "\x00$$\x00"
    assert raw_tex(["the scale \\frac{1}{2} shows"], code) == [(1, "the scale \\frac{1}{2} shows")]
    assert raw_tex(["ax.set_xlabel(r\"$q \\cdot k$\")", "after the closing $$ , where"], code) == []
    assert raw_tex(["we write $$ x $$ here"], "\x00") != []


def outline(reader):
    """[(depth, title, page index)] of a PDF's outline, in order."""
    found = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                found.append((depth, item.title, reader.get_destination_page_number(item)))
    walk(reader.outline, 0)
    return found


def page_texts(path):
    document = pdfium.PdfDocument(str(path))
    texts = [normal(page.get_textpage().get_text_range()) for page in document]
    document.close()
    return texts


def normal(text):
    """A page's text with its line breaks as spaces (PDFium marks a hyphen at a line's end U+FFFE)."""
    return re.sub(r"\s+", " ", text.replace("\ufffe", "-"))


def test_every_chapter_has_its_pdf_and_the_book_one(pdfs):
    assert sorted(p.stem for p in pdfs.glob("*.pdf")) == sorted(CHAPTERS + ["book"])


def test_the_books_outline_is_its_table_of_contents(pdfs):
    reader = pypdf.PdfReader(pdfs / "book.pdf")
    entries = outline(reader)
    top = [(t, p) for d, t, p in entries if d == 0]
    assert [t for t, _ in top] == [title(d) for d in DOCUMENTS]
    pages = [p for _, p in top]
    assert pages == sorted(pages) and pages[0] == 1  # after the title page, each on a page of its own
    # Every chapter's sections are under it, with the HTML's numbers: "2.9. Two mask conventions ..."
    numbered = [t for d, t, _ in entries if d == 1 and re.match(r"\d+\.\d+\. ", t)]
    assert len(numbered) > 100 and "2.9. Two mask conventions, and why -10⁹ breaks in float16" in numbered
    assert not [t for _, t, _ in entries if "$" in t or "\\" in t or "  " in t]
    assert len(reader.pages) > 400  # the book, every chapter whole (581 pages at this writing)


def test_the_books_text_reads_in_order_with_no_raw_tex(pdfs):
    texts = page_texts(pdfs / "book.pdf")
    whole = "\n".join(texts)
    assert "Attention Is All You Need, Built Step by Step" in texts[0] and "Built from commit" in texts[0]
    positions, start = [], 0
    for document in DOCUMENTS:  # each title after the one before
        start = whole.find(title(document), start)
        positions.append(start)
    assert -1 not in positions, list(zip(DOCUMENTS, positions))
    # Code shows TeX on purpose (a plot's label, r"$q \cdot k$"): only prose counts.
    raw = raw_tex(texts, code_text())
    assert not raw, raw[:10]
    # Page numbers: "n / total" at the foot of every page.
    for number, text in enumerate(texts, start=1):
        assert f"{number} / {len(texts)}" in text, number
    # Solutions are in (their boxes open), the screen's controls are not.
    assert whole.count("Solution to Exercise") >= 70
    for control in ("Open in Colab", "Print to PDF", "Download source file", "Contents Start"):
        assert control not in whole, control


@pytest.mark.parametrize("name", ["book"] + CHAPTERS)
def test_no_text_past_the_right_margin(pdfs, name):
    # Chromium clips what overflows the page: code that did not wrap, a table too wide. Every run of
    # text must end inside the printed area (the right margin, with a point for rounding).
    document = pdfium.PdfDocument(str(pdfs / f"{name}.pdf"))
    cut = []
    for index, page in enumerate(document):
        width, _ = page.get_size()
        textpage = page.get_textpage()
        for i in range(textpage.count_rects()):
            left, bottom, right, top = textpage.get_rect(i)
            # (A run wider than the page is MathJax's stretched brace or bracket, drawn clipped on purpose.)
            if right > width - MARGIN + 1 and right - left < width:
                text = textpage.get_text_bounded(left, bottom, right, top).strip()
                if text:
                    cut.append((index + 1, text[:60]))
    document.close()
    assert not cut, cut[:10]


@pytest.mark.parametrize("name", ["book"] + CHAPTERS)
def test_no_glyph_without_a_font(pdfs, name):
    # A character no font has (the emoji of the checks' "passed!") prints as an empty box, a glyph
    # with no character behind it: book_pdf.py leaves emoji out, and no such box is left.
    document = pdfium.PdfDocument(str(pdfs / f"{name}.pdf"))
    boxes = []
    for index, page in enumerate(document):
        textpage = page.get_textpage()
        boxes += [index + 1 for k in range(textpage.count_chars())
                  if pdfium_c.FPDFText_GetUnicode(textpage.raw, k) == 0]
    document.close()
    assert not boxes, f"glyphs with no character on pages {sorted(set(boxes))[:10]}"


def test_links_to_chapters_and_equations_stay_inside_the_book(pdfs):
    reader = pypdf.PdfReader(pdfs / "book.pdf")
    internal, outside = 0, []
    for page in reader.pages:
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            action = annotation.get("/A")
            if annotation.get("/Dest") is not None or (action and action.get("/S") == "/GoTo"):
                internal += 1
            elif action and action.get("/S") == "/URI":
                uri = str(action["/URI"])
                if uri.startswith("file:") or (editions.book_url() in uri and uri != editions.book_url()):
                    outside.append(uri)
    assert internal > 400, internal  # equation references, exercises, chapters, citations (509 today)
    assert not outside, outside[:5]  # a link into the book never leaves the PDF (the title page's
    # address of the book online aside)
    # Each internal link goes to a place that exists: Chromium names the destinations after the HTML's
    # anchors, so a reference to equation (2.1) lands on the page that shows it.
    named = reader.named_destinations
    targets = [str(a.get_object()["/Dest"]) for page in reader.pages for a in page.get("/Annots") or []
               if a.get_object().get("/Subtype") == "/Link" and "/Dest" in a.get_object()]
    assert targets and not [t for t in targets if t not in named]
    assert "/equation-eq-attention-masked" in targets and "/document-chapters/02_attention" in targets
    page = reader.get_destination_page_number(named["/equation-eq-attention-masked"])
    assert "(2.1)" in page_texts(pdfs / "book.pdf")[page]


def test_a_chapters_pdf_stands_alone(pdfs):
    reader = pypdf.PdfReader(pdfs / "02_attention.pdf")
    entries = outline(reader)
    assert entries[0] == (0, title("chapters/02_attention"), 0)
    assert (1, "2.9. Two mask conventions, and why -10⁹ breaks in float16", entries[9][2]) in entries
    text = "\n".join(page_texts(pdfs / "02_attention.pdf"))
    assert text.lstrip().startswith("2. Scaled dot-product attention") and "Solution to Exercise 2.4" in text
    uris = [str(a.get_object()["/A"]["/URI"]) for page in reader.pages for a in page.get("/Annots") or []
            if a.get_object().get("/A") and a.get_object()["/A"].get("/S") == "/URI"]
    # Links to other pages go to the book online; none to a file on the machine that printed it.
    assert f"{editions.book_url()}chapters/01_mathematics.html" in uris
    assert not [u for u in uris if u.startswith("file:")]


def ink(image):
    """The fraction of a page image's pixels that are not near white."""
    pixels = np.asarray(image.convert("L"), dtype=float)
    return float((pixels < 200).mean())


def test_pages_as_images_show_an_equation_and_a_figure(pdfs):
    document = pdfium.PdfDocument(str(pdfs / "book.pdf"))
    texts = [normal(page.get_textpage().get_text_range()) for page in document]
    # An equation: the line of equation (1.8), Var(q . k) = sum ... = d_k, drawn left of its number.
    index = next(i for i, t in enumerate(texts) if "(1.8)" in t and "Var" in t)  # its first page: the equation
    page = document[index]
    textpage = page.get_textpage()
    searcher = textpage.search("(1.8)")
    start, count = searcher.get_next()
    left, bottom, right, top = textpage.get_charbox(start)
    scale = 2
    image = page.render(scale=scale).to_pil()
    height = page.get_size()[1]
    band = image.crop((int(MARGIN * scale), int((height - top - 30) * scale), int((left - 5) * scale),
                       int((height - bottom + 30) * scale)))
    assert ink(band) > 0.02, "nothing drawn left of equation (1.8)'s number"
    # A figure: the book's drawing of the Transformer (Fig. 1, in colour), on the page whose text
    # holds its caption; a page of text alone has almost no colour.
    index = next(i for i, t in enumerate(texts) if "Fig. 1" in t and "The model this book builds" in t)
    rgb = np.asarray(document[index].render(scale=1).to_pil().convert("RGB"), dtype=float)
    colour = (rgb.max(axis=-1) - rgb.min(axis=-1)) > 40
    plain = np.asarray(document[1].render(scale=1).to_pil().convert("RGB"), dtype=float)
    assert colour.mean() > 0.03 and ((plain.max(axis=-1) - plain.min(axis=-1)) > 40).mean() < 0.01
    document.close()


def test_outline_titles_are_plain_text():
    assert book_pdf.plain_math(r"Why divide by $\sqrt{d_k}$?") == "Why divide by √d_k?"
    assert book_pdf.plain_math(r"where $-10^9$ becomes $-\infty$") == "where -10⁹ becomes -∞"
    assert book_pdf.plain_math(r"$(x-\mu)/(\sigma+\epsilon)$: $\epsilon$ outside") == "(x-μ)/(σ+ε): ε outside"
    assert book_pdf.plain_math(r"by $\sqrt{d_\text{model}}$") == "by √d_model"


def test_every_figure_and_every_numbered_equation_is_in_the_book(pdfs):
    source = (ROOT / "_build" / "singlehtml" / "intro.html").read_text()
    # Every image of the book (figures, plots) is drawn on a page of the PDF, once.
    images = re.findall(r"<img[^>]*\ssrc=", source)
    reader = pypdf.PdfReader(pdfs / "book.pdf")
    drawn = 0
    for page in reader.pages:
        resources = page.get("/Resources")
        objects = resources.get_object().get("/XObject") if resources is not None else None
        if objects is not None:
            objects = objects.get_object()
            drawn += sum(objects[k].get_object().get("/Subtype") == "/Image" for k in objects)
    assert len(images) > 50 and drawn == len(images), (drawn, len(images))
    # Every numbered equation shows its number, as in the HTML: (1.1), ..., (12.n).
    numbers = re.findall(r'class="eqno">\((\d+\.\d+)\)', source)
    text = " ".join(page_texts(pdfs / "book.pdf"))
    assert len(numbers) > 50 and not [n for n in numbers if f"({n})" not in text]

"""The book as PDF files, printed by the system Chromium from the built HTML: no TeX, nothing downloaded.

    jupyter-book build .            # the HTML, which the chapters' PDFs are printed from
    python scripts/book_pdf.py      # writes _build/pdf/book.pdf and one PDF per chapter

- ``_build/pdf/book.pdf``, the whole book: Jupyter Book's single-page build
  (``jupyter-book build --builder singlehtml``, which this script runs into ``_build/singlehtml``),
  with a title page, printed in one piece, so that every link to a chapter, a section or an
  equation is a link inside the PDF;
- ``_build/pdf/<chapter>.pdf`` (``02_attention.pdf``, ...), each chapter's page of the HTML book;
  its links to the chapter's own equations and sections stay inside the PDF, and those to other
  pages go to the book online.

Chromium prints the page as the reader's browser shows it, once MathJax has typeset it (from the
book's own ``_static``, offline), with the print style below: the navigation, the buttons and the
headings' anchors left out, the solutions' folded boxes open, code wrapped at the margin. The PDF's
outline (its bookmarks) is made by Chromium from the headings; the footer numbers the pages.

``tests/test_pdf.py`` reads the PDFs as a reader would: the chapters' titles in order, no raw TeX,
no text past the margin, the outline, and pages turned into images. The Pages workflow publishes
the PDFs in ``pdf/`` next to the HTML, where the header's download button finds the chapter's
(``_static/book.js``).
"""

import argparse
import datetime
import html
import pathlib
import re
import subprocess
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import book_browser  # noqa: E402
import editions  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"

# The print style, added to every page before it is printed.
PRINT_CSS = r"""
@page { size: A4; margin: 16mm 14mm 18mm 14mm; }
html, body { background: white !important; }
/* What only a screen needs: the navigation, the buttons, the anchors of headings, the footers. */
.bd-header, .bd-header-article, .header-article, .bd-sidebar-primary, .bd-sidebar-secondary,
.bd-footer, .bd-footer-article, .bd-footer-content, .prev-next-area, .headerlink, .copybtn,
.toggle-button, .theme-switch-button, .search-button, #pst-back-to-top, .bd-search, .skip-link,
.sidebar-toggle, .dropdown-launch-buttons, .article-header-buttons, .onlyscreen, #pst-skip-link,
.pst-async-banner-revealer, .bd-header-announcement, #searchbox { display: none !important; }
.mt-print, .mt-print .bd-article { max-width: none !important; width: auto !important; margin: 0 !important;
  padding: 0 !important; }
/* Folded boxes open: the solutions and the hidden outputs. */
.toggle-hidden, .toggle-details__container, details > * { display: block !important;
  visibility: visible !important; opacity: 1 !important; max-height: none !important; }
.admonition.dropdown .admonition-title::after { display: none !important; }
/* Code and outputs wrap at the margin instead of being cut. */
pre, .highlight pre, div.cell_output pre, .output pre { font-size: 7.8pt !important; line-height: 1.35 !important;
  white-space: pre-wrap !important; overflow-wrap: anywhere !important; word-break: break-word !important;
  overflow: visible !important; max-height: none !important; }
div.cell_output, .output, .highlight, div.cell { overflow: visible !important; max-height: none !important; }
.pst-scrollable-table-container, .table-wrapper { overflow: visible !important; }
table { font-size: 0.85em; }
img, svg, figure { max-width: 100% !important; height: auto; break-inside: avoid; }
div.math, mjx-container[display="true"] { break-inside: avoid; overflow: visible !important; }
h1, h2, h3, h4 { break-after: avoid; }
/* Long boxes (an exercise's solution, a long cell) go on over the page rather than leave a blank. */
.admonition, div.cell, div.cell_input, div.cell_output, .highlight, pre { break-inside: auto !important; }
/* Each document of the whole book on a page of its own. */
.mt-document { break-before: page; }
.mt-title-page { break-after: page; height: 250mm; display: flex; flex-direction: column;
  justify-content: center; text-align: center; }
.mt-title-page .mt-title { font-size: 30pt; font-weight: bold; line-height: 1.2; margin-bottom: 12mm; }
.mt-title-page .mt-subtitle { font-size: 14pt; margin-bottom: 30mm; }
.mt-title-page .mt-small { font-size: 10pt; color: #444; }
"""

# Runs in the page: the folded boxes opened, anchors given back to the outline, and (for the
# chapters) links to the other pages sent to the book online. Returns what it did, for the log.
PREPARE = r"""([online, single]) => {
    for (const d of document.querySelectorAll('details')) d.open = true;
    for (const el of document.querySelectorAll('.toggle-hidden')) el.classList.remove('toggle-hidden');
    // MathJax's hidden copy of each equation for screen readers would print as invisible text
    // outside the page; the typeset equation stays.
    for (const el of document.querySelectorAll('mjx-assistive-mml')) el.remove();
    // The checks' "passed!" ends with an emoji, which this Chromium has no font for (a box in the
    // PDF): emoji are left out of the print.
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode()); ) {
        if (/\p{Extended_Pictographic}/u.test(node.textContent))
            node.textContent = node.textContent.replace(/\p{Extended_Pictographic}\uFE0F?/gu, '');
    }
    const article = document.querySelector('.bd-article');
    let sent = 0;
    if (!single) {
        for (const a of article.querySelectorAll('a[href]')) {
            const href = a.getAttribute('href');
            if (/^(#|[a-z]+:)/i.test(href)) continue;       // in the page, or already an address
            const target = new URL(href, document.baseURI);  // a file of the book on disk
            a.setAttribute('href', online + target.pathname.split('/_build/html/').pop() + target.hash);
            sent += 1;
        }
    } else {
        // A link to a file of the build (an image's full size) would point at the printing machine.
        for (const a of article.querySelectorAll('a[href]')) {
            if (new URL(a.getAttribute('href'), document.baseURI).protocol === 'file:' &&
                !a.getAttribute('href').startsWith('#')) a.removeAttribute('href');
        }
        // Each document of the single page starts a page of the PDF, and its title is the top level
        // of the outline: the book's first page is an h1, the others h2, and all become h1.
        for (const marker of article.querySelectorAll('span[id^="document-"]')) {
            const section = marker.nextElementSibling;
            if (!section || section.tagName !== 'SECTION') continue;
            section.classList.add('mt-document');
            const h = section.querySelector(':scope > h2');
            if (h) {
                const h1 = document.createElement('h1');
                h1.innerHTML = h.innerHTML;
                for (const attr of h.attributes) h1.setAttribute(attr.name, attr.value);
                h.replaceWith(h1);
            }
        }
    }
    // Only the article is printed: none of the page's navigation, buttons or footers.
    const main = document.createElement('main');
    main.className = 'mt-print';
    main.appendChild(article);
    document.body.replaceChildren(main);
    // The headings' words, for the outline (Chromium's loses the spaces where a heading wraps), with
    // the TeX of their math, which MathJax keeps; those printed, once the article stands alone.
    const tex = new Map();
    for (const item of (window.MathJax && MathJax.startup && MathJax.startup.document ?
                        MathJax.startup.document.math : [])) {
        if (item.typesetRoot) tex.set(item.typesetRoot, item.math);
    }
    const words = (node) => {
        if (node.nodeType === Node.TEXT_NODE) return node.textContent;
        if (node.nodeType !== Node.ELEMENT_NODE || node.classList.contains('headerlink')) return '';
        if (tex.has(node)) return '$' + tex.get(node) + '$';
        return [...node.childNodes].map(words).join('');
    };
    const titles = [...article.querySelectorAll('h1, h2, h3, h4, h5, h6')]
        .filter((h) => h.getClientRects().length)
        .map((h) => words(h).replace(/\s+/g, ' ').trim());
    return {sent, titles};
}"""

FOOTER = ("<div style='font-size:8pt; width:100%; text-align:center; color:#555;'>"
          "<span class='pageNumber'></span> / <span class='totalPages'></span></div>")


# TeX in a heading, as the outline shows it: letters and signs, no commands.
SYMBOLS = {r"\infty": "∞", r"\cdot": "·", r"\times": "×", r"\mu": "μ", r"\sigma": "σ", r"\epsilon": "ε",
           r"\alpha": "α", r"\tau": "τ", r"\theta": "θ", r"\le": "≤", r"\ge": "≥", r"\to": "→"}
SUPERSCRIPTS = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")


def plain_math(text):
    r"""``$...$`` in an outline's title turned into plain text: ``$\sqrt{d_k}$`` -> ``√d_k``."""
    def one(match):
        tex = match.group(1)
        tex = re.sub(r"\\(?:text|mathrm|mathbf|operatorname)\{([^{}]*)\}", r"\1", tex)
        tex = re.sub(r"\\sqrt\{([^{}]*)\}", lambda m: "√" + (m.group(1) if len(m.group(1)) <= 1 or
                                                               re.fullmatch(r"\w+(_\w+)?", m.group(1))
                                                               else f"({m.group(1)})"), tex)
        for command, symbol in SYMBOLS.items():
            tex = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, tex)
        tex = re.sub(r"\^\{?([0-9+-]+)\}?", lambda m: m.group(1).translate(SUPERSCRIPTS), tex)
        tex = re.sub(r"_\{([^{}]*)\}", r"_\1", tex)
        return tex.replace("{", "").replace("}", "").replace("\\", "").replace(" ", "")
    return re.sub(r"\$([^$]+)\$", one, text)


def retitle_outline(path, titles):
    """Give the PDF's outline entries, in order, the headings' own words (``titles``).

    Chromium makes the outline from the laid-out lines of each heading, and drops the space where a
    heading wraps ("dot-productattention") and the math. Returns False, and leaves the file, if the
    outline does not have one entry per heading.
    """
    import logging

    import pypdf
    from pypdf.generic import NameObject, TextStringObject

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # Chromium's trailer counts one object short: harmless

    writer = pypdf.PdfWriter(clone_from=str(path))
    entries, stack = [], []
    outlines = writer.root_object.get("/Outlines")
    if outlines is not None and "/First" in outlines.get_object():
        stack.append(outlines.get_object()["/First"])
    while stack:  # depth first, in document order
        item = stack.pop().get_object()
        entries.append(item)
        if "/Next" in item:
            stack.append(item["/Next"])
        if "/First" in item:
            stack.append(item["/First"])
    if len(entries) != len(titles):
        return False
    for item, title in zip(entries, titles):
        item[NameObject("/Title")] = TextStringObject(plain_math(title))
    with open(path, "wb") as f:
        writer.write(f)
    return True


def config():
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def version():
    """The commit the book was built from, and its date (for the title page)."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %cs"], capture_output=True,
                                text=True, check=True).stdout.split()
        return commit[0], commit[1]
    except (subprocess.CalledProcessError, FileNotFoundError, IndexError):
        return "", datetime.date.today().isoformat()


def title_page():
    settings = config()
    commit, date = version()
    built = f"Built from commit {commit} on {date}" if commit else f"Built on {date}"
    return (
        "<div class='mt-title-page'>"
        f"<div class='mt-title'>{html.escape(settings['title'])}</div>"
        "<div class='mt-subtitle'>The Transformer of &ldquo;Attention Is All You Need&rdquo;, built and explained "
        "step by step in TensorFlow and Keras 3</div>"
        f"<div class='mt-small'>{html.escape(settings['author'])}</div>"
        f"<div class='mt-small'>{html.escape(built)}. Read online at "
        f"<a href='{editions.book_url()}'>{editions.book_url()}</a></div>"
        "</div>"
    )


def print_page(browser, path, out, single, online):
    """Print one built page to ``out``; return how many links now point to the book online."""
    reader = book_browser.Reader(browser, width=1000, height=1400)
    try:
        page = reader.open(path)
        page.emulate_media(media="print")
        page.add_style_tag(content=PRINT_CSS)
        prepared = page.evaluate(PREPARE, [online, single])
        if single:
            page.evaluate("(html) => document.querySelector('.bd-article').insertAdjacentHTML('afterbegin', html)",
                          title_page())
        book_browser.settle(page)
        page.pdf(path=str(out), format="A4", print_background=True, outline=True, tagged=True,
                 display_header_footer=True, header_template="<span></span>", footer_template=FOOTER,
                 margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"})
        # The single page asks for the search index, which the single-page build does not write.
        problems = [p for p in reader.problems if not (single and "searchindex.js" in p)
                    and not (single and "ERR_FILE_NOT_FOUND" in p and "console error" in p)]
        if problems:
            raise RuntimeError(f"{path}: " + "; ".join(problems[:5]))
        if not retitle_outline(out, prepared["titles"]):
            raise RuntimeError(f"{out}: the outline does not have one entry per heading")
        return prepared["sent"]
    finally:
        reader.close()


def chapter_pages(html_dir):
    return sorted((pathlib.Path(html_dir) / "chapters").glob("*.html"))


def build_single():
    """Jupyter Book's single-page build of the whole book, into _build/singlehtml (warnings fail it)."""
    subprocess.run(["jupyter-book", "build", "--builder", "singlehtml", "-W", "-n", "--keep-going", str(ROOT)],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", default=str(BUILD / "html"), help="the built HTML book (default _build/html)")
    parser.add_argument("--out", default=str(BUILD / "pdf"), help="where the PDFs go (default _build/pdf)")
    parser.add_argument("--no-single-build", action="store_true",
                        help="print _build/singlehtml as it is, without building it again")
    args = parser.parse_args(argv)
    html_dir, out = pathlib.Path(args.html), pathlib.Path(args.out)
    if not (html_dir / "intro.html").is_file():
        raise SystemExit(f"{html_dir} holds no built book: run `jupyter-book build .` first")
    single = BUILD / "singlehtml"
    if not args.no_single_build:
        build_single()
    out.mkdir(parents=True, exist_ok=True)
    online = editions.book_url()
    with book_browser.chromium() as browser:
        print_page(browser, single / "intro.html", out / "book.pdf", True, online)
        print(f"{out / 'book.pdf'}")
        for path in chapter_pages(html_dir):
            sent = print_page(browser, path, out / f"{path.stem}.pdf", False, online)
            print(f"{out / (path.stem + '.pdf')} ({sent} links to other pages go to {online})")


if __name__ == "__main__":
    main()

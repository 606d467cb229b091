"""The rendered book, read in a real headless Chromium with the network cut off.

Every page: no raw TeX in its text, every equation typeset by the MathJax shipped in
``_static/mathjax``, numbered equations numbered, every image loaded, every cell's printed
output in one box, no console error, no uncaught exception, no failed request and no request to
the network, the Colab launch button opening the intended notebook, and a text column that fits
a 390 px phone. Chapter pages also: folded solutions open when clicked, the search finds
"positional encoding", dark mode toggles, and the download button gives the chapter's notebook.
The last tests break a page on purpose and check that these checks fail: they exercise the
helpers of ``scripts/book_browser.py`` that the tests above are thin wrappers around.

They read ``_build/html`` (built first if it is missing: ``jupyter-book build .``) with the
system's Chromium (``apt-get install chromium``); see ``scripts/book_browser.py``.
"""

import functools
import http.server
import pathlib
import re
import subprocess
import sys
import threading
import urllib.parse
import urllib.request

import nbformat
import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import book_browser as bb  # noqa: E402
from run_notebook import toc_chapters  # noqa: E402

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
CHAPTERS = [f"chapters/{p.stem}.html" for p in toc_chapters()]
# Every page of the table of contents, plus the two that Sphinx adds.
PAGES = sorted(f"{f}.html" for f in re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text())
               ) + ["genindex.html", "search.html"]


@pytest.fixture(scope="module")
def book():
    html = bb.HTML
    if not (html / "intro.html").exists():
        subprocess.run(["jupyter-book", "build", "-W", "-n", "--keep-going", str(ROOT)], check=True)
    return html


@pytest.fixture(scope="module")
def browser():
    with bb.chromium() as browser:
        yield browser


@pytest.fixture
def reader(browser):
    reader = bb.Reader(browser)
    yield reader
    reader.close()


def test_every_built_page_is_checked(book):
    assert set(bb.pages(book)) == set(PAGES)
    assert sorted(CHAPTERS) == sorted(f"chapters/{p.stem}.html" for p in (ROOT / "chapters").glob("*.ipynb"))
    assert len(CHAPTERS) >= 13  # twelve numbered chapters and appendix A, at least


@pytest.mark.parametrize("name", PAGES)
def test_page_reads_correctly_offline(reader, book, name):
    page = reader.open(book / name)
    found = bb.inspect(page)
    problems = found["problems"] + bb.overflow(page)["cut"] + reader.problems
    assert not problems, f"{name}:\n" + "\n".join(problems)
    if name in CHAPTERS:  # the checks above looked at something
        assert found["equations"] > 50 and found["numbered"] >= 1 and found["images"] >= 3, found


def test_math_comes_from_the_book_not_a_cdn(book):
    mathjax = book / "_static" / "mathjax" / "tex-chtml.js"
    assert mathjax.exists()
    for name in PAGES:
        scripts = re.findall(r'<script[^>]*src="([^"]+)"', (book / name).read_text())
        assert not [s for s in scripts if s.startswith(("http:", "https:", "//"))], name


def colab_url(name):
    """Where a chapter's launch button must go: its Colab edition in the configured repository."""
    owner_repo = urllib.parse.urlparse(CONFIG["repository"]["url"]).path.strip("/")
    notebook = f"{CONFIG['repository']['path_to_book']}/chapters/{pathlib.Path(name).stem}.ipynb"
    assert (ROOT / notebook).exists(), notebook
    return (f"{CONFIG['launch_buttons']['colab_url']}/github/{owner_repo}/blob/"
            f"{CONFIG['repository']['branch']}/{notebook}")


@pytest.mark.parametrize("name", PAGES)
def test_launch_button_opens_the_intended_notebook(reader, book, name):
    page = reader.open(book / name)
    colab = page.locator('a[href^="https://colab.research.google.com"]')
    if name not in CHAPTERS:  # only notebooks have a launch button
        assert colab.count() == 0
        return
    page.locator(".dropdown-launch-buttons > button.dropdown-toggle").click()
    assert colab.is_visible()
    assert colab.get_attribute("href") == colab_url(name)
    # The form Colab reads, spelled out, in case colab_url() and the theme drift together.
    assert re.fullmatch(r"https://colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/[\w.-]+/"
                        rf"colab/chapters/{pathlib.Path(name).stem}\.ipynb", colab.get_attribute("href"))


@pytest.mark.parametrize("name", CHAPTERS)
def test_download_button_gives_the_chapter_notebook(reader, book, name):
    page = reader.open(book / name)
    page.locator(".dropdown-download-buttons > button.dropdown-toggle").click()
    link = page.locator("a.btn-download-source-button")
    assert link.is_visible() and link.inner_text().strip() == ".ipynb"
    path = pathlib.Path(urllib.request.url2pathname(urllib.parse.urlparse(link.evaluate("a => a.href")).path))
    downloaded = nbformat.read(path, as_version=4)
    chapter = nbformat.read(ROOT / name.replace(".html", ".ipynb"), as_version=4)
    assert [c.source for c in downloaded.cells] == [c.source for c in chapter.cells]


@pytest.mark.parametrize("name", CHAPTERS)
def test_folded_solutions_open_when_clicked(reader, book, name):
    page = reader.open(book / name)
    solutions = page.locator("div.solution.dropdown")
    assert page.locator("div.solution:not(.dropdown)").count() == 0, "a solution is not folded"
    chapter = nbformat.read(ROOT / name.replace(".html", ".ipynb"), as_version=4)
    starts = sum(c.source.startswith("```{solution-start}") for c in chapter.cells if c.cell_type == "markdown")
    assert solutions.count() == starts >= 3
    for i in range(solutions.count()):
        solution = solutions.nth(i)
        body = solution.locator(":scope > :not(.admonition-title)").first
        solution.scroll_into_view_if_needed()
        assert not body.is_visible(), f"solution {i + 1} is open before it is clicked"
        solution.locator("button.toggle-button").click()
        body.wait_for(state="visible", timeout=5000)
        assert body.bounding_box()["height"] > 10
    assert not reader.problems, reader.problems


@pytest.mark.parametrize("name", CHAPTERS)
def test_search_finds_positional_encoding(reader, book, name):
    page = reader.open(book / name)
    page.locator(".search-button__button:visible").first.click()
    box = page.locator("input[name=q]:visible").first
    box.fill("positional encoding")
    box.press("Enter")
    page.wait_for_url(re.compile(r"search\.html\?q=positional"))
    page.wait_for_function("() => /Search finished/.test(document.querySelector("
                           "'#search-results .search-summary')?.textContent || '')", timeout=15000)
    found = page.locator("#search-results ul.search li a").evaluate_all("as => as.map(a => a.href)")
    assert any(h.split("#")[0].endswith("chapters/04_positional_encoding.html") for h in found), found
    assert not reader.problems, reader.problems


@pytest.fixture(scope="module")
def served(book):
    """The book served over HTTP on the loopback address, as GitHub Pages serves it."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(book))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_served_over_http_search_shows_summaries(browser, served):
    reader = bb.Reader(browser, serve=served)
    page = reader.open(served + "chapters/04_positional_encoding.html")
    assert not bb.inspect(page)["problems"]
    page.goto(served + "search.html?q=positional+encoding")
    page.wait_for_function("() => /Search finished/.test(document.querySelector("
                           "'#search-results .search-summary')?.textContent || '')", timeout=15000)
    result = page.locator('#search-results li:has(a[href*="04_positional_encoding.html"])').first
    assert "positional" in result.locator("p.context").inner_text().lower()
    reader.close()
    assert not reader.problems, reader.problems


def luminance(css_color):
    r, g, b = (int(v) for v in re.findall(r"\d+", css_color)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


@pytest.mark.parametrize("name", CHAPTERS)
def test_dark_mode_toggles(reader, book, name):
    page = reader.open(book / name)
    colors = ("() => [getComputedStyle(document.body).backgroundColor, "
              "getComputedStyle(document.querySelector('article p')).color, "
              "getComputedStyle(document.querySelector('article p mjx-container')).color]")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    background, text, math = page.evaluate(colors)
    assert luminance(background) > 0.9 and luminance(text) < 0.3 and luminance(math) < 0.3
    button = page.locator("button.theme-switch-button:visible").first
    for _ in range(3):  # the button cycles auto, dark, light
        if page.evaluate("document.documentElement.dataset.theme") == "dark":
            break
        button.click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    background, text, math = page.evaluate(colors)
    assert luminance(background) < 0.2 and luminance(text) > 0.7 and luminance(math) > 0.7
    assert not reader.problems, reader.problems


@pytest.mark.parametrize("name", PAGES)
def test_text_column_fits_a_phone(browser, book, name):
    reader = bb.Reader(browser, width=390, height=844)
    page = reader.open(book / name)
    found = bb.overflow(page)
    reader.close()
    assert found["pageScroll"] <= 0 and not found["sticking"] and not found["cut"], "\n".join(
        [f"{name} scrolls {found['pageScroll']} px sideways"] + found["sticking"] + found["cut"])


# The checks, shown to fail: a copy of chapter 2 with one defect of each kind, beside the book's
# own _static and _images.

def broken_copy(book, tmp_path, edit):
    (tmp_path / "chapters").mkdir()
    for entry in book.iterdir():
        if entry.name != "chapters":
            (tmp_path / entry.name).symlink_to(entry)
    html = edit((book / "chapters" / "02_attention.html").read_text())
    (tmp_path / "chapters" / "02_attention.html").write_text(html)
    return tmp_path / "chapters" / "02_attention.html"


def test_the_checks_catch_a_broken_page(reader, book, tmp_path):
    def edit(html):
        defects = (
            '<p>An equation with a TeX error: <span class="math notranslate nohighlight">'
            r'\(\notamacro{x}\)</span> and another: <span class="math notranslate nohighlight">'
            r'\(\frac{1}\)</span>.</p>'
            '<p>A missing figure: <img alt="gone" src="../_images/no-such-figure.png"/></p>'
            '<p><span style="display: inline-block; width: 900px">A line wider than a phone.</span></p>'
            r'<p>Typed but never typeset: $QK^\top$ and \alpha_{ij}.</p>'
            '<p><span style="display: inline-block; max-width: 100px; overflow: hidden; white-space: nowrap">'
            'A long line that a box with hidden overflow cuts off.</span></p>'
            '<script>console.error("a deliberate console error")</script>'
            '<script>notAFunction()</script>'
            '<div class="cell_output docutils container">'
            '<div class="output stream highlight-myst-ansi notranslate"><pre>x</pre></div>'
            '<div class="output stream highlight-myst-ansi notranslate"><pre> (2, 5, 16)</pre></div></div>'
        )
        html = html.replace("</article>", defects + "</article>", 1)
        return re.sub(r'<span class="eqno">.*?</span>', "", html, count=1, flags=re.S)

    page = reader.open(broken_copy(book, tmp_path, edit))
    problems = "\n".join(bb.inspect(page)["problems"] + reader.problems)
    assert re.search(r"equation with a TeX error \(undefined \\notamacro\)", problems), problems
    assert re.search(r"equation with a TeX error \(Missing argument for \\frac\)", problems), problems
    assert "image not loaded: ../_images/no-such-figure.png" in problems
    assert re.search(r"failed request: file://.*no-such-figure\.png", problems)
    assert "numbered equation #equation-eq-attention-masked shows no number" in problems
    assert "console error: a deliberate console error" in problems
    assert 'raw TeX "$QK^\\top$" in text' in problems, problems
    assert "uncaught exception: notAFunction is not defined" in problems
    assert 'printed output cut into 2 boxes: "x"' in problems

    phone = bb.Reader(reader.context.browser, width=390, height=844)
    found = bb.overflow(phone.open(page.url))
    phone.close()
    assert found["pageScroll"] > 400 and any("A line wider than a phone" in s for s in found["sticking"])
    assert any("A long line that a box with hidden overflow cuts off" in s for s in found["cut"])


def test_the_checks_catch_a_hidden_equation_number(reader, book, tmp_path):
    for hide in ("visibility: hidden", "color: transparent", "opacity: 0"):
        style = f"<style>#equation-eq-attention-masked .eqno {{ {hide} }}</style>"
        folder = tmp_path / hide.split(":")[0]
        folder.mkdir()
        page = reader.open(broken_copy(book, folder, lambda html: html.replace("</head>", style + "</head>", 1)))
        assert "the number of equation #equation-eq-attention-masked is hidden" in "\n".join(
            bb.inspect(page)["problems"]), hide


def test_the_checks_catch_math_from_a_cdn(reader, book, tmp_path):
    """The book as it was: MathJax from a CDN, so offline every equation stays raw TeX."""
    cdn = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"
    page = reader.open(broken_copy(book, tmp_path, lambda html: html.replace(
        "../_static/mathjax/tex-chtml.js", cdn)))
    found = bb.inspect(page)
    assert any(p.startswith(f"request to the network: {cdn}") for p in reader.problems), reader.problems
    assert sum("equation not rendered" in p for p in found["problems"]) == found["equations"] > 50
    assert any(p.startswith(r'raw TeX "\(" in text') for p in found["problems"])


def test_screenshots_light_and_dark(browser, book, tmp_path):
    import matplotlib.image

    paths, problems = bb.screenshots(book, tmp_path, names=["intro.html", "chapters/02_attention.html"],
                                     browser=browser)
    assert not problems
    assert sorted(p.name for p in paths) == ["chapters-02_attention-dark.png", "chapters-02_attention-light.png",
                                             "intro-dark.png", "intro-light.png"]
    for page in ("intro", "chapters-02_attention"):
        light, dark = (matplotlib.image.imread(tmp_path / f"{page}-{mode}.png") for mode in ("light", "dark"))
        assert light.shape[:2] == dark.shape[:2] == (900, 1280)
        assert light[..., :3].mean() > 0.8 and dark[..., :3].mean() < 0.3


@pytest.mark.parametrize("name,pdf", [("chapters/02_attention.html", "02_attention.pdf"), ("intro.html", "book.pdf")])
def test_download_button_offers_the_pdf(browser, book, tmp_path, name, pdf):
    # Published (.github/workflows/pages.yml), the PDFs of scripts/book_pdf.py sit in pdf/ next to the
    # HTML: the download menu's ".pdf" opens the chapter's, or the book's. Here a server like Pages
    # serves the book with a pdf/ folder of its own.
    (tmp_path / pdf).write_bytes(b"%PDF-1.4\n%%EOF\n")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            if path.startswith("/pdf/"):
                return str(tmp_path / pathlib.PurePosixPath(path).name)
            return super().translate_path(path)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(book)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    served = f"http://127.0.0.1:{server.server_address[1]}/"
    reader = bb.Reader(browser, serve=served)
    try:
        page = reader.open(served + name)
        button = page.locator(".btn-download-pdf-button")
        assert button.get_attribute("data-pdf") == served + "pdf/" + pdf
        page.locator(".dropdown-download-buttons > button.dropdown-toggle").click()
        with page.expect_request(lambda r: r.url == served + "pdf/" + pdf and r.method == "GET"):
            button.click()
    finally:
        reader.close()
        server.shutdown()
        server.server_close()
    # Opened from disk, where no PDF is published next to it, the entry prints the page instead.
    reader = bb.Reader(browser)
    page = reader.open(book / name)
    page.evaluate("() => { window.print = () => { window.printed = true; }; }")
    page.locator(".dropdown-download-buttons > button.dropdown-toggle").click()
    page.locator(".btn-download-pdf-button").click()
    page.wait_for_function("() => window.printed === true")
    reader.close()

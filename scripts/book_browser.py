"""Open the built book in headless Chromium with the network cut off, and look at it as a reader.

    python scripts/book_browser.py screenshots [_build/html]   # top of every page, light and dark

The screenshots land in ``_build/screenshots/`` (``intro-light.png``, ``chapters-02_attention-dark.png``,
...), so a reviewer can look at the whole book in a minute. ``tests/test_browser.py`` uses the same
functions to check every page: equations rendered from ``_static/mathjax`` (no CDN), numbered
equations numbered, images loaded, no console error, no failed or outgoing request.

Chromium comes from the system's package manager (``apt-get install chromium``): Playwright drives
it through its Python API, and Playwright's own browser download is never used. Set ``CHROMIUM``
to use another binary.
"""

import contextlib
import os
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"

# Headless, no GPU, and none of Chromium's own calls home (updates, sync, safe browsing).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def chromium_path():
    """The system Chromium: ``$CHROMIUM``, else the first of the usual names on ``PATH``."""
    if os.environ.get("CHROMIUM"):
        return shutil.which(os.environ["CHROMIUM"]) or os.environ["CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    raise RuntimeError("no Chromium found: install it with `apt-get install chromium` "
                       "(or set CHROMIUM to a Chromium or Chrome binary)")


@contextlib.contextmanager
def chromium():
    """A headless system Chromium driven by Playwright, closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def pages(html=HTML):
    """Every page a reader can reach, as paths relative to ``html`` (``index.html`` only redirects)."""
    html = pathlib.Path(html)
    found = sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                   if not p.relative_to(html).parts[0].startswith(("_", ".")))
    return [p for p in found if p != "index.html"]


class Reader:
    """One offline browser context, recording everything that goes wrong while pages load.

    Every request that is not to a local file is refused and recorded: the book must need no
    network. ``problems`` collects console errors, uncaught exceptions and failed requests.
    ``serve`` is the address of an HTTP server on this machine that serves the book, as GitHub
    Pages will (``http://127.0.0.1:PORT/``): its requests are let through too.
    """

    def __init__(self, browser, width=1280, height=900, mode=None, serve=None):
        self.context = browser.new_context(viewport={"width": width, "height": height},
                                           color_scheme="light")
        self.local = LOCAL_SCHEMES + ((serve,) if serve else ())
        if not serve:  # a server on this machine needs the loopback network; the route still
            self.context.set_offline(True)  # refuses every other address
        if mode:  # the theme's saved choice, as if the reader had picked it earlier
            self.context.add_init_script(
                f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
        self.problems = []
        self.context.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        if url.startswith(self.local):
            route.continue_()
        else:
            self.problems.append(f"request to the network: {url}")
            route.abort("internetdisconnected")

    def open(self, path):
        """Load a page (a path or file URL), wait until MathJax has typeset it, and return it."""
        page = self.context.new_page()
        page.on("console", lambda m: m.type == "error" and self.problems.append(
            f"console error: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"uncaught exception: {e}"))
        page.on("requestfailed", lambda r: r.url.startswith(self.local) and self.problems.append(
            f"failed request: {r.url} ({r.failure})"))
        url = str(path) if str(path).startswith(("file:", "http:")) else pathlib.Path(path).resolve().as_uri()
        page.goto(url, wait_until="load")
        settle(page)
        return page

    def close(self):
        self.context.close()


def settle(page):
    """Wait for MathJax's first typesetting (when the page loads it) and for the web fonts."""
    page.evaluate("""async () => {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
        await document.fonts.ready;
    }""")


# Runs in the page; returns what is wrong with its math and images, and how much of each it saw.
INSPECT = r"""async () => {
    const problems = [];
    const where = (el) => {
        const s = (el.closest('section[id]') || {}).id;
        return s ? ` (in #${s})` : '';
    };
    const item_tex = (container) => {
        const found = [...(MathJax.startup.document.math || [])].find((m) => m.typesetRoot === container);
        return found ? found.math : container.textContent;
    };
    const visible = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
    // Rendered, not hidden by visibility or opacity, not transparent, and not covered.
    const shown = (el) => {
        if (!el.checkVisibility({visibilityProperty: true, opacityProperty: true})) return false;
        const style = getComputedStyle(el);
        if (style.color === 'rgba(0, 0, 0, 0)' || style.color === 'transparent') return false;
        const box = el.getBoundingClientRect();
        el.scrollIntoView({block: 'center'});
        const moved = el.getBoundingClientRect();
        const top = document.elementFromPoint(moved.left + moved.width / 2, moved.top + moved.height / 2);
        return box.width > 0 && !!top && (el.contains(top) || top.contains(el));
    };

    // 1. Raw TeX in text a reader sees: delimiters, a $...$ pair, a \command or a ^{ or _{
    //    outside code and outside what MathJax typeset.
    const rawTex = /\\\(|\\\)|\\\[|\\\]|\$\$|\$[^$\s][^$]*\$|\\[A-Za-z]+|[_^]\{/;
    const skip = 'script, style, pre, code, textarea, mjx-container, .highlight, .MathJax';
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode()); ) {
        const el = node.parentElement;
        if (!el || el.closest(skip)) continue;
        const m = node.textContent.match(rawTex);
        if (m) {
            const text = node.textContent.trim().replace(/\s+/g, ' ');
            problems.push(`raw TeX "${m[0]}" in text: "${text.slice(0, 120)}"${where(el)}`);
        }
    }

    // 2. Every equation rendered, with no TeX error. MathJax shows an error in red inside the
    //    equation (an merror node), and an undefined macro as its own name in red (an mtext with
    //    mathcolor red, MathJax's noundefined package): both are found in MathJax's own trees.
    const maths = [...document.querySelectorAll('.math')];
    const errors = new Map();
    const items = (window.MathJax && MathJax.startup && MathJax.startup.document) ?
        MathJax.startup.document.math : [];
    for (const item of items) {
        let error = null;
        item.root.walkTree((node) => {
            if (error) return;
            if (node.isKind('merror')) {
                error = node.attributes.getExplicit('data-mjx-error') || 'a TeX error';
            } else if (node.isKind('mtext') && node.attributes.getExplicit('mathcolor') === 'red') {
                const text = node.childNodes.map((c) => (c.getText ? c.getText() : '')).join('');
                error = `undefined ${text}`;
            }
        });
        if (error && item.typesetRoot) errors.set(item.typesetRoot, error);
    }
    for (const el of maths) {
        const container = el.querySelector('mjx-container');
        if (!container) {
            problems.push(`equation not rendered: "${el.textContent.trim().slice(0, 80)}"${where(el)}`);
        } else if (errors.has(container) || container.querySelector('mjx-merror')) {
            problems.push(`equation with a TeX error (${errors.get(container) || 'merror'}): "${
                (el.getAttribute('data-tex') || item_tex(container)).slice(0, 80)}"${where(el)}`);
        }
    }
    for (const [container, error] of errors) {
        if (!container.closest('.math')) problems.push(`TeX error outside a math element (${error})`);
    }

    // 3. Numbered equations show their number, and references to them show it too.
    const numbered = [...document.querySelectorAll('div.math[id^="equation-"]')];
    for (const el of numbered) {
        const eqno = el.querySelector('.eqno');
        const text = eqno ? eqno.textContent.trim() : '';
        if (!/^\(\d+(\.\d+)*\)/.test(text)) {
            problems.push(`numbered equation #${el.id} shows no number${where(el)}`);
        } else if (visible(el) && !shown(eqno)) {
            problems.push(`the number of equation #${el.id} is hidden${where(el)}`);
        }
    }
    const refs = [...document.querySelectorAll('a[href*="#equation-"]:not(.headerlink)')];
    for (const a of refs) {
        if (!/\(\d+(\.\d+)*\)/.test(a.textContent)) {
            problems.push(`reference to ${a.getAttribute('href')} shows "${a.textContent.trim()}", not a number`);
        }
    }

    // 4. Every image loaded (lazy ones too: they are made eager and awaited).
    const images = [...document.images];
    for (const img of images) img.loading = 'eager';
    await Promise.all(images.map((img) => img.decode().catch(() => null)));
    for (const img of images) {
        if (!img.complete || img.naturalWidth === 0) {
            problems.push(`image not loaded: ${img.getAttribute('src')}${where(img)}`);
        }
    }
    // 5. A cell's printed output in one box, not cut into pieces where it was flushed.
    for (const out of document.querySelectorAll('.cell_output')) {
        const boxes = out.querySelectorAll(':scope > .output.stream');
        if (boxes.length > 1) {
            problems.push(`printed output cut into ${boxes.length} boxes: "${
                boxes[0].textContent.trim().slice(0, 60)}"${where(out)}`);
        }
    }
    return {problems, equations: maths.length, numbered: numbered.length, images: images.length};
}"""


def inspect(page):
    """What is wrong on a loaded page, as ``{"problems": [...], "equations": n, ...}``."""
    return page.evaluate(INSPECT)


# Runs in the page: elements of the text column that stick out to the right of the window, unless
# an ancestor that scrolls sideways (a code cell, a wide table, a display equation) holds them;
# and content cut off by a box that hides its overflow (the theme clips inline math).
OVERFLOW = r"""() => {
    const width = document.documentElement.clientWidth;
    const out = [], cut = [];
    const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const article = document.querySelector('article') || document.body;
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
        (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
    const text = (el) => (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60);
    for (const el of article.querySelectorAll('*')) {
        const box = el.getBoundingClientRect();
        if (box.width === 0) continue;
        const style = getComputedStyle(el);
        // (MathJax's own parts clip on purpose: its hidden copy for screen readers, glyph pieces.)
        const mathPart = el.closest('mjx-container') && el.tagName !== 'MJX-CONTAINER';
        if (!mathPart && ['hidden', 'clip'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1) {
            cut.push(`${name(el)} cuts off ${el.scrollWidth - el.clientWidth} px: "${text(el)}"`);
        }
        if (box.right <= width + 1) continue;
        let contained = false;
        for (let a = el.parentElement; a && a !== article.parentElement; a = a.parentElement) {
            if (scrolls(a) && a.getBoundingClientRect().right <= width + 1) { contained = true; break; }
        }
        if (!contained && !out.some((o) => o.el.contains(el))) out.push({el, right: box.right});
    }
    return {
        pageScroll: document.documentElement.scrollWidth - width,
        sticking: out.map((o) => `${name(o.el)} reaches ${Math.round(o.right)} px: "${text(o.el)}"`),
        cut,
    };
}"""


def overflow(page):
    """How far the page scrolls sideways, what sticks out past the window's right edge, and what
    a box cuts off: ``{"pageScroll": px, "sticking": [...], "cut": [...]}``."""
    return page.evaluate(OVERFLOW)


def screenshots(html=HTML, out=ROOT / "_build" / "screenshots", names=None, browser=None):
    """Write the top of every page (or of ``names``), light and dark, as PNGs into ``out``.

    Returns ``(paths written, problems seen while loading)``; the problems are also printed.
    Without a ``browser``, the system Chromium is started for it.
    """
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, problems = [], []
    with contextlib.nullcontext(browser) if browser else chromium() as browser:
        for mode in ("light", "dark"):
            reader = Reader(browser, mode=mode)
            for name in names or pages(html):
                page = reader.open(pathlib.Path(html) / name)
                path = out / f"{name[:-len('.html')].replace('/', '-')}-{mode}.png"
                page.screenshot(path=str(path))
                page.close()
                written.append(path)
            for problem in reader.problems:
                print(f"{mode}: {problem}", file=sys.stderr)
            problems += reader.problems
            reader.close()
    return written, problems


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "screenshots":
        raise SystemExit(__doc__)
    paths, problems = screenshots(sys.argv[2] if len(sys.argv) > 2 else HTML)
    print(f"{len(paths)} screenshots in {paths[0].parent}")
    sys.exit(1 if problems else 0)

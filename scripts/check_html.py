"""Fail if the built book has a broken internal link or a missing image.

    python scripts/check_html.py _build/html
"""

import html.parser
import pathlib
import sys
import urllib.parse


class Refs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.refs.append(("link", attrs["href"]))
        if tag == "img" and attrs.get("src"):
            self.refs.append(("image", attrs["src"]))


def main(root):
    root = pathlib.Path(root)
    pages = {p: Refs() for p in root.rglob("*.html") if "_static" not in p.parts}
    for page, parser in pages.items():
        parser.feed(page.read_text(encoding="utf-8"))
    problems, checked = [], 0
    for page, parser in pages.items():
        for kind, ref in parser.refs:
            url = urllib.parse.urlparse(ref)
            if url.scheme or ref.startswith(("//", "mailto:", "data:", "javascript:")):
                continue
            target = page if not url.path else (page.parent / urllib.parse.unquote(url.path)).resolve()
            checked += 1
            if not target.exists():
                problems.append(f"{page.relative_to(root)}: {kind} {ref} -> missing file")
            elif url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if target in pages and url.fragment not in ids:
                    problems.append(f"{page.relative_to(root)}: {kind} {ref} -> missing anchor")
    for problem in problems:
        print(problem)
    print(f"checked {checked} internal links and images in {len(pages)} pages: {len(problems)} broken")
    return 1 if problems or not pages else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "_build/html"))

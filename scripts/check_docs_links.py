"""Check every internal link of a built HTML site: the target file exists and so does its #anchor.

Sphinx (run with ``-W``) already fails on an unresolved ``:ref:``, ``:doc:`` or MyST cross-reference; this
check reads the HTML it wrote, so it also catches a link that resolved to a page or anchor that is not there
(a raw ``href``, an image, a stale generated page).

Usage: ``python scripts/check_docs_links.py docs/_build/html`` (exit code 1 and one line per broken link)
"""

from __future__ import annotations

import argparse
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(values[key])  # type: ignore[arg-type]
        link = values.get("href") if tag in ("a", "link") else values.get("src") if tag in ("img", "script") else None
        if link:
            self.links.append(link)


def parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def broken_links(site: Path) -> list[str]:
    """``page: link`` for every internal link of ``site`` whose file or anchor is missing."""
    pages = {p: parse(p) for p in sorted(site.rglob("*.html"))}
    out = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                out.append(f"{page.relative_to(site)}: {link} (no file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    out.append(f"{page.relative_to(site)}: {link} (no anchor)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the built HTML folder")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"check_docs_links: {args.site} has no index.html: build the docs first", file=sys.stderr)
        return 2
    broken = broken_links(args.site)
    for line in broken:
        print(line)
    n_pages = len(list(args.site.rglob("*.html")))
    print(f"{len(broken)} broken internal links in {n_pages} pages", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())

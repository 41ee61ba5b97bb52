"""The README and docs/ pages: every relative link reaches a file, and every #anchor a heading.

The README links the docs pages and the docs pages link each other; a page renamed or a
heading reworded would otherwise leave a newcomer at GitHub's 404 or at the top of a page.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "jupyter" / "README.md"]
# [text](target) and ![alt](target); a target ends at whitespace or the closing parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def prose(page: Path) -> str:
    """The page without code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", page.read_text()))


def anchors(page: Path) -> set[str]:
    """GitHub's anchor for each heading: lower case, punctuation dropped, spaces to '-'."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", FENCE.sub("", page.read_text()), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(prose(page)) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    assert page.is_file(), f"{page.relative_to(ROOT)} is missing"
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.name}")
    assert not broken, f"{page.relative_to(ROOT)} links nowhere:\n" + "\n".join(broken)


def test_the_link_check_sees_links():
    """The checker finds the README's links to docs/ (so the test above can fail at all)."""
    linked = relative_links(ROOT / "README.md")
    assert "docs/grading.md" in linked and "docs/jupyterlab.png" in linked, linked

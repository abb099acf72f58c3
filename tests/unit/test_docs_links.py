"""Every relative link in the project's Markdown documentation resolves.

A link ``[text](path)`` or ``[text](path#anchor)`` must name a file or folder that exists,
relative to the Markdown file; an anchor must match a heading of the target file (GitHub's
heading ids). Links with a scheme (``https:``, ``mailto:``) are not checked. Fenced code blocks
and inline code are ignored.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "CHANGELOG.md",
        ROOT / "bench" / "README.md",
        ROOT / "eval" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    ]
)

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def heading_ids(text: str) -> set[str]:
    """GitHub's ids of the headings of a Markdown text.

    Examples:
        >>> sorted(heading_ids("# Tables\\n## `parsed_statements`\\n## How the tables are kept"))
        ['how-the-tables-are-kept', 'parsed_statements', 'tables']
    """
    ids: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        candidate, n = slug, 1
        while candidate in ids:
            candidate, n = f"{slug}-{n}", n + 1
        ids.add(candidate)
    return ids


def broken_links(document: Path) -> list[str]:
    """The relative links of ``document`` that do not resolve, as ``target: why``."""
    broken = []
    for target in _LINK.findall(_prose(document.read_text(encoding="utf-8"))):
        if _SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (document.parent / path_part).resolve() if path_part else document
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif (
            anchor
            and resolved.suffix == ".md"
            and resolved.is_file()
            and anchor not in heading_ids(resolved.read_text(encoding="utf-8"))
        ):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    return broken


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_relative_links_resolve(document: Path) -> None:
    assert document.exists(), f"{document.relative_to(ROOT)} is missing"
    assert broken_links(document) == []


def test_docs_links_checker_reports_missing_files_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tables.md").write_text("# Tables\n\n## `queries`\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/tables.md) [ok anchor](docs/tables.md#queries) [web](https://example.org/x)\n"
        "[gone](docs/missing.md) [bad anchor](docs/tables.md#nothing) [self](#nowhere)\n"
        "`[in code](docs/ignored.md)`\n\n```\n[in a fence](docs/ignored.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(readme) == [
        "docs/missing.md: no such file",
        "docs/tables.md#nothing: no heading #nothing in tables.md",
        "#nowhere: no heading #nowhere in README.md",
    ]

"""The chapters speak to a reader: no project bookkeeping, module path or commit hash in the
prose (code cells are not prose; what a cell prints is checked where it is written)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted(BOOK.glob("*.md"))

# (pattern, what it is): each is a sign of the project on the reader's page
FORBIDDEN = (
    (r"\bissues?\b", "the project's issues"),
    (r"\binference_math\.(?!DERIVATIONS\b)\w", "a module path (name the API page or the command)"),
    (r"\b[\w/]+\.py\b", "a source file"),
    (r"\binference_math/", "a path in the repository"),
    (r"\bREADME\b", "a pointer to the repository's README"),
    (r"\bcommit\s+[0-9a-f]{7,40}\b", "a commit hash"),
    (r"\b(?:the book aims|aims? for the|the target is a)\b", "a project target"),
    (r"\bhand[- ]check", "the project's checking, not the reader's question"),
)
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\{[\w:-]+\}|\w+)?")


def prose_lines(text: str):
    """(line number, line) of the prose: everything outside code (code cells, verbatim blocks)
    and the front matter; a directive's body (an admonition, a figure's caption) is prose."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0] == "---":  # the jupytext header
        start = lines.index("---", 1) + 1
    code_fence, directives = None, []
    for number, line in enumerate(lines[start:], start + 1):
        fence = _FENCE.match(line)
        if code_fence is not None:
            if line.strip() == code_fence:
                code_fence = None
            continue
        if fence and fence.group(2) is None and directives and line.strip() == directives[-1]:
            directives.pop()  # a directive closes
            continue
        if fence and (fence.group(2) is None or fence.group(2) == "{code-cell}"
                      or not fence.group(2).startswith("{")):
            code_fence = fence.group(1)
            continue
        if fence:
            directives.append(fence.group(1))
        yield number, line


def test_the_scan_finds_prose_and_skips_code():
    text = ("---\nx: 1\n---\n# T\nprose issue\n```{code-cell} ipython3\nissue = 1\n```\n"
            "````{admonition} A\nboxed README\n````\n```bash\nmake README\n```\n")
    assert [n for n, _ in prose_lines(text)] == [4, 5, 9, 10]


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_project_bookkeeping_in_the_prose(path):
    found = [f"{path.name}:{number}: {why}: {line.strip()[:100]}"
             for number, line in prose_lines(path.read_text())
             for pattern, why in FORBIDDEN if re.search(pattern, line, re.IGNORECASE)]
    assert not found, "\n".join(found)

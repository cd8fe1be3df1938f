"""The errata index: every erratum box of the chapters, in the order of the book, with a link.

Read from the chapter sources, so a box added to a chapter appears in the index without anyone
editing the page. A box is a ``{admonition}`` whose title starts with "Erratum:" and carries a
``:name:`` (the link target).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BOX = re.compile(r"^(`{3,}|:{3,})\{admonition\} Erratum:\s*(.*)$")
TITLE = re.compile(r"^# (.+)$", re.M)


@dataclass(frozen=True)
class Erratum:
    chapter: str  # the chapter's file name without .md
    chapter_title: str
    title: str  # the box's title after "Erratum:"
    name: str | None  # its link target (None: the box has no :name:)


def chapter_order(root: Path = ROOT) -> list[str]:
    """The chapters' file stems in the order of ``_toc.yml`` (the root first)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    order = [toc["root"]]
    for part in toc.get("parts", []):
        order += [entry["file"] for entry in part["chapters"]]
    return [Path(name).name for name in order]


def boxes(text: str, chapter: str, chapter_title: str) -> list[Erratum]:
    """The erratum boxes of one chapter's source."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        match = BOX.match(line)
        if not match:
            continue
        name = None
        for option in lines[i + 1:]:
            if not option.startswith(":"):
                break
            if option.startswith(":name:"):
                name = option.split(":", 2)[2].strip()
        out.append(Erratum(chapter, chapter_title, match.group(2).strip(), name))
    return out


def entries(root: Path = ROOT) -> list[Erratum]:
    """Every erratum box of the book, chapter by chapter in reading order."""
    out = []
    for stem in chapter_order(root):
        path = root / "book" / f"{stem}.md"
        text = path.read_text()
        title = TITLE.search(text)
        out += boxes(text, stem, title.group(1).strip() if title else stem)
    return out


def markdown(items: list[Erratum]) -> str:
    """The index as MyST: a heading line per chapter, a linked item per box."""
    lines, current = [], None
    for item in items:
        if item.chapter != current:
            current = item.chapter
            lines += ["", f"**{{doc}}`{item.chapter}`**", ""]
        lines.append(f"- {{ref}}`{_plain(item.title)} <{item.name}>`")
    return "\n".join(lines).strip() + "\n"


def _plain(title: str) -> str:
    """A title as link text: its inline math without dollars (a link holds no math), and no
    character that would end the role."""
    text = re.sub(r"\$([^$]*)\$", lambda m: _math_text(m.group(1)), title)
    return text.replace("<", "‹").replace(">", "›").replace("`", "'")


def _math_text(tex: str) -> str:
    text = re.sub(r"\\mathrm\{([^}]*)\}", r"\1", tex)
    text = text.replace(r"\alpha", "α").replace("_{", "_").replace("{", "").replace("}", "")
    return text.replace(" ", "")

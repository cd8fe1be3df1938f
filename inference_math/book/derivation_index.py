"""The derivation index: every labelled equation, where the book shows it and what implements it.

Built from :data:`inference_math.core.registry.DERIVATIONS` and the chapter sources, so a derivation
added to the library appears in the index without anyone editing the page. Each entry gives the
label (a permalink: ``derivations.html#<label>``), the equation as the chapters display it (its
display form, proven equal to the tested expression), the function that returns it, the source it
reproduces, the chapter where it is numbered and the chapters that refer to it or evaluate it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .. import DERIVATIONS
from .display import latex as display_latex

ROOT = Path(__file__).resolve().parents[2]
LABEL_LINE = re.compile(r"^:label: (eq-[a-z0-9-]+)\s*$", re.M)
EQ_REF = re.compile(r"\{eq\}`(eq-[a-z0-9-]+)`")
# A label written out in a docstring or a source string ("book eq-roofline-critical-batch").
RAW_LABEL = re.compile(r"(?<![\w`{-])eq-[a-z0-9]+(?:-[a-z0-9]+)+")
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)
# How the registry's source strings name the works of references.bib.
SOURCE_KEYS = (
    (re.compile(r"Erdil \(2025\)"), "erdil2025inference"),
    (re.compile(r"Austin et al\. \(2025\)"), "austin2025scaling"),
    (re.compile(r"Pope et al\."), "pope2022efficiently"),
    (re.compile(r"Leviathan et al\."), "leviathan2023fast"),
    (re.compile(r"Little \(1961\)"), "little1961"),
    (re.compile(r"Kleinrock \(1975\)"), "kleinrock1975"),
    (re.compile(r"Kingman \(1961\)"), "kingman1961"),
    (re.compile(r"Weyl \(1916\)"), "weyl1916"),
    (re.compile(r"Feller \(1968\)"), "feller1968"),
    (re.compile(r"Boucheron, Lugosi and Massart \(2013\)"), "boucheron2013concentration"),
    (re.compile(r"Mazurek and Gabriel \(2025\)"), "mazurek2025llm"),
    (re.compile(r"Mazurek and Schreiber \(2025\)"), "mazurek2025moe"),
    (re.compile(r"Mazurek \(2025\), 'Why are embeddings"), "mazurek2025embeddings"),
    (re.compile(r"Mazurek \(2025\), 'AI infrastructure"), "mazurek2025experience"),
    (re.compile(r"DeepSeek-AI \(2024\), DeepSeek-V2"), "deepseekai2024v2"),
    (re.compile(r"SGLang \(2025\), MHA prefill"), "sglang2025mlaprefill"),
    (re.compile(r"DeepSeek-AI \(2025\), DeepSeek-V3\.2-Exp"), "deepseek2025v32"),
    (re.compile(r"DeepSeek-AI \(2026\), DeepSeek-V4"), "deepseek2026v4"),
    (re.compile(r"Kimi Team \(2025\), Kimi Linear"), "kimi2025linear"),
    (re.compile(r"Lu et al\. \(2025\), MoBA"), "lu2025moba"),
)


@dataclass(frozen=True)
class Chapter:
    docname: str  # e.g. "latency_wall", relative to book/
    title: str
    text: str
    part: str = ""  # the caption of its part in _toc.yml ("" for the root page)


@dataclass(frozen=True)
class Entry:
    label: str
    module: str
    qualname: str
    summary: str
    source: str
    latex: str
    shown_in: str  # docname of the chapter that numbers the equation
    chapter: str  # that chapter's title
    part: str  # the caption of that chapter's part in _toc.yml ("" for the root page)
    used_in: tuple[str, ...]  # other chapters that refer to it or call its function
    cites: tuple[str, ...]  # references.bib keys of the works its source names


def source_keys(source: str) -> tuple[str, ...]:
    """The bibliography keys of the works a registry source string names, in order of mention."""
    found = sorted((m.start(), key) for pattern, key in SOURCE_KEYS
                   for m in [pattern.search(source)] if m)
    return tuple(dict.fromkeys(key for _, key in found))


def chapters(root: Path = ROOT) -> list[Chapter]:
    """The chapters in table-of-contents order (root page first)."""
    toc_path = root / "_toc.yml"
    if not toc_path.exists():
        raise FileNotFoundError(f"no _toc.yml under {root}: the index is built from a clone of "
                                "the book's repository")
    toc = yaml.safe_load(toc_path.read_text())
    files = [(toc["root"], "")] + [(ch["file"], part.get("caption") or "")
                                   for part in toc.get("parts", [])
                                   for ch in part.get("chapters") or []]
    out = []
    for file, part in files:
        text = (root / f"{file}.md").read_text()
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")),
                     file)
        out.append(Chapter(Path(file).name, title, text, part))
    return out


def _summary(function) -> str:
    doc = (function.__doc__ or "").strip()
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def entries(root: Path = ROOT, derivations: dict | None = None) -> list[Entry]:
    """One entry per registered derivation, in the order the book numbers them.

    Raises ``ValueError`` if a derivation is numbered in no chapter or in more than one, or if a
    chapter numbers an equation under a label no derivation is registered with.
    """
    registered = DERIVATIONS if derivations is None else derivations
    book = chapters(root)
    shown: dict[str, list[str]] = {}
    used: dict[str, set[str]] = {label: set() for label in registered}
    for chapter in book:
        for label in LABEL_LINE.findall(chapter.text):
            shown.setdefault(label, []).append(chapter.docname)
        refs = set(EQ_REF.findall(chapter.text))
        code = "\n".join(CODE_CELL.findall(chapter.text))
        for label, derivation in registered.items():
            name = derivation.function.__name__
            if label in refs or re.search(rf"\b{re.escape(name)}\(", code):
                used[label].add(chapter.docname)
    problems = [f"{label} is numbered in {', '.join(where) or 'no chapter'}"
                for label in registered if len(where := shown.get(label, [])) != 1]
    unknown = sorted(set(shown) - set(registered))
    if problems or unknown:
        raise ValueError("; ".join(problems + [f"{u} labels no registered derivation"
                                               for u in unknown]))
    order = {label: i for i, label in enumerate(
        label for chapter in book for label in LABEL_LINE.findall(chapter.text))}
    position = {chapter.docname: i for i, chapter in enumerate(book)}
    by_doc = {chapter.docname: chapter for chapter in book}
    out = []
    for label in sorted(registered, key=order.__getitem__):
        derivation = registered[label]
        home = shown[label][0]
        out.append(Entry(
            label=label,
            module=derivation.function.__module__,
            qualname=derivation.qualname,
            summary=_summary(derivation.function),
            source=derivation.source,
            latex=display_latex(derivation.function()),
            shown_in=home,
            chapter=by_doc[home].title,
            part=by_doc[home].part,
            used_in=tuple(sorted(used[label] - {home}, key=position.__getitem__)),
            cites=source_keys(derivation.source),
        ))
    return out


#: The heading of the root page's derivations, which belong to no part of _toc.yml.
ROOT_PART = "Introduction"


def groups(items: list[Entry]) -> list[tuple[str, list[tuple[str, list[Entry]]]]]:
    """The entries as (part caption, [(chapter title, entries)]), in the order the book numbers
    them (a part's chapters are consecutive in the table of contents)."""
    out: list[tuple[str, list[tuple[str, list[Entry]]]]] = []
    for item in items:
        part = item.part or ROOT_PART
        if not out or out[-1][0] != part:
            out.append((part, []))
        chapters_of_part = out[-1][1]
        if not chapters_of_part or chapters_of_part[-1][0] != item.chapter:
            chapters_of_part.append((item.chapter, []))
        chapters_of_part[-1][1].append(item)
    return out


def _cross_referenced(text: str, labels: set[str]) -> str:
    """``text`` with each registered label it names as a reference to the numbered equation (the
    reader sees "(3.7)", a link, instead of the raw label)."""
    return RAW_LABEL.sub(lambda m: f"{{eq}}`{m.group(0)}`" if m.group(0) in labels else m.group(0),
                         text)


def _entry(item: Entry, labels: set[str]) -> list[str]:
    used = ", ".join(f"{{doc}}`{doc}`" for doc in item.used_in)
    used = f"; also used in {used}" if used else ""
    return [
        f'<p class="derivation-label" id="{item.label}">'
        f'<a class="derivation-permalink" href="#{item.label}" title="Permalink to this '
        f'derivation"><code>{item.label}</code></a></p>',
        "",
        _cross_referenced(item.summary, labels),
        "",
        "$$",
        item.latex,
        "$$",
        "",
        f"- Numbered as {{eq}}`{item.label}` in {{doc}}`{item.shown_in}`{used}.",
        f"- Implemented by `{item.qualname}()`.",
        f"- Reproduces: {_cross_referenced(item.source, labels)}"
        + (f" {{cite:p}}`{','.join(item.cites)}`." if item.cites else "."),
        "",
    ]


def markdown(items: list[Entry]) -> str:
    """The index as MyST Markdown: a section per part of the book (its caption in _toc.yml), a
    subsection per chapter, the entries in the order the book numbers them, and an in-page list
    of the parts first (the sections also make the page's contents sidebar)."""
    labels = {item.label for item in items}
    lines = ["```{contents} Parts of the book", ":local:", ":depth: 1", ":backlinks: none", "```", ""]
    for part, chapter_groups in groups(items):
        count = sum(len(group) for _, group in chapter_groups)
        lines += [f"## {part}", "",
                  f"{count} derivation{'s' if count != 1 else ''} in "
                  f"{len(chapter_groups)} chapter{'s' if len(chapter_groups) != 1 else ''}.", ""]
        for title, group in chapter_groups:
            lines += [f"### {title}", ""]
            for item in group:
                lines += _entry(item, labels)
    return "\n".join(lines)

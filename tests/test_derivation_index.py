"""The derivation index: complete, one entry per label, links and usage found in the chapters."""

import importlib
import inspect
import pkgutil
import re
import textwrap

import pytest
import sympy as sp

import inference_math
from inference_math import DERIVATIONS
from inference_math.book import derivation_index as di
from inference_math.book.display import latex as display_latex
from inference_math.core.registry import Derivation, derivation

x, y = sp.symbols("x y", positive=True)


def test_every_function_returning_an_equation_is_a_labelled_derivation():
    """A derivation with no label could not be cited: every ``-> sp.Eq`` function is registered."""
    unlabelled = []
    for info in pkgutil.walk_packages(inference_math.__path__, "inference_math."):
        module = importlib.import_module(info.name)
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ != module.__name__ or name.startswith("_"):
                continue
            if "Eq" in str(inspect.signature(fn).return_annotation) and not hasattr(fn, "label"):
                unlabelled.append(f"{module.__name__}.{name}")
    assert unlabelled == []


def test_a_label_is_registered_once_and_well_formed():
    with pytest.raises(ValueError, match="used twice"):
        derivation("eq-roofline-critical-batch", "test")(lambda: sp.Eq(x, y))
    with pytest.raises(ValueError, match="not of the form"):
        derivation("roofline-critical-batch", "test")(lambda: sp.Eq(x, y))


def test_the_index_has_every_derivation_once_with_its_equation():
    entries = di.entries()
    labels = [e.label for e in entries]
    assert len(labels) == len(set(labels)) == len(DERIVATIONS)
    assert set(labels) == set(DERIVATIONS)
    by_label = {e.label: e for e in entries}
    # Spot checks against the registry and the chapter sources, read independently here.
    entry = by_label["eq-wall-minimum-latency"]
    assert entry.shown_in == "latency_wall"
    function = DERIVATIONS[entry.label].function
    assert entry.qualname == "inference_math.derivations.latency_wall." + function.__name__
    # the index prints what the chapter prints: the display form (one cube root, no 2/3 fractions)
    assert entry.latex == display_latex(DERIVATIONS[entry.label].function())
    assert r"\frac{2}{3}" not in entry.latex and "2/3" in entry.latex
    assert "eq. 14" in entry.source
    text = (di.ROOT / "book" / "takeaways.md").read_text()
    referring = {e.label for e in entries if "takeaways" in e.used_in}
    assert set(re.findall(r"\{eq\}`(eq-[a-z0-9-]+)`", text)) - {
        e.label for e in entries if e.shown_in == "takeaways"} <= referring


def test_the_page_gives_each_label_one_anchor_and_a_link_to_its_equation():
    entries = di.entries()
    page = di.markdown(entries)
    for e in entries:
        assert page.count(f'id="{e.label}"') == 1, e.label
        assert f"{{eq}}`{e.label}`" in page
        assert f"`{e.qualname}()`" in page
    assert page.count("$$") == 2 * len(entries)


def _toc_parts():
    """(caption, [chapter docnames]) of each part of _toc.yml, read here independently."""
    import yaml

    toc = yaml.safe_load((di.ROOT / "_toc.yml").read_text())
    return [(part["caption"], [ch["file"].split("/")[-1] for ch in part["chapters"]])
            for part in toc["parts"]]


def _home(label):
    """The chapter whose source numbers ``label`` (its ``:label:`` line), found here directly."""
    homes = [path.stem for path in (di.ROOT / "book").glob("*.md")
             if re.search(rf"^:label: {label}\s*$", path.read_text(), re.M)]
    assert len(homes) == 1, (label, homes)
    return homes[0]


def test_the_page_is_grouped_by_part_then_chapter_with_a_contents_list():
    page = di.markdown(di.entries())
    parts = _toc_parts()
    part_of = {doc: caption for caption, docs in parts for doc in docs}
    title = {path.stem: next(line[2:].strip() for line in path.read_text().splitlines()
                             if line.startswith("# "))
             for path in (di.ROOT / "book").glob("*.md")}
    # the in-page contents list comes before the first part
    assert page.index("```{contents}") < page.index("\n## ")
    part = chapter = None
    seen_parts, placed = [], {}
    for line in page.splitlines():
        if line.startswith("## "):
            part, chapter = line[3:], None
            seen_parts.append(part)
        elif line.startswith("### "):
            chapter = line[4:]
        elif (m := re.search(r'id="(eq-[a-z0-9-]+)"', line)):
            placed[m.group(1)] = (part, chapter)
    assert set(placed) == set(DERIVATIONS)
    for label, (part, chapter) in placed.items():
        home = _home(label)
        assert part == part_of[home], label
        assert chapter == title[home], label
    # each part once, in the order of _toc.yml; only parts that number equations
    order = [caption for caption, _ in parts]
    assert len(seen_parts) == len(set(seen_parts))
    assert seen_parts == sorted(seen_parts, key=order.index)
    assert set(seen_parts) == {part_of[_home(label)] for label in DERIVATIONS}


def _fake_book(tmp_path, chapters: dict[str, str]):
    toc = "format: jb-book\nroot: book/" + next(iter(chapters)) + "\nparts:\n  - chapters:\n"
    toc += "".join(f"      - file: book/{name}\n" for name in list(chapters)[1:])
    (tmp_path / "_toc.yml").write_text(toc)
    (tmp_path / "book").mkdir()
    for name, text in chapters.items():
        (tmp_path / "book" / f"{name}.md").write_text(textwrap.dedent(text))
    return tmp_path


def _registry():
    def first_thing() -> sp.Eq:
        """First thing (eq-fake-first)."""
        return sp.Eq(x, 2 * y)

    def second_thing() -> sp.Eq:
        """Second thing."""
        return sp.Eq(y, x / 2)

    return {"eq-fake-first": Derivation("eq-fake-first", "a paper, eq. 1", first_thing),
            "eq-fake-second": Derivation("eq-fake-second", "a post", second_thing)}


def test_usage_is_found_from_references_and_code_calls_only(tmp_path):
    root = _fake_book(tmp_path, {
        "intro": "# Intro\n\nNothing here mentions first_thing() in code.\n",
        "shows": "# Shows\n\n```{math}\n:label: eq-fake-first\nx\n```\n\n"
                 "```{math}\n:label: eq-fake-second\ny\n```\n",
        "refers": "# Refers\n\nAs in {eq}`eq-fake-second`.\n",
        "calls": "# Calls\n\n```{code-cell} ipython3\nvalue = first_thing()\n```\n",
    })
    entries = {e.label: e for e in di.entries(root, _registry())}
    assert entries["eq-fake-first"].shown_in == "shows"
    assert entries["eq-fake-first"].used_in == ("calls",)
    assert entries["eq-fake-second"].used_in == ("refers",)
    assert entries["eq-fake-first"].latex == "x = 2 y"
    assert [e for e in entries] == ["eq-fake-first", "eq-fake-second"]


@pytest.mark.parametrize("chapters, message", [
    ({"a": "# A\n\n:label: eq-fake-first\n", "b": "# B\n"}, "eq-fake-second is numbered in no"),
    ({"a": "# A\n\n:label: eq-fake-first\n:label: eq-fake-second\n",
      "b": "# B\n\n:label: eq-fake-first\n"}, "eq-fake-first is numbered in a, b"),
    ({"a": "# A\n\n:label: eq-fake-first\n:label: eq-fake-second\n:label: eq-fake-third\n"},
     "eq-fake-third labels no registered derivation"),
])
def test_a_missing_duplicated_or_unknown_label_fails(tmp_path, chapters, message):
    root = _fake_book(tmp_path, chapters)
    with pytest.raises(ValueError, match=message):
        di.entries(root, _registry())


def test_every_source_names_a_work_of_the_bibliography():
    bib = (di.ROOT / "references.bib").read_text()
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, re.M))
    for label, d in DERIVATIONS.items():
        cited = di.source_keys(d.source)
        assert cited, f"{label}: no bibliography work named in {d.source!r}"
        assert set(cited) <= keys, label


@pytest.mark.parametrize("source, keys", [
    ("Erdil (2025), eq. 14", ("erdil2025inference",)),
    ("this book, from Austin et al. (2025), 'Tricks'; Pope et al. (2022)",
     ("austin2025scaling", "pope2022efficiently")),
    ("Mazurek and Schreiber (2025), 'KV Cache'", ("mazurek2025moe",)),
    ("Mazurek (2025), 'Why are embeddings so cheap?'", ("mazurek2025embeddings",)),
    ("this book", ()),
])
def test_source_strings_map_to_keys(source, keys):
    assert di.source_keys(source) == keys

"""Project invariants: pins, citation metadata, table of contents, citations, equation labels."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from inference_math import DERIVATIONS, GPUS, MODELS

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))


def bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,]+),", (ROOT / "references.bib").read_text(), re.M))


def test_requirements_are_exact_pins_with_jupyter_book_1():
    lines = [ln for ln in (ROOT / "requirements.txt").read_text().splitlines()
             if ln and not ln.startswith("#")]
    assert all(re.match(r"^[A-Za-z0-9_.\-\[\]]+==[^=\s]+$", ln) for ln in lines), lines
    (jb,) = [ln for ln in lines if ln.lower().startswith("jupyter-book==")]
    assert jb.split("==")[1].startswith("1."), "jupyter-book 2 ignores _config.yml/_toc.yml"


def test_environment_yml_installs_the_same_pins_and_the_package():
    # Binder (repo2docker) builds from environment.yml when there is one: without `-e .` the
    # chapters launched there could not import inference_math.
    assert not (ROOT / "binder").exists() and not (ROOT / ".binder").exists()
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-r requirements.txt" in pip_section
    assert "-e ." in pip_section
    assert "python=3.11" in env["dependencies"]


def test_citation_cff_is_valid():
    cffconvert = Path(sys.executable).with_name("cffconvert")
    proc = subprocess.run([str(cffconvert), "--validate", "-i", str(ROOT / "CITATION.cff")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_toc_lists_every_chapter_and_nothing_else():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = {toc["root"]}
    for part in toc["parts"]:
        files |= {c["file"] for c in part["chapters"]}
    assert files == {f"book/{p.stem}" for p in CHAPTERS}


def test_every_citation_and_preset_source_is_in_the_bibliography():
    keys = bib_keys()
    cited = set()
    for chapter in CHAPTERS:
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", chapter.read_text()):
            cited |= {k.strip() for k in group.split(",")}
    for preset in [*MODELS.values(), *GPUS.values()]:
        cited |= {k.strip() for k in preset.source.split(",")}
    assert cited and cited <= keys, sorted(cited - keys)


def test_every_derivation_is_labelled_exactly_once_in_the_book():
    """A citable equation: each registered derivation appears once under its own label."""
    labels = []
    for chapter in CHAPTERS:
        labels += re.findall(r"^:label: (eq-[\w-]+)$", chapter.read_text(), re.M)
    duplicates = {lab for lab in labels if labels.count(lab) > 1}
    assert not duplicates, duplicates
    assert set(labels) <= set(DERIVATIONS), sorted(set(labels) - set(DERIVATIONS))
    missing = set(DERIVATIONS) - set(labels)
    assert not missing, f"derivations shown nowhere in the book: {sorted(missing)}"


def test_equation_references_resolve_to_labels():
    text = "\n".join(c.read_text() for c in CHAPTERS)
    labels = set(re.findall(r"^:label: (eq-[\w-]+)$", text, re.M))
    refs = set(re.findall(r"\{eq\}`(eq-[\w-]+)`", text))
    assert refs <= labels, sorted(refs - labels)


def test_no_notebook_is_committed():
    tracked = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    assert tracked == []


def test_every_chapter_with_prose_cites_a_source():
    """Generated back matter (the bibliography, the derivation index) cites through its entries."""
    generated = {"bibliography", "derivations"}
    uncited = [c.stem for c in CHAPTERS
               if c.stem not in generated and not re.search(r"\{cite(:[pt])?\}`", c.read_text())]
    assert uncited == []


def test_the_readmes_python_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks
    namespace: dict = {}  # the examples run in order, as in one session
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["table"]["tokens_per_s"][0] == namespace["front"].max_speed().tokens_per_s


def test_references_bib_parses_with_every_entry():
    """The bibliography Sphinx reads parses, entry for entry (a lost brace would merge two)."""
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "references.bib")).entries
    assert set(entries) == bib_keys()


def test_dollar_signs_before_glued_numbers_are_escaped():
    """An unescaped "$" before {glue:text} opens inline math and swallows the sentence."""
    for chapter in CHAPTERS:
        for number, line in enumerate(chapter.read_text().splitlines(), 1):
            assert not re.search(r"(^|[\s(])\$\{glue:text\}", line), f"{chapter.name}:{number}"

"""`make help` lists every target of the Makefile: each phony target, and each rule a reader
types (not the file targets such as the virtualenv's stamp or Chromium)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()


def phony() -> set[str]:
    names = set()
    for line in MAKEFILE.splitlines():
        if line.startswith(".PHONY:"):
            names.update(line.removeprefix(".PHONY:").split())
    return names


def rules() -> set[str]:
    """Targets of rules named by a plain word (``name:`` but not ``NAME :=`` nor ``$(VAR):``)."""
    return {m.group(1) for m in re.finditer(r"^([a-z][a-z0-9_-]*)\s*:(?!=)", MAKEFILE, re.M)}


def test_every_rule_a_reader_types_is_phony():
    assert rules() == phony()
    assert {"venv", "book", "test", "unit", "lint", "nbval", "executed", "book-strict",
            "test-browser", "pdf", "bench", "lock", "clean", "help"} <= phony()


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_help_names_every_target():
    out = subprocess.run(["make", "--no-print-directory", "-s", "help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    listed = {m.group(1) for m in re.finditer(r"^make ([a-z][a-z0-9_-]*) +- \S", out, re.M)}
    assert listed == phony() | rules(), sorted((phony() | rules()) ^ listed)
    assert len(out.splitlines()) == len(listed)  # one line each, nothing else

"""A row and a group of the reproduction record (the page:
:mod:`inference_math.book.reproduction`)."""


from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

ERDIL = "erdil2025inference"
AUSTIN = "austin2025scaling"
POPE = "pope2022efficiently"
MAZUREK = "mazurek2025llm"
MAZUREK_MOE = "mazurek2025moe"
MAZUREK_EMB = "mazurek2025embeddings"
MAZUREK_EXP = "mazurek2025experience"
DEEPSEEK = "deepseekai2024v3"
DEEPSEEK_V4 = "deepseek2026v4"
# Not one bibliography key: the model cards and reports of several publishers, each cited where
# the page shows their group.
PUBLISHERS = "publishers"
DATA = resources.files("inference_math") / "data"
_GB = 1e9


@dataclass(frozen=True)
class Row:
    quantity: str  # short: what the row compares
    source: float  # the source's value, read from the data files
    ours: float  # the book's value, computed by the model
    rel: float  # tolerance relative to the reference value
    abs: float = 0.0  # or absolute (half a unit of the last printed digit); the larger counts
    erratum: str | None = None  # the erratum box's name, when the source is wrong here
    corrected: float | None = None  # what ``ours`` is checked against when it is an erratum
    decimals: int | None = None  # the source's value shown to this many decimals, not six digits
    # (for a value the source does not print itself: a fit to its data, a fraction it states)

    @property
    def reference(self) -> float:
        """The value the row is checked against: the source's, or the corrected one if given."""
        return self.source if self.corrected is None else self.corrected

    @property
    def difference(self) -> float:
        """Ours relative to the source's value."""
        return self.ours / self.source - 1

    @property
    def allowed(self) -> float:
        """The largest accepted |ours - reference|."""
        return max(self.rel * abs(self.reference), self.abs)

    def holds(self) -> bool:
        """Ours within the tolerance of the reference; for an erratum with no corrected value
        given, ours still outside the tolerance of the source's (wrong) value."""
        close = abs(self.ours - self.reference) <= self.allowed
        return not close if self.erratum and self.corrected is None else close


@dataclass(frozen=True)
class Group:
    work: str  # bibliography key of the source
    title: str  # the source's table or figure, as the reader looks it up
    section: str  # the label of the chapter section that derives it
    rows: tuple[Row, ...]
    note: str = ""  # MyST: what the source's value is (printed, the author's code's output, ...)
    erratum: str | None = None  # an erratum on the group as a whole (e.g. its caption)


def _reference() -> dict:
    return json.loads((DATA / "erdil2025_reference.json").read_text())


def _paper_row(quantity, paper, ours, rel, decimals=0, **extra) -> Row:
    """A printed value: within rel of it, or within half a unit of its last printed digit."""
    return Row(quantity, float(paper), float(ours), rel, 0.5 * 10.0**-decimals, **extra)

"""Figure style and export: one look for every chapter, byte-stable SVG files in figures/."""

from __future__ import annotations

from pathlib import Path

#: figures/ at the top of the repository, found from the package, not the working directory
#: (chapters run with their own folder as the working directory, nbval from a copy elsewhere).
FIGURE_DIR = Path(__file__).resolve().parents[2] / "figures"

STYLE = {
    "figure.figsize": (7.0, 4.2),
    "figure.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2.0,
    "font.size": 10,
    "legend.frameon": False,
    "svg.hashsalt": "inference-economics-book",
}


def use_style() -> None:
    """Apply the book's matplotlib style."""
    import matplotlib as mpl

    mpl.rcParams.update(STYLE)


def save(fig, name: str) -> Path:
    """Write ``fig`` to figures/<name>.svg with no date stamp, so rebuilds give the same bytes."""
    FIGURE_DIR.mkdir(exist_ok=True)
    path = FIGURE_DIR / f"{name}.svg"
    fig.savefig(path, metadata={"Date": None}, bbox_inches="tight")
    return path

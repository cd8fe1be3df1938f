"""The notation page (book/notation.md): every symbol the book's displayed equations use.

The symbols of the derivations come from the one registry, ``inference_math.core.symbols``, a
table per topic; the symbols that only the display forms introduce (the NCCL protocols' named
times, the coefficients of a quadratic) come from
:func:`inference_math.book.display_forms.display_symbols`, in a last table. The tests check that
every symbol of every derivation and every display form is on the page.
"""

from __future__ import annotations

from ..core.symbols import REGISTRY
from .display import markdown_table
from .display_forms import display_symbols

TOPICS = {
    "model": "Model",
    "moe": "Mixture of experts",
    "hardware": "Hardware",
    "serving": "Serving",
    "scaling": "Scaling laws",
    "intensity": "Arithmetic intensity and step time",
    "kv": "KV cache",
    "sharding": "Sharding for decode",
    "dense": "Dense-model economics",
    "deepseek": "DeepSeek-V3 and MoE serving",
    "rollouts": "Embeddings, RL rollouts and LoRA",
    "full": "The full model (Erdil 2025, section 3)",
}
DISPLAY_HEADING = "Named in the displayed equations only"
# Column widths for the PDF, whose long tables otherwise do not wrap (ignored in HTML).
_REGISTRY_COLUMNS = "".join(rf">{{\raggedright\arraybackslash}}\X{{{w}}}{{24}}"
                            for w in (3, 5, 4, 3, 9))
_DISPLAY_COLUMNS = "".join(rf">{{\raggedright\arraybackslash}}\X{{{w}}}{{24}}" for w in (4, 4, 16))


def _table(heading: str, columns: str, header: list[str], rows: list[list[str]]) -> str:
    return (f"**{heading}**\n\n```{{tabularcolumns}} {columns}\n```\n\n"
            + markdown_table(header, rows))


def markdown() -> str:
    """The page's tables as MyST Markdown: one per topic of the registry, then the symbols that
    only display forms use."""
    unknown = {entry.topic for entry in REGISTRY.values()} - set(TOPICS)
    if unknown:
        raise ValueError(f"symbol topics with no heading on the notation page: {sorted(unknown)}")
    parts = []
    for topic, heading in TOPICS.items():
        rows = [[f"${entry.latex}$", f"`{entry.name}`", entry.unit, entry.assumptions,
                 entry.meaning]
                for entry in REGISTRY.values() if entry.topic == topic]
        if rows:
            parts.append(_table(heading, _REGISTRY_COLUMNS,
                                ["symbol", "code name", "unit", "assumptions", "meaning"], rows))
    rows = [[f"${entry.latex}$", entry.unit, entry.meaning] for entry in display_symbols()]
    parts.append(_table(DISPLAY_HEADING, _DISPLAY_COLUMNS, ["symbol", "unit", "meaning"], rows))
    return "\n\n".join(parts)

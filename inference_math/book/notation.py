"""The notation pages: the core notation (book/core_notation.md), the few dozen symbols a reader
meets most, and the full notation (book/notation.md), every symbol the displayed equations use.

The core page is a list of registry names, :data:`CORE`, grouped in the book's order; its text
(symbol, unit, meaning) is the registry's, so the two pages cannot disagree.

The symbols of the derivations come from the one registry, ``inference_math.core.symbols``, a
table per topic; the symbols that only the display forms introduce (the NCCL protocols' named
times, the coefficients of a quadratic) come from
:func:`inference_math.book.display_forms.display_symbols`; the few a chapter creates for one of
its own equations are :data:`CHAPTER_SYMBOLS`. The tests check that every symbol of every
derivation and display form, and every symbol a chapter creates, is on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    "sparse": "Sparse top-k attention",
    "compressed": "Compressed attention",
    "sensitivity": "Sensitivity of a serving cost",
}
DISPLAY_HEADING = "Named in the displayed equations only"
CHAPTER_HEADING = "Named in one chapter"

#: The symbols of the core notation page, by what they describe, in the order the book meets
#: them: registry names (``tests/test_notation.py`` checks each is registered and has a unit).
CORE = {
    "The model": ("n_param", "p", "n_layers", "d_model", "n_experts", "n_active",
                  "n_active_param", "n_read", "kv_bytes"),
    "The GPU": ("flops", "hbm_bw", "hbm_cap", "price"),
    "One decoding step": ("b", "n_gpu", "seq_kv", "intensity", "b_star", "t_token"),
    "The full model": ("ctx", "n_tp", "n_pp", "t_mem", "t_flop", "t_net", "t_fwd", "speed",
                       "usd_mtok_full", "accept", "gamma", "pref_exp"),
    "Whole requests": ("t_prompt", "t_output", "t_ttft", "t_step_mean", "chunk",
                       "usd_mtok_in"),
    "Efficiencies": ("eta_bw", "t_fixed_step", "eta_mem", "eta_flop", "omega_net"),
}


@dataclass(frozen=True)
class ChapterSymbol:
    """A symbol a chapter creates for one of its displayed equations (a ratio, a matrix of a
    worked example), outside the registry because no derivation uses it."""

    latex: str
    unit: str
    meaning: str
    chapter: str  # docname under book/


#: Every symbol a chapter's code creates for an equation it displays; ``tests/test_notation.py``
#: finds each ``sp.Symbol``/``sp.MatrixSymbol`` a chapter creates and checks that it is here (or
#: that the test knows it is never displayed).
CHAPTER_SYMBOLS = (
    ChapterSymbol(r"v_{p/2}/v_{p}", "1", "top speed with half the bytes per weight over the top "
                  "speed with $p$", "quantization"),
    ChapterSymbol(r"\mathbf{G}", "matrix", "gradient of the loss with respect to a layer's output "
                  "($d_{\\mathrm{out}} \\times n_{\\mathrm{tok}}$)", "rl_rollouts"),
    ChapterSymbol(r"\mathbf{X}", "matrix", "a layer's input ($d_{\\mathrm{in}} \\times n_{\\mathrm{tok}}$)",
                  "rl_rollouts"),
    ChapterSymbol(r"\mathbf{A}", "matrix", "LoRA's down-projection ($r \\times d_{\\mathrm{in}}$)",
                  "rl_rollouts"),
    ChapterSymbol(r"\mathbf{B}", "matrix", "LoRA's up-projection ($d_{\\mathrm{out}} \\times r$)",
                  "rl_rollouts"),
    ChapterSymbol(r"\frac{\partial J}{\partial \mathbf{B}}", "matrix",
                  "gradient of the loss $J$ with respect to $\\mathbf{B}$", "rl_rollouts"),
    ChapterSymbol(r"\frac{\partial J}{\partial \mathbf{A}}", "matrix",
                  "gradient of the loss $J$ with respect to $\\mathbf{A}$", "rl_rollouts"),
    ChapterSymbol(r"\mathrm{ESS}_{\mathrm{equal}}", "samples",
                  "effective sample size of $n$ equal importance weights", "rl_rollouts"),
    ChapterSymbol(r"\mathrm{ESS}_{\mathrm{single}}", "samples",
                  "effective sample size when one of $n$ weights is nonzero", "rl_rollouts"),
    ChapterSymbol(r"t_{\mathrm{KV}}", "s", "time a decoding step spends reading the KV cache",
                  "long_context"),
    ChapterSymbol(r"F_{\mathrm{attn}}", "FLOP/token",
                  "FLOPs of attending over the cache for one new token", "long_context"),
    ChapterSymbol(r"M_{\mathrm{KV}}\ell", "bytes",
                  "bytes of one sequence's KV cache: $M_{\\mathrm{KV}}$ per token times the "
                  "context $\\ell$", "long_context"),
    ChapterSymbol(r"u_{\max}", "1", "highest share of the peak FLOP/s a step that only reads the "
                  "cache can use", "long_context"),
    ChapterSymbol(r"c_{\mathrm{spec}}/c_{\mathrm{Mtok}}^{\mathrm{KV}}", "1",
                  "cost floor of KV reads with speculative decoding over the floor without it",
                  "long_context"),
)
# Column widths for the PDF, whose long tables otherwise do not wrap (ignored in HTML).
_REGISTRY_COLUMNS = "".join(rf">{{\raggedright\arraybackslash}}\X{{{w}}}{{24}}"
                            for w in (3, 5, 4, 12))
_CHAPTER_COLUMNS = "".join(rf">{{\raggedright\arraybackslash}}\X{{{w}}}{{24}}" for w in (4, 3, 12, 5))
_DISPLAY_COLUMNS = "".join(rf">{{\raggedright\arraybackslash}}\X{{{w}}}{{24}}" for w in (4, 4, 16))


def _cell(text: str) -> str:
    """A meaning as a table cell: a vertical bar (as in a plain-text absolute value) escaped,
    since it would end the cell."""
    return text.replace("|", r"\|")


# A ratio of a word to a word of five letters or more ("bytes/parameter"), which a phone's column
# cannot wrap; "FLOP/s", "$/hour" and "$/million tokens" stay as they are.
_LONG_RATIO = re.compile(r"(?<=[A-Za-z·])/(?=[A-Za-z]{5,})")


def _unit(unit: str, dash: bool = False) -> str:
    """A unit for a table: a long ratio written with "per" so that a phone can wrap it ("bytes
    per parameter"), a dollar sign escaped; a pure number (unit 1) a dash on the core page."""
    if dash and unit == "1":
        return "–"
    return _LONG_RATIO.sub(" per ", unit).replace("$", r"\$")


def core_markdown() -> str:
    """The core notation page's tables: one per group of :data:`CORE`, each symbol with its
    meaning and unit, and no code names or assumptions."""
    parts = []
    for heading, names in CORE.items():
        rows = [[f"${REGISTRY[name].latex}$", _cell(REGISTRY[name].meaning),
                 _unit(REGISTRY[name].unit, dash=True)] for name in names]
        parts.append(f"**{heading}**\n\n" + markdown_table(["symbol", "meaning", "unit"], rows))
    return "\n\n".join(parts)


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
        rows = [[f"${entry.latex}$", f"`{entry.name}`", _unit(entry.unit), _cell(entry.meaning)]
                for entry in REGISTRY.values() if entry.topic == topic]
        if rows:
            parts.append(_table(heading, _REGISTRY_COLUMNS,
                                ["symbol", "code name", "unit", "meaning"], rows))
    rows = [[f"${entry.latex}$", _unit(entry.unit), _cell(entry.meaning)]
            for entry in display_symbols()]
    parts.append(_table(DISPLAY_HEADING, _DISPLAY_COLUMNS, ["symbol", "unit", "meaning"], rows))
    rows = [[f"${entry.latex}$", _unit(entry.unit), _cell(entry.meaning),
             f"{{doc}}`{entry.chapter}`"]
            for entry in CHAPTER_SYMBOLS]
    parts.append(_table(CHAPTER_HEADING, _CHAPTER_COLUMNS,
                        ["symbol", "unit", "meaning", "chapter"], rows))
    return "\n\n".join(parts)

"""The record's rows from the publishers' model cards and reports (Part IV): the parameter totals
of the configurations the book ships, and DeepSeek-V4's."""

from __future__ import annotations

import re

from .rows import (
    DEEPSEEK_V4,
    PUBLISHERS,
    Group,
    Row,
)

_B = 1e9


def _short(model: str) -> str:
    """A model's name without its organization, "-Instruct", a version suffix or, for Llama 4, its
    experts (as the chapter names it)."""
    name = model.split("--")[-1].split("/")[-1].removesuffix("-Instruct").removesuffix("-v0.1")
    return re.sub(r"-17B-\d+E$", "", name.removeprefix("Meta-"))


def layer_mix_published() -> Group:
    from ...presets import hf_config as hc

    rows = []
    for row in hc.published_comparison():
        name = _short(row["model"])
        star = "" if row["active_counts"] == "all" else "\\*"  # escaped: not emphasis
        # within 1%, or the coarser tolerance the package gives with its reason
        rows.append(Row(f"{name} total, bn", row["published_total"] / _B, row["total"] / _B,
                        row["total_tolerance"]))
        rows.append(Row(f"{name} active{star}, bn", row["published_active"] / _B,
                        row["active"] / _B, row["active_tolerance"]))
    return Group(PUBLISHERS, "Parameter totals", "layer-mix-published-totals", tuple(rows),
                 "each shipped configuration's parameters, all and active per token, against the "
                 "totals its publisher states (Gemma 4: only the name's 26B and A4B); a tolerance "
                 "above 1% is the precision of the stated figure (two significant figures, or a "
                 "vision encoder the text configuration leaves out); active\\* leaves out the "
                 "input embedding, as that publisher counts it")


def attention_reads_v4_cards() -> Group:
    from ...presets import hf_config as hc
    from ...presets.layered import from_hf_config

    rows = []
    for stem, card in hc.V4_CARDS.items():
        arch = from_hf_config(hc.FIXTURES / f"{stem}.config.json").architecture
        name = stem.split("--")[-1].removeprefix("DeepSeek-")
        rows.append(Row(f"{name} total, bn", card["total"] / _B, arch.total_params / _B,
                        card["total_tolerance"]))
        rows.append(Row(f"{name} activated, bn", card["active"] / _B,
                        (arch.active_params - arch.input_embedding_params) / _B,
                        card["active_tolerance"]))
    return Group(DEEPSEEK_V4, "Model cards", "attention-reads-compressed-attention", tuple(rows),
                 "DeepSeek-V4-Flash's and -Pro's parameters, all (with both embeddings) and "
                 "activated per token (without the input embedding), against their model cards; "
                 "the multi-token-prediction layer is in neither; the activated counts are given "
                 "to two figures (13B is ±3.8%)")

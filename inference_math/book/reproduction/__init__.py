"""The reproduction record: every number the book reproduces from a source, next to ours.

Each group below recomputes one comparison of a chapter with the functions that chapter uses, and
reads the source's value from the data files that chapter reads, so the record cannot drift from
the chapters. A row holds within its tolerance, or, where the source is wrong (an erratum), is
checked against the corrected value instead and links to the erratum box.
"""

from __future__ import annotations

from . import cards, erdil, scaling_book, tensor_economics  # noqa: F401 (the tests patch them)
from .cards import attention_reads_v4_cards, layer_mix_published
from .erdil import (
    capacity_sec35,
    figure1,
    full_model_frontier_points,
    long_context_curves,
    long_context_sec43,
    long_context_speeds,
    network_eq24,
    quantization_curves,
    square_root_law,
    table1,
    table2,
    table3,
    table4,
    table5,
    table6,
    takeaways,
    todays_models_curves,
)
from .rows import (  # noqa: F401
    AUSTIN,
    DATA,
    DEEPSEEK,
    DEEPSEEK_V4,
    ERDIL,
    MAZUREK,
    MAZUREK_EMB,
    MAZUREK_EXP,
    MAZUREK_MOE,
    POPE,
    PUBLISHERS,
    Group,
    Row,
)
from .scaling_book import (
    kv_llama_memory,
    kv_pope_crossover,
    kv_table_gqa,
    kv_table_mha,
    kv_worked_problems,
    roofline_appendix_a,
    roofline_attention,
    roofline_critical_batch,
    roofline_pop_quiz,
    sharding_appendix_c,
    sharding_elements,
    sharding_generation,
    sharding_min_chips,
    sharding_prefill,
    sharding_question7,
    sharding_weight_gathered,
    worked_question3,
    worked_question5,
)
from .tensor_economics import (
    deepseek_all_to_all,
    deepseek_architecture,
    deepseek_daily_profit,
    deepseek_dollars,
    deepseek_experts,
    deepseek_latent_cache,
    deepseek_mla_weights,
    dense_kv_cache,
    dense_parameters,
    dense_prefill_flops,
    embeddings_dollars,
    embeddings_flops_per_dollar,
    embeddings_forward_pass,
    embeddings_prices,
    embeddings_weights_arithmetic,
    prefill_decode_figure16,
    prefill_decode_one_gpu,
    prefill_decode_tensor_parallel,
    pricing_table1,
    rollouts_advantage,
    rollouts_bits,
    rollouts_lora,
    rollouts_lora_flops,
    rollouts_prices,
)

GROUPS = (table1, figure1, square_root_law, takeaways, roofline_critical_batch, roofline_attention,
          roofline_pop_quiz, roofline_appendix_a, kv_llama_memory, kv_table_mha, kv_table_gqa,
          kv_pope_crossover, sharding_generation, sharding_question7, sharding_appendix_c,
          sharding_elements, sharding_weight_gathered, sharding_min_chips, kv_worked_problems,
          worked_question3, worked_question5, dense_parameters, dense_prefill_flops,
          dense_kv_cache, prefill_decode_one_gpu, prefill_decode_tensor_parallel,
          prefill_decode_figure16, pricing_table1, sharding_prefill, deepseek_architecture,
          deepseek_mla_weights, deepseek_latent_cache, deepseek_experts, deepseek_all_to_all,
          deepseek_dollars, deepseek_daily_profit, embeddings_prices, embeddings_forward_pass,
          embeddings_weights_arithmetic, embeddings_dollars, embeddings_flops_per_dollar,
          rollouts_prices, rollouts_advantage, rollouts_bits, rollouts_lora, rollouts_lora_flops,
          network_eq24, capacity_sec35, full_model_frontier_points, todays_models_curves, table2,
          table3, table4, table5, quantization_curves, table6, long_context_sec43,
          long_context_speeds, long_context_curves, layer_mix_published, attention_reads_v4_cards)


def groups() -> list[Group]:
    """Every group of the record, in the order of the book."""
    return [make() for make in GROUPS]


# ---- the page ----------------------------------------------------------------------------------

def chapter_of(label: str, root=None) -> str:
    """The chapter (file stem) whose source sets the link target ``label``."""
    from pathlib import Path

    from ..errata import ROOT

    book = Path(root or ROOT) / "book"
    homes = [p.stem for p in sorted(book.glob("*.md")) if f"\n({label})=\n" in p.read_text()]
    if len(homes) != 1:
        raise ValueError(f"link target {label!r} is set in {homes or 'no chapter'}")
    return homes[0]


def _grouped(text: str) -> str:
    """Thousands separated from five digits up: 7453.62 and 1920, but 59,500."""
    whole = text.lstrip("-").split(".")[0]
    return text.replace(",", "") if len(whole) == 5 else text  # "7,453" is five characters


def _source(row: Row) -> str:
    """The source's value as printed: six significant digits, or the row's decimals."""
    if row.decimals is None:
        return _grouped(f"{row.source:,.6g}")
    return _grouped(f"{row.source:,.{row.decimals}f}")


def _number(x: float, printed: str) -> str:
    """Ours, to one digit more than the source's value is ``printed`` with (as many past a
    thousand)."""
    decimals = len(printed.split(".")[1]) if "." in printed and "e" not in printed else 0
    return _grouped(f"{x:,.{decimals + (abs(float(printed.replace(',', ''))) < 1000)}f}")


def _difference(row: Row) -> str:
    """Ours relative to the source's value, in percent, to three digits but at least to 0.01%
    (+0.13%, -13.3%, +131%)."""
    from ..display import signed

    percent = 100 * row.difference
    return signed(percent, 2 if abs(percent) < 10 else 1 if abs(percent) < 100 else 0, "%")


def _tolerance(row: Row) -> str:
    if row.erratum:
        return f"{{ref}}`erratum <{row.erratum}>`"
    if row.allowed <= 1e-9 * abs(row.reference):  # none, but for floating-point rounding
        return "exact"
    if row.rel * abs(row.reference) >= row.abs:
        return f"±{100 * row.rel:g}%"
    bound = float(f"{row.abs:.6g}")  # 0.01 for a bound of 0.01 widened by 1e-9 against rounding
    if bound < 1e-3:  # ±5e-5, not ±5e-05 nor the wider ±0.00005; with a non-breaking hyphen
        # (U+2011), as narrow as a hyphen, where the cell cannot wrap as it does at "-"
        mantissa, exponent = f"{bound:e}".split("e")
        return f"±{float(mantissa):g}e\u2011{-int(exponent)}"
    return f"±{bound:.12f}".rstrip("0").rstrip(".")


def labels(groups: list[Group]) -> list[str]:
    """Each group's link target on the page, ``rec-`` and the section that derives it; a second
    group derived in the same section gets ``-2`` (a third ``-3``), in the order of the book."""
    out, seen = [], {}
    for group in groups:
        seen[group.section] = seen.get(group.section, 0) + 1
        out.append(f"rec-{group.section}" + (f"-{seen[group.section]}"
                                             if seen[group.section] > 1 else ""))
    return out


def markdown(group: Group, box_titles: dict[str, str], label: str | None = None) -> str:
    """One group as MyST: its link target (``label``, if given), where it is derived, then a
    table of five short columns."""
    from ..display import markdown_table

    lines = [f"({label})=\n"] if label else []
    lines.append(f"**{group.title}**: {group.note}; derived in {{ref}}`{group.section}`.")
    if group.erratum:
        lines.append(f"The source errs here: {{ref}}`{box_titles[group.erratum]} <{group.erratum}>`.")
    rows = [[row.quantity, _source(row), _number(row.ours, _source(row)), _difference(row),
             _tolerance(row)] for row in group.rows]
    table = markdown_table(["quantity", "cited", "ours", "diff.", "tol."], rows)
    return "\n".join(lines) + "\n\n" + table + "\n"

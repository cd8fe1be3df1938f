"""The reproduction record: each row's source value comes from the data files and ours from the
model (changing one never changes the other), and every reproduced table is in it."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from inference_math.book import errata
from inference_math.book import reproduction as R
from inference_math.derivations import dense_economics as de
from inference_math.fullmodel import comparisons as C

ROOT = Path(__file__).resolve().parents[1]
DATA = resources.files("inference_math") / "data"
PAPER = json.loads((DATA / "erdil2025_reference.json").read_text())
TABLES = json.loads((DATA / "erdil_code" / "tables_code_vs_paper.json").read_text())
TOY = (R.table1, R.figure1, R.square_root_law, R.takeaways)


def _doubled(tree):
    """The reference data with every number doubled (the model's inputs among them, which the
    rows below do not read)."""
    if isinstance(tree, dict):
        return {k: v if k in ("t_hop_s", "n_reduce", "nominal_params", "baseline_tokens_per_s",
                              "demand_caps_tokens_per_s", "probe_fraction_of_max_speed",
                              "probe_tokens_per_s") else _doubled(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_doubled(v) for v in tree]
    return 2 * tree if isinstance(tree, (int, float)) and not isinstance(tree, bool) else tree


def test_toy_model_sources_are_the_papers_values():
    t1 = [v for row in PAPER["table1"]["rows"] for v in (row["tokens_per_s"], row["gpus"])]
    assert [r.source for r in R.table1().rows] == t1
    code = PAPER["figure1"]["reference_code"]
    assert [r.source for r in R.figure1().rows] == [
        code["llama-3-70b"]["max_tokens_per_s"], code["llama-3-70b"]["gpus_at_max"],
        code["llama-3-8b"]["max_tokens_per_s"],
        code["llama-3-70b_usd_per_mtok_at_90pct_of_max_speed_10k_demand"],
        code["llama-3-8b_usd_per_mtok_at_400_tok_s_10k_demand"]]
    predicted = PAPER["square_root_law"]["predicted_tokens_per_s"]
    assert [r.source for r in R.square_root_law().rows][1:] == [
        predicted["llama-3-70b"], predicted["llama-3.1-405b"]]
    take = PAPER["takeaways"]
    assert [r.source for r in R.takeaways().rows] == [
        take["doubling_bandwidth_latency_reduction"], take["halving_precision_speedup"]]


@pytest.mark.parametrize("make", TOY, ids=lambda f: f.__name__)
def test_toy_model_ours_does_not_read_the_source(monkeypatch, make):
    before = make()
    monkeypatch.setattr(R, "_reference", lambda: _doubled(PAPER))
    after = make()
    assert [r.ours for r in after.rows] == [r.ours for r in before.rows]
    if make is R.square_root_law:  # the source's exponent is a fit, unchanged by doubling all
        after = R.Group(after.work, after.title, after.section, after.rows[1:])
        before = R.Group(before.work, before.title, before.section, before.rows[1:])
    assert [r.source for r in after.rows] == [2 * r.source for r in before.rows]


class _Point:
    def __init__(self, value):
        self.tokens_per_s = self.usd_per_mtok = self.gpus = self.batch = value


class _Front:
    def __init__(self, value):
        self.value = value

    def max_speed(self):
        return _Point(self.value)

    def preferred(self, alpha):
        assert alpha == 3.0
        return _Point(-self.value)


@pytest.mark.parametrize("make", (R.table2, R.table3, R.table4, R.table5, R.table6),
                         ids=lambda f: f.__name__)
def test_full_model_rows_pair_the_printed_cell_with_our_frontier(monkeypatch, make):
    """Source: the paper's cell in the data file; ours: whatever the frontier says."""
    monkeypatch.setattr(R, "_frontier", lambda comparison, label: _Front(len(label)))
    group = make()
    number = int(group.title.split()[-1])
    rows = TABLES[f"table{number}"]["rows"]
    printed = [v for label in rows for k, v in rows[label]["paper"].items()]
    assert [r.source for r in group.rows] == pytest.approx(printed)
    point_sign = 1 if number in (2, 4) else -1  # max speed (Tables 2, 4) or preferred point
    per_row = len(group.rows) // len(rows)
    assert [r.ours for r in group.rows] == [point_sign * len(label) for label in rows
                                            for _ in range(per_row)]
    if number == 5:  # the erratum rows are checked against the author's final code
        codes = [C.reference_point("spec_dec_comparison", label, "pref_alpha3") for label in rows]
        keys = ("tokens_per_s_per_request", "usd_per_mtok", "gpus", "batch_size")
        assert [r.corrected for r in group.rows] == [code[k] for code in codes for k in keys]
        assert all(r.erratum for r in group.rows)


def test_the_cost_table_pairs_the_post_with_the_price_model(monkeypatch):
    before = R.pricing_table1()
    table = de.MAZUREK2025["table1"]
    assert [r.source for r in before.rows] == [
        v for i in range(len(table["batch"]))
        for v in (table["input_per_m"][i], table["output_per_m"][i], table["tokens_per_s"][i])]
    changed = copy.deepcopy(dict(de.MAZUREK2025))
    for key in ("input_per_m", "output_per_m", "tokens_per_s"):
        changed["table1"][key] = [2 * v for v in changed["table1"][key]]
    monkeypatch.setattr(de, "MAZUREK2025", changed)
    after = R.pricing_table1()
    assert [r.ours for r in after.rows] == [r.ours for r in before.rows]
    assert [r.source for r in after.rows] == [2 * r.source for r in before.rows]


def test_a_row_holds_within_its_tolerance_and_an_erratum_against_its_correction():
    assert R.Row("x", 100, 100.9, 0.01).holds() and not R.Row("x", 100, 101.1, 0.01).holds()
    assert R.Row("x", 56, 55.6, 0.0, 0.5).holds()  # rounds to the printed value
    assert R.Row("x", 0.27, 0.2749, 0.0, 0.005).holds()
    assert R.Row("x", 69, 82.5, 0.01, erratum="e", corrected=82.4).holds()
    assert not R.Row("x", 69, 69.1, 0.01, erratum="e", corrected=82.4).holds()
    # With no corrected value, an erratum holds while ours still disagrees with the source.
    assert R.Row("x", 7453.62, 7499.0, 0.0, 0.01, erratum="e").holds()
    assert not R.Row("x", 7453.62, 7453.62, 0.0, 0.01, erratum="e").holds()


def test_every_table_of_the_paper_and_of_the_reference_data_is_recorded():
    titles = {(g.work, g.title) for g in (make() for make in TOY + (R.pricing_table1,))}
    titles |= {(R.ERDIL, f"Table {n}") for n in range(2, 7)}  # the full model's, built above
    for key in TABLES:
        assert (R.ERDIL, f"Table {int(key.removeprefix('table'))}") in titles, key
    named = {"table1": "Table 1", "figure1": "Figure 1", "square_root_law": "Section 2.2.3",
             "takeaways": "Takeaway 3"}
    assert set(named) == {k for k in PAPER if not k.startswith("_")}
    assert {(R.ERDIL, title) for title in named.values()} <= titles
    assert ("mazurek2025llm", "Table 1") in titles


def _chapters_reading(pattern: str) -> set[str]:
    return {p.stem for p in (ROOT / "book").glob("*.md")
            if re.search(pattern, p.read_text()) and p.stem != "reproduction"}


# Chapters whose errata correct a source by a derivation in the box, with no row of values in
# the record yet. Adding rows for one removes it from this set; a new chapter with an erratum and
# no row fails the test below.
ERRATA_WITHOUT_ROWS = {
    "decode_roofline", "deepseek_v3", "dense_counting", "embeddings", "full_model", "kv_cache",
    "long_context", "prefill_decode", "rl_rollouts", "sharding", "worked_problems"}


def test_every_chapter_with_a_reproduction_table_or_an_erratum_is_represented(monkeypatch):
    monkeypatch.setattr(R, "_frontier", lambda comparison, label: _Front(1.0))
    groups = R.groups()
    recorded = {R.chapter_of(g.section) for g in groups}
    # every chapter that compares with the paper's tables or its author's code's outputs
    # (the introduction quotes one row of Table 2, which is recorded where it is derived)
    assert (R.ERDIL, "Table 2") in {(g.work, g.title) for g in groups}
    assert _chapters_reading(r"erdil2025_reference|tables_code_vs_paper") - {"intro"} <= recorded
    assert {"latency_wall", "todays_models", "gpu_generations", "speculative_decoding",
            "quantization", "pricing"} <= recorded
    with_errata = {item.chapter for item in errata.entries()}
    linked = {r.erratum for g in groups for r in g.rows if r.erratum} | {
        g.erratum for g in groups if g.erratum}
    assert with_errata - recorded == ERRATA_WITHOUT_ROWS
    assert linked <= {item.name for item in errata.entries()}


def test_the_page_shows_five_columns_and_links_errata():
    row = R.Row("b=64 tok/s", 7453.62, 7499.0, 0.0, 0.01, erratum="erratum-x")
    group = R.Group("w", "Table 1", "sec-x", (R.Row("a tok/s", 966, 965.97, 0, 0.5), row), "note")
    text = R.markdown(group, {})
    assert "{ref}`sec-x`" in text and "{ref}`erratum <erratum-x>`" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert all(line.count("|") == 6 for line in table)
    assert "| 966 | 966.0 | -0.00% | ±0.5 |" in text or "| 966 | 966.0 | +0.00% | ±0.5 |" in text

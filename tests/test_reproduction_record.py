"""The reproduction record: each row's source value comes from the data files and ours from the
model (changing one never changes the other), and every reproduced table is in it."""

from __future__ import annotations

import copy
import json
import re
from fractions import Fraction
from importlib import resources
from pathlib import Path

import pytest

from inference_math.book import errata
from inference_math.book import reproduction as R
from inference_math.derivations import deepseek_serving as ds
from inference_math.derivations import dense_economics as de
from inference_math.derivations import intensity, sharding
from inference_math.derivations import kv_cache as kv
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
    monkeypatch.setattr(R.erdil, "_reference", lambda: _doubled(PAPER))
    after = make()
    assert [r.ours for r in after.rows] == [r.ours for r in before.rows]
    if make is R.square_root_law:  # the source's exponent is a fit, unchanged by doubling all
        after = R.Group(after.work, after.title, after.section, after.rows[1:])
        before = R.Group(before.work, before.title, before.section, before.rows[1:])
    assert [r.source for r in after.rows] == [2 * r.source for r in before.rows]


PAPER_EXAMPLES = (R.network_eq24, R.capacity_sec35, R.long_context_sec43)


def test_the_paper_s_examples_pair_its_printed_values_with_the_model(monkeypatch):
    before = [make() for make in PAPER_EXAMPLES]
    assert all(r.holds() for g in before for r in g.rows)
    eq24, sec35, sec43 = PAPER["network_eq24"], PAPER["capacity_sec35"], PAPER["long_context_sec43"]
    assert [r.source for g in before for r in g.rows] == [
        eq24["us"], eq24["us"], sec35["sweep_ms"], sec35["speed"], sec43["kv_kb"],
        sec43["weights_gb"], sec43["crossover_batch"], sec43["floor"], sec43["deepseek_kv_kb"]]
    changed = copy.deepcopy(PAPER)
    changed["network_eq24"]["us"] *= 2
    for key in ("sweep_ms", "speed"):
        changed["capacity_sec35"][key] *= 2
    for key in ("weights_gb", "crossover_batch", "floor", "deepseek_kv_kb"):
        changed["long_context_sec43"][key] *= 2
    monkeypatch.setattr(R.erdil, "_reference", lambda: changed)
    after = [make() for make in PAPER_EXAMPLES]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    # the floor's row reads the paper's rounded inputs (360 KB at 3.3 TB/s and $2 per hour) as
    # its inputs, so its source alone is doubled here
    assert [r.source for g in after for r in g.rows] == [
        r.source if r.quantity == "cache, kB/tok" else 2 * r.source
        for g in before for r in g.rows]


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

    def arrays(self):
        """(speeds, costs): the least cost is twice the value; the speeds span every curve's."""
        return [1.0, 2.0, 1e9], _Costs([3 * self.value, 2 * self.value, 4 * self.value])

    def cost_at_speed(self, speeds):
        return [5 * self.value for _ in speeds]


class _Costs(list):
    def min(self):
        return min(self)


def test_long_context_curves_pair_the_code_curves_least_cost_with_ours(monkeypatch):
    """Source: the least cost of the reference code's CSV curve, read here with the csv module;
    ours: the least cost of whatever our frontier is."""
    import csv

    monkeypatch.setattr(R.erdil, "_frontier", lambda comparison, label: _Front(5.0))
    group = R.long_context_curves()
    labels = [(cmp, label) for cmp in ("mistral_large_comparison",
                                       "deepseek_v3_context_len_comparison",
                                       "context_length_comparison")
              for label in C.settings(cmp)]
    assert len(group.rows) == len(labels) == 4 + 4 + 3
    for row, (cmp, label) in zip(group.rows, labels, strict=True):
        assert row.ours == 10.0
        path = (resources.files("inference_math") / "data" / "erdil_code" / "frontiers"
                / C.csv_name(cmp, label))
        with path.open() as handle:
            least = min(float(r["usd_per_mtok"]) for r in csv.DictReader(handle))
        assert row.source == least, (cmp, label)
        assert row.rel == 0.02 and row.erratum is None


@pytest.mark.parametrize("make", (R.table2, R.table3, R.table4, R.table5, R.table6),
                         ids=lambda f: f.__name__)
def test_full_model_rows_pair_the_printed_cell_with_our_frontier(monkeypatch, make):
    """Source: the paper's cell in the data file; ours: whatever the frontier says."""
    monkeypatch.setattr(R.erdil, "_frontier", lambda comparison, label: _Front(len(label)))
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


ROOFLINE = (R.roofline_critical_batch, R.roofline_attention, R.roofline_pop_quiz,
            R.roofline_appendix_a)


def test_the_roofline_sources_are_the_stated_values(monkeypatch):
    src = intensity.AUSTIN2025
    groups = [make() for make in ROOFLINE]
    assert [r.source for g in groups for r in g.rows] == [
        src["ridge_stated"], src["b_crit_int8_weights_stated"], src["b_crit_int8_int8_stated"],
        src["prefill_tokens_stated"], *src["pop_quiz"]["stated_ms"], src["appendix_a"]["stated_us"]]
    assert all(r.holds() for g in groups for r in g.rows)
    changed = copy.deepcopy(dict(src))
    changed["pop_quiz"]["stated_ms"] = tuple(2 * v for v in src["pop_quiz"]["stated_ms"])
    changed["appendix_a"]["stated_us"] *= 2
    monkeypatch.setattr(intensity, "AUSTIN2025", changed)
    for make, before in zip(ROOFLINE[2:], groups[2:], strict=True):
        after = make()
        assert [r.ours for r in after.rows] == [r.ours for r in before.rows]
        assert [r.source for r in after.rows] == [2 * r.source for r in before.rows]


def test_the_dense_counts_pair_the_post_with_the_chapters_model(monkeypatch):
    makes = (R.dense_parameters, R.dense_prefill_flops, R.dense_kv_cache)
    before = [make() for make in makes]
    assert all(r.holds() for g in before for r in g.rows)
    keys = ("total_params", "weight_bytes", "two_gpu_fraction_stated", "two_gpu_free_gb_stated",
            "prefill_flops_stated", "per_layer_flops_stated", "lm_head_flops_stated",
            "kv_mb_stated", "kv_mb_draft", "kv_long_gb_stated")
    scale = [1e-9, 1e-9, 100, 1, 1e-12, 1e-12, 1e-9, 1, 1, 1]
    assert [r.source for g in before for r in g.rows] == pytest.approx(
        [de.MAZUREK2025[k] * f for k, f in zip(keys, scale, strict=True)])
    monkeypatch.setattr(de, "MAZUREK2025", {**de.MAZUREK2025,
                                            **{k: 2 * de.MAZUREK2025[k] for k in keys}})
    after = [make() for make in makes]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    assert [r.source for g in after for r in g.rows] == pytest.approx(
        [2 * r.source for g in before for r in g.rows])


def test_the_post_s_times_pair_its_values_with_the_time_model(monkeypatch):
    makes = (R.prefill_decode_one_gpu, R.prefill_decode_tensor_parallel, R.prefill_decode_figure16)
    before = [make() for make in makes]
    assert all(r.holds() for g in before for r in g.rows)
    post = de.MAZUREK2025
    tm = post["throughput_model"]
    assert [r.source for r in before[2].rows] == [
        v for pair in zip(tm["total_tok_s"], tm["per_request_tok_s"], strict=True) for v in pair]
    changed = copy.deepcopy(dict(post))
    for key in ("prefill_time_stated_s", "load_time_stated_s", "prefill_over_load_stated",
                "decode_tflops_stated", "decode_compute_stated_s"):
        changed[key] *= 2
    changed["tp"]["stated_us"] *= 2
    for key in ("total_tok_s", "per_request_tok_s"):
        changed["throughput_model"][key] = tuple(2 * v for v in tm[key])
    monkeypatch.setattr(de, "MAZUREK2025", changed)
    after = [make() for make in makes]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    assert [r.source for g in after for r in g.rows] == pytest.approx(
        [2 * r.source for g in before for r in g.rows])


SHARDING = (R.sharding_generation, R.sharding_question7, R.sharding_appendix_c,
            R.sharding_elements, R.sharding_min_chips)
# The printed results of the sharding chapter's sources, as against their inputs.
SHARDING_PRINTED = ("gen_y_max", "gen_beta", "q7_t_coeff", "q7_crossover_printed", "appc_buffer",
                    "appc_act_printed", "appc_divisor", "esti_crossover", "esti_min_chips")


def test_the_sharding_rows_pair_the_printed_values_with_the_derivations(monkeypatch):
    before = [make() for make in SHARDING]
    assert all(r.holds() for g in before for r in g.rows)
    scale = {"appc_buffer": 1e-3, "appc_act_printed": 1e-3}
    assert [r.source for g in before for r in g.rows] == pytest.approx(
        [sharding.QUOTED[k] * scale.get(k, 1) for k in SHARDING_PRINTED])
    crossover = before[1].rows[1]
    assert crossover.erratum and crossover.corrected == sharding.QUOTED["q7_crossover_later_rev"]
    monkeypatch.setattr(sharding, "QUOTED", {
        **sharding.QUOTED, **{k: 2 * sharding.QUOTED[k] for k in SHARDING_PRINTED if k != "gen_beta"}})
    after = [make() for make in SHARDING]
    # beta is also an input of Y_max; every other printed value changes only the source column
    keep = [i for i, k in enumerate(SHARDING_PRINTED) if k not in ("gen_y_max", "gen_beta")]
    ours_b = [r.ours for g in before for r in g.rows]
    ours_a = [r.ours for g in after for r in g.rows]
    src_b = [r.source for g in before for r in g.rows]
    src_a = [r.source for g in after for r in g.rows]
    assert [ours_a[i] for i in keep] == [ours_b[i] for i in keep]
    assert [src_a[i] for i in keep] == pytest.approx([2 * src_b[i] for i in keep])
    assert src_a[0] == 2 * src_b[0] and ours_a[0] == ours_b[0]


DEEPSEEK = (R.deepseek_architecture, R.deepseek_mla_weights, R.deepseek_latent_cache,
            R.deepseek_experts, R.deepseek_all_to_all, R.deepseek_dollars, R.deepseek_daily_profit)


def _doubled_numbers(tree, keep=()):
    """Every number of a nested mapping doubled (numeric strings too), except under ``keep``."""
    if isinstance(tree, dict):
        return {k: v if k in keep else _doubled_numbers(v, keep) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_doubled_numbers(v, keep) for v in tree)
    if isinstance(tree, str):
        return str(2 * Fraction(tree))
    return 2 * tree if isinstance(tree, (int, float)) and not isinstance(tree, bool) else tree


def test_the_deepseek_rows_pair_the_post_with_the_chapters_model(monkeypatch):
    before = [make() for make in DEEPSEEK]
    assert all(r.holds() for g in before for r in g.rows)
    post = ds.POST
    assert [r.source for r in before[1].rows][:8] == list(post["mla_mb"].values())
    # The post's and the report's stated values doubled; the inputs the chapter computes from
    # (precisions, layouts, rates, prices, token counts, the cache-limited batch's inputs) kept.
    inputs = ("weight_bytes", "kv_element_bytes", "comm_layers", "comm_dispatch_bytes",
              "comm_combine_bytes", "imbalance_gpus", "ep", "redundant", "kv_gb_per_gpu", "nodes",
              "gpus_per_node", "kv_bytes", "context", "tok_s_per_gpu", "n_gpu", "batch_per_gpu",
              "usd_per_gpu_hour", "input_btok", "cached_share", "usd_cached", "usd_miss",
              "output_btok", "usd_output")
    monkeypatch.setattr(ds, "POST", _doubled_numbers(post, inputs))
    monkeypatch.setattr(ds, "DEEPSEEK_V3", {
        **ds.DEEPSEEK_V3, **{k: 2 * ds.DEEPSEEK_V3[k]
                             for k in ("published_total_params", "published_active_params")}})
    after = [make() for make in DEEPSEEK]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    assert [r.source for g in after for r in g.rows] == pytest.approx(
        [2 * r.source for g in before for r in g.rows])


def test_the_worked_problems_rows_read_the_later_revision(monkeypatch):
    before = [R.worked_question3(), R.worked_question5()]
    assert all(r.holds() for g in before for r in g.rows)
    q3, q5 = kv.WORKED_Q3, kv.WORKED_Q5
    assert [r.source for g in before for r in g.rows] == pytest.approx([
        q3["variant_answer_ms"], q5["total_growth"], q5["active_params"] / 1e9,
        q5["flop_per_param"] * q5["active_params"] / 1e9])
    monkeypatch.setattr(kv, "WORKED_Q3", {**q3, "variant_answer_ms": 2 * q3["variant_answer_ms"]})
    monkeypatch.setattr(kv, "WORKED_Q5", {**q5, "total_growth": 2 * q5["total_growth"],
                                          "active_params": 2 * q5["active_params"]})
    after = [R.worked_question3(), R.worked_question5()]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    assert [r.source for g in after for r in g.rows] == pytest.approx(
        [2 * r.source for g in before for r in g.rows])


EMBEDDINGS = (R.embeddings_prices, R.embeddings_forward_pass, R.embeddings_weights_arithmetic,
              R.embeddings_dollars, R.embeddings_flops_per_dollar)


def test_the_embedding_rows_pair_the_post_with_the_chapters_model(monkeypatch):
    from inference_math.derivations import embeddings as E

    before = [make() for make in EMBEDDINGS]
    assert all(r.holds() for g in before for r in g.rows)
    post = E.MAZUREK2025_EMBEDDINGS
    assert [r.source for r in before[2].rows] == [
        post["t_mem_stated_s"], post["t_comp_stated_s"], post["emb_per_s_stated"],
        post["theory_over_measured_stated"], post["h100_flops_marketing"] / 1e12]
    changed = copy.deepcopy(dict(post))
    # every stated result doubled; the post's parameter count is the chapter's input
    for key in [k for k in post if k.endswith("_stated") and k != "n_params_stated"] + [
            "t_mem_stated_s", "t_comp_stated_s", "h100_flops_marketing"]:
        changed[key] = 2 * post[key]
    changed["wikipedia"]["usd_stated"] *= 2
    for key in ("perf_ratio_b1", "perf_ratio_large"):
        changed[key]["stated"] *= 2
    monkeypatch.setattr(E, "MAZUREK2025_EMBEDDINGS", changed)
    after = [make() for make in EMBEDDINGS]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    assert [r.source for g in after for r in g.rows] == pytest.approx(
        [2 * r.source for g in before for r in g.rows])


ROLLOUTS = (R.rollouts_prices, R.rollouts_advantage, R.rollouts_bits, R.rollouts_lora,
            R.rollouts_lora_flops)


def test_the_rollout_rows_pair_the_post_with_the_derivations(monkeypatch):
    from inference_math.derivations import rollouts as RL

    before = [make() for make in ROLLOUTS]
    assert all(r.holds() for g in before for r in g.rows)
    post = RL.MAZUREK2025_EXPERIENCE
    changed = copy.deepcopy(dict(post))
    for key in [k for k in post if k.endswith("_stated")]:
        changed[key] = 2 * post[key]
    changed["wordle"]["advantage_stated"] *= 2
    changed["orders_stated"] = tuple(2 * v for v in post["orders_stated"])
    monkeypatch.setattr(RL, "MAZUREK2025_EXPERIENCE", changed)
    after = [make() for make in ROLLOUTS]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    assert [r.source for g in after for r in g.rows] == pytest.approx(
        [2 * r.source for g in before for r in g.rows])


KV_GROUPS = (R.kv_llama_memory, R.kv_table_mha, R.kv_table_gqa, R.kv_worked_problems,
             R.kv_pope_crossover)


def _kv_sources_doubled(monkeypatch):
    """The scaling book's and the notes' stated results doubled, their inputs left alone."""
    stated = dict(kv.LLAMA2_13B_STATED)
    for key in ("ff_params", "vocab_params", "attention_params", "total_params", "weights_bytes",
                "kv_seq_bytes", "prefill_activation_bytes", "sequences_exceeding_weights"):
        stated[key] *= 2
    tables = copy.deepcopy(kv.LLAMA2_13B_TABLES)
    tables["oom_beyond"] *= 2
    for kind in ("mha", "gqa"):
        for key in ("step_ms", "tokens_per_s"):
            tables[kind][key] = tuple(2 * v for v in tables[kind][key])
    monkeypatch.setattr(kv, "LLAMA2_13B_STATED", stated)
    monkeypatch.setattr(kv, "LLAMA2_13B_TABLES", tables)
    monkeypatch.setattr(kv, "WORKED_Q1", {**kv.WORKED_Q1, "params": 2 * kv.WORKED_Q1["params"],
                                          "kv_per_token_int8": 2 * kv.WORKED_Q1["kv_per_token_int8"]})
    q2 = {**kv.WORKED_Q2}
    for key in ("kv_per_seq", "answer", "answer_one_kv_head"):
        q2[key] *= 2
    monkeypatch.setattr(kv, "WORKED_Q2", q2)
    monkeypatch.setattr(kv, "WORKED_Q3", {**kv.WORKED_Q3, "answer_ms": 2 * kv.WORKED_Q3["answer_ms"]})
    q5 = {**kv.WORKED_Q5}
    for key in ("total_params", "active_params", "moe_b_crit"):
        q5[key] *= 2
    monkeypatch.setattr(kv, "WORKED_Q5", q5)
    palm = {**kv.PALM_MEMORY}
    for key in ("param_mem_gb", "tokens", "batch"):
        palm[key] *= 2
    monkeypatch.setattr(kv, "PALM_MEMORY", palm)


@pytest.mark.parametrize("make", KV_GROUPS, ids=lambda f: f.__name__)
def test_kv_cache_rows_pair_the_stated_value_with_the_chapters_model(monkeypatch, make):
    """Source: the stated value where the chapter reads it; ours: unchanged when it changes.
    (The tables' cache per sequence is also their input, so it is left out here.)"""
    before = make()
    assert all(row.holds() for row in before.rows)
    _kv_sources_doubled(monkeypatch)
    after = make()
    if make in (R.kv_table_mha, R.kv_table_gqa):
        before, after = (R.Group(g.work, g.title, g.section, g.rows[1:]) for g in (before, after))
    assert [r.source for r in after.rows] == pytest.approx([2 * r.source for r in before.rows])
    assert [r.ours for r in after.rows] == pytest.approx([r.ours for r in before.rows])


def test_the_kv_cache_sources_are_the_stated_values():
    stated = kv.LLAMA2_13B_STATED
    assert [r.source for r in R.kv_llama_memory().rows][:4] == pytest.approx(
        [stated[k] / 1e9 for k in ("ff_params", "vocab_params", "attention_params",
                                   "total_params")])
    table = kv.LLAMA2_13B_TABLES["gqa"]
    assert [r.source for r in R.kv_table_gqa().rows][1:] == [
        v for i in range(len(table["step_ms"])) for v in (table["step_ms"][i],
                                                            table["tokens_per_s"][i])]
    assert [r.source for r in R.kv_pope_crossover().rows] == [
        kv.PALM_MEMORY[k] for k in ("param_mem_gb", "tokens", "batch")]


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
    titles = {(g.work, g.title) for g in (make() for make in TOY + PAPER_EXAMPLES
                                          + (R.pricing_table1,))}
    titles |= {(R.ERDIL, f"Table {n}") for n in range(2, 7)}  # the full model's, built above
    for key in TABLES:
        assert (R.ERDIL, f"Table {int(key.removeprefix('table'))}") in titles, key
    named = {"table1": "Table 1", "figure1": "Figure 1", "square_root_law": "Section 2.2.3",
             "takeaways": "Takeaway 3", "network_eq24": "Equation 24",
             "capacity_sec35": "Section 3.5", "long_context_sec43": "Section 4.3"}
    assert set(named) == {k for k in PAPER if not k.startswith("_")}
    assert {(R.ERDIL, title) for title in named.values()} <= titles
    assert ("mazurek2025llm", "Table 1") in titles


def _chapters_reading(pattern: str) -> set[str]:
    return {p.stem for p in (ROOT / "book").glob("*.md")
            if re.search(pattern, p.read_text()) and p.stem != "reproduction"}


# Chapters whose errata correct a source by a derivation in the box, with no row of values in
# the record yet. Adding rows for one removes it from this set; a new chapter with an erratum and
# no row fails the test below.
ERRATA_WITHOUT_ROWS: set[str] = set()


def test_every_chapter_with_a_reproduction_table_or_an_erratum_is_represented(monkeypatch):
    monkeypatch.setattr(R.erdil, "_frontier", lambda comparison, label: _Front(1.0))
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
    exact = R.markdown(R.Group("w", "T", "sec-x", (R.Row("GPUs", 16, 16, 0),)), {})
    assert "| 16 | 16.0 | +0.00% | exact |" in exact


def test_each_table_has_a_link_target_and_the_chapters_link_to_one(monkeypatch):
    """A chapter's one-line summary of its reproduction lands on its table (or its source's
    group of tables), not on the top of the record."""
    monkeypatch.setattr(R.erdil, "_frontier", lambda comparison, label: _Front(1.0))
    groups = R.groups()
    labels = R.labels(groups)
    assert len(set(labels)) == len(labels) == len(groups)
    for group, label in zip(groups, labels, strict=True):
        titles = {group.erratum: "the box"} if group.erratum else {}
        assert R.markdown(group, titles, label).startswith(f"({label})=\n")
    page = (ROOT / "book" / "reproduction.md").read_text()
    headings = set(re.findall(r"^\((rec-[a-z0-9-]+)\)=$", page, re.M))
    assert headings and not headings & set(labels)
    for path in (ROOT / "book").glob("*.md"):
        text = path.read_text()
        assert "{doc}`reproduction`" not in text, path.stem
        if path.stem != "reproduction":
            assert set(re.findall(r"<(rec-[a-z0-9-]+)>", text)) <= set(labels) | headings, path.stem


def test_long_context_speeds_pair_the_codes_top_speed_with_ours(monkeypatch):
    """Source: the reference code's fastest point of each setting of Figures 9 and 10, read here
    from its summary file; ours: whatever our frontier's fastest point is."""
    monkeypatch.setattr(R.erdil, "_frontier", lambda comparison, label: _Front(7.0))
    group = R.long_context_speeds()
    summary = json.loads((resources.files("inference_math") / "data" / "erdil_code"
                          / "summary_final_model.json").read_text())
    assert len(group.rows) == 8
    for row in group.rows:
        assert row.ours == 7.0 and row.rel == 0.01
    stated = [entry["max_speed"]["tokens_per_s_per_request"]
              for comparison in ("mistral_large_comparison", "deepseek_v3_context_len_comparison")
              for entry in summary["comparisons"][comparison]["settings"]]
    assert [row.source for row in group.rows] == stated


def test_the_frontier_points_pair_the_code_s_csv_with_our_latency(monkeypatch):
    """Source: a forward latency the reference code saved in its CSV, read here with the csv
    module; ours: whatever our latency at the saved branch is."""
    import csv
    import math

    monkeypatch.setattr(C, "branch_latency", lambda setting, ref: 0.5 + 0 * ref["gpus"])
    group = R.full_model_frontier_points()
    assert len(group.rows) == len(C.LATENCY_CHECKS) == 5
    for row, (comparison, label) in zip(group.rows, C.LATENCY_CHECKS, strict=True):
        assert row.ours == 500.0 and row.rel == 1e-3 and row.erratum is None
        path = DATA / "erdil_code" / "frontiers" / C.csv_name(comparison, label)
        with path.open() as handle:
            saved = [(float(r["target_fwd_latency_s"]), float(r["tokens_per_s_per_request"]))
                     for r in csv.DictReader(handle)]
        speculative = C.settings(comparison)[label].speculative
        latencies = {t if speculative or math.isfinite(t) else 1 / v for t, v in saved}
        assert row.source / 1e3 in latencies, (comparison, label)


def test_the_published_totals_pair_the_cards_with_the_configurations(monkeypatch):
    """Source: the totals typed from the model cards; ours: the count of each configuration,
    unchanged when the cards' figures change."""
    from inference_math.presets import hf_config as hc
    from inference_math.presets.hf_config import published

    makes = (R.layer_mix_published, R.attention_reads_v4_cards)
    before = [make() for make in makes]
    assert all(r.holds() for g in before for r in g.rows)
    assert [r.source for r in before[0].rows] == pytest.approx(
        [p[k] / 1e9 for p in hc.PUBLISHED.values() for k in ("total", "active")])
    assert [r.source for r in before[1].rows] == pytest.approx(
        [c[k] / 1e9 for c in hc.V4_CARDS.values() for k in ("total", "active")])

    def doubled(cards):
        return {stem: {**c, "total": 2 * c["total"], "active": 2 * c["active"]}
                for stem, c in cards.items()}

    monkeypatch.setattr(published, "PUBLISHED", doubled(published.PUBLISHED))
    monkeypatch.setattr(hc, "V4_CARDS", doubled(hc.V4_CARDS))
    after = [make() for make in makes]
    assert [r.ours for g in after for r in g.rows] == [r.ours for g in before for r in g.rows]
    assert [r.source for g in after for r in g.rows] == pytest.approx(
        [2 * r.source for g in before for r in g.rows])


@pytest.mark.parametrize(("make", "comparisons"), (
    (R.todays_models_curves, ("all_models_comparison", "all_models_comparison_with_spec_dec")),
    (R.quantization_curves, ("quantization_comparison",))), ids=("todays_models", "quantization"))
def test_the_curves_pair_a_cost_of_the_code_s_csv_with_ours(monkeypatch, make, comparisons):
    """Source: a cost of the reference code's curve, read here with the csv module; ours: whatever
    our frontier's cost at that speed is."""
    import csv

    monkeypatch.setattr(R.erdil, "_frontier", lambda comparison, label: _Front(3.0))
    group = make()
    labels = [(cmp, label) for cmp in comparisons for label in C.settings(cmp)]
    assert len(group.rows) == len(labels)
    for row, (cmp, label) in zip(group.rows, labels, strict=True):
        assert row.ours == 15.0 and row.rel == 0.02 and row.erratum is None
        path = DATA / "erdil_code" / "frontiers" / C.csv_name(cmp, label)
        with path.open() as handle:
            costs = {float(r["usd_per_mtok"]) for r in csv.DictReader(handle)}
        assert row.source in costs, (cmp, label)

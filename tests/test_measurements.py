"""The measurement files shipped with the package, and the comparison of the model with them."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter

import pytest

from inference_math.reality import measurements as me


def test_the_serving_file_has_the_rows_its_readme_lists():
    """79 rows; the README's coverage line counts the rows by GPU."""
    rows = me.load("serving")
    assert [row["row_id"] for row in rows] == list(range(1, 80))
    readme = (me.resources.files("inference_math") / "data" / "measurements"
              / "README_serving_measurements_public.md").read_text()
    coverage = re.search(r"Coverage: (.*?)\. Dense", readme, re.S).group(1)
    stated = {name: int(count) for name, count in re.findall(r"(\w+) (\d+)", coverage)}
    counted = Counter(str(row["gpu"]).split()[0] for row in rows)
    assert counted == stated


def test_deepseeks_production_row_reads_as_the_report_states_it():
    row = me.load("serving")[0]
    assert row["source_id"] == "DS-D6" and row["gpu"] == "H800"
    assert row["output_tok_s_per_gpu"] == 1850 and row["avg_kv_len"] == 4989
    assert row["tok_s_per_user"] == "20-22"  # a range stays text
    assert row["tpot_ms_mean"] is None  # not stated


def test_the_other_files_and_their_sources():
    assert len(me.load("fastertransformer")) == 2
    assert len(me.load("tensorrt_llm_7b")) == 4
    assert any("kipply" in line for line in me.comments("fastertransformer"))
    assert any("16.1 ms" in line for line in me.comments("tensorrt_llm_7b"))
    assert me.TRT_7B_FIRST_TOKEN_MS == {128: 16.1, 2048: 120.5}


SERVING_SOURCES = {str(row["source_id"]) for row in me.load("serving")}


def test_every_serving_row_is_compared_or_listed_with_a_reason():
    compared = {int(c.row) for c in me.comparisons() if c.source in SERVING_SOURCES}
    listed = {row["row"] for row in me.pending()}
    assert not compared & listed
    assert compared | listed == set(range(1, 80))
    assert all(row["why"] for row in me.pending())


def test_comparisons_are_finite_and_the_batch_one_decode_is_close():
    rows = me.comparisons()
    for row in rows:
        assert row.measured > 0
        assert row.predicted is None or (math.isfinite(row.predicted) and row.predicted > 0)
    # kipply's FasterTransformer decode steps at batch 1 (memory bound): within 10%
    decode = [row for row in rows if row.source == "FT-KIPPLY" and row.quantity == "tpot_ms"]
    assert len(decode) == 2 and all(row.factor < 1.10 for row in decode)
    summary = me.error_summary(rows)
    assert set(summary) >= {"FT-KIPPLY", "TRTLLM-7B-A100", "TE-VLLM"}


def _serving(row_id: int) -> me.Comparison:
    return next(c for c in me.comparisons() if c.source in SERVING_SOURCES and c.row == str(row_id))


def test_the_mixed_layer_rows_are_compared_at_their_stated_conditions():
    """DeepSeek's profile (row 4): 128 requests on each of 128 H800s, decode only at 4,096
    tokens; its prefill (row 3): 16,384 tokens per GPU on 32 GPUs, prompts of 4,096; TensorRT-LLM's
    offline R1 (row 37): a concurrency of 3,072 on the whole node, not per GPU."""
    decode, prefill, offline = _serving(4), _serving(3), _serving(37)
    assert decode.quantity == "decode_tokens_per_s_per_gpu" and "batch 16384" in decode.setup
    assert prefill.quantity == "prefill_tokens_per_s_per_gpu" and "batch 128" in prefill.setup
    assert offline.quantity == "tokens_per_s_per_gpu" and "batch 3072" in offline.setup
    # data-parallel attention is labelled with its expert-parallel degree, never as TP
    assert decode.setup.startswith("DP attention, EP 128,")
    assert prefill.setup.startswith("DP attention, EP 32,")
    assert offline.setup.startswith("DP attention, EP 8,")
    assert _serving(40).setup.startswith("TP 8,")  # attention TP 8 stays TP
    assert "4-bit" in offline.setup  # NVFP4
    mtp = _serving(41)  # 2.82 tokens accepted per step
    assert mtp.quantity == "tokens_per_s_per_user" and "MTP 2.82" in mtp.setup
    assert mtp.predicted > _serving(40).predicted  # the same deployment without MTP


def test_rows_with_open_lengths_are_compared_only_at_batch_one_where_they_do_not_matter():
    for row_id in (31, 32, 33, 34):  # gpt-oss at batch one, lengths not printed
        assert "lengths assumed" in _serving(row_id).setup
    listed = {row["row"]: row["why"] for row in me.pending()}
    assert "input_len" in listed[36]  # a batch of 7,168 with the lengths open
    assert "spec_accept_len" in listed[35] and "spec_accept_len" in listed[38]
    assert "weight_precision" in listed[13]
    assert "frontier" in listed[1]


def test_deepseeks_production_against_the_model():
    ds = me.deepseek_production()
    # the report's decode GPUs: $2 an hour for 1,850 tokens/s
    assert ds["measured_usd_per_mtok"] == pytest.approx(2 / 3600 / 1850 * 1e6)
    # its fleet: $87,072 a day for 168 B output tokens
    assert ds["fleet_usd_per_mtok"] == pytest.approx(87_072 / 168e3)
    assert ds["input_per_output"] == pytest.approx((608 - 342) / 168)
    assert ds["frontier_tok_s_per_gpu"] * ds["frontier_usd_per_mtok"] == pytest.approx(2e6 / 3600)
    plain, mtp = ds["layouts"]["plain"], ds["layouts"]["mtp"]
    assert mtp["batch_per_gpu"] > plain["batch_per_gpu"]
    assert mtp["tok_s_per_gpu"] > plain["tok_s_per_gpu"]
    assert 0.5 < ds["frontier_ratio"] < 2 and 0.5 < ds["mtp_ratio"] < 2
    for label in ("plain", "mtp"):  # decode plus the prefill of (608 - 342)/168 input tokens
        assert ds[f"model_fleet_usd_per_mtok_{label}"] == pytest.approx(
            ds["layouts"][label]["usd_per_mtok"]
            + (608 - 342) / 168 * ds["prefill_usd_per_mtok_input"])


def test_the_kernel_calibration_is_one_factor_fitted_on_its_stated_rows():
    """Each calibration row's factor makes the model's time per token equal the measured one
    (the launches enter a step's latency linearly); the global factor is their median."""
    factor, factors = me.calibrate_kernel()
    assert len(factors) == 4 and factor == pytest.approx(sorted(factors)[1:3][0] / 2
                                                         + sorted(factors)[1:3][1] / 2)
    rows = [r for r in me.comparisons() if r.source == me.CALIBRATION_SOURCE]
    for row, own in zip(rows, factors, strict=True):
        refit = next(r for r in me._serving_rows(own) if r.row == row.row)
        assert refit.predicted == pytest.approx(row.measured, rel=1e-6)


def test_a_miss_is_a_factor_the_same_for_a_time_and_a_rate():
    """A model 2.4x too fast misses a time per token and a rate per user by the same factor,
    ln 2.4 (|pred - meas|/meas would say 58% and 140%)."""
    time = me.Comparison("x", "1", "m", "g", "", "tpot_ms", 24.0, 10.0, "memory")
    rate = me.Comparison("x", "2", "m", "g", "", "tokens_per_s_per_user", 10.0, 24.0, "memory")
    slow = me.Comparison("x", "3", "m", "g", "", "tokens_per_s_per_user", 24.0, 10.0, "memory")
    for row in (time, rate, slow):
        assert row.log_error == pytest.approx(math.log(2.4))
        assert row.factor == pytest.approx(2.4)
    assert time.ratio == pytest.approx(2.4) and rate.ratio == pytest.approx(2.4)
    assert slow.ratio == pytest.approx(1 / 2.4)
    unfit = me.Comparison("x", "4", "m", "g", "", "tpot_ms", 24.0, None, "does not fit")
    assert unfit.log_error is None and unfit.factor is None
    # quantiles are taken of the logarithms: the median of 1.1x, 2x and 4x misses is 2x; of
    # 1x and 4x it is their geometric mean, 2x
    rows = [dataclasses.replace(rate, predicted=10.0 * f) for f in (1.1, 2.0, 4.0)]
    assert me.median_factor(rows) == pytest.approx(2.0)
    pair = [dataclasses.replace(rate, predicted=10.0), dataclasses.replace(rate, predicted=40.0)]
    assert me.median_factor(pair) == pytest.approx(2.0)
    summary = me.error_summary(rows + [unfit])
    assert summary == {"x": (3, pytest.approx(2.0), pytest.approx(1.1), pytest.approx(4.0))}


def test_each_comparison_names_what_its_source_leaves_open_and_what_is_simulated():
    """InferSim's DeepSeek-V3 rows come from DeepSeek's profiler trace (simulated routing), the
    others were measured; every row without a stated KV width says so."""
    rows = me.comparisons()
    serving = {row["row_id"]: row for row in me.load("serving")}
    for c in rows:
        if c.source in SERVING_SOURCES:
            row = serving[float(c.row)]
            assert ("KV width" in c.unstated) == (row["kv_cache_precision"] is None)
            simulated = c.kind == me.SIMULATED_FROM_TRACE
            assert simulated == (int(c.row) in (3, 4))
        else:
            assert c.kind == me.MEASURED and "KV width" in c.unstated
    assert _serving(37).unstated == ()  # FP16 KV, lengths and precision stated
    assert "lengths" in _serving(31).unstated
    assert "lengths (printed as 1K/2K)" in _serving(40).unstated
    assert any("simulation script" in text for text in _serving(4).unstated)


CONDITIONS = {c.row: c for c in me.frontier_conditions()}


def test_frontier_conditions_cover_every_row_with_a_preset_model_and_gpu():
    assert sorted(CONDITIONS) == list(range(1, 80))
    for c in CONDITIONS.values():
        assert c.model_object() is not None
        assert me.get_gpu(c.gpu) is not None
        assert c.gpu_count >= 1
    # rows whose rate per user is derivable: stated (31-42), a stated range (1), from the time
    # per output token (MLPerf Server), or throughput over a stated number of sequences
    derivable = {c.row for c in CONDITIONS.values() if c.tok_s_per_user is not None}
    assert derivable == ({1, 4, 13, 14, 15, 17, 21} | set(range(31, 43)) | set(range(43, 57))
                         | {67, 69, 71, 73, 75, 76, 77, 78, 79})
    assert len(derivable) == 42
    assert all(c.tok_s_per_user_from for c in CONDITIONS.values() if c.row in derivable)


def test_frontier_conditions_of_deepseeks_production_row_state_no_mtp_and_no_kv_width():
    c = CONDITIONS[1]
    assert (c.model, c.gpu, c.gpu_count, c.weight_bits) == ("deepseek-v3", "h800", 144, 8)
    assert c.kv_bits is None and c.speculative is None  # neither is stated
    assert c.phase == "decode" and c.avg_kv_len == 4989
    assert c.output_tok_s_per_gpu == 1850
    assert c.tok_s_per_user == 22 and c.tok_s_per_user_from == "stated range 20-22, upper end"


def test_frontier_conditions_rates_per_user_by_hand():
    # SGLang's decode on 72 H100s: 256 sequences per device, 2,785.25 tokens/s per GPU
    assert CONDITIONS[13].tok_s_per_user == pytest.approx(2785.25 / 256)
    assert CONDITIONS[13].tok_s_per_user_from == "throughput / concurrency"
    # Kimi K2: 480 sequences per decode GPU, 288,000 tokens/s over 96 GPUs
    k2 = CONDITIONS[21]
    assert (k2.model, k2.gpu, k2.output_tok_s_per_gpu) == ("kimi-k2", "h200", 3000)
    assert k2.tok_s_per_user == pytest.approx(288000 / 96 / 480)
    # TensorRT-LLM's Llama-2-70B on 2 H200s: a batch of 512, 1,654 tokens/s per GPU
    assert CONDITIONS[47].tok_s_per_user == pytest.approx(1654 * 2 / 512)
    assert CONDITIONS[47].model_object() is me.LLAMA2_70B and CONDITIONS[47].weight_bits == 8
    # GPT-J on one H100: 10,907 tokens/s for the whole (one-GPU) system, batch 64
    assert CONDITIONS[53].output_tok_s_per_gpu == 10907
    assert CONDITIONS[53].tok_s_per_user == pytest.approx(10907 / 64)
    # MLPerf Server on 8 H100s: 154.96 ms per output token
    assert CONDITIONS[67].tok_s_per_user == pytest.approx(1000 / 154.96)
    assert CONDITIONS[67].tok_s_per_user_from == "1000 / TPOT"
    # TensorRT-LLM's offline R1: the stated rate per user includes the context phase
    r37 = CONDITIONS[37]
    assert r37.tok_s_per_user == pytest.approx(11.9263)
    assert r37.tok_s_per_user_from == "stated, prefill included"
    assert (r37.weight_bits, r37.kv_bits, r37.input_len, r37.output_len) == (4, 16, 1024, 2048)


def test_frontier_conditions_leave_open_what_the_sources_leave_open():
    # InferSim's prefill of DeepSeek-V3: simulated from a trace, its FP8 from a simulation script
    c3 = CONDITIONS[3]
    assert c3.kind == me.SIMULATED_FROM_TRACE and c3.phase == "prefill"
    assert c3.weight_bits is None and c3.output_tok_s_per_gpu is None
    assert c3.tok_s_per_user is None and c3.tok_s_per_user_from == ""
    # Qwen3-30B-A3B on 4 H20s: the cache width and the batch come from InferSim's script only
    c6 = CONDITIONS[6]
    assert c6.model == "hf_configs/Qwen--Qwen3-30B-A3B.config.json"
    assert c6.kv_bits is None and c6.tok_s_per_user is None and c6.output_tok_s_per_gpu == 2749
    # TensorRT-LLM's B200 ablation: without MTP, then MTP at 2.82 accepted tokens
    assert CONDITIONS[40].speculative is False and CONDITIONS[41].speculative is True
    assert CONDITIONS[41].spec_accept_len == 2.82
    assert (CONDITIONS[41].input_len, CONDITIONS[41].output_len) == (1024, 2048)  # '1K'/'2K'
    # the 10 rows of the offline overview state no concurrency: no rate per user
    assert all(CONDITIONS[r].tok_s_per_user is None for r in range(57, 67))


def test_every_serving_row_keeps_its_source():
    """Each row names a source of the README's table and where in it the numbers were read."""
    readme = (me.resources.files("inference_math") / "data" / "measurements"
              / "README_serving_measurements_public.md").read_text()
    table = readme[readme.index("## Sources"):readme.index("Independent publishers")]
    listed = dict(re.findall(r"^\| ([A-Za-z0-9.-]+) \| (\d+) \|", table, re.M))
    rows = me.load("serving")
    assert Counter(str(row["source_id"]) for row in rows) == {k: int(v) for k, v in listed.items()}
    assert all(row["source_detail"] for row in rows)

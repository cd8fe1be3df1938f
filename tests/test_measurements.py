"""The measurement files shipped with the package, and the comparison of the model with them."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter

import pytest

from inference_math.engine import measurements as me


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

"""Bands on the frontiers (analysis/bands.py, --band): ranges, draws, containment, a hand check."""

from __future__ import annotations

import csv
import dataclasses
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run, strict_json

from inference_math.analysis import bands
from inference_math.core.validation import InputError
from inference_math.fullmodel.search import Frontier, Setting, frontier
from inference_math.presets.hardware import GPUS, NUMBER_FIELDS, get_gpu
from inference_math.presets.models import get_model
from inference_math.serving.serving_frontier import Workload, evaluate_points, serving_frontier

LLAMA_70B = get_model("llama-3-70b")
B200 = get_gpu("b200")
SETTING = Setting(LLAMA_70B, B200, weight_bytes=1)
FEW = 64  # draws where the test needs no precision


@pytest.fixture(scope="module")
def front():
    return frontier(SETTING)


# --- the ranges file ------------------------------------------------------------------------------

def test_every_number_field_has_a_range_with_a_reason_under_each_status():
    table = bands.ranges()
    for status in bands.STATUSES:
        assert set(table[status]) == set(NUMBER_FIELDS)
        for name, rng in table[status].items():
            assert rng.low <= 1 <= rng.high and len(rng.reason) > 20, (status, name)
    # the ranges the docstring and README state
    assumed = table["assumed"]
    assert (assumed["flop_cap"].low, assumed["flop_cap"].high) == (0.8, 1.2)
    assert (assumed["bandwidth_cap"].low, assumed["bandwidth_cap"].high) == (0.85, 1.15)
    assert (assumed["kernel_launch_s"].low, assumed["kernel_launch_s"].high) == (0.5, 2.0)
    assert table["provisional"]["hbm_bandwidth"].high == pytest.approx(1.1)
    assert assumed["node_size"].width == 0 and table["provisional"]["node_size"].width == 0


def _file(changes: dict | None = None) -> str:
    changes = changes or {}
    lines = []
    for status in bands.STATUSES:
        for name in NUMBER_FIELDS:
            entry = {"low": 0.9, "high": 1.1, "reason": "a test range"}
            if name == "node_size":
                entry.update(low=1.0, high=1.0)
            entry.update(changes.get((status, name), {}))
            if entry.get("drop"):
                continue
            body = ", ".join(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}"
                             for k, v in entry.items())
            lines.append(f"{status}.{name} = {{ {body} }}")
    return "\n".join(lines).replace("'", '"')


def test_a_valid_file_parses():
    parsed = bands.parse_ranges(_file(), "test.toml")
    assert parsed["assumed"]["hbm_bandwidth"].high == 1.1


@pytest.mark.parametrize(("change", "message"), [
    ({("assumed", "flop_cap"): {"drop": True}}, "assumed.flop_cap: missing"),
    ({("assumed", "flop_cap"): {"low": 1.2}}, "low <= 1 <= high"),
    ({("provisional", "hbm_bytes"): {"high": 0.0}}, "high must be a finite number > 0"),
    ({("assumed", "node_size"): {"high": 2.0}}, "whole number is not spread"),
    ({("assumed", "price_per_hour"): {"reason": " "}}, "reason must be a non-empty string"),
])
def test_a_bad_ranges_file_is_one_error_naming_the_entry(change, message):
    with pytest.raises(InputError, match=message) as info:
        bands.parse_ranges(_file(change), "test.toml")
    assert str(info.value).startswith("test.toml") and "\n" not in str(info.value)


def test_unknown_tables_and_fields_are_refused():
    with pytest.raises(InputError, match="unknown table 'guessed'"):
        bands.parse_ranges(_file() + "\n[guessed.flop_cap]\nlow = 1\n", "t.toml")
    with pytest.raises(InputError, match="not a number field"):
        bands.parse_ranges(_file() + '\nassumed.colour = { low = 1, high = 1, reason = "x" }',
                           "t.toml")


def test_spread_fields_follow_the_presets_lists():
    assert bands.gpu_ranges(get_gpu("h100")) == {}  # every number sourced: nothing spread
    assert set(bands.gpu_ranges(B200)) == set(B200.assumed)
    tpu = get_gpu("tpu7x")
    assert set(bands.gpu_ranges(tpu)) == set(tpu.assumed) | set(tpu.provisional)
    assert "price_per_hour" not in bands.gpu_ranges(tpu, price_given=True)
    for gpu in GPUS.values():
        assert set(bands.gpu_ranges(gpu)) <= set(gpu.assumed) | set(gpu.provisional)


def test_draws_are_log_uniform_within_the_range_and_caps_stay_fractions():
    factors = bands.draw_factors({"flop_cap": (0.5, 2.0)}, 2000, 3)["flop_cap"]
    assert factors.min() >= 0.5 and factors.max() <= 2.0
    assert np.mean(np.log(factors) < 0) == pytest.approx(0.5, abs=0.05)
    caps = [bands.drawn_gpu(B200, {"flop_cap": factors}, k).flop_cap for k in range(2000)]
    assert max(caps) == 1.0 and min(caps) >= 0.35


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(draws=0), "draws"), (dict(draws=2.5), "draws"), (dict(seed=-1), "seed"),
    (dict(spread={"colour": (1, 2)}), "not a number field"),
    (dict(spread={"node_size": (0.5, 2)}), "whole number"),
    (dict(spread={"hbm_bandwidth": (1.1, 2)}), "low <= 1 <= high"),
])
def test_bad_band_arguments_are_input_errors(front, kwargs, message):
    with pytest.raises(InputError, match=message):
        bands.frontier_band(SETTING, front, **kwargs)


# --- the full model's frontier ------------------------------------------------------------------

def test_the_band_holds_each_points_own_value(front):
    band = bands.frontier_band(SETTING, front)
    assert band.spread and band.draws == bands.DRAWS
    assert np.all(band.speed_low <= band.speed) and np.all(band.speed <= band.speed_high)
    assert np.all(band.cost_low <= band.cost) and np.all(band.cost <= band.cost_high)
    assert np.any(band.speed_high > band.speed * 1.01)  # the spread is not nothing
    rows = band.rows()
    assert len(rows) == len(front.points)
    assert rows[0]["tokens_per_s_low"] == pytest.approx(float(band.speed_low[0]))


def test_zero_ranges_give_zero_width(front):
    band = bands.frontier_band(SETTING, front, spread={"hbm_bandwidth": (1.0, 1.0)}, draws=FEW)
    for low, high, own in ((band.speed_low, band.speed_high, band.speed),
                           (band.cost_low, band.cost_high, band.cost)):
        np.testing.assert_array_equal(low, own)
        np.testing.assert_array_equal(high, own)
    assert band.max_speed() == (front.max_speed().tokens_per_s,) * 2
    assert band.cost_at_speed(50.0) == (float(front.cost_at_speed(50.0)),) * 2


def test_a_gpu_with_every_number_sourced_has_a_zero_width_band():
    setting = Setting(LLAMA_70B, get_gpu("h100"), weight_bytes=1)
    band = bands.frontier_band(setting, draws=FEW)
    assert band.spread == {}
    np.testing.assert_array_equal(band.cost_high, band.cost)


def test_the_band_is_reproducible_with_a_seed(front):
    first = bands.frontier_band(SETTING, front, draws=FEW, seed=7)
    again = bands.frontier_band(SETTING, front, draws=FEW, seed=7)
    other = bands.frontier_band(SETTING, front, draws=FEW, seed=8)
    np.testing.assert_array_equal(first.cost_draws, again.cost_draws)
    np.testing.assert_array_equal(first.speed_low, again.speed_low)
    assert not np.array_equal(first.cost_draws, other.cost_draws)


@settings(max_examples=25, deadline=None)
@given(field=st.sampled_from(["hbm_bandwidth", "flop_cap", "kernel_launch_s",
                              "internode_allreduce_bandwidth", "price_per_hour"]),
       narrow=st.floats(1.0, 2.5), wider=st.floats(1.0, 1.5))
def test_widening_a_range_widens_the_band(front, field, narrow, wider):
    """Draws share their uniform numbers, so each draw moves further out as its range widens,
    and each speed and cost is monotone in each value: the quantiles can only move out."""
    wide = narrow * wider
    inner = bands.frontier_band(SETTING, front, spread={field: (1 / narrow, narrow)}, draws=FEW)
    outer = bands.frontier_band(SETTING, front, spread={field: (1 / wide, wide)}, draws=FEW)
    slack = 1e-12
    assert np.all(outer.speed_low <= inner.speed_low * (1 + slack))
    assert np.all(outer.speed_high >= inner.speed_high * (1 - slack))
    assert np.all(outer.cost_low <= inner.cost_low * (1 + slack))
    assert np.all(outer.cost_high >= inner.cost_high * (1 - slack))


def test_hand_check_a_memory_bound_point_scales_with_one_over_hbm_bandwidth(front):
    """A point where memory binds at every draw: its latency is kernel + network + M/f for a
    bandwidth factor f, log-uniform on [1/a, a], whose 10th and 90th percentiles are a^-0.8 and
    a^0.8. Speed rises with f and cost falls, so the band is 1/(K + M·a^±0.8) and its cost."""
    a = 1.5
    point = next(p for p in front.points
                 if p.terms["memory"] > 2 * a * p.terms["arithmetic"] and p.gamma == 1)
    fixed = point.terms["kernel"] + point.terms["network"]
    memory = point.terms["memory"]
    assert fixed + memory == pytest.approx(1 / point.tokens_per_s, rel=1e-12)  # the paper's sum
    one = Frontier(SETTING, [point])
    band = bands.frontier_band(SETTING, one, spread={"hbm_bandwidth": (1 / a, a)}, draws=4000)
    slow, fast = fixed + memory * a**0.8, fixed + memory * a**-0.8
    assert band.speed_low[0] == pytest.approx(1 / slow, rel=0.015)
    assert band.speed_high[0] == pytest.approx(1 / fast, rel=0.015)
    assert band.cost_high[0] == pytest.approx(point.usd_per_mtok * slow / (fixed + memory),
                                              rel=0.015)
    assert band.cost_low[0] == pytest.approx(point.usd_per_mtok * fast / (fixed + memory),
                                             rel=0.015)


def test_speculative_decoding_keeps_the_drafters_layout():
    setting = Setting(LLAMA_70B, B200, weight_bytes=1, drafter=get_model("llama-3-8b"))
    front = frontier(setting)
    cfg = bands._configuration(setting, front.points)
    assert cfg["drafter"] is not None
    latency = bands.token_latency(setting, cfg, setting.gpu)
    speed = np.array([p.tokens_per_s for p in front.points])
    np.testing.assert_allclose(latency * speed, 1.0, rtol=1e-9)
    band = bands.frontier_band(setting, front, draws=FEW)
    assert np.all(band.speed_low <= band.speed) and np.all(band.speed <= band.speed_high)


def test_a_draw_that_leaves_too_little_hbm_is_an_infinite_cost(front):
    band = bands.frontier_band(SETTING, front, spread={"hbm_bytes": (0.2, 1.0)}, draws=FEW)
    assert np.isinf(band.cost_high).any() and np.all(band.cost_low <= band.cost)
    rows = band.rows()
    assert any(row["usd_per_mtok_high"] is None for row in rows)
    assert all(row["usd_per_mtok_low"] is not None for row in rows)


def test_quantile_is_numpys_where_finite_and_handles_infinity():
    x = np.random.default_rng(1).random((50, 3))
    np.testing.assert_allclose(bands.quantile(x, 0.1), np.quantile(x, 0.1, axis=0))
    assert bands.quantile(np.array([1.0, 2.0, math.inf]), 0.9) == math.inf
    assert bands.quantile(np.array([1.0, math.inf, math.inf]), 0.9) == math.inf
    assert bands.quantile(np.array([1.0, 2.0, math.inf]), 0.1) == pytest.approx(1.2)


def test_cost_at_speed_reads_each_draws_frontier(front):
    band = bands.frontier_band(SETTING, front, draws=FEW)
    low, high = band.cost_at_speed(50.0)
    assert low <= float(front.cost_at_speed(50.0)) <= high
    top_low, top_high = band.max_speed()
    assert top_low <= front.max_speed().tokens_per_s <= top_high
    assert band.cost_at_speed(top_high * 2) == (math.inf, math.inf)


def test_a_price_given_is_not_spread():
    tpu = get_gpu("tpu7x")
    priced = Setting(LLAMA_70B, tpu, weight_bytes=1, price=3.0)
    band = bands.frontier_band(priced, draws=FEW)
    assert "price_per_hour" not in band.spread and "hbm_bandwidth" in band.spread


# --- the serving frontier -----------------------------------------------------------------------

@pytest.mark.parametrize("disaggregated", [False, True])
@pytest.mark.parametrize("curve", ["estimate", "paper"])
def test_serving_points_are_evaluated_again_exactly(disaggregated, curve):
    work = Workload(get_model("llama-3.3-70b"), get_gpu("mi355x"), 1000, 1000, curve=curve,
                    disaggregated=disaggregated)
    front = serving_frontier(work)
    again = evaluate_points(work, front.points)
    for quantity, values in again.items():
        own = np.array([getattr(p, quantity) for p in front.points])
        np.testing.assert_allclose(values, own, rtol=1e-12)


def test_the_serving_band_combines_the_estimates_band_at_the_ends():
    work = Workload(get_model("llama-3.3-70b"), get_gpu("mi355x"), 1000, 1000)
    front = serving_frontier(work)
    rate = np.array([p.output_tokens_per_s_per_gpu for p in front.points])
    alone = bands.serving_band(work, front, spread={}, draws=FEW)
    np.testing.assert_allclose(alone.low("output_tokens_per_s_per_gpu"),
                               [p.band_low for p in front.points], rtol=1e-12)
    np.testing.assert_allclose(alone.high("output_tokens_per_s_per_gpu"),
                               [p.band_high for p in front.points], rtol=1e-12)
    cost = np.array([p.usd_per_mtok_output for p in front.points])
    np.testing.assert_allclose(alone.high("usd_per_mtok_output"),
                               cost * math.exp(-alone.estimate[0]), rtol=1e-12)
    both = bands.serving_band(work, front, draws=FEW)
    assert np.all(both.low("output_tokens_per_s_per_gpu") <= alone.low(
        "output_tokens_per_s_per_gpu") * (1 + 1e-12))
    assert np.all(both.high("output_tokens_per_s_per_gpu") >= alone.high(
        "output_tokens_per_s_per_gpu") * (1 - 1e-12))
    assert np.all(both.low("output_tokens_per_s_per_gpu") <= rate)
    paper = dataclasses.replace(work, curve="paper")
    plain = bands.serving_band(paper, draws=FEW)
    assert plain.estimate == (0.0, 0.0)
    own = plain.nominal["output_tokens_per_s_per_gpu"]
    assert np.all(plain.low("output_tokens_per_s_per_gpu") <= own)
    assert np.all(own <= plain.high("output_tokens_per_s_per_gpu"))
    assert np.any(plain.high("output_tokens_per_s_per_gpu") > own * 1.01)


# --- the command line ---------------------------------------------------------------------------

FRONTIER = ["frontier", "--model", "llama-3-70b", "--gpu", "b200", "--weight-bits", "8"]
SERVE = ["serve", "--model", "llama-3.3-70b", "--gpu", "mi355x", "--input-len", "1000",
         "--output-len", "1000"]


def test_frontier_band_json_is_strict_and_holds_each_point(capsys):
    code, out, err = run(capsys, *FRONTIER, "--band", "--draws", "32", "--json")
    assert code == 0 and err == ""
    rows = strict_json(out)
    for row in rows:
        assert row["tokens_per_s_low"] <= row["tokens_per_s"] <= row["tokens_per_s_high"]
        assert row["usd_per_mtok_low"] <= row["usd_per_mtok"] <= row["usd_per_mtok_high"]
    code, out, _ = run(capsys, *FRONTIER, "--json")
    assert "tokens_per_s_low" not in strict_json(out)[0]  # no band unless asked


def test_frontier_band_csv_and_table(capsys):
    code, out, _ = run(capsys, *FRONTIER, "--band", "--draws", "32", "--csv")
    assert code == 0
    table = list(csv.DictReader(io.StringIO(out)))
    assert float(table[0]["usd_per_mtok_low"]) <= float(table[0]["usd_per_mtok"])
    code, out, _ = run(capsys, *FRONTIER, "--band", "--draws", "32")
    assert code == 0 and "$/Mtok hi" in out and "band: 10th-90th percentiles over 32" in out
    code, out, _ = run(capsys, "frontier", "--model", "llama-3-70b", "--gpu", "h100", "--band",
                       "--draws", "16")
    assert code == 0 and "zero width" in out


def test_compare_band_json(capsys):
    code, out, err = run(capsys, "compare", "--models", "llama-3-70b", "--gpus", "h100,b200",
                         "--band", "--draws", "32", "--json")
    assert code == 0 and err == ""
    h100, b200 = strict_json(out)
    assert h100["usd_per_mtok_low"] == h100["usd_per_mtok"] == h100["usd_per_mtok_high"]
    assert b200["usd_per_mtok_low"] <= b200["usd_per_mtok"] <= b200["usd_per_mtok_high"]
    assert b200["max_tokens_per_s_low"] < b200["max_tokens_per_s"] < b200["max_tokens_per_s_high"]
    code, out, _ = run(capsys, "compare", "--models", "llama-3-70b", "--gpus", "b200", "--band",
                       "--draws", "16", "--speed", "5000", "--csv")
    row = next(csv.DictReader(io.StringIO(out)))
    assert row["feasible"] == "0" and row["usd_per_mtok_low"] == "" and row["max_tokens_per_s_low"]


def test_serve_band_json_and_csv(capsys):
    code, out, err = run(capsys, *SERVE, "--band", "--draws", "32", "--json")
    assert code == 0 and err == ""
    for row in strict_json(out):
        for quantity in bands.SERVING_QUANTITIES:
            assert row[f"{quantity}_low"] <= row[quantity] <= row[f"{quantity}_high"]
        assert row["output_tokens_per_s_per_gpu_low"] <= row["band_low"] * (1 + 1e-12)
    code, out, _ = run(capsys, *SERVE, "--band", "--draws", "32", "--csv")
    assert "usd_per_mtok_output_high" in out.splitlines()[0]
    code, out, _ = run(capsys, *SERVE, "--band", "--draws", "32", "--curve", "paper")
    assert code == 0 and "tok/s/GPU band" in out and "estimate's band" not in out


@pytest.mark.parametrize(("argv", "flag"), [
    ([*FRONTIER, "--band", "--draws", "5"], "--draws"),
    ([*FRONTIER, "--band", "--draws", "12.5"], "--draws"),
    ([*FRONTIER, "--draws", "100"], "--draws"),
    ([*FRONTIER, "--seed", "3"], "--seed"),
    ([*FRONTIER, "--band", "--seed", "-1"], "--seed"),
    ([*FRONTIER, "--band=yes"], "--band"),
    ([*SERVE, "--draws", "100"], "--draws"),
    (["compare", "--models", "llama-3-70b", "--gpus", "b200", "--seed", "x", "--band"], "--seed"),
])
def test_bad_band_input_is_one_line_naming_the_flag(capsys, argv, flag):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and flag in err


def test_frontier_plot_shades_the_band_read_off_each_draws_frontier(capsys, tmp_path, front):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure

    from inference_math.book.frontier_plot import draw_frontiers

    path = tmp_path / "band.svg"
    code, out, err = run(capsys, *FRONTIER, "--band", "--draws", "32", "--quiet", "--plot",
                         str(path))
    assert code == 0 and err == "" and path.read_bytes().startswith(b"<?xml")
    band = bands.frontier_band(SETTING, front, draws=32)  # FRONTIER's setting
    ax = Figure().subplots()
    draw_frontiers(ax, {"x": front}, {"x": band})
    shaded = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(shaded) == 1
    vertices = shaded[0].get_paths()[0].vertices
    speeds, _ = front.arrays()
    # the shading spans the frontier's speeds and, at its slowest, the band's two ends there
    assert vertices[:, 0].min() == pytest.approx(speeds.min())
    assert vertices[:, 0].max() <= speeds.max() * (1 + 1e-12)
    low, high = band.cost_at_speed(float(speeds.min()))
    at_slowest = vertices[np.isclose(vertices[:, 0], speeds.min()), 1]
    assert at_slowest.min() == pytest.approx(low) and at_slowest.max() == pytest.approx(high)
    assert low < high  # the B200's assumed numbers give the band a width
    assert "over 32 draws" in ax.get_legend().get_texts()[1].get_text()


@pytest.mark.parametrize("command", ["max-speed", "preferred"])
def test_one_points_band_is_its_row_of_the_frontiers_band(capsys, command):
    code, out, err = run(capsys, *FRONTIER, "--band", "--draws", "32", "--json", "--quiet")
    rows = strict_json(out)
    code, out, err = run(capsys, command, *FRONTIER[1:], "--band", "--draws", "32", "--json",
                         "--quiet")
    assert code == 0 and err == ""
    one = strict_json(out)
    same = [row for row in rows if row["gpus"] == one["gpus"] and row["batch"] == one["batch"]
            and row["tokens_per_s"] == one["tokens_per_s"]]
    assert len(same) == 1 and same[0] == one
    if command == "max-speed":
        assert one["tokens_per_s"] == max(row["tokens_per_s"] for row in rows)
    assert one["usd_per_mtok_low"] < one["usd_per_mtok"] < one["usd_per_mtok_high"]
    code, out, err = run(capsys, command, *FRONTIER[1:], "--draws", "32")
    assert code == 2 and "argument --draws: needs --band" in err

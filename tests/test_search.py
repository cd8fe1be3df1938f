"""The frontier search against brute force and against the reference code's tables."""

from __future__ import annotations

import numpy as np
import pytest

from inference_math import get_gpu, get_model
from inference_math.cli import main
from inference_math.core import symbols as sym
from inference_math.core.numeric import compile_fn
from inference_math.core.units import usd_per_million_tokens
from inference_math.core.validation import InputError
from inference_math.fullmodel import comparisons as C
from inference_math.fullmodel import full_model as fm
from inference_math.fullmodel import search as S
from inference_math.fullmodel.search import FRONTIER_COLUMNS, Setting, frontier, search_steps


@pytest.mark.parametrize("key", ["llama-3-70b", "mixtral-8x22b"])
def test_pruned_search_equals_brute_force_over_every_branch(key):
    model, gpu = get_model(key), get_gpu("h100")
    n, batch = S.grid(model, gpu, model.weight_bytes)
    n, batch = n[::23], batch[::19]
    got = S.fastest_branch(model, gpu, n, batch, 2.0, 500.0, model.weight_bytes, True)
    pp = S.pipeline_degrees(model, batch, True)
    brute = np.full((n.size, batch.size), np.inf)
    for layout in (False, True):
        latency = fm.compile_branch(model, gpu, layout, 2.0, 500.0)["latency"]
        for i, size in enumerate(n):
            for j, b in enumerate(batch):
                for degree in pp[j]:
                    sigma = (size / degree) ** np.linspace(0, 1, 6)
                    brute[i, j] = min(brute[i, j], float(np.min(latency(size, b, degree, sigma))))
    assert np.array_equal(np.isfinite(got.latency), np.isfinite(brute))
    ok = np.isfinite(brute)
    np.testing.assert_allclose(got.latency[ok], brute[ok], rtol=1e-12)


def test_cost_formula_is_the_units_conversion():
    fn = compile_fn(S.cost_per_million_tokens(), (sym.n_gpu, sym.t_token, sym.b, sym.price))
    assert fn(8.0, 0.02, 64.0, 2.1) == pytest.approx(usd_per_million_tokens(8 * 0.02 / 64, 2.1))
    assert fn(8.0, 0.02, 64.0, 2.1) == pytest.approx(8 * 0.02 / 64 * 2.1 / 3600 * 1e6)


@pytest.fixture(scope="module")
def llama_8bit():
    return S.frontier(C.settings("quantization_comparison")["Llama 3 70B 8-bit"])


def test_table_4_and_6_rows_of_llama_3_70b_8bit(llama_8bit):
    # paper Table 4 (H100): 152 tok/s at 24 GPUs; Table 6 (8-bit): 99 tok/s, $0.37, 7 GPUs, b 109
    fast, pref = llama_8bit.max_speed(), llama_8bit.preferred(3)
    assert fast.tokens_per_s == pytest.approx(152, abs=0.5)
    assert fast.gpus == pytest.approx(24, abs=0.5)
    assert pref.tokens_per_s == pytest.approx(99, abs=0.5)
    assert pref.usd_per_mtok == pytest.approx(0.37, abs=0.005)
    assert pref.gpus == pytest.approx(7, abs=0.5)
    assert pref.batch == pytest.approx(109, abs=0.5)


def test_frontier_matches_the_reference_curve(llama_8bit):
    ref = C.reference_frontier("quantization_comparison", "Llama 3 70B 8-bit")
    speed, cost = llama_8bit.arrays()
    assert speed.size == ref["gpus"].size
    np.testing.assert_allclose(speed, ref["tokens_per_s_per_request"], rtol=1e-5)
    np.testing.assert_allclose(cost, ref["usd_per_mtok"], rtol=1e-5)
    assert all(pt.binding in S.BINDING for pt in llama_8bit.points)


def test_exact_front_contains_the_threshold_front():
    setting = C.settings("gpus_comparison")["V100"]
    exact, sampled = S.frontier(setting, exact=True), S.frontier(setting)
    assert len(exact.points) >= len(sampled.points)
    assert exact.max_speed().tokens_per_s == sampled.max_speed().tokens_per_s
    # paper Table 4: 105 tok/s at 102 V100s
    assert sampled.max_speed().tokens_per_s == pytest.approx(105, abs=0.5)
    assert sampled.max_speed().gpus == pytest.approx(102, abs=0.5)


def test_bad_settings_are_reported():
    with pytest.raises(InputError, match="4-bit"):
        S.Setting(get_model("llama-3-70b"), get_gpu("a100"), weight_bytes=0.5)
    with pytest.raises(InputError, match="context"):
        S.Setting(get_model("llama-3-70b"), get_gpu("h100"), context=-1)
    with pytest.raises(InputError, match="acceptance"):
        S.Setting(get_model("llama-3-70b"), get_gpu("h100"), acceptance=1.0)
    with pytest.raises(InputError, match="price"):
        S.Setting(get_model("llama-3-70b"), get_gpu("h100"), price=0)


def test_every_canonical_setting_is_built_and_has_its_reference_curve():
    count = 0
    for comparison in C.comparison_names():
        if comparison == C.TOY_COMPARISON:
            continue
        for label in C.settings(comparison):
            assert C.reference_frontier(comparison, label)["gpus"].size > 100
            count += 1
    assert count == 31


def test_cli_max_speed_json(capsys):
    assert main(["max-speed", "--model", "llama-3-8b", "--gpu", "h100", "--no-pipeline", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"tokens_per_s"' in out and '"binding"' in out


@pytest.mark.parametrize("argv", [
    ["max-speed", "--model", "llama-3-8b", "--gpu", "h100", "--context", "-5"],
    ["max-speed", "--model", "nope", "--gpu", "h100"],
    ["preferred", "--model", "llama-3-8b", "--gpu", "h100", "--alpha", "x"],
    ["frontier", "--model", "llama-3-8b", "--gpu", "h100", "--acceptance", "0.8"],
    ["frontier", "--model", "llama-3-8b", "--gpu", "v100", "--weight-bits", "4"],
])
def test_cli_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("inference-math: error:")


@pytest.mark.parametrize(("comparison", "label"), [
    ("quantization_comparison", "Llama 3 70B 8-bit"),
    ("spec_dec_comparison", "Llama 3 70B (8B acceptance=0.8)")])
def test_frontier_only_grid_has_the_exact_grids_frontier(comparison, label):
    setting = C.settings(comparison)[label]
    full, pruned = S.evaluate_grid(setting), S.evaluate_grid(setting, frontier_only=True)
    front = S.pareto_front(full.latency, full.gpu_seconds)
    assert np.array_equal(S.pareto_front(pruned.latency, pruned.gpu_seconds), front)
    assert np.array_equal(pruned.latency.ravel()[front], full.latency.ravel()[front])
    assert np.array_equal(pruned.gamma.ravel()[front], full.gamma.ravel()[front])
    # elsewhere the pruned grid holds upper bounds
    assert np.all(pruned.latency >= full.latency)


@pytest.mark.parametrize(("model", "gpu", "drafter", "curve", "exact"), [
    ("llama-3-70b", "h100", None, "paper", False),
    ("llama-3-70b", "h100", "llama-3-8b", "paper", False),
    ("mixtral-8x22b", "h100", None, "paper", True),
    ("llama-3-8b", "a100", None, "physical", False),
    ("llama-3-8b", "h200", None, "limit", True)])
def test_fastest_is_the_whole_frontiers_fastest_point(model, gpu, drafter, curve, exact,
                                                      monkeypatch):
    monkeypatch.delenv("INFERENCE_MATH_CACHE", raising=False)
    setting = Setting(get_model(model), get_gpu(gpu), curve=curve,
                      drafter=get_model(drafter) if drafter else None)
    whole = frontier(setting, exact=exact).max_speed().as_dict()
    # repr: every float to its last bit, and NaN (no draft) equal to NaN
    assert repr(S.fastest(setting, exact=exact).as_dict()) == repr(whole)


@pytest.mark.parametrize("drafter", [None, "llama-3-8b"])
def test_the_grid_is_the_same_on_one_thread_or_two(drafter, monkeypatch):
    setting = Setting(get_model("llama-3-70b"), get_gpu("h100"),
                      drafter=get_model(drafter) if drafter else None)
    grids = []
    for threads in ("1", "2"):
        monkeypatch.setenv("INFERENCE_MATH_THREADS", threads)
        grids.append(S.evaluate_grid(setting, frontier_only=True))
    one, two = grids
    assert np.array_equal(one.latency, two.latency) and np.array_equal(one.gamma, two.gamma)
    for a, b in zip(one.target, two.target, strict=True):
        for field in ("latency", "two_d", "pp_index", "sigma_index"):
            assert np.array_equal(getattr(a, field), getattr(b, field))


@pytest.mark.parametrize("drafter", [None, "llama-3-8b"])
def test_progress_is_reported_once_per_step(drafter, monkeypatch):
    monkeypatch.delenv("INFERENCE_MATH_CACHE", raising=False)
    setting = Setting(get_model("llama-3-70b"), get_gpu("h100"),
                      drafter=get_model(drafter) if drafter else None)
    steps = []
    frontier(setting, progress=steps.append)
    assert len(steps) == search_steps(setting) == (7 if drafter else 4)
    assert steps[-1] == "describing the frontier"


def test_the_frontier_table_has_the_csv_columns_fastest_first():
    front = frontier(Setting(get_model("llama-3-8b"), get_gpu("h100")))
    table = front.table()
    assert table.dtype.names == tuple(key for key, _, _ in FRONTIER_COLUMNS)
    assert len(table) == len(front.points)
    assert table["tokens_per_s"][0] == front.max_speed().tokens_per_s
    assert np.all(np.diff(table["tokens_per_s"]) <= 0)
    preferred = front.preferred(3)
    row = table[table["usd_per_mtok"] == preferred.usd_per_mtok][0]
    assert row["binding"] == preferred.binding and row["gamma"] == preferred.gamma


def test_the_binding_term_counts_the_drafters_passes():
    """A speculative step is γ drafter passes and one target pass: the binding term is the largest
    share of the step, recomputed here from each point's terms and latencies."""
    setting = Setting(get_model("llama-3-70b"), get_gpu("h100"), weight_bytes=1,
                      drafter=get_model("llama-3-8b"))
    points = frontier(setting).points
    assert {pt.binding for pt in points} >= {"drafter passes"}
    for pt in points:
        drafting = pt.gamma * pt.draft_latency_s if pt.gamma > 1 else 0.0
        shares = {"kernel launches": pt.terms["kernel"],
                  "collective latency": pt.terms["network_latency"],
                  "network bandwidth": pt.terms["network_bandwidth"],
                  max(("memory", "arithmetic"), key=lambda k: pt.terms[k]):
                      max(pt.terms["memory"], pt.terms["arithmetic"]),
                  "drafter passes": drafting}
        assert pt.binding == max(shares, key=shares.get)
        assert pt.draft_share == pytest.approx(drafting / (drafting + pt.target_latency_s))


def test_cheapest_point_at_a_speed_serves_it_at_no_less_than_the_curve(llama_8bit):
    """Frontier.cheapest_at(s) is at least s tokens/s per user, costs no less than the frontier
    read at s (the cost rises with the speed along the curve), and is None beyond the top."""
    front = llama_8bit
    top = front.max_speed().tokens_per_s
    for speed in np.geomspace(front.arrays()[0].min() * 1.01, top * 0.99, 12):
        pt = front.cheapest_at(speed)
        assert pt.tokens_per_s >= speed
        assert pt.usd_per_mtok >= float(front.cost_at_speed(speed)) * (1 - 1e-12)
    assert front.cheapest_at(top * 1.01) is None

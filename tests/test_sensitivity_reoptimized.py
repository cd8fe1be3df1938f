"""Elasticities against the search itself, re-run with the HBM bandwidth moved.

Two points where the search re-run on its own grid (400 × 400, about 3.4% apart in N and 4% in
b) disagreed with the derived elasticity at bandwidth steps of 0.1-0.5%: DeepSeek-V3 on B200 at
30 tok/s per user (−1.70 derived, −0.88 from the grid) and gpt-oss-120b on H200 at 50 tok/s
(a corner of memory and arithmetic: −0.217 derived, 0.000 upward and −0.12 downward from the
grid). Over such steps the grid's frontier moves between points of different instance sizes
(its cost at a speed is read between neighbouring frontier points, a saw-tooth about 1% deep),
not along the optimum. Here the same search is re-run on a grid refined about the optimum
(0.05% apart), forward and backward, and compared with the one-sided elasticities.
"""

import math

import numpy as np
import pytest

from inference_math.analysis import continuum as cm
from inference_math.analysis import sensitivity as sens
from inference_math.fullmodel import search
from inference_math.fullmodel.search import Setting, frontier
from inference_math.presets.hardware import get_gpu
from inference_math.presets.models import get_model

CASES = {  # (model, GPU, speed)
    "deepseek": ("deepseek-v3", "b200", 30.0),
    "gpt-oss": ("gpt-oss-120b", "h200", 50.0),
}
FINE = 201  # points of the refined grid in N and in b
WIDTH = 1.05  # the refined grid spans the optimum's N and b × 1.05^±1: 0.05% apart
STEP = 0.02  # relative step of the bandwidth in the search's re-runs


@pytest.fixture(scope="module")
def reports():
    out = {}
    for key, (model, gpu, speed) in CASES.items():
        front = frontier(Setting(get_model(model), get_gpu(gpu)), exact=True)
        out[key] = (front, sens.elasticities(front, speed))
    return out


def _fine_search(monkeypatch, setting, speed, gpus, batch):
    """ln of the search's cost at ``speed`` on a grid refined about (gpus, batch), and ln of its
    excess over the report's continuum optimum's (the refined grid's own saw-tooth)."""
    def grid(model, gpu, weight_bytes):
        return (np.geomspace(gpus / WIDTH, gpus * WIDTH, FINE),
                np.geomspace(batch / WIDTH, batch * WIDTH, FINE))
    monkeypatch.setattr(search, "grid", grid)
    front = search._frontier(setting, True)  # not through the cache: the grid is not its key
    return math.log(float(front.cost_at_speed(np.array([speed]))[0]))


@pytest.mark.parametrize("key", sorted(CASES))
def test_search_on_a_fine_grid_agrees(monkeypatch, reports, key):
    """Forward and backward differences of the refined search's cost at ±2% bandwidth (inside
    the range the report gives) match the one-sided elasticities.

    Tolerance: on the refined grid the search's cost at a speed lies above the optimum's by at
    most one grid step δ in ln b (a step of the batch changes ln N − ln b + ln t by at most δ;
    the nearest N is off by δ/2, a second-order change), so a difference over a step h is off by
    at most 2δ/h. Their mean, the centred difference, is held to that; each one-sided difference
    also carries the cost's curvature over h, half their spread, to second order."""
    model, gpu, speed = CASES[key]
    front, report = reports[key]
    holds = report["holds"]["hbm_bandwidth"]
    assert holds["up"] is None or holds["up"] > STEP
    assert holds["down"] is None or holds["down"] > STEP
    setting = front.setting
    scaled = {sign: Setting(get_model(model), sens.scaled_gpu(get_gpu(gpu), "hbm_bandwidth",
                                                              1 + sign * STEP))
              for sign in (1, -1)}
    base = _fine_search(monkeypatch, setting, speed, report["gpus"], report["batch"])
    excess = base - math.log(report["usd_per_mtok_continuum"])
    assert -1e-9 <= excess < 1e-3  # the refined grid holds the optimum itself
    delta = math.log(WIDTH) / (FINE - 1) * 2
    tolerance = 2 * delta / STEP
    up = (_fine_search(monkeypatch, scaled[1], speed, report["gpus"], report["batch"])
          - base) / math.log(1 + STEP)
    down = (base - _fine_search(monkeypatch, scaled[-1], speed, report["gpus"],
                                report["batch"])) / -math.log(1 - STEP)
    sided = report["one_sided"]["hbm_bandwidth"]
    assert report["elasticities"]["hbm_bandwidth"] == pytest.approx((up + down) / 2,
                                                                    abs=tolerance)
    curvature = abs(up - down) / 2
    assert sided["up"] == pytest.approx(up, abs=tolerance + curvature)
    assert sided["down"] == pytest.approx(down, abs=tolerance + curvature)


def test_the_two_points(reports):
    """DeepSeek-V3: one binding piece (memory) at 8 GPUs, where the node's scale-up domain ends;
    its elasticity in bandwidth is −g_x/g_b, below −1 (the instance cannot shrink past the node's
    edge, so a faster HBM lowers the step time and the cost together; the value is held to the
    re-optimized search above). gpt-oss-120b: a corner of memory and
    arithmetic whose two weights are positive, so both one-sided values are the corner's."""
    ds, oss = reports["deepseek"][1], reports["gpt-oss"][1]
    assert ds["binds"] == ["memory"] and ds["gpus"] == pytest.approx(8.0, rel=1e-6)
    assert -2.0 < ds["elasticities"]["hbm_bandwidth"] < -1.0
    assert sorted(oss["binds"]) == ["arithmetic", "memory"]
    sided = oss["one_sided"]["hbm_bandwidth"]
    assert sided["up"] == sided["down"] == oss["elasticities"]["hbm_bandwidth"]


def test_grid_steps_hide_the_slope(reports):
    """The steps of the review (0.1-0.5%) move DeepSeek-V3's cost by no more than about the
    grid's saw-tooth at that point (the search's cost there over the optimum's, 0.7%): at 0.1%
    by a fraction of it, at 0.5% by as much (within a factor of two), so a re-run of the search
    at such steps measures its grid as much as the slope, as the report says."""
    report = reports["deepseek"][1]
    slope, gap = abs(report["elasticities"]["hbm_bandwidth"]), report["grid_gap"]
    assert 0.001 * slope < 0.5 * gap
    assert 0.005 * slope < 2 * gap


@pytest.mark.parametrize("key", sorted(CASES))
def test_continuum_reoptimization_one_sided(reports, key):
    """The continuum re-optimized forward and backward at 0.1% and 0.5% (all candidate layouts)
    agrees with the one-sided elasticities within 2% of their size (the difference's
    curvature over 0.5%: the tightest range given here is 5.7%)."""
    front, report = reports[key]
    for step in (0.001, 0.005):
        numeric = sens.finite_differences(front, CASES[key][2], names={"hbm_bandwidth"},
                                          step=step, one_sided=True)["hbm_bandwidth"]
        for side in ("up", "down"):
            ours = report["one_sided"]["hbm_bandwidth"][side]
            assert ours == pytest.approx(numeric[side], rel=0.02), (key, step, side)


def test_the_range_ends_where_it_says(reports):
    """DeepSeek-V3's bandwidth elasticity holds, to first order, until arithmetic takes over:
    re-optimized at 0.7 of that change arithmetic still has slack, at 1.3 of it it binds (the
    first-order reach is within 30% of where it happens)."""
    front, report = reports["deepseek"]
    holds = report["holds"]["hbm_bandwidth"]
    assert holds["up_by"] == "arithmetic"
    setting, speed = front.setting, CASES["deepseek"][2]
    layouts = cm.candidate_layouts(front, speed)
    make = sens.inputs(setting)["hbm_bandwidth"]
    slack = {}
    for share in (0.7, 1.3):
        opt, problem = cm.cheapest_of(setting, layouts, speed, **make(1 + share * holds["up"]))
        here = sens._constraints(problem, opt.log_n, opt.log_b, speed)
        slack[share] = here["memory"] - here["arithmetic"]
    assert slack[0.7] > 1e-3
    assert slack[1.3] < sens.ACTIVE

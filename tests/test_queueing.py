"""The queueing of prompts (derivations/queueing.py, serving/queueing.py) and the TTFT statistic
the comparison with measured points reads from a row (reality/measured_points.py): each closed
form against an independent value (a sum, a seeded simulation of the same queue), its limits
and its monotonicity."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.derivations import queueing as q
from inference_math.fullmodel import formulas_numpy as gen
from inference_math.reality import measured_points as mp
from inference_math.serving import serving_rules as sr

# --- closed loop in steady state ----------------------------------------------------------------


def test_the_closed_loop_mean_is_the_integral_of_its_quantiles():
    """A mean is the integral of the quantile function over p in [0, 1]: the residual's mean
    and its quantile, derived separately, agree."""
    quantile = q.closed_quantile().rhs
    assert sp.simplify(sp.integrate(quantile, (S.quant_p, 0, 1)) - q.closed_mean().rhs) == 0


def test_the_closed_loop_median_is_half_a_step_after_the_chunks():
    median = q.closed_quantile().rhs.subs(S.quant_p, sp.Rational(1, 2))
    assert sp.simplify(median - (S.t_step_mean / 2 + S.n_chunks * S.t_mix)) == 0


def test_the_closed_loop_residual_matches_a_simulation():
    """Arrivals at uniform random moments of a stream of fixed steps of 40 ms: their wait to
    the next step boundary, simulated, has the derived mean and quantiles."""
    rng = np.random.default_rng(3)
    step, chunks, own = 0.04, 2.0, 0.09
    arrival = rng.uniform(0.0, 1000 * step, 100_000)
    wait = np.ceil(arrival / step) * step - arrival + chunks * own
    assert gen.closed_ttft_mean(step, chunks, own) == pytest.approx(wait.mean(), rel=2e-3)
    for p in (0.5, 0.9, 0.99):
        assert gen.closed_ttft_quantile(p, step, chunks, own) == pytest.approx(
            np.quantile(wait, p), rel=3e-3)


# --- the initial burst --------------------------------------------------------------------------


def _burst_simulation(prompts: int, input_len: int, budget: int, step: float) -> np.ndarray:
    """A step-by-step engine: every step takes up to ``budget`` waiting prompt tokens, first
    come first served, packing the next prompt into what the previous leaves; a prompt's first
    token comes out of the step that carries its last token."""
    left = [input_len] * prompts
    ttft = np.zeros(prompts)
    k, clock = 0, 0.0
    while k < prompts:
        clock += step
        room = budget
        while room > 0 and k < prompts:
            took = min(room, left[k])
            left[k] -= took
            room -= took
            if left[k] == 0:
                ttft[k] = clock
                k += 1
    return ttft


@pytest.mark.parametrize("prompts, input_len, budget", [
    (128, 3200, 8192), (64, 921, 8192), (8, 20000, 8192), (50, 512, 512), (33, 1000, 3000)])
def test_the_staircase_is_a_simulated_burst(prompts, input_len, budget):
    step = 0.07
    simulated = _burst_simulation(prompts, input_len, budget, step)
    k = np.arange(1, prompts + 1)
    assert np.allclose(gen.burst_ttft_prompt(k, input_len, budget, step), simulated, rtol=1e-12)


@given(st.integers(1, 512), st.integers(16, 40000), st.sampled_from([512, 2048, 8192, 16384]))
def test_the_burst_mean_is_the_staircase_within_half_a_step(prompts, input_len, budget):
    """The rounding to whole steps taken at its mean 1/2 (Weyl): the derived mean is within
    half a step of the staircase summed exactly."""
    step = 1.0
    exact = np.mean(gen.burst_ttft_prompt(np.arange(1, prompts + 1), input_len, budget, step))
    derived = float(q.burst_mean().rhs.subs({S.b: prompts, S.t_prompt: input_len,
                                             S.chunk: budget, S.t_burst: step}))
    assert abs(derived - exact) <= 0.5 * step + 1e-9


@given(st.integers(1, 300), st.integers(16, 20000), st.floats(0.01, 0.999))
def test_the_burst_quantile_is_the_staircase_quantile(prompts, input_len, p):
    """The ⌈p·b⌉-th prompt: NumPy's inverted-CDF quantile of the b values."""
    stair = gen.burst_ttft_prompt(np.arange(1, prompts + 1), input_len, 8192.0, 0.05)
    wave = np.float64(prompts)  # a run of one wave: its steady branch divides by zero
    with np.errstate(divide="ignore", invalid="ignore"):
        got = gen.run_ttft_quantile(p, wave, wave, 0.03, 1.0, 0.04, input_len, 8192.0, 0.05)
    assert got == pytest.approx(np.quantile(stair, p, method="inverted_cdf"), rel=1e-12)


def test_a_run_is_its_burst_then_its_steady_state():
    """A run of R requests: b of the staircase and R − b in steady state (their residuals drawn
    with a seeded generator). The derived mean and quantiles agree with the sample's within a
    step (the rounding of the burst's mean, and the overlap the quantile's ordering ignores)."""
    rng = np.random.default_rng(5)
    b, run, t_in, budget = 64, 640, 3200, 8192
    t_step, t_own, t_burst = 0.03, 0.05, 0.12
    chunks = math.ceil(t_in / budget)
    burst = gen.burst_ttft_prompt(np.arange(1, b + 1), t_in, budget, t_burst)
    steady = rng.uniform(0.0, t_step, run - b) + chunks * t_own
    sample = np.concatenate([burst, steady])
    args = (b, run, t_step, chunks, t_own, t_in, budget, t_burst)
    assert abs(gen.run_ttft_mean(*args) - sample.mean()) <= 0.5 * t_burst * b / run + 1e-3
    for p in (0.5, 0.9, 0.95, 0.99):
        got = gen.run_ttft_quantile(p, *args)
        assert abs(got - np.quantile(sample, p, method="inverted_cdf")) <= t_burst + 1e-9, p


def test_a_run_of_one_wave_is_the_burst_and_a_long_run_the_steady_state():
    mean = q.run_mean().rhs
    assert sp.simplify(mean.subs(S.n_run, S.b) - q.burst_mean().rhs) == 0
    assert sp.simplify(sp.limit(mean, S.n_run, sp.oo) - q.closed_mean().rhs) == 0
    quantile = q.run_quantile().rhs
    # a run of one wave has no steady share: every quantile is the burst's
    assert sp.simplify(quantile.subs(S.n_run, S.b).subs(S.quant_p, sp.Rational(1, 2))
                       - q.burst_quantile().rhs.subs(S.quant_p, sp.Rational(1, 2))) == 0


@given(st.integers(2, 256), st.floats(1.0, 50.0), st.integers(64, 20000),
       st.floats(0.01, 0.3))
def test_a_longer_run_moves_the_mean_from_the_bursts_to_the_steady_states(b, runs_per_wave,
                                                                           input_len, t_burst):
    """The run's mean lies between the burst's and the steady state's, and a run twice as long
    lies nearer the steady state's: the burst is diluted."""
    steady = (0.03, math.ceil(input_len / 8192), 0.05)  # t̄, n_chunks, t_mix
    burst = (input_len, 8192.0, t_burst)
    closed = gen.closed_ttft_mean(*steady)
    wave = float(q.burst_mean().rhs.subs({S.b: b, S.t_prompt: input_len, S.chunk: 8192,
                                          S.t_burst: t_burst}))
    short = gen.run_ttft_mean(b, b * runs_per_wave, *steady, *burst)
    longer = gen.run_ttft_mean(b, 2 * b * runs_per_wave, *steady, *burst)
    assert min(wave, closed) - 1e-12 <= short <= max(wave, closed) + 1e-12
    assert abs(longer - closed) <= abs(short - closed) + 1e-12


# --- arrivals at a rate: the M/D/1 prefill queue -------------------------------------------------


def test_the_prefill_load_is_the_busy_share_of_the_steps():
    """At the decode batch a rate sustains (Little's law, eq-serve-open-loop-rate) and with
    the budget step the mixed one, the load Λ·S is f_mix·t_mix/t̄: the share of the time the
    steps spend carrying prompt tokens."""
    (lam,) = sp.solve(sp.Eq(S.b, S.lam_req * S.t_output * S.t_step_mean), S.lam_req)
    load = q.prefill_load().rhs.subs({S.lam_req: lam, S.t_burst: S.t_mix})
    share = sr.chunk_share().rhs
    assert sp.simplify(load - share * S.t_mix / S.t_step_mean) == 0


def test_the_wait_has_no_queue_at_no_load_and_grows_without_bound_at_full_load():
    wait = q.pk_wait().rhs
    assert wait.subs(S.lam_req, 0) == 0
    full = S.chunk / (S.t_prompt * S.t_burst)  # Λ at which ρ = 1
    assert sp.limit(wait, S.lam_req, full, dir="-") == sp.oo
    # at no load the mean TTFT is eq-serve-open-loop-ttft's
    assert q.open_mean().rhs.subs(S.t_wait, wait).subs(S.lam_req, 0) == S.t_ttft


def _md1_waits(load: float, service: float, arrivals: int, seed: int) -> np.ndarray:
    """Waits of a first-come-first-served queue of fixed service and Poisson arrivals, by
    Lindley's recursion W' = max(0, W + S − A), solved as the walk of S − A less its running
    minimum (and zero)."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(service / load, arrivals)
    walk = np.concatenate([[0.0], np.cumsum(service - gaps[:-1])])
    return walk - np.minimum(np.minimum.accumulate(walk), 0.0)


@pytest.mark.parametrize("load", [0.3, 0.5, 0.7, 0.85])
def test_the_wait_matches_a_simulated_md1_queue(load):
    """100k Poisson arrivals, prompts of 2,000 tokens at 8,192 tokens per 80 ms step: the
    Pollaczek-Khinchine mean within 4%, the share that waits at all ρ (PASTA), and the
    exponential tail's p90 and p99 within [−10%, +30%] of the simulated (it errs long at light
    load, where the M/D/1 tail decays faster)."""
    t_in, budget, t_burst = 2000.0, 8192.0, 0.08
    service = t_in * t_burst / budget
    rate = load / service
    waits = _md1_waits(load, service, 100_000, seed=11)[2000:]
    assert gen.prefill_load(rate, t_in, budget, t_burst) == pytest.approx(load)
    mean = gen.pk_wait(rate, t_in, budget, t_burst)
    assert mean == pytest.approx(waits.mean(), rel=0.04)
    assert (waits > 1e-12).mean() == pytest.approx(load, abs=0.01)
    for p in (0.9, 0.99):
        model, simulated = float(gen.wait_quantile(p, load, mean)), np.quantile(waits, p)
        assert 0.9 * simulated <= model <= 1.3 * simulated, (p, model, simulated)


@given(st.floats(0.01, 0.98), st.floats(0.01, 0.999), st.floats(0.01, 0.999))
def test_the_wait_quantile_grows_with_p_and_is_zero_where_arrivals_find_no_queue(load, p1, p2):
    mean = load / (2 * (1 - load))  # the P-K mean in services (eq-queue-pk-wait at S = 1)
    low, high = sorted((p1, p2))
    assert gen.wait_quantile(low, load, mean) <= gen.wait_quantile(high, load, mean) + 1e-12
    if high <= 1 - load:
        assert gen.wait_quantile(high, load, mean) == 0.0


@given(st.floats(0.05, 20.0), st.floats(0.05, 20.0))
def test_the_mean_wait_grows_with_the_rate(r1, r2):
    t_in, budget, t_burst = 1000.0, 8192.0, 0.2  # ρ = 1 at 40.96 requests/s
    low, high = sorted((r1, r2))
    assert gen.pk_wait(low, t_in, budget, t_burst) <= gen.pk_wait(high, t_in, budget, t_burst)


def test_the_open_loop_ttft_is_infinite_where_the_queue_does_not_keep_up():
    from inference_math.serving import queueing as qu
    args = (0.5, 0.02, 0.05, 1.0, 1000.0, 8192.0, 0.1)
    assert math.isinf(qu.open_loop_ttft(None, 100.0, *args))
    assert math.isinf(qu.open_loop_ttft(0.99, 100.0, *args))
    assert math.isfinite(qu.open_loop_ttft(0.99, 1.0, *args))
    assert qu.open_loop_ttft(0.5, 1.0, *args) <= qu.open_loop_ttft(0.99, 1.0, *args)


# --- the statistic a measured row states ---------------------------------------------------------


@pytest.mark.parametrize("note, quantile", [
    ("TTFT and TPOT are means (median TTFT 16362.8 ms, median TPOT 38.52 ms)", None),
    ("TTFT is the median and tpot_ms holds the median ITL", 0.5),
    ("TTFT and TPOT are medians (median ITL 159.64 ms)", 0.5),
    ("median TTFT and median TPOT; median E2E latency 1564.17 ms", 0.5),
    ("vllm bench serve result (mean TTFT, mean TPOT excl. 1st token)", None),
    ("FlashAttention-3; MEDIAN TTFT and MEDIAN ITL", 0.5),
    ("request-rate inf, max-concurrency 4; TTFT/TPOT are means", None),
    ("num-prompts 10x concurrency, request-rate inf; TTFT/TPOT means", None),
    ("p99 TTFT 812 ms", 0.99),
    ("TTFT p90 (ms)", 0.9),
    ("single request per scenario (median of three runs after one warm-up)", None),
    ("", None),
])
def test_the_statistic_is_read_from_the_note(note, quantile):
    assert mp.ttft_statistic(note) == quantile


@pytest.mark.parametrize("note, concurrency, run", [
    ("vllm bench serve ... --num-prompts 500 --max-concurrency 128", 128, 500),
    ("random dataset, range ratio 1, 500 of 500 prompts completed, max concurrency 128", 128, 500),
    ("ignore-eos, num-prompts 10x concurrency, request-rate inf", 64, 640),
    ("vllm bench serve result; 100 requests at max concurrency 4", 4, 100),
    ("150 requests at concurrency 8", 8, 150),
    ("AIPerf client benchmark of the NIM container", 25, 250),
    ("--num-prompts 16 --max-concurrency 64", 64, 64),
])
def test_the_run_length_is_read_from_the_note(note, concurrency, run):
    point = mp.Point({"note": note, "concurrency": float(concurrency)})
    assert mp.run_length(point) == run


# --- in the comparison --------------------------------------------------------------------------


def _first(source_id: str, scenario: str) -> mp.Point:
    return next(p for p in mp.public_points() if p["source_id"] == source_id
                and p["scenario"] == scenario and not mp.resolve(p).reason)


def test_a_concurrency_rows_ttft_is_the_statistic_it_states():
    """The same row read as a mean and as a median: the mean carries the burst's long tail,
    so it lies above the median; both above the limit's floor."""
    point = _first("DSTACK-DSR1-H200-MI300X", "concurrency")
    assert mp.ttft_statistic(point["note"]) is None
    median = mp.Point(dict(point.values, note="median TTFT; --num-prompts 500"), point.line)
    as_mean = mp.probe(mp.resolve(point)).predict("estimate")["ttft_ms"]
    as_median = mp.probe(mp.resolve(median)).predict("estimate")["ttft_ms"]
    floor = mp.probe(mp.resolve(point)).predict("limit")["ttft_ms"]
    assert floor < as_median < as_mean


def test_the_limits_ttft_stays_a_floor_of_every_measured_one():
    """Under the limit a row's TTFT is one prompt's arithmetic at peak, whatever statistic the
    row states: no measured TTFT of a rate or concurrency row lies below it."""
    below, compared = [], 0
    for point in mp.public_points():
        if point["scenario"] not in ("rate", "concurrency") or not point["ttft_ms"]:
            continue
        resolved = mp.resolve(point)
        if resolved.reason:
            continue
        limit = mp.probe(resolved).predict("limit")["ttft_ms"]
        compared += 1
        if limit is not None and point["ttft_ms"] < limit:
            below.append((point.point_id, point["ttft_ms"], limit))
    assert compared >= 100 and not below


def test_helper_steps_are_no_candidates():
    """A concurrency row's grid holds a helper step (a prompt's own chunk) per batch that is no
    candidate: the candidates are the engine's budget steps, one per batch and layout."""
    point = _first("AMD-ATOM-NIGHTLY", "concurrency")
    probe = mp.probe(mp.resolve(point))
    assert probe.helper.any()
    found = probe.candidates("estimate")
    assert np.all(found["chunk"] == np.maximum(mp.ENGINE_CHUNK,
                                               found["batch"] * point["input_len"]
                                               / point["output_len"]))


def test_the_concurrency_rows_ttft_misses_less_than_before_the_queueing():
    """The estimate's TTFT on the gathered concurrency rows (python -m
    inference_math.reality.ttft_misses): its median miss factor with the burst, the run and the
    stated statistic is below the one of the rules it replaced (every prompt waiting a budget
    step and riding its chunks, eq-serve-aggregated-ttft; 3.9 against 2.8 when written), and
    the throughputs are the same."""
    from inference_math.reality import ttft_misses
    with ttft_misses.without_queueing():
        before = ttft_misses.misses()
    after = ttft_misses.misses()
    ttft = (before["concurrency"]["ttft_ms"], after["concurrency"]["ttft_ms"])
    assert ttft[0]["points"] == ttft[1]["points"] >= 150
    assert ttft[1]["miss"] < 0.85 * ttft[0]["miss"]
    for scenario in ttft_misses.SCENARIOS:
        assert before[scenario]["output_tok_s_per_gpu"] == after[scenario]["output_tok_s_per_gpu"]

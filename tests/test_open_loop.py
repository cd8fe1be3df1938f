"""Requests at a rate (eq-serve-open-loop-rate, eq-serve-open-loop-step, eq-serve-open-loop-ttft):
Little's law for the decode batch, its fixed point for a linear step, the residual wait of a
prompt, and request-rate points of ``measured`` compared at the batch their rate sustains."""

import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.fullmodel import formulas_numpy as gen
from inference_math.reality import measured_points as mp
from inference_math.serving import serving_rules as sr


def test_the_rate_is_littles_law_solved_for_the_arrivals():
    lam = sr.open_loop_rate().rhs
    # b = Λ·T_out·t̄ holds identically at the derived Λ
    assert sp.simplify(lam * S.t_output * S.t_step_mean - S.b) == 0
    # 64 sequences, 500 tokens each, 20 ms steps: 64 / (500 × 0.02) = 6.4 requests/s
    assert gen.open_loop_rate(64.0, 500.0, 0.02) == pytest.approx(6.4, rel=1e-12)


def test_the_linear_steps_fixed_point_and_its_limits():
    step = sr.open_loop_step().rhs
    batch = S.lam_req * S.t_output * step
    assert sp.simplify(step - (S.t_step_fixed + S.t_step_seq * batch)) == 0
    assert sp.limit(step, S.lam_req, 0) == S.t_step_fixed
    most = 1 / (S.t_output * S.t_step_seq)
    assert sp.limit(step, S.lam_req, most, "-") == sp.oo
    # by hand: 10 ms of weights, 0.1 ms a sequence, 200 tokens at 25 requests/s:
    # t = 0.01 / (1 − 25·200·1e-4) = 0.01 / 0.5 = 20 ms, at a batch of 25·200·0.02 = 100
    value = float(step.subs({S.t_step_fixed: sp.Rational(1, 100),
                             S.t_step_seq: sp.Rational(1, 10000),
                             S.t_output: 200, S.lam_req: 25}))
    assert value == pytest.approx(0.02, rel=1e-12)
    assert 0.01 + 1e-4 * (25 * 200 * value) == pytest.approx(value, rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(fixed=st.floats(1e-4, 0.1), per_seq=st.floats(1e-7, 1e-3), out=st.floats(1, 1e4),
       share=st.floats(0.01, 0.98), more=st.floats(1.001, 1.5))
def test_the_step_grows_with_the_rate(fixed, per_seq, out, share, more):
    """Below the most requests per second, 1/(T_out·t_seq), a higher rate never shortens the
    step, and the step never falls below its fixed part."""
    fn = sp.lambdify((S.t_step_fixed, S.t_step_seq, S.t_output, S.lam_req),
                     sr.open_loop_step().rhs)
    most = 1 / (out * per_seq)
    low, high = share * most, min(share * more, 0.99) * most
    assert fixed <= fn(fixed, per_seq, out, low) <= fn(fixed, per_seq, out, high) * (1 + 1e-12)


def test_a_prompt_waits_the_residual_of_the_step_it_lands_in():
    """b = 32, T_in = 1,000, T_out = 200, C = 8,192: a share 32·1,000/200/8,192 = 0.01953125 of
    the steps carry a chunk. Steps of 20 ms (mixed) and 10 ms: E[t] = 10.1953 ms,
    E[t²] = 1.05859e-4 s², a residual of E[t²]/(2 E[t]) = 5.1916 ms, then one chunked step."""
    f = 32 * 1000 / 200 / 8192
    mean, square = f * 0.02 + (1 - f) * 0.01, f * 0.02**2 + (1 - f) * 0.01**2
    by_hand = square / (2 * mean) + 0.02
    assert by_hand == pytest.approx(0.0251916, rel=1e-5)
    share = gen.chunk_share(32.0, 8192.0, 1000.0, 200.0)
    assert share == f
    assert gen.open_loop_ttft(share, 0.01, 0.02, 1.0) == pytest.approx(by_hand, rel=1e-12)
    # equal steps: half a step's wait (a uniform arrival in a step of fixed length)
    assert gen.open_loop_ttft(share, 0.01, 0.01, 2.0) == \
        pytest.approx(0.005 + 0.02, rel=1e-12)
    # never more than the worst case of eq-serve-aggregated-ttft
    assert by_hand <= gen.aggregated_ttft(0.02, 1.0)


ROW = ("point_id,model,gpu,gpus,weight_bits,tp,scenario,request_rate,input_len,output_len,"
       "tpot_ms\n")


def _point(rate: float, gpus: int = 1):
    text = ROW + f"r,llama-3.1-8b,h100,{gpus},16,1,rate,{rate},1000,200,30\n"
    return mp.parse_points(text)[0]


@pytest.mark.parametrize("curve", ["physical", "limit"])
def test_a_rate_row_runs_at_the_batch_its_rate_sustains(curve):
    """The predicted output rate is the offered one, rate × T_out / GPUs; the steady state's
    batch lies between two grid batches whose Little's-law rates b/(T_out·t̄) bracket the rate
    (recomputed here from their TPOTs); a higher rate is never served faster."""
    speeds, brackets = [], []
    for rate in (0.5, 8.0, 30.0):
        point = _point(rate, gpus=2)  # two replicas of one GPU: half the rate each
        probe = mp.probe(mp.resolve(point))
        got = probe.predict(curve)
        assert got["output_tok_s_per_gpu"] == pytest.approx(rate * 200 / 2, rel=1e-12)
        c = probe.candidates(curve)
        # each batch's step: a whole 1,000-token prompt per mixed step while fewer tokens
        # arrive per step (b·1,000/200 < 1,000), those that arrive once more; under the limit
        # the shorter of that and every step carrying what arrives
        by_batch = {}
        for b, chunk, t in zip(c["batch"], c["chunk"], c["tpot_s"], strict=True):
            engine = chunk == max(b * 5.0, 1000.0)
            if engine or curve == "limit":
                t = t if math.isfinite(t) else math.inf
                by_batch[b] = min(by_batch.get(b, math.inf), t) if curve == "limit" else t
        batches = sorted(by_batch)
        tpots = [by_batch[b] for b in batches]
        rates = [b / (200 * t) for b, t in zip(batches, tpots, strict=True)]
        load = rate / 2
        first = next(k for k, r in enumerate(rates) if r >= load)  # the first batch to carry it
        tpot = 1 / got["tok_s_per_user"]
        if first == 0:  # one sequence at a time already carries it: batch one's step
            assert tpot == pytest.approx(tpots[0], rel=1e-12)
        else:
            assert tpots[first - 1] * (1 - 1e-9) <= tpot <= tpots[first] * (1 + 1e-9)
        brackets.append(first)
        speeds.append(got["tok_s_per_user"])
    assert speeds[0] >= speeds[1] >= speeds[2]
    assert brackets[0] == 0 and brackets[2] > brackets[1] > 0


def test_the_limit_is_at_or_below_the_physical_curve_at_a_rate():
    probe = mp.probe(mp.resolve(_point(4.0)))
    assert probe.predict("limit")["tok_s_per_user"] >= probe.predict("physical")["tok_s_per_user"]


def test_a_rate_beyond_the_instance_gives_its_most_throughput_and_no_times():
    probe = mp.probe(mp.resolve(_point(1e4)))
    got = probe.predict("physical")
    assert got["tok_s_per_user"] is None and got["ttft_ms"] is None
    most = probe.candidates("physical")["output_tok_s_per_gpu"]
    assert got["output_tok_s_per_gpu"] == pytest.approx(max(r for r in most if r > 0))


def test_a_step_carries_a_whole_prompt_when_arrivals_are_sparse():
    """1,000-token prompts: at 10 tokens arriving per step a mixed step carries one whole
    prompt; at 3,000 it carries those 3,000; a 20,000-token prompt goes in 8,192-token chunks."""
    assert mp.rate_chunk(10.0, 1000.0) == 1000.0
    assert mp.rate_chunk(3000.0, 1000.0) == 3000.0
    assert mp.rate_chunk(10.0, 20000.0) == mp.ENGINE_CHUNK == 8192.0


def test_a_run_that_fell_behind_its_arrivals_is_compared_on_throughput():
    """4 req/s of 200 tokens on 2 GPUs bring 400 tokens/s per GPU: a run serving 350 (87.5%)
    fell behind and is judged by its throughput, at the curve's most; one serving 380 (95%)
    kept up and is judged by its speed per user."""
    text = ROW.replace("tpot_ms", "output_tok_s_per_gpu,tpot_ms")
    behind, kept = mp.parse_points(text + "a,llama-3.1-8b,h100,2,16,1,rate,4,1000,200,350,30\n"
                                   + "b,llama-3.1-8b,h100,2,16,1,rate,4,1000,200,380,30\n")
    assert behind.offered == kept.offered == 400.0
    assert behind.overloaded and not kept.overloaded
    assert behind.primary == "output_tok_s_per_gpu" and kept.primary == "tok_s_per_user"
    probe = mp.probe(mp.resolve(behind))
    got = probe.predict("physical")
    assert got["output_tok_s_per_gpu"] == pytest.approx(
        max(probe.candidates("physical")["output_tok_s_per_gpu"]))
    assert got["ttft_ms"] is None and got["tok_s_per_user"] is None

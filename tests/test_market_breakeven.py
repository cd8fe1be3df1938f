"""Market prices against the cost model: break-even throughput and GPU price (Mazurek 2025, Fig. 24).

Expected values are typed from the post's balance or computed by hand, never with the package.
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.symbols import (
    beta_out,
    gamma_in,
    n_gpu,
    price,
    t_output,
    t_prompt,
    tok_rate,
)
from inference_math.derivations import dense_economics as de

ARGS = (n_gpu, price, t_output, beta_out, t_prompt, gamma_in)


def test_breakeven_throughput(assert_same):
    """beta·(gamma·T_in + T_out)·R/T_out = N·P/3600 solved for R."""
    assert_same(de.breakeven_throughput(),
                n_gpu * price * t_output / (3600 * beta_out * (gamma_in * t_prompt + t_output)), ARGS)


def test_breakeven_gpu_price(assert_same):
    assert_same(de.breakeven_gpu_price(),
                3600 * tok_rate * beta_out * (gamma_in * t_prompt + t_output) / (n_gpu * t_output),
                (tok_rate, beta_out, gamma_in, t_prompt, t_output, n_gpu))


def test_lambda_offer_by_hand():
    """$0.30/M out, $0.12/M in (gamma 0.4), 4 GPUs at $2.5/h, 2,035 in / 300 out:
    R = 4·2.5·300/(3600·0.3e-6·(0.4·2035 + 300)) = 2,494 output tokens/s."""
    r = float(de.breakeven_throughput().rhs.subs(
        {n_gpu: 4, price: 2.5, t_output: 300, beta_out: 0.3e-6, t_prompt: 2035, gamma_in: 0.4}))
    assert r == pytest.approx(4 * 2.5 * 300 / (3600 * 0.3e-6 * (0.4 * 2035 + 300)), rel=1e-12)
    assert round(r) == 2494


def test_openrouter_data_file():
    """The shipped Fig. 24 data: six offers, prices as displayed."""
    raw = (resources.files("inference_math") / "data"
           / "openrouter_llama33_70b_providers.csv").read_text()
    rows = list(csv.DictReader(io.StringIO("\n".join(
        line for line in raw.splitlines() if not line.startswith("#")))))
    assert [r["provider"] for r in rows] == ["Lambda", "DeepInfra", "Nebius AI Studio", "NovitaAI",
                                             "Hyperbolic", "Groq"]
    assert [float(r["output_usd_per_mtok"]) for r in rows] == [0.3, 0.3, 0.4, 0.39, 0.4, 0.79]
    assert [float(r["input_usd_per_mtok"]) for r in rows] == [0.12, 0.12, 0.13, 0.39, 0.4, 0.59]
    assert float(rows[-1]["throughput_tok_s"]) == 301.8


@given(st.floats(1e-8, 1e-5), st.floats(0.5, 10), st.floats(0.05, 2))
def test_cheaper_tokens_need_more_throughput(beta, gpu_price, g):
    fn = sp.lambdify(ARGS, de.breakeven_throughput().rhs)
    base = fn(4, gpu_price, 300, beta, 2035, g)
    assert fn(4, gpu_price, 300, beta / 2, 2035, g) == pytest.approx(2 * base, rel=1e-9)
    assert fn(4, 2 * gpu_price, 300, beta, 2035, g) > base
    assert fn(4, gpu_price, 300, beta, 2035, 2 * g) < base  # pricier inputs pay more of the rent


def test_breakeven_gpu_price_by_hand():
    """Lambda's offer at the sweep's best, 1,185.1 output tok/s on 4 GPUs:
    3600·1185.1·0.3e-6·(0.4·2035 + 300)/(4·300) = $1.19 per GPU-hour."""
    value = float(de.breakeven_gpu_price().rhs.subs(
        {tok_rate: 1185.1, beta_out: 0.3e-6, gamma_in: 0.4, t_prompt: 2035, t_output: 300,
         n_gpu: 4}))
    assert value == pytest.approx(3600 * 1185.1 * 0.3e-6 * (0.4 * 2035 + 300) / 1200, rel=1e-12)
    assert round(value, 2) == 1.19


@given(st.floats(1, 1e5), st.floats(1e-8, 1e-5))
def test_breakeven_gpu_price_rises_with_throughput_and_price(rate, beta):
    fn = sp.lambdify((tok_rate, beta_out, gamma_in, t_prompt, t_output, n_gpu),
                     de.breakeven_gpu_price().rhs)
    base = fn(rate, beta, 0.3, 2035, 300, 4)
    assert fn(2 * rate, beta, 0.3, 2035, 300, 4) == pytest.approx(2 * base, rel=1e-9)
    assert fn(rate, 2 * beta, 0.3, 2035, 300, 4) == pytest.approx(2 * base, rel=1e-9)

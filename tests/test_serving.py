"""Serving engines: prefill/decode sizing, prefix caching, speculative sampling."""

from __future__ import annotations

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import (
    accept,
    b,
    b_star,
    flops,
    gamma,
    hbm_bw,
    n_param,
    n_prefix,
    p,
    t_output,
    t_prompt,
)
from inference_math.derivations import serving


def test_prefill_decode_ratio(assert_same):
    """Work per request: T_in·2N/C for prefill over T_out·max(pN/(bB), 2N/C) for decode."""
    expected = t_prompt * 2 * n_param / flops / (
        t_output * sp.Max(p * n_param / (b * hbm_bw), 2 * n_param / flops))
    assert_same(serving.prefill_decode_server_ratio(), expected,
                (t_prompt, t_output, n_param, flops, p, b, hbm_bw))


def test_prefill_decode_ratio_below_critical_batch_is_token_ratio_times_b_over_b_star():
    assert sp.simplify(serving.prefill_decode_ratio_below_critical_batch()
                       - t_prompt * b / (t_output * b_star)) == 0


@given(st.floats(1, 1e5), st.floats(1, 1e5), st.floats(1, 1e4), st.floats(1, 1e4))
def test_ratio_never_exceeds_token_ratio(t_in, t_out, batch, b_crit):
    """Decode can at best be compute bound like prefill, so the ratio is at most T_in/T_out."""
    fn = compile_fn(serving.prefill_decode_server_ratio(),
                    (t_prompt, t_output, n_param, p, flops, hbm_bw, b))
    # choose C so that b* = p·C/(2B) equals b_crit, with p = 2 and B = 1e12
    value = float(fn(t_in, t_out, 7e10, 2, b_crit * 1e12, 1e12, batch))
    assert value <= t_in / t_out * (1 + 1e-12)
    assert np.isclose(value, t_in / t_out * min(batch / b_crit, 1), rtol=1e-9)


def test_prefix_cache_example_of_the_scaling_book():
    """Check 24: a 3-token prompt sharing a 2-token prefix needs 1/3 of the prefill compute."""
    rhs = serving.prefix_cache_fraction().rhs
    assert rhs.subs({t_prompt: 3, n_prefix: 2}) == sp.Rational(1, 3)
    assert rhs.subs(n_prefix, 0) == 1


def test_speculative_tokens_is_the_geometric_series(assert_same):
    """Leviathan et al. (2023): E[tokens] = (1 - alpha^(gamma+1)) / (1 - alpha)."""
    overrides = {accept: lambda rng: rng.uniform(0.01, 0.99, 20),
                 gamma: lambda rng: rng.integers(1, 12, 20)}
    assert_same(serving.speculative_tokens_per_step(),
                (1 - accept ** (gamma + 1)) / (1 - accept), (accept, gamma), overrides=overrides)


def test_speculative_tokens_limits_and_small_cases():
    rhs = serving.speculative_tokens_per_step().rhs
    assert sp.limit(rhs, accept, 0) == 1
    assert sp.simplify(sp.limit(rhs, accept, 1) - (gamma + 1)) == 0
    half = sp.Rational(1, 2)
    assert sp.nsimplify(rhs.subs({accept: half, gamma: 2})) == 1 + half + half**2

"""Prefill sharding (the scaling book's F/2550 rule) and the KV-cache transfer of disaggregation.

Expected values are typed from Austin et al. (2025) or computed by hand, never with the package.
"""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.symbols import (
    b,
    d_ff,
    flops,
    ici_bw,
    kv_bytes,
    n_gpu,
    n_param,
    p_act,
    t_prompt,
    w_xfer,
)
from inference_math.derivations import serving, sharding


def test_prefill_bound_is_2_w_f_over_c_p(assert_same):
    """2·b·D·F/(Y·C) = p_act·b·D/W_ICI solved for Y."""
    eq = sharding.prefill_model_parallelism()
    assert_same(eq, 2 * ici_bw * d_ff / (flops * p_act), (ici_bw, d_ff, flops, p_act))
    assert not eq.rhs.has(b)


def test_alpha_and_the_2550_rule(assert_same):
    """Austin et al. (2025): 'around F / 2550 for 1 axis'. TPU v5p: 4.59e14 FLOP/s bf16 and
    9e10 B/s per link direction (Google Cloud), both directions: 4.59e14/1.8e11 = 2550."""
    assert_same(sharding.ici_intensity_definition(), flops / ici_bw, (flops, ici_bw))
    alpha = float(sharding.ici_intensity_definition().rhs.subs({flops: 4.59e14, ici_bw: 1.8e11}))
    assert alpha == pytest.approx(2550, rel=1e-12)
    ways = float(sharding.prefill_model_parallelism().rhs.subs(
        {ici_bw: 1.8e11, flops: 4.59e14, p_act: 2, d_ff: 16384}))
    assert ways == pytest.approx(16384 / 2550, rel=1e-12)
    assert 4 <= ways <= 8  # "usually around 4-8 way sharding"


@given(st.floats(1e3, 1e5), st.floats(1e13, 1e16), st.floats(1e9, 1e12))
def test_prefill_bound_grows_with_width_and_links_and_falls_with_flops(width, chip_flops, link):
    fn = sp.lambdify((ici_bw, d_ff, flops, p_act), sharding.prefill_model_parallelism().rhs)
    base = fn(link, width, chip_flops, 2)
    assert fn(link, 2 * width, chip_flops, 2) > base
    assert fn(2 * link, width, chip_flops, 2) > base
    assert fn(link, width, 2 * chip_flops, 2) < base


def test_transfer_ratio(assert_same):
    eq = serving.kv_transfer_ratio()
    assert_same(eq, kv_bytes * flops / (2 * n_param * w_xfer), (kv_bytes, flops, n_param, w_xfer))
    assert not eq.rhs.has(t_prompt) and not eq.rhs.has(n_gpu)


def test_transfer_ratio_worked_model_by_hand():
    """262,144 B/token, 3.94e14 FLOP/s, 18.4e9 params, 4.5e10 B/s: 0.0624 (6.24%)."""
    r = float(serving.kv_transfer_ratio().rhs.subs(
        {kv_bytes: 262144, flops: 3.94e14, n_param: 18.4e9, w_xfer: 4.5e10}))
    assert r == pytest.approx(262144 * 3.94e14 / (2 * 18.4e9 * 4.5e10), rel=1e-12)
    assert r == pytest.approx(0.06237, rel=1e-3)


@given(st.floats(1e4, 1e7), st.floats(1e9, 1e12), st.floats(1e9, 1e12))
def test_transfer_ratio_monotone(cache, params, link):
    fn = sp.lambdify((kv_bytes, flops, n_param, w_xfer), serving.kv_transfer_ratio().rhs)
    base = fn(cache, 1e15, params, link)
    assert fn(2 * cache, 1e15, params, link) > base > fn(cache, 1e15, params, 2 * link)

"""One GPU at short context: Erdil (2025), section 2.1, eqs. 1-2 and the critical batch."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import b, flops, hbm_bw, n_param, p
from inference_math.derivations import roofline

ARGS = (p, n_param, hbm_bw, flops, b)

# Typed from the paper, section 2.1.
MEMORY_TIME = p * n_param / hbm_bw  # read every weight once
ARITHMETIC_TIME = 2 * n_param * b / flops  # 2 FLOP per weight per sequence

positive_b = st.floats(1e11, 1e14)  # HBM bandwidth, bytes/s
positive_c = st.floats(1e13, 1e17)  # FLOP/s
n_params = st.floats(1e8, 2e12)
bytes_per_param = st.sampled_from([0.5, 1.0, 2.0, 4.0])
batches = st.floats(1.0, 1e5)
factors = st.floats(1.0, 1e3)


def test_memory_and_arithmetic_time_match_section_2_1():
    """Erdil (2025) sec. 2.1: memory time p·N/B, arithmetic time 2·N·b/C."""
    assert sp.simplify(roofline.memory_time() - MEMORY_TIME) == 0
    assert sp.simplify(roofline.arithmetic_time() - ARITHMETIC_TIME) == 0
    assert roofline.FLOP_PER_PARAM == 2


def test_token_latency_is_max_of_memory_and_arithmetic_time(assert_same):
    """Erdil (2025) eq. 1: t_token = max(p·N/B, 2·N·b/C)."""
    expected = sp.Max(p * n_param / hbm_bw, 2 * n_param * b / flops)
    assert_same(roofline.token_latency(), expected, ARGS)


def test_gpu_seconds_per_token_is_latency_over_batch(assert_same):
    """Erdil (2025) eq. 2: c_token = max(p·N/(B·b), 2·N/C)."""
    expected = sp.Max(p * n_param / (hbm_bw * b), 2 * n_param / flops)
    assert_same(roofline.gpu_seconds_per_token(), expected, ARGS)


def test_gpu_seconds_equal_token_latency_divided_by_batch(assert_same):
    """Erdil (2025) eq. 2 from eq. 1: one GPU serves b tokens per step (identity)."""
    latency = sp.Max(p * n_param / hbm_bw, 2 * n_param * b / flops)
    # SymPy cannot move a positive divisor inside Max, so this identity is checked numerically;
    # the distributed form is checked symbolically in the test above.
    assert_same(roofline.gpu_seconds_per_token(), latency / b, ARGS, simplify=False)


def test_critical_batch_is_pC_over_2B(assert_same):
    """Erdil (2025) sec. 2.1: b* = p·C/(2·B)."""
    assert_same(roofline.critical_batch(), p * flops / (2 * hbm_bw), (p, flops, hbm_bw))


def test_memory_time_equals_arithmetic_time_at_critical_batch():
    """Definition of b* (Erdil 2025 sec. 2.1): the two roofline terms coincide there."""
    b_star = roofline.critical_batch().rhs
    assert sp.simplify(MEMORY_TIME - ARITHMETIC_TIME.subs(b, b_star)) == 0


def test_critical_batch_of_h100_at_16_bit_is_about_300():
    """Erdil (2025) sec. 2.1 formula by hand with the paper's H100 figures (p = 2, C = 1e15
    FLOP/s, B = 3.3e12 B/s): b* = C/B ≈ 303 sequences."""
    b_star = roofline.critical_batch().rhs.subs({p: 2, flops: 1e15, hbm_bw: 3.3e12})
    assert float(b_star) == pytest.approx(1e15 / 3.3e12, rel=1e-12)
    assert round(float(b_star)) == 303


def test_regimes_around_critical_batch_are_the_two_roofline_terms(assert_same):
    """Erdil (2025) sec. 2.1: memory bound below b*, compute bound above."""
    regimes = roofline.regimes_around_critical_batch()
    assert_same(regimes["latency_below"], p * n_param / hbm_bw, ARGS)
    assert_same(regimes["cost_below"], p * n_param / (hbm_bw * b), ARGS)
    assert_same(regimes["latency_above"], 2 * n_param * b / flops, ARGS)
    assert_same(regimes["cost_above"], 2 * n_param / flops, ARGS)


def test_at_critical_batch_cost_is_the_floor_and_latency_the_memory_time():
    """Erdil (2025) sec. 2.1: b* reaches the cost floor 2N/C without raising latency."""
    b_star = roofline.critical_batch().rhs
    latency = roofline.token_latency().rhs.subs(b, b_star)
    cost = roofline.gpu_seconds_per_token().rhs.subs(b, b_star)
    assert sp.simplify(latency - p * n_param / hbm_bw) == 0
    assert sp.simplify(cost - 2 * n_param / flops) == 0


_latency = compile_fn(roofline.token_latency(), ARGS)
_cost = compile_fn(roofline.gpu_seconds_per_token(), ARGS)


@given(bytes_per_param, n_params, positive_b, positive_c, batches, factors)
def test_single_gpu_latency_non_increasing_in_bandwidth_and_flops(pp, n, bw, c, bb, k):
    """Erdil (2025) eq. 1: more bandwidth or FLOP/s never makes a step slower."""
    base = _latency(pp, n, bw, c, bb)
    assert _latency(pp, n, bw * k, c, bb) <= base
    assert _latency(pp, n, bw, c * k, bb) <= base


@given(bytes_per_param, n_params, positive_b, positive_c, batches, factors)
def test_single_gpu_latency_non_decreasing_and_cost_non_increasing_in_batch(pp, n, bw, c, bb, k):
    """Erdil (2025) eqs. 1-2: batching never speeds a step up, never makes a token dearer."""
    assert _latency(pp, n, bw, c, bb * k) >= _latency(pp, n, bw, c, bb)
    assert _cost(pp, n, bw, c, bb * k) <= _cost(pp, n, bw, c, bb) * (1 + 1e-12)


@given(bytes_per_param, n_params, positive_b, positive_c, batches)
def test_single_gpu_cost_never_below_arithmetic_floor(pp, n, bw, c, bb):
    """Erdil (2025) eq. 2: GPU-seconds per token are at least 2·N/C."""
    assert _cost(pp, n, bw, c, bb) >= 2 * n / c * (1 - 1e-12)

"""Mixture-of-experts parameter counts: Erdil (2025), section 3.2, eqs. 20-22."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.numeric import compile_fn
from inference_math.core.symbols import b, n_attn, n_ff, n_unembed, s
from inference_math.derivations import moe
from inference_math.presets.models import get_model

TOTAL = n_attn + n_ff + n_unembed  # eq. 20
ACTIVE = n_attn + n_ff / s + n_unembed  # eq. 21
READ = n_attn + (1 - (1 - 1 / s) ** b) * n_ff + n_unembed  # eq. 22
ARGS = (n_attn, n_ff, n_unembed, s, b)
SPARSE = {s: lambda rng: 1 + 10 ** rng.uniform(-3, 3, 20)}  # s > 1


def test_total_params(assert_same):
    """Erdil (2025) eq. 20: N = N_attn + N_ff + N_unembed."""
    assert_same(moe.total_params(), TOTAL, ARGS)


def test_active_params(assert_same):
    """Erdil (2025) eq. 21: N_active = N_attn + N_ff/s + N_unembed."""
    assert_same(moe.active_params(), ACTIVE, ARGS)


def test_params_read(assert_same):
    """Erdil (2025) eq. 22: N_read = N_attn + (1 − (1 − 1/s)^b)·N_ff + N_unembed."""
    assert_same(moe.params_read(), READ, ARGS, overrides=SPARSE)


def test_expert_fraction_read_is_one_minus_idle_probability(assert_same):
    """Erdil (2025) sec. 3.2: an expert is idle for all b tokens with probability (1 − 1/s)^b."""
    assert_same(moe.expert_fraction_read(), 1 - (1 - 1 / s) ** b, (s, b), overrides=SPARSE)
    assert sp.simplify(moe.expert_fraction_read().subs(b, 1) - 1 / s) == 0


def test_params_read_tends_to_total_as_batch_grows():
    """Erdil (2025) eq. 22, b → ∞ (s > 1): every expert is read, N_read → N."""
    read = moe.params_read().rhs.subs(s, s + 1)  # s + 1 > 1 for positive s
    assert sp.simplify(sp.limit(read, b, sp.oo) - TOTAL) == 0


def test_params_read_of_a_dense_model_is_total():
    """Erdil (2025) eq. 22, s → 1+: a dense model reads every weight."""
    assert sp.simplify(sp.limit(moe.params_read().rhs, s, 1, dir="+") - TOTAL) == 0


def test_params_read_by_one_token_are_the_active_params():
    """Erdil (2025) eqs. 21-22, b = 1: one token reads exactly its active parameters."""
    assert sp.simplify(moe.params_read().rhs.subs(b, 1) - ACTIVE) == 0


def test_packaged_limits_agree_with_eqs_20_and_21():
    """Erdil (2025) eq. 22: params_read_limits() gives N, N and N_active."""
    limits = moe.params_read_limits()
    assert sp.simplify(limits["batch_to_infinity"] - TOTAL) == 0
    assert sp.simplify(limits["dense"] - TOTAL) == 0
    assert sp.simplify(limits["single_token"] - ACTIVE) == 0


def test_half_experts_batch(assert_same):
    """This book from Erdil (2025) eq. 22: (1 − 1/s)^b = 1/2 at b = −log 2/log(1 − 1/s)."""
    assert_same(moe.half_experts_batch(), -sp.log(2) / sp.log(1 - 1 / s), (s,), overrides=SPARSE)


def test_half_of_the_experts_are_read_at_the_half_experts_batch():
    """Identity: 1 − (1 − 1/s)^b_half = 1/2, checked at 20 random s > 1."""
    b_half = compile_fn(moe.half_experts_batch(), (s,))
    rng = np.random.default_rng(0)
    sparsity = 1 + 10 ** rng.uniform(-3, 3, 20)
    np.testing.assert_allclose(1 - (1 - 1 / sparsity) ** b_half(sparsity), 0.5, rtol=1e-10)


def test_half_experts_batch_is_about_s_ln_2():
    """Erdil (2025) eq. 22: b_1/2 / (s·ln 2) → 1 as s → ∞ (Mixtral s = 4: ≈ 2.4 sequences)."""
    b_half = moe.half_experts_batch().rhs
    assert sp.limit(b_half / (s * sp.log(2)), s, sp.oo) == 1
    assert float(b_half.subs(s, 4)) == pytest.approx(-math.log(2) / math.log(0.75), rel=1e-12)


# --- monotonicity and bounds (hypothesis) ----------------------------------------------------

_read = compile_fn(moe.params_read(), ARGS)
_active = compile_fn(moe.active_params(), ARGS)
_total = compile_fn(moe.total_params(), ARGS)

counts = st.tuples(
    st.floats(1e6, 1e11),  # N_attn
    st.floats(1e6, 2e12),  # N_ff
    st.floats(0.0, 2e9).map(lambda x: x + 1.0),  # N_unembed
    st.floats(1.0, 300.0),  # s (1 = dense)
)
batches = st.floats(1.0, 1e5)
ROUNDING = 1e-12


@given(counts, batches, st.floats(1.0, 1e3))
def test_params_read_non_decreasing_in_batch(count, bb, k):
    """Erdil (2025) eq. 22: a bigger batch never reads fewer experts."""
    assert _read(*count, bb * k) >= _read(*count, bb) * (1 - ROUNDING)


@given(counts, batches)
def test_params_read_between_active_and_total(count, bb):
    """Erdil (2025) eqs. 20-22: N_active <= N_read <= N for b >= 1."""
    read = _read(*count, bb)
    assert _active(*count, bb) * (1 - ROUNDING) <= read <= _total(*count, bb) * (1 + ROUNDING)


def test_mixtral_reads_active_params_at_one_token_and_almost_all_at_large_batch():
    """Erdil (2025) eq. 22 on Mixtral 8x22B (s = 4): ~39B at b = 1, ~141B for b ≫ s."""
    model = get_model("mixtral-8x22b")
    parts = (model.attention_params, model.ff_params, model.embedding_params, model.sparsity)
    assert model.sparsity == 4
    assert abs(float(_read(*parts, 1.0)) / 39e9 - 1) < 0.015
    assert abs(float(_read(*parts, 1e3)) / 141e9 - 1) < 0.015

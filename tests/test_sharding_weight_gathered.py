"""Weight-gathered MLP layouts and the communication frontier (notes on Pope et al. 2023).

Expected values are typed from the notes' layouts (which tensors are gathered over which chips)
or are identities and hand calculations, never re-derived with the package.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.symbols import (
    b,
    d_ff,
    d_model,
    n_gpu,
    n_wg,
    n_wg_next,
    net_bw,
    seq_q,
)
from inference_math.core.validation import InputError
from inference_math.derivations import sharding

E, F, N, W, T = d_model, d_ff, n_gpu, net_bw, seq_q

# PaLM 540B (Chowdhery et al. 2022) on a 4x4x4 TPU v4 slice, bf16 elements over 270 GB/s.
PALM_E, PALM_F, CHIPS, NET = 18432, 73728, 64, 270e9 / 2


def test_weight_gathered_cost_is_the_per_chip_results(assert_same):
    """Two weight matrices end with E·F·N/n elements per chip; two activation collectives with
    b·T·E/N each (the notes' B_x L E_yz for N = X, B_xy L E_z for N = XY)."""
    typed = (2 * E * F * n_wg / N + 2 * b * T * E / n_wg) / W
    assert_same(sharding.comm_time_weight_gathered(), typed, (E, F, n_wg, N, b, T, W))


def test_xyz_is_constant(assert_same):
    """The notes: XYZ-weight-gathered has 'a constant communication cost', 2·E·F elements."""
    eq = sharding.comm_time_xyz_weight_gathered()
    assert_same(eq, 2 * E * F / W, (E, F, W))
    assert not eq.rhs.has(b) and not eq.rhs.has(T) and not eq.rhs.has(N)


def test_optimal_group_and_time(assert_same):
    assert_same(sharding.optimal_gather_group(), sp.sqrt(b * T * N / F), (b, T, N, F))
    assert_same(sharding.optimal_comm_time_weight_gathered(),
                4 * E * sp.sqrt(b * T * F / N) / W, (b, T, N, F, E, W))


def test_switch_points_closed_forms(assert_same):
    assert_same(sharding.switch_tokens_between_groups(), F * n_wg * n_wg_next / N,
                (F, n_wg, n_wg_next, N))
    assert_same(sharding.switch_tokens_to_xyz(), F * n_wg * (N - n_wg) / N, (F, n_wg, N))
    assert_same(sharding.switch_tokens_optimal_layouts(), E, (E,))
    x_star = sp.sqrt(N * E / F)
    assert_same(sharding.switch_tokens_2d_to_weight_gathered(),
                F * n_wg ** 2 * x_star / (N * (2 * n_wg - x_star)), (F, n_wg, N, E),
                overrides={n_wg: lambda rng: 10 ** rng.uniform(2, 3, 20),
                           N: lambda rng: 10 ** rng.uniform(0, 2, 20),
                           E: lambda rng: 10 ** rng.uniform(0, 1, 20),
                           F: lambda rng: 10 ** rng.uniform(1, 2, 20)})


def test_palm_frontier_switch_points_by_hand():
    """PaLM 540B on 64 chips, 4x4x4 mesh: X = 4, XY = 16. By hand: 2-D (X = 4, YZ = 16) costs
    b·T·E/2 + 2·b·T·F/16 = b·T·E; X-WG costs E·F/8 + b·T·E/2; they tie at b·T = E·F/(4E) = 18,432.
    X-WG and XY-WG tie at F·4·16/64 = 73,728; XY-WG and XYZ at F·16·48/64 = 884,736."""
    sub = {E: PALM_E, F: PALM_F, N: CHIPS}
    assert float(sharding.switch_tokens_2d_to_weight_gathered().rhs.subs(sub).subs(n_wg, 4)) \
        == pytest.approx(18432)
    assert float(sharding.switch_tokens_between_groups().rhs.subs(sub).subs(
        {n_wg: 4, n_wg_next: 16})) == 73728
    assert float(sharding.switch_tokens_to_xyz().rhs.subs(sub).subs(n_wg, 16)) == 884736


def test_numeric_times_at_palm():
    """At b·T = 18,432 the 2-D optimum and X-WG both cost E·18,432 elements: 2.517 ms."""
    times = sharding.mlp_comm_times_elements(np.array([18432.0]), CHIPS, PALM_E, PALM_F, NET,
                                             (4, 16))
    want = PALM_E * 18432 / NET
    assert times["2D"][0] == pytest.approx(want, rel=1e-12)
    assert times[4][0] == pytest.approx(want, rel=1e-12)
    assert times["XYZ"][0] == pytest.approx(2 * PALM_E * PALM_F / NET, rel=1e-12)
    assert times["1D"][0] == pytest.approx(2 * 18432 * PALM_E / NET, rel=1e-12)


def test_bad_inputs():
    with pytest.raises(InputError):
        sharding.mlp_comm_times_elements(1.0, 64, PALM_E, PALM_F, NET, (64,))
    with pytest.raises(InputError):
        sharding.mlp_comm_times_elements(-1.0, 64, PALM_E, PALM_F, NET, (4,))


@given(st.floats(1, 1e7), st.floats(1, 1e7), st.sampled_from([16, 64, 256]))
def test_optimal_group_is_a_lower_bound_and_grows(tokens_a, tokens_b, chips):
    """Every gather group costs at least the optimum, and the optimal group grows with tokens."""
    lo, hi = sorted((tokens_a, tokens_b))
    sub = {E: PALM_E, F: PALM_F, N: chips, W: NET, T: 1}
    best = float(sharding.optimal_comm_time_weight_gathered().rhs.subs(sub).subs(b, lo))
    for group in (1, 2, 4, 8, chips / 2):
        cost = float(sharding.comm_time_weight_gathered().rhs.subs(sub).subs({b: lo, n_wg: group}))
        assert cost >= best * (1 - 1e-12)
    group_fn = sharding.optimal_gather_group().rhs.subs(sub)
    assert float(group_fn.subs(b, hi)) >= float(group_fn.subs(b, lo))


@given(st.floats(1.5, 6), st.floats(1.5, 6))
def test_larger_group_wins_above_the_switch(exp_small, exp_ratio):
    """Past eq-sharding-wg-switch-groups the larger group is cheaper, before it the smaller."""
    small = 2 ** exp_small
    large = small * 2 ** exp_ratio
    chips = large * 2
    sub = {E: PALM_E, F: PALM_F, N: chips, W: NET, T: 1}
    switch = float(sharding.switch_tokens_between_groups().rhs.subs(sub).subs(
        {n_wg: small, n_wg_next: large}))
    cost = sharding.comm_time_weight_gathered().rhs.subs(sub)
    for factor, larger_wins in ((2.0, True), (0.5, False)):
        at = {b: switch * factor}
        c_small = float(cost.subs(at).subs(n_wg, small))
        c_large = float(cost.subs(at).subs(n_wg, large))
        assert (c_large < c_small) == larger_wins
    assert math.isfinite(switch)


def test_optimal_group_and_time_at_palm_switch():
    """At b·T = E = 18,432 on 64 chips: N* = sqrt(18432·64/73728) = 4, and the least time is
    4·E·sqrt(E·F/n)/W = 4·18432·sqrt(18432·73728/64)/W = E²/W (= the 2-D optimum there)."""
    sub = {E: PALM_E, F: PALM_F, N: CHIPS, T: 1, b: PALM_E}
    assert float(sharding.optimal_gather_group().rhs.subs(sub)) == pytest.approx(4, rel=1e-12)
    t = float(sharding.optimal_comm_time_weight_gathered().rhs.subs(sub).subs(W, NET))
    assert t == pytest.approx(PALM_E**2 / NET, rel=1e-12)

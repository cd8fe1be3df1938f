"""The full model (Erdil 2025, section 3) against independent values.

Independent values: expressions typed fresh from the paper and the reference code's description,
and the reference code's own per-point latencies (``latency_recomputed_s`` of its frontier CSVs,
printed to 6 significant digits) and its maximum-speed and preferred points.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from inference_math import get_gpu, get_model
from inference_math.core import symbols as S
from inference_math.core.numeric import compile_fn
from inference_math.fullmodel import collectives as coll
from inference_math.fullmodel import comparisons as C
from inference_math.fullmodel import full_model as fm

US = 1e-6


def test_ll_all_reduce_latency_is_paper_eq_23():
    # Eq. 23: 6.8 us + 1.2 us (ranks per node - 1) + 10 us log2(nodes) for an LL all-reduce
    ll = coll.PROTOCOLS[0]
    lat = coll.protocol_latency().rhs.subs(coll.ALL_REDUCE).subs(ll.values())
    expected = (sp.Rational(68, 10) + sp.Rational(12, 10) * (S.n_ranks / S.n_nodes_c - 1)
                + 10 * sp.log(S.n_nodes_c, 2)) / 10**6
    assert sp.simplify(lat - expected) == 0


def test_ll_intranode_bandwidth_is_paper_eq_24():
    # within one node an LL all-reduce moves (n-1)/n of the message at 0.5 x 225 GB/s = 112.5 GB/s
    h100 = get_gpu("h100")
    bw = coll.protocol_bandwidth_time().rhs.subs(coll.ALL_REDUCE).subs(coll.PROTOCOLS[0].values())
    fn = compile_fn(bw, (S.n_ranks, S.n_nodes_c, S.msg_bytes, S.bw_ar_intra, S.bw_ar_inter))
    ranks, size = 8.0, 1e6
    got = fn(ranks, 1.0, size, h100.intranode_allreduce_bandwidth, h100.internode_allreduce_bandwidth)
    assert got == pytest.approx((ranks - 1) / ranks * size / 112.5e9, rel=1e-12)


def test_collective_is_free_on_one_rank_and_cheapest_protocol_otherwise():
    expr = coll.nccl_time().rhs.subs(coll.ALL_REDUCE)
    args = (S.n_ranks, S.n_nodes_c, S.msg_bytes, S.bw_ar_intra, S.bw_ar_inter)
    fn = compile_fn(expr, args)
    assert fn(1.0, 1.0, 1e9, 225e9, 25e9) == 0
    # a tiny message: LL wins (base 6.8 us + 7 x 1.2 us on 8 ranks of a node)
    assert fn(8.0, 1.0, 8.0, 225e9, 25e9) == pytest.approx((6.8 + 7 * 1.2) * US + 7 / 8 * 8 / 112.5e9)
    # a huge message: Simple wins (full bandwidth)
    big = 1e10
    assert fn(8.0, 1.0, big, 225e9, 25e9) == pytest.approx(2 * 7 * 28 * US + 7 / 8 * big / 225e9)


@given(st.floats(1.5, 1e4), st.floats(1.0, 64.0), st.floats(1.0, 1e9), st.floats(1.0, 1e9))
def test_collective_time_grows_with_the_message(ranks, nodes, small, extra):
    nodes = min(nodes, ranks)
    expr = coll.nccl_time().rhs.subs(coll.ALL_REDUCE)
    fn = compile_fn(expr, (S.n_ranks, S.n_nodes_c, S.msg_bytes, S.bw_ar_intra, S.bw_ar_inter))
    assert fn(ranks, nodes, small + extra, 225e9, 25e9) >= fn(ranks, nodes, small, 225e9, 25e9)


def test_matmul_bytes_on_one_gpu_count_weights_inputs_outputs_once():
    rw = fm.matmul_bytes().rhs.subs(S.n_tp, 1)
    expected = S.mm_m * S.mm_k * S.p + (S.mm_k + S.mm_m) * S.mm_n * S.p_act
    assert sp.simplify(rw - expected) == 0


@given(st.floats(1.0, 4096.0), st.floats(1.0, 4096.0), st.floats(1.0, 2.0**16))
def test_matmul_replication_is_between_1_and_tp(tp, m_over_k, n_tokens):
    fn = compile_fn(fm.matmul_bytes(), (S.mm_m, S.mm_k, S.mm_n, S.n_tp, S.p, S.p_act))
    m, k = 1024.0 * m_over_k, 1024.0
    got = fn(m, k, n_tokens, tp, 0.0, 1.0)  # activations only
    single = (m + k) * n_tokens
    assert single * (1 - 1e-12) <= got <= tp * single * (1 + 1e-12)


def test_forward_flops_at_one_token_is_twice_the_active_parameters():
    for key in ("llama-3-70b", "mixtral-8x22b", "deepseek-v3-paper"):
        model = get_model(key)
        flops = fm.forward_flops_fn(model)(3.0, 1.0, 0.0)
        assert flops == pytest.approx(2 * model.active_params * 3.0, rel=1e-12)


def test_attention_flops_grow_with_context_as_four_d_head_n_q_layers():
    model = get_model("llama-3-70b")
    fn = fm.forward_flops_fn(model)
    assert fn(1.0, 1.0, 1000.0) - fn(1.0, 1.0, 0.0) == pytest.approx(4 * 128 * 64 * 80 * 1000)


def test_expert_parallel_rule():
    mixtral = get_model("mixtral-8x22b")  # s = 4: EP from a micro-batch of 8
    assert fm.expert_parallel_value(mixtral, 32.0, 7.9) == 1.0
    assert fm.expert_parallel_value(mixtral, 32.0, 8.0) == 8.0
    assert fm.expert_parallel_value(mixtral, 5.0, 100.0) == 5.0
    assert fm.expert_parallel_value(get_model("llama-3-70b"), 32.0, 1e4) == 1.0


def test_single_gpu_without_pipeline_has_no_network_time():
    branch = fm.compile_branch(get_model("llama-3-8b"), get_gpu("h100"), False)
    assert branch["network"](1.0, 16.0, 1.0, 1.0) == 0
    kernel = branch["kernel"](1.0, 16.0, 1.0, 1.0)
    assert kernel == pytest.approx(4 * 32 * 4e-6)


def test_branch_is_infeasible_when_weights_do_not_fit():
    branch = fm.compile_branch(get_model("llama-3-70b"), get_gpu("h100"), False)
    # 141 GB of 16-bit weights on one 80 GB GPU
    assert np.isinf(branch["latency"](1.0, 1.0, 1.0, 1.0))
    assert np.isfinite(branch["latency"](2.0, 1.0, 1.0, 1.0))
    # a pipeline deeper than the batch is not allowed either
    assert np.isinf(branch["latency"](8.0, 2.0, 4.0, 1.0))


CSV_CASES = [
    ("quantization_comparison", "Llama 3 70B 8-bit"),
    ("gpus_comparison", "V100"),
    ("all_models_comparison", "Mixtral 8x22B 16-bit"),
    ("all_models_comparison", "DeepSeek-V3 8-bit"),
    ("all_models_comparison", "GPT-4 16-bit (speculative)"),
    ("mistral_large_comparison", "Long context"),
    ("all_models_comparison_with_spec_dec", "Llama 3 70B 8-bit"),
    ("deepseek_v3_context_len_comparison", "Long context with speculative decoding"),
]


@pytest.mark.parametrize(("comparison", "label"), CSV_CASES)
def test_branch_latency_matches_the_reference_code_point_by_point(comparison, label):
    setting = C.settings(comparison)[label]
    ref = C.reference_frontier(comparison, label)
    ours = np.empty(ref["gpus"].size)
    for layout in (0.0, 1.0):
        for gamma in np.unique(ref["gamma"]):
            here = (ref["two_d"] == layout) & (ref["gamma"] == gamma)
            if not here.any():
                continue
            branch = fm.compile_branch(setting.model, setting.gpu, bool(layout), gamma,
                                       setting.context, setting.w)
            ours[here] = branch["latency"](ref["gpus"][here], ref["batch_size"][here],
                                           ref["n_pp"][here], ref["attn_scaledown"][here])
    finite = np.isfinite(ours)
    # the CSV prints N with 6 digits: a point at the memory-fit edge can round below it
    need = setting.w * setting.model.total_params
    edge = np.abs(ref["gpus"] * setting.gpu.hbm_bytes / need - 1) < 1e-5
    assert np.all(finite | edge)
    rel = np.abs(ours[finite] / ref["target_fwd_latency_s"][finite] - 1)
    # 6 significant digits in the CSV's inputs and outputs: ~1e-5; allow 1e-3
    assert np.median(rel) < 1e-5
    assert rel.max() < 1e-3

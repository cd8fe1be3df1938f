"""The book's physical rules and the limit (inference_math.fullmodel.physical_rules): each correction
against a hand calculation from the configs and datasheets, the identities that tie them to the
reference terms, and the properties the search relies on."""

from __future__ import annotations

import math
from dataclasses import replace
from importlib import resources

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.fullmodel import branch as fb
from inference_math.fullmodel import collectives as coll
from inference_math.fullmodel import full_model as fm
from inference_math.fullmodel import physical_rules as phys
from inference_math.fullmodel import search as search_mod
from inference_math.presets.hardware import get_gpu
from inference_math.presets.models import get_model
from inference_math.serving.predict import Deployment, predict

US = 1e-6
# NCCL's protocols in the reference code (LL, LL128, Simple): latency per rank, per node
# doubling, base (s), bandwidth fraction: typed again from Erdil's notebook for the hand checks
PROTOCOLS = ((0.6 * US, 5 * US, 6.8 * US, 0.5), (1.25 * US, 8.5 * US, 14 * US, 0.95),
             (28 * US, 28 * US, 0.0, 1.0))


def nccl_all_reduce_one_node(ranks: int, message: float, intra: float) -> float:
    """An all-reduce inside one node by hand: 2·(ranks − 1)·a + t0 + M·(ranks − 1)/(ranks·f·W)."""
    return min(2 * (ranks - 1) * a + base + message * (ranks - 1) / (ranks * f * intra)
               for a, _, base, f in PROTOCOLS)


def test_latency_with_nothing_hidden_is_the_reference_latency():
    """eq-phys-forward-latency at ω = 0 is eq-full-forward-latency; at ω = 1 the network enters
    the maximum."""
    eq = phys.forward_latency().rhs
    assert sp.simplify(eq.subs(S.omega_net, 0) - fm.forward_latency().rhs) == 0
    full = eq.subs(S.omega_net, 1)
    values = {S.t_kernel: 1e-6, S.n_layers: 10, S.t_net: 3.0, S.t_mem: 2.0, S.t_flop: 1.0}
    assert float(full.subs(values)) == pytest.approx(4 * 10 * 1e-6 + 3.0)


def test_kv_copies_by_hand():
    """Qwen3-235B's 4 KV heads over 8 GPUs: each held twice; MLA's latent: on all 8."""
    gqa, mla = phys.kv_copies_eq().rhs, phys.kv_copies_eq(mla=True).rhs
    at = {fm.N_TP_ATTN: 8, S.n_q: 64, S.g: 16}
    assert gqa.subs(at) == 2
    assert mla.subs(at) == 8
    assert gqa.subs({fm.N_TP_ATTN: 2, S.n_q: 64, S.g: 16}) == 1  # never below one copy


def test_feed_forward_all_reduce_is_one_vector_per_token():
    """Qwen3-235B-A22B decoding a batch of 8 on 8 H100 (TP 8): 8 sequences < 2·s = 32, so no
    expert parallelism; each of the 94 layers all-reduces one 4,096-wide 16-bit vector per
    token (the reference: 8 of them, one per active expert)."""
    model, gpu = get_model("qwen3-235b-a22b"), get_gpu("h100")
    assert model.sparsity == 16
    args = (8.0, 8.0, 1.0, 1.0)
    message = 4096 * 8 * 2
    by_hand = 94 * nccl_all_reduce_one_node(8, message, 225e9)
    physical = fm.compile_branch(model, gpu, False, curve="physical")["network_rest"](*args)
    paper = fm.compile_branch(model, gpu, False, curve="paper")["network_rest"](*args)
    assert float(physical) == pytest.approx(by_hand, rel=1e-9)
    assert float(paper) == pytest.approx(94 * nccl_all_reduce_one_node(8, 8 * message, 225e9),
                                         rel=1e-9)


def test_expert_parallelism_follows_tokens_in_flight():
    """One prompt of 2,048 tokens is 2,048 ≥ 2·16 tokens in flight: expert-parallel over 8."""
    model = get_model("qwen3-235b-a22b")
    assert fm.expert_parallel_value(model, 8, 1, q=2048) == 8
    assert fm.expert_parallel_value(model, 8, 1) == 1  # the reference rule counts sequences
    rule = phys.expert_parallel_degree().rhs
    assert rule.subs({S.n_tp: 8, S.n_experts: 128, S.b_mu: 1, S.q_len: 2048, S.s: 16}) == 8


def test_the_all_to_all_pushes_its_inter_node_share_through_its_own_nic():
    """8 ranks over 2 nodes, NVLink not limiting, attention groups of one GPU (σ = 16): each
    GPU sends half its message M through its NIC (one direction 2·W_inter): M/(2·2·W). The
    reference's ring share is 4× smaller."""
    message, inter = 1e6, 25e9
    at = {S.msg_bytes: message, S.n_ranks: 8, S.n_nodes_c: 2, S.bw_ar_intra: sp.oo,
          S.bw_ar_inter: inter, S.bw_eff: 1, S.h_coll: sp.Rational(1, 2), S.sigma_attn: 16}
    physical = float(coll.all_to_all_bandwidth_time().rhs.subs(at))
    reference = float(coll.protocol_bandwidth_time().rhs.subs(at))
    assert physical == pytest.approx(message * (2 - 1) / 2 / (2 * inter))
    assert physical / reference == pytest.approx(8 / 2)


def test_deepseek_v3_on_eight_h200_by_hand():
    """A hand check: TTFT about 49 ms with memory binding, about 264 sequences fit under TP
    attention (the 576-value latent on all 8 GPUs) in an engine's 90% of the HBM (351 in all of
    it), thousands with data-parallel attention."""
    model, gpu = get_model("deepseek-v3"), get_gpu("h200")
    dep = dict(tp=8, batch=64, input_len=2048, output_len=512, curve="physical")
    tp_attention = predict(Deployment(model, gpu, **dep))
    dp_attention = predict(Deployment(model, gpu, dp_attention=True, **dep))
    assert tp_attention.binding_prefill == "memory"
    assert tp_attention.ttft_ms == pytest.approx(49, rel=0.10)
    # HBM left beside the weights in an engine's 90% of 141 GB an H200
    free = 0.9 * 8 * 141e9 - model.weights_bytes
    per_sequence = 61 * 576 * 2 * (2048 + 256)
    assert tp_attention.max_batch == pytest.approx(free / (8 * per_sequence), rel=0.02)
    # data-parallel attention: every GPU also holds attention's FP8 weights (61 layers of MLA
    # projections: q 7,168×1,536 and 1,536×128·192, kv 7,168×576 and 512×128·256, o 16,384×7,168),
    # the shared experts (58 layers × 3 × 7,168 × 2,048) and the 3 dense layers' feed-forward
    # blocks (3 × 3 × 7,168 × 18,432): seven more copies of each
    attention = 61 * (7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256
                      + 128 * 128 * 7168)
    shared = 58 * 3 * 7168 * 2048
    dense = 3 * 3 * 7168 * 18432
    free_dp = free - 7 * (attention + shared + dense)
    assert dp_attention.max_batch == pytest.approx(free_dp / per_sequence, rel=0.02)
    paper = predict(Deployment(model, gpu, **{**dep, "curve": "paper"}))
    assert paper.binding_prefill == "network bandwidth" and paper.ttft_ms > 100


def test_qwen3_235b_on_eight_h100_by_hand():
    model, gpu = get_model("qwen3-235b-a22b"), get_gpu("h100")
    result = predict(Deployment(model, gpu, tp=8, batch=64, input_len=2048, output_len=512,
                                curve="physical"))
    assert result.ttft_ms == pytest.approx(52, rel=0.10)
    assert result.binding_prefill == "memory"
    per_sequence = 94 * 4 * 128 * 2 * 2 * (2048 + 256)  # layers, KV heads, width, K and V, bytes
    free = 0.9 * 8 * 80e9 - model.weights_bytes  # an engine's 90% of the HBM
    assert result.max_batch == pytest.approx(free / (2 * per_sequence), rel=0.01)


def test_input_embedding_costs_no_flops_and_prefill_one_tokens_logits():
    """Llama 3 70B (untied, vocabulary 128,256, width 8,192): the reference arithmetic counts
    2·V·d FLOPs per token for each of the two embedding matrices; the physical rules count the
    output head once, for the q_LM tokens that need logits."""
    model, gpu = get_model("llama-3-70b"), get_gpu("h100")
    rate = gpu.flops(16, capped=True)
    n, batch, q = 8.0, 4.0, 16.0
    paper = fm.compile_branch(model, gpu, False, q, curve="paper")["arithmetic"](n, batch, 1.0, 1.0)
    decode = fm.compile_branch(model, gpu, False, q, curve="physical")["arithmetic"](
        n, batch, 1.0, 1.0)
    prefill = fm.compile_branch(model, gpu, False, q, curve="physical", logits=1.0)["arithmetic"](
        n, batch, 1.0, 1.0)
    head = 2 * 128256 * 8192 * batch / (n * rate)
    assert float(paper - decode) == pytest.approx(head * q, rel=1e-9)
    assert float(decode - prefill) == pytest.approx(head * (q - 1), rel=1e-9)


SIZES = st.floats(min_value=1.0, max_value=4096.0)


@settings(max_examples=60, deadline=None)
@given(n=SIZES, batch=SIZES, pp_share=st.floats(0.0, 1.0), sigma_share=st.floats(0.0, 1.0),
       key=st.sampled_from(["llama-3-70b", "deepseek-v3", "qwen3-235b-a22b", "gpt-oss-120b"]),
       two_d=st.booleans())
def test_the_lower_bound_holds_over_sigma_and_the_limit_lies_below(n, batch, pp_share,
                                                                   sigma_share, key, two_d):
    """What the search relies on: 'latency_lower' (at any σ) never exceeds the latency at any σ
    in [1, N_TP]; and the limit's latency never exceeds the physical curve's."""
    model, gpu = get_model(key), get_gpu("h200")
    pp = 1.0 + pp_share * (min(batch, n, model.layers) - 1.0)
    sigma = (n / pp) ** sigma_share
    physical = fm.compile_branch(model, gpu, two_d, 1.0, 1000.0, curve="physical")
    limit = fm.compile_branch(model, gpu, two_d, 1.0, 1000.0, curve="limit")
    latency = float(physical["latency"](n, batch, pp, sigma))
    assert float(physical["latency_lower"](n, batch, pp, 1.0)) <= latency * (1 + 1e-12)
    assert float(limit["latency"](n, batch, pp, sigma)) <= latency * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(batch=SIZES, pp=st.sampled_from([1.0, 2.0, 4.0]))
def test_the_whole_batch_cache_is_held_whatever_the_pipeline(batch, pp):
    """eq-phys-memory-need holds every micro-batch's cache: the same need at any N_PP."""
    model, gpu = get_model("llama-3-70b"), get_gpu("h100")
    need = fm.compile_branch(model, gpu, False, 1.0, 4096.0, curve="physical")["need"]
    # 8 GPUs: TP 8, 4 or 2, never wider than the 8 KV heads, so one copy of the cache throughout
    assert float(need(8.0, batch, pp, 1.0)) == pytest.approx(float(need(8.0, batch, 1.0, 1.0)))


@pytest.mark.parametrize("key", ["llama-3-70b", "deepseek-v3"])
def test_pruned_physical_search_equals_brute_force(key):
    """The search under the physical rules (its lower bound from the floors over σ) finds the
    fastest branch at every point, as trying every branch does."""
    model, gpu = get_model(key), get_gpu("h100")
    n, batch = search_mod.grid(model, gpu, model.weight_bytes)
    n, batch = n[::37], batch[::31]
    got = search_mod.fastest_branch(model, gpu, n, batch, 1.0, 500.0, model.weight_bytes, True,
                                    curve="physical")
    pp = search_mod.pipeline_degrees(model, batch, True)
    brute = np.full((n.size, batch.size), np.inf)
    for layout in (False, True):
        latency = fm.compile_branch(model, gpu, layout, 1.0, 500.0, curve="physical")["latency"]
        for i, size in enumerate(n):
            for j, b in enumerate(batch):
                for degree in pp[j]:
                    sigma = (size / degree) ** np.linspace(0, 1, 6)
                    value = np.min(np.broadcast_to(latency(size, b, degree, sigma), sigma.shape))
                    brute[i, j] = min(brute[i, j], float(value))
    assert np.array_equal(np.isfinite(got.latency), np.isfinite(brute))
    ok = np.isfinite(brute)
    np.testing.assert_allclose(got.latency[ok], brute[ok], rtol=1e-12)


def test_the_limit_uses_peaks_and_no_launch_time():
    gpu = get_gpu("h100")
    values = fm.model_values(get_model("llama-3-70b"), gpu, curve="limit")
    assert values[S.flops] == gpu.flops(16) and values[S.hbm_bw] == gpu.hbm_bandwidth
    assert values[S.t_kernel] == 0 and values[S.omega_net] == 1
    assert math.isclose(fm.model_values(get_model("llama-3-70b"), gpu)[S.hbm_bw],
                        gpu.hbm_bandwidth * gpu.bandwidth_cap)


def test_a_models_own_mtp_module_drafts():
    """DeepSeek-V3's MTP module as a drafter: one MoE layer (attention 187.1 M, router 256 ×
    7,168, 256 routed and 1 shared expert of 3 × 7,168 × 2,048) with the embeddings and head
    (2 × 129,280 × 7,168), FP8 as the model's MoE layers; a model without one is refused."""
    from inference_math.core.validation import InputError
    from inference_math.presets.layered import mtp_drafter

    module = mtp_drafter(get_model("deepseek-v3"))
    attention = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
    by_hand = attention + 256 * 7168 + 257 * 3 * 7168 * 2048 + 2 * 129280 * 7168
    assert module.total_params == pytest.approx(by_hand, rel=0.005)
    assert module.layers == 1 and module.weight_bits == 8
    with pytest.raises(InputError, match="multi-token-prediction"):
        mtp_drafter(get_model("llama-3-70b"))


DEEPSEEK_V32 = str(resources.files("inference_math").joinpath(
    "data/hf_configs/deepseek-ai--DeepSeek-V3.2.config.json"))


def _attention_flops(key, q, context, curve="physical"):
    """FLOPs of one pass of one sequence on one GPU, from the generated arithmetic time."""
    model, gpu = get_model(key), get_gpu("h200")
    branch = fm.compile_branch(model, gpu, False, q, context, curve=curve, logits=1.0)
    rate = gpu.flops(model.weight_bits, capped=curve != "limit")
    # attention over a 16-bit cache at the BF16 rate (the limit: the faster, the weights' FP8)
    cache_rate = gpu.flops(8) if curve == "limit" else gpu.flops(16, capped=True)
    args = (1.0, 1.0, 1.0, 1.0)
    return (float(branch["arithmetic_rest"](*args)) * rate
            + float(branch["arithmetic_attention"](*args)) * cache_rate)


def test_mla_attention_flops_by_hand():
    """DeepSeek-V3 (config: 61 MLA layers, 128 heads, latent d_c = 512, rotary d_R = 64,
    position-free and value heads 128): decode runs absorbed, 2·(512 + 64) + 2·512 = 2,176
    FLOPs per head and cached token; a prompt runs multi-head, 2·(128 + 64) + 2·128 = 640 per
    head and pair of tokens (eq-phys-mla-attention-flops). The paper's count is 4·512 = 2,048."""
    layers, heads = 61, 128
    context = 4096.0
    decode = _attention_flops("deepseek-v3", 1.0, context) - _attention_flops("deepseek-v3", 1.0, 0)
    assert decode == pytest.approx(layers * heads * 2176 * context, rel=1e-9)
    # a prompt of 2q tokens against two of q: the causal pairs' term, q², is what remains, less
    # one pass's constant, the logits of the prompt's last token (vocabulary 129,280, width 7,168)
    q = 1024.0
    pairs = (_attention_flops("deepseek-v3", 2 * q, 0) - 2 * _attention_flops("deepseek-v3", q, 0))
    assert pairs == pytest.approx(layers * heads * 640 * q * q - 2 * 129280 * 7168, rel=1e-9)
    # (absorbed, the same prompt would cost 2,176/640 = 3.4 times as much: the pass takes the
    # cheaper, which the q² coefficient above shows)
    # the limit counts the same FLOPs (at the peak rate)
    limit = (_attention_flops("deepseek-v3", 1.0, context, "limit")
             - _attention_flops("deepseek-v3", 1.0, 0, "limit"))
    assert limit == pytest.approx(decode, rel=1e-9)


def test_a_sparse_mla_layer_attends_to_its_selection_absorbed_or_to_all_multi_head():
    """DeepSeek-V3.2's sparse layers (DSA) attend absorbed to at most k_sel = 2,048 cached
    tokens, 2,176 FLOPs per head and entry, or as masked multi-head attention to all of them, 640
    per head and token pair: decode absorbed, a short prompt multi-head, a long one absorbed."""
    layers, heads, context = 61, 128, 1024.0  # a context under k_sel: every token attended
    decode = (_attention_flops(DEEPSEEK_V32, 1.0, context)
              - _attention_flops(DEEPSEEK_V32, 1.0, 0.0))
    # the indexer scores every cached token: 64 heads of 128 (index_n_heads, index_head_dim),
    # 2·128 FLOPs per dot product and 2 per weighted score (eq-sparse-indexer-flops)
    indexer = layers * 64 * (2 * 128 + 2) * context
    assert decode == pytest.approx(layers * heads * 2176 * context + indexer, rel=1e-9)
    # a prompt of 2q = k_sel tokens against two of q: the causal pairs' term, multi-head (640)
    # and the indexer's, less the last token's logits
    q = 1024.0
    pairs = _attention_flops(DEEPSEEK_V32, 2 * q, 0.0) - 2 * _attention_flops(DEEPSEEK_V32, q, 0.0)
    assert pairs == pytest.approx(layers * (heads * 640 + 64 * 258) * q * q
                                  - 2 * 129280 * 7168, rel=1e-9)
    # prompts of 16,384 tokens and more: a query attends to 1,920 selected entries on average
    # (eq-sparse-mean-read: the first 2,048 queries to j each, the others to 2,048), and 2,176 x
    # 1,920 per head is less than the multi-head 640 x 8,191.5: absorbed, whose attention grows
    # only linearly with the prompt; the second difference keeps the indexer's q² term alone
    long, step = 16384.0, 4096.0
    second = (_attention_flops(DEEPSEEK_V32, long + 2 * step, 0.0)
              - 2 * _attention_flops(DEEPSEEK_V32, long + step, 0.0)
              + _attention_flops(DEEPSEEK_V32, long, 0.0))
    assert second == pytest.approx(layers * 64 * 258 * step * step, rel=1e-9)


def nccl_one_way(ranks: int, nodes: int, nic_bytes: float, nic: float) -> float:
    """A one-way collective over ``nodes`` nodes whose bandwidth time is ``nic_bytes`` over the
    NIC's ``nic`` B/s (NVLink not binding), at the cheapest protocol:
    (ranks/nodes − 1)·a + h·log2(nodes) + t0 + bytes/(f·W)."""
    return min((ranks / nodes - 1) * a + h * math.log2(nodes) + base + nic_bytes / (f * nic)
               for a, h, base, f in PROTOCOLS)


def test_no_all_to_all_with_tensor_parallel_attention_deepseek_v3():
    """DeepSeek-V3 (config: 61 layers, the first 3 dense; 256 routed experts of 3 × 7,168 ×
    2,048, 8 per token; 1 shared; MLA latent 512 + rotary 64; vocabulary 129,280) decoding 64
    sequences of 2,048 + 512 tokens on 8 H200 (TP 8, FP8). Attention is tensor-parallel
    (σ = 1): every GPU holds every token, so no all-to-all runs and none pays a latency.
    By hand: 122 all-reduces of one 7,168-wide BF16 vector per token, 26.9 ms per token."""
    model, gpu = get_model("deepseek-v3"), get_gpu("h200")
    got = predict(Deployment(model, gpu, tp=8, batch=64, input_len=2048, output_len=512,
                             curve="physical"))
    assert got.n_ep == 8
    # network: 61 attention all-reduces, 58 MoE layers' group all-reduce, 3 dense layers'
    # feed-forward all-reduce, each of 64 × 7,168 × 2 = 917,504 B inside one node (NCCL LL:
    # 2·7·0.6 + 6.8 = 15.2 µs + 917,504·7/(8·0.5·225 GB/s) = 7.14 µs)
    message = 64 * 7168 * 2
    network = 122 * nccl_all_reduce_one_node(8, message, 225e9)
    assert network == pytest.approx(2.725e-3, rel=1e-3)
    decode = got.decode_terms_ms
    assert (decode["network_latency"] + decode["network_bandwidth"]) / 1e3 == pytest.approx(
        network, rel=1e-9)
    # memory: the weights at 1 byte (embeddings 2 bytes), less the idle routed experts (each
    # idle with probability (1 − 8/256)^64) and the input embedding (a lookup), plus the
    # latent cache read by all 8 GPUs, over 8 × 4.8 TB/s × 0.75
    attention = 61 * (7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256
                      + 128 * 128 * 7168)
    routed = 58 * 256 * 3 * 7168 * 2048
    weights = (attention + 3 * 3 * 7168 * 18432 + 58 * 3 * 7168 * 2048 + routed
               + 58 * 256 * 7168 + 2 * 129280 * 7168 * 2)
    read = weights - routed * (1 - 8 / 256) ** 64 - 129280 * 7168 * 2
    cache = 64 * (2048 + 256) * 61 * (512 + 64) * 2 * 8
    memory = (read + cache) / (8 * 4.8e12 * 0.75)
    kernel = 4 * 61 * 4e-6
    by_hand = memory + network + kernel
    assert by_hand == pytest.approx(26.9e-3, rel=0.005)
    # the project adds the activations' traffic (under 1% here)
    assert by_hand <= got.tpot_ms / 1e3 <= 1.01 * by_hand


def test_no_all_to_all_with_tensor_parallel_attention_qwen3_235b():
    """Qwen3-235B-A22B (config: 94 layers, 64 query and 4 KV heads of 128, 128 experts of 3 ×
    4,096 × 1,536, 8 per token, BF16) decoding 32 sequences of 2,048 + 512 tokens on 8 H100 (TP
    8): 32 ≥ 2·16 sequences, so expert-parallel, but with σ = 1 no all-to-all. By hand: 188
    all-reduces of 32 × 4,096 × 2 B, 27.0 ms per token."""
    model, gpu = get_model("qwen3-235b-a22b"), get_gpu("h100")
    got = predict(Deployment(model, gpu, tp=8, batch=32, input_len=2048, output_len=512,
                             curve="physical"))
    assert got.n_ep == 8
    network = 188 * nccl_all_reduce_one_node(8, 32 * 4096 * 2, 225e9)
    decode = got.decode_terms_ms
    assert (decode["network_latency"] + decode["network_bandwidth"]) / 1e3 == pytest.approx(
        network, rel=1e-9)
    routed = 94 * 128 * 3 * 4096 * 1536
    params = 94 * (64 * 128 * 4096 * 2 + 2 * 4096 * 4 * 128) + routed + 94 * 128 * 4096 \
        + 2 * 151936 * 4096
    read = 2 * (params - routed * (1 - 8 / 128) ** 32 - 151936 * 4096)
    cache = 32 * (2048 + 256) * 94 * 4 * 128 * 2 * 2 * 2  # K and V, 2 bytes, 2 copies at TP 8
    memory = (read + cache) / (8 * 3.3e12 * 0.75)
    by_hand = memory + network + 4 * 94 * 4e-6
    assert by_hand == pytest.approx(27.0e-3, rel=0.005)
    assert by_hand <= got.tpot_ms / 1e3 <= 1.01 * by_hand


def test_the_all_to_alls_local_share_is_removed_once():
    """DeepSeek-V3 on 16 H100 over 2 nodes, data-parallel attention (σ = 16), EP 16, decoding
    512 sequences: 32 tokens per GPU, each sent to its 8 experts' GPUs, half of them on the other
    node: 32 × 8 × ½ × 7,168 B = 0.917 MB of FP8 dispatch and 1.835 MB of BF16 combine
    through a 50 GB/s NIC (one direction of 2 × 25 GB/s), per MoE layer about 110.5 µs."""
    model, gpu = get_model("deepseek-v3"), get_gpu("h100")
    dispatch = 32 * 8 * 0.5 * 7168
    assert dispatch == pytest.approx(0.917e6, rel=1e-3)
    per_layer = (nccl_one_way(8, 2, dispatch, 50e9) + nccl_one_way(8, 2, 2 * dispatch, 50e9))
    assert per_layer == pytest.approx(110.5e-6, rel=2e-3)
    # no all-reduce is left (attention groups of one GPU), so the network is the 58 MoE layers'
    branch = fm.compile_branch(model, gpu, False, 1.0, 2304.0, curve="physical")
    assert float(branch["network"](16.0, 512.0, 1.0, 16.0)) == pytest.approx(58 * per_layer,
                                                                             rel=1e-9)
    # inside one node (8 GPUs, σ = 8) the dispatch crosses NVLink once: 7/8 of the message
    at = {S.msg_bytes: 1e6, S.n_nodes_c: 1, S.bw_ar_intra: 225e9, S.bw_ar_inter: 25e9,
          S.bw_eff: 1, S.h_coll: sp.Rational(1, 2), S.sigma_attn: 8}
    assert float(coll.all_to_all_bandwidth_time().rhs.subs(at)) == pytest.approx(
        0.5 * 1e6 * 7 / 8 / 225e9)


def test_attention_over_a_16_bit_cache_runs_at_the_16_bit_rate():
    """DeepSeek-V3 prefill of 2,048 tokens on 8 H200: multi-head attention, 61 layers × 128 heads
    × 640 FLOPs × 2,048 queries × a mean 1,023.5 keys = 10.47 TFLOP, at the BF16 rate of a
    16-bit cache (8 × 1,000 TFLOP/s × 0.6): 2.18 ms; with an 8-bit cache at the FP8 rate,
    1.09 ms."""
    model, gpu = get_model("deepseek-v3"), get_gpu("h200")
    flops = 61 * 128 * 640 * 2048 * 1023.5
    assert flops == pytest.approx(10.47e12, rel=1e-3)
    for kv_scale, rate, ms in ((1.0, 1.0e15, 2.18), (0.5, 2.0e15, 1.09)):
        branch = fm.compile_branch(model, gpu, False, 2048.0, 0.0, curve="physical", logits=1.0,
                                   kv_scale=kv_scale)
        got = float(branch["arithmetic_attention"](8.0, 1.0, 1.0, 1.0))
        assert got == pytest.approx(flops / (8 * rate * 0.6), rel=1e-9)
        assert got * 1e3 == pytest.approx(ms, rel=0.005)
    # the limit attends at the faster of the cache's and the weights' peaks: FP8 for FP8 weights
    limit = fm.compile_branch(model, gpu, False, 2048.0, 0.0, curve="limit", logits=1.0)
    assert float(limit["arithmetic_attention"](8.0, 1.0, 1.0, 1.0)) == pytest.approx(
        flops / (8 * 2.0e15), rel=1e-9)


MFU_CASES = [("deepseek-v3", "b200"), ("llama-3.3-70b", "h100"), ("qwen3-235b-a22b", "h200")]


@pytest.mark.parametrize("key,gpu_name", MFU_CASES)
@pytest.mark.parametrize("curve", ["paper", "physical", "limit"])
def test_mfu_never_exceeds_one_on_a_frontier(key, gpu_name, curve):
    """MFU counts the FLOPs the curve times, each at its peak rate: no point of a frontier uses
    more than the GPUs' peaks (DeepSeek-V3's fastest limit point on B200 reported 1.025 when
    MFU counted the input embedding as a matmul)."""
    setting = search_mod.Setting(model=get_model(key), gpu=get_gpu(gpu_name), context=2048.0,
                                 curve=curve)
    points = search_mod.frontier(setting).points
    assert points
    assert max(pt.mfu for pt in points) <= 1.0 + 1e-12
    assert min(pt.mfu for pt in points) > 0.0


def test_an_mla_layer_reads_the_attention_weights_it_holds():
    """Rule 12 by hand, DeepSeek-V3 (config: hidden 7,168, 128 heads, q_lora_rank 1,536,
    kv_lora_rank 512, qk_rope 64, qk_nope 128, v_head 128; 61 layers, the first 3 dense; 256
    experts of 3 × 7,168 × 2,048, 8 per token, 1 shared; vocabulary 129,280; FP8 weights, BF16
    embeddings and router, a plain parameter its quantization leaves alone). One sequence, one
    token, no context, on 8 H200 at the limit (4.8 TB/s each): the step reads each layer's held
    attention weights, not the reference shapes', each at its own bytes."""
    held = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
    assert held == 187_105_280
    # the reference shapes: q, k and v each up-projected from both latents, (128 + 2·128)·128
    # wide from 512 + 1,536, then the latents from d_model and the output
    shapes = (128 + 2 * 128) * 128 * (512 + 1536) + (512 + 1536) * 7168 + 128 * 128 * 7168
    assert shapes == 232_783_872
    values = {S.n_q: 128, S.g: 1, S.d_head: 128, S.c_kv: 512, S.c_q: 1536, S.d_model: 7168}
    assert phys.shape_weights(mla=True).subs(values) == shapes
    model, gpu = get_model("deepseek-v3"), get_gpu("h200")
    router = 7168 * 256
    touched = 58 * 8 * 3 * 7168 * 2048  # one token: its 8 experts in each MoE layer
    weights = (61 * held + 58 * 2 * router + 3 * 3 * 7168 * 18432 + 58 * 3 * 7168 * 2048
               + touched + 129280 * 7168 * 2)  # the unembedding (the input embedding: a lookup)
    by_hand = weights / (8 * 4.8e12)
    got = float(fm.compile_branch(model, gpu, False, 1.0, 0.0, curve="limit")["memory"](
        8.0, 1.0, 1.0, 1.0))
    # the model adds the activations (a few MB); the shapes' weights would add 2.68 GB (7%)
    assert by_hand <= got <= 1.002 * by_hand
    assert (61 * shapes - 61 * held) / (8 * 4.8e12) > 0.06 * by_hand


@pytest.mark.parametrize("n_ep, node, top_k, packed, spread", [
    # DeepSeek-V3's 8 routed experts on 8-GPU nodes: packed into one node; spread round a group
    # of 72 (9 nodes) a node per expert; round a group of 16 (2 nodes) both nodes
    (72, 8, 8, 1, 8), (16, 8, 8, 1, 2),
    # one 72-GPU NVLink domain: one node either way
    (72, 72, 8, 1, 1),
    # a group of 4 GPUs holds only 4 of 8 experts' ranks: ⌈4/8⌉ = 1 node packed, min(4, 1) spread
    (4, 8, 8, 1, 1),
    # gpt-oss-120b's top 4 over 32 GPUs of 4-GPU nodes: one node packed, 4 spread
    (32, 4, 4, 1, 4),
])
def test_expert_nodes_packed_and_spread_by_hand(n_ep, node, top_k, packed, spread):
    """eq-full-expert-nodes and eq-phys-expert-nodes at counts done by hand, and the one
    expression the generated code evaluates (ξ_EP weighting the two) equal to each at 0 and 1."""
    at = {S.n_ep: n_ep, S.node_size: node, S.n_active: top_k}
    assert fm.expert_nodes_eq().rhs.subs(at) == packed
    assert phys.expert_nodes_eq().rhs.subs(at) == spread
    both = fm.expert_nodes(sp.Min(S.n_active, S.n_ep), spread=True)
    assert both.subs(at).subs(S.xi_ep, 0) == packed
    assert both.subs(at).subs(S.xi_ep, 1) == spread


def test_each_block_is_read_at_the_bytes_its_checkpoint_stores_it_in():
    """gpt-oss-120b by hand (config: hidden 2,880, 36 layers, 64 query heads and 8 KV heads of
    64, 128 experts of 3 × 2,880 × 2,880, 4 per token, vocabulary 201,088, untied; its
    quantization_config stores the experts in MXFP4, 4.25 bits a weight with the E8M0 scale per
    32, and leaves attention, the router and the embeddings in BF16). Two sequences, one token
    each, no context, one H200 at the limit (4.8 TB/s): the step reads attention and router in
    full at 2 bytes, the experts the two tokens reach at 0.53125 bytes, the unembedding at 2."""
    d = 2880
    attention = d * 64 * 64 * 2 + 2 * d * 8 * 64 + 128 * d  # q, o; k, v; the router
    assert attention == 26_910_720
    expert = 3 * d * d
    reached = 128 * (1 - (1 - 4 / 128) ** 2)  # eq-moe-params-read's fraction, b = 2, s = 32
    weights = 36 * (2 * attention + 4.25 / 8 * reached * expert) + 2 * 201088 * d
    by_hand = weights / 4.8e12
    got = float(fm.compile_branch(get_model("gpt-oss-120b"), get_gpu("h200"), False, 1.0, 0.0,
                                  curve="limit")["memory"](1.0, 2.0, 1.0, 1.0))
    # the model adds the activations (under 1 MB); the layers' mean bytes (0.5436) would read
    # attention in 0.53 GB instead of 1.94 GB, 20% less
    assert by_hand <= got <= 1.001 * by_hand
    assert 36 * attention * (2 - 0.5436) > 0.2 * weights


def test_a_sliding_window_chunk_attends_to_its_window_only():
    """gpt-oss-120b's 18 sliding layers (window 128; 64 query heads of 64) prefilling a chunk of
    4,096 tokens of a new prompt: query j attends to min(j, 128) earlier tokens, a mean of
    (Σ_{j<128} j + 3,968·128)/4,096 = 125.98, where the causal count would give 2,047.5. The
    arithmetic the window saves, 4·d_head·n_q FLOPs per layer, query and entry, by hand."""
    model, gpu = get_model("gpt-oss-120b"), get_gpu("h200")
    sliding = next(piece for piece in model.pieces if piece.window == 128)
    q = 4096
    mean = (sum(range(128)) + (q - 128) * 128) / q
    assert mean == pytest.approx(125.98, abs=0.005)
    saved = 4 * 64 * 64 * 18 * (2047.5 - mean) * q
    for curve in ("physical", "limit"):
        def arithmetic(piece, curve=curve):
            branch = fb._piece_branch(piece, model, gpu, False, float(q), 0.0, None, curve)
            return float(branch["arithmetic"](1.0, 1.0, 1.0, 1.0))
        rate = fb.attention_rate(gpu, model.weight_bits, 16, curve)
        unwindowed = replace(sliding, window=math.inf)
        assert arithmetic(unwindowed) - arithmetic(sliding) == pytest.approx(saved / rate, rel=1e-9)
    # Llama 4's chunked layers (chunks of 8,192) are not sliding: a query sees only its own
    # chunk's earlier tokens, and no window selection applies
    maverick = get_model("llama-4-maverick")
    chunked = [piece for piece in maverick.pieces if math.isfinite(piece.window)]
    assert chunked and not any(piece.sliding for piece in chunked)
    branch = fb._piece_branch(chunked[0], maverick, get_gpu("h200"), False, 16384.0, 0.0, None,
                              "physical")
    assert dict(zip(fm.CONSTANTS, branch.constants, strict=True))[S.k_top] == math.inf


def test_attention_projections_multiply_at_their_own_precision():
    """gpt-oss-120b's BF16 attention beside MXFP4 experts on one H200 (the preset: 2e15 FLOP/s
    for 8-bit and narrower weights, 1e15 for 16-bit, capped at 0.6 under 'physical'): a prompt
    of 4,096 tokens multiplies 36 layers' 26,910,720 attention and router weights, 2 FLOPs each
    per token, at the BF16 rate, 2·36·26,910,720·4,096/(0.6·1e15) = 13.23 ms, where the
    experts' rate would give half of it. The limit may store them as the experts are."""
    model, gpu = get_model("gpt-oss-120b"), get_gpu("h200")
    q, projections = 4096, 2 * 36 * 26_910_720 * 4096
    assert projections / 0.6e15 == pytest.approx(13.23e-3, rel=1e-3)
    for curve, rate, other in (("physical", 0.6e15, 1.2e15), ("limit", 2e15, 2e15)):
        saved = 0.0
        for piece in model.pieces:
            branch = fb._piece_branch(piece, model, gpu, False, float(q), 0.0, None, curve)
            values = dict(zip(fm.CONSTANTS, branch.constants, strict=True))
            assert values[S.flops_proj] == rate and values[S.flops] == other
            at_weights = fb.Branch(branch.structure, tuple(
                other if sym == S.flops_proj else value
                for sym, value in zip(fm.CONSTANTS, branch.constants, strict=True)))
            saved += float(branch["arithmetic"](1.0, 1.0, 1.0, 1.0)
                           - at_weights["arithmetic"](1.0, 1.0, 1.0, 1.0))
        assert saved == pytest.approx(projections / rate - projections / other, rel=1e-9, abs=1e-12)

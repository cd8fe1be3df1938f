"""Models with layer groups in the full model (eq-full-grouped-latency, presets/layered.py)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math.core import symbols as S
from inference_math.fullmodel import full_model as fm
from inference_math.fullmodel.search import Setting, frontier
from inference_math.presets.hardware import get_gpu
from inference_math.presets.layered import LayeredModel, LayerPiece
from inference_math.presets.models import get_model

NAMES = ("kernel", "network", "memory", "arithmetic", "need", "latency", "latency_lower",
         "feasible", "fixed", "network_latency", "network_bandwidth", "network_attention")


def split(model, layers: tuple[int, ...]) -> LayeredModel:
    """A uniform model cut into groups of ``layers`` layers, each holding its share of the
    counts; the embeddings in the first."""
    assert sum(layers) == model.layers
    pieces = []
    for number, count in enumerate(layers):
        share = count / model.layers
        shape = replace(model, layers=count, vocab=model.vocab if number == 0 else 0)
        pieces.append(LayerPiece(shape=shape, attention_params=share * model.attention_params,
                                 ff_params=share * model.ff_params, shared_params=0.0, n_shared=0,
                                 d_shared=model.d_ff,
                                 kv_bytes_per_token=share * model.kv_bytes_per_token,
                                 window=math.inf, weight_bytes=model.weight_bytes,
                                 other_bits=8 * model.weight_bytes))
    return LayeredModel(name=f"{model.name} in {len(layers)} groups", pieces=tuple(pieces),
                        embedding_params=model.embedding_params,
                        embedding_bytes=model.weight_bytes, source=model.source)


GRID = dict(n=np.array([[4.0], [16.0], [64.0]]), batch=np.array([[1.0, 8.0, 64.0, 512.0]]))


@pytest.mark.parametrize("key, layers", [("llama-3-70b", (80,)), ("llama-3-70b", (30, 50)),
                                         ("mixtral-8x22b", (7, 21, 28)),
                                         ("deepseek-v3-paper", (3, 55))])
@pytest.mark.parametrize("two_d", [False, True])
@pytest.mark.parametrize("curve", fm.RULES)
def test_groups_of_one_kind_add_up_to_the_uniform_model(key, layers, two_d, curve):
    """Cutting a uniform model into groups changes no term: the sum over groups, with the
    pipeline's hops counted once, is eq-full-forward-latency (eq-phys-forward-latency under the
    physical rules) of the whole."""
    model, gpu = get_model(key), get_gpu("h100")
    whole = fm.compile_branch(model, gpu, two_d, 2.0, 3000.0, curve=curve)
    parts = fm.compile_branch(split(model, layers), gpu, two_d, 2.0, 3000.0, curve=curve)
    names = NAMES + (("memory_floor", "need_floor") if curve != "paper" else ())
    for pp in (1.0, 4.0):
        for sigma in (1.0, 2.0):
            for name in names:
                want = np.broadcast_to(whole[name](GRID["n"], GRID["batch"], pp, sigma), (3, 4))
                got = np.broadcast_to(parts[name](GRID["n"], GRID["batch"], pp, sigma), (3, 4))
                np.testing.assert_allclose(got, want, rtol=1e-9, err_msg=f"{name} pp={pp}")
    search_whole = whole["search"](GRID["n"], GRID["batch"], 1.0, 1.0) if not two_d else ()
    search_parts = parts["search"](GRID["n"], GRID["batch"], 1.0, 1.0) if not two_d else ()
    for want, got in zip(search_whole, search_parts, strict=True):
        np.testing.assert_allclose(np.broadcast_to(got, (3, 4)), np.broadcast_to(want, (3, 4)),
                                   rtol=1e-9)


@pytest.mark.parametrize("curve", fm.RULES)
def test_split_model_has_the_uniform_frontier(curve):
    model, gpu = get_model("llama-3-8b"), get_gpu("h100")
    whole = frontier(Setting(model, gpu, curve=curve))
    parts = frontier(Setting(split(model, (12, 20)), gpu, curve=curve))
    for pick in ("max_speed", "preferred"):
        a, b = getattr(whole, pick)(), getattr(parts, pick)()
        assert b.tokens_per_s == pytest.approx(a.tokens_per_s, rel=1e-9)
        assert b.usd_per_mtok == pytest.approx(a.usd_per_mtok, rel=1e-9)


def test_shared_experts_vanish_at_zero():
    """The terms the code generates include the shared experts; with n_sh = 0 they are the
    paper's (eq-full-flops, eq-full-memory-time, eq-full-network-time, eq-full-memory-need)."""
    zero = {S.n_sh: 0, S.xi_ep: 0}
    for mla in (False, True):
        assert sp.simplify(fm.forward_flops(mla, shared=True).rhs.subs(zero)
                           - fm.forward_flops(mla).rhs) == 0
        assert sp.simplify(fm.memory_time(mla, shared=True).rhs.subs(zero)
                           - fm.memory_time(mla).rhs) == 0
        for two_d in (False, True):
            assert sp.simplify(fm.network_time(two_d, True, mla, shared=True, spread=True).rhs.subs(zero)
                               - fm.network_time(two_d, True, mla).rhs) == 0
    assert sp.simplify(fm.memory_need(shared=True).rhs.subs(zero) - fm.memory_need().rhs) == 0


def test_grouped_latency_of_one_group_is_the_forward_latency():
    eq = fm.grouped_latency().rhs.subs(S.n_groups, 1).doit()
    one = {sp.Indexed(sym, 1): sym for sym in (S.t_net, S.t_mem, S.t_flop, S.n_layers)}
    assert sp.simplify(eq.xreplace(one) - fm.forward_latency().rhs) == 0


@given(mem=st.lists(st.floats(0, 1), min_size=2, max_size=2),
       flop=st.lists(st.floats(0, 1), min_size=2, max_size=2))
@settings(max_examples=50, deadline=None)
def test_grouped_overlap_is_never_slower_than_group_by_group(mem, flop):
    """Overlapping memory and arithmetic over the whole pass (eq-full-grouped-latency) is at
    most the sum of per-group maxima, and at least each total."""
    eq = fm.grouped_latency().rhs.subs(S.n_groups, 2).doit()
    values = {S.t_kernel: 0, S.t_pipe: 0}
    for i in (1, 2):
        values.update({sp.Indexed(S.t_net, i): 0, sp.Indexed(S.n_layers, i): 1,
                       sp.Indexed(S.t_mem, i): mem[i - 1], sp.Indexed(S.t_flop, i): flop[i - 1]})
    value = float(eq.xreplace(values))
    assert value <= max(mem[0], flop[0]) + max(mem[1], flop[1]) + 1e-12
    assert value >= max(sum(mem), sum(flop)) - 1e-12


def test_real_deepseek_v3_groups():
    """DeepSeek-V3 as its config has it: 3 dense layers, 58 MoE layers of 256 routed experts
    (8 per token) and one shared expert; the MLA cache 576 values per layer per token."""
    model = get_model("deepseek-v3")
    dense, moe = model.pieces
    assert (dense.shape.layers, moe.shape.layers) == (3, 58)
    assert (moe.shape.n_experts, moe.shape.n_active_experts, moe.n_shared) == (256, 8, 1)
    assert model.kv_bytes_per_token == 61 * (512 + 64) * 2
    assert model.total_params == pytest.approx(671e9, rel=0.01)  # the model card's 671B
    # the paper's simplification differs by 58 against 61 layers and 512 against 576 values
    paper = get_model("deepseek-v3-paper")
    assert model.kv_bytes_per_token / paper.kv_bytes_per_token == pytest.approx(61 * 576 / (58 * 512))


def test_windows_cap_the_cache_of_their_group():
    model = get_model("gpt-oss-120b")
    sliding, full = sorted(model.pieces, key=lambda piece: piece.window)
    assert sliding.window == 128 and math.isinf(full.window)
    gpu = get_gpu("h100")
    short, long = (fm.compile_branch(model, gpu, False, 1.0, ctx)["need"](8.0, 1.0, 1.0, 1.0)
                   for ctx in (128.0, 100128.0))
    # beyond the window only the full-attention layers' cache grows
    assert long - short == pytest.approx(100000 * full.kv_bytes_per_token, rel=1e-12)


def test_linear_attention_state_is_a_fixed_cache():
    """Qwen3.5's Gated DeltaNet layers keep a constant state (eq-layers-state-linear): the memory
    the full model needs grows with the context only through its full-attention layers, and at
    context 0 it is the weights plus that state."""
    model = get_model("inference_math/data/hf_configs/Qwen--Qwen3.5-397B-A17B.config.json")
    arch = model.architecture
    assert model.state_bytes_per_sequence == pytest.approx(arch.state_bytes_per_sequence, rel=1e-12)
    assert model.kv_bytes_per_token == pytest.approx(arch.kv_bytes_per_token, rel=1e-12)
    for context in (0.0, 1000.0, 262144.0):
        assert model.kv_bytes_at(context) == pytest.approx(arch.kv_bytes_at(context), rel=1e-12)
    branch = fm.compile_branch(model, get_gpu("b200"), False, 1.0, 0.0)
    need = float(branch["need"](16.0, 1.0, 1.0, 1.0))
    assert need == pytest.approx(model.weights_bytes + model.state_bytes_per_sequence, rel=1e-9)
    longer = fm.compile_branch(model, get_gpu("b200"), False, 1.0, 5000.0)
    grown = float(longer["need"](16.0, 1.0, 1.0, 1.0)) - need
    assert grown == pytest.approx(5000.0 * model.kv_bytes_per_token, rel=1e-9)


@pytest.mark.parametrize("key", ["deepseek-v3", "kimi-k2", "gpt-oss-120b", "llama-4-maverick"])
def test_frontier_of_a_layered_model(key):
    model = get_model(key)
    result = frontier(Setting(model, get_gpu("h200")))
    top = result.max_speed()
    # the fastest point cannot beat reading the active weights once per token at full bandwidth
    gpu = get_gpu("h200")
    assert top.tokens_per_s > 0 and np.isfinite(top.usd_per_mtok)
    assert top.gpus * gpu.hbm_bytes >= model.weights_bytes
    assert top.binding in ("kernel launches", "collective latency", "network bandwidth", "memory",
                           "arithmetic")

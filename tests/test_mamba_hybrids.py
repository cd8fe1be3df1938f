"""NVIDIA's Mamba-2 hybrids (Nemotron-H, Nemotron-3) timed by the full model (issue 22).

Their layers hold one block each (hybrid_override_pattern: M a Mamba-2 mixer, * attention, - an
MLP, E an MoE block): Mamba-2 layers are timed as linear layers with a constant state, the
layers without a mixer or without a feed-forward block as groups whose absent block has no
parameters. The hand checks below are computed from the config's fields, not by the project.
"""

from __future__ import annotations

import json

import pytest

from inference_math import cli
from inference_math.fullmodel import full_model as fm
from inference_math.presets import hf_config as hc
from inference_math.presets.hardware import get_gpu
from inference_math.presets.layered import LayeredModel, from_hf_config

H56 = hc.FIXTURES / "nvidia--Nemotron-H-56B-Base-8K.config.json"
NANO = hc.FIXTURES / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.config.json"


@pytest.mark.parametrize("path", [H56, NANO], ids=["nemotron-h-56b", "nemotron-3-nano"])
@pytest.mark.parametrize("gpu", ["b200", "h100"])
@pytest.mark.parametrize("curve", ["physical", "limit"])
def test_max_speed_times_the_mamba_hybrids(path, gpu, curve, capsys):
    code = cli.main(["max-speed", "--model", str(path), "--gpu", gpu, "--curve", curve, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in err
    point = json.loads(out)
    assert point["tokens_per_s"] > 0 and point["gpus"] >= 1


def _hand(config: dict) -> dict:
    """Nemotron-H-56B from its fields alone: parameters by matrix, states, KV per token."""
    pattern = config["hybrid_override_pattern"]
    n_mamba, n_attention, n_mlp = pattern.count("M"), pattern.count("*"), pattern.count("-")
    d = config["hidden_size"]
    heads, head_dim = config["mamba_num_heads"], config["mamba_head_dim"]
    state, groups, kernel = config["ssm_state_size"], config["n_groups"], config["conv_kernel"]
    inner = heads * head_dim  # d_inner = expand·d_model
    conv_channels = inner + 2 * groups * state  # x, B and C go through the convolution
    # Mamba2Mixer: in_proj (z, x, B, C, dt), conv1d, out_proj; A, D, dt bias and norm are vectors
    mamba = d * (2 * inner + 2 * groups * state + heads) + kernel * conv_channels + inner * d
    q, kv, dh = (config["num_attention_heads"], config["num_key_value_heads"],
                 config["attention_head_dim"])
    attention = d * dh * (q + 2 * kv) + q * dh * d
    mlp = 2 * d * config["intermediate_size"]  # up and down (squared ReLU, no gate)
    embedding = config["vocab_size"] * d
    # the SSM state at mamba_ssm_cache_dtype, else the checkpoint's dtype (here bfloat16, 2
    # bytes); the conv state at the activations' bfloat16
    assert "mamba_ssm_cache_dtype" not in config and config["torch_dtype"] == "bfloat16"
    per_layer_state = ((kernel - 1) * conv_channels + heads * head_dim * state) * 2
    return {"n_mamba": n_mamba, "params": n_mamba * mamba + n_attention * attention
            + n_mlp * mlp + 2 * embedding, "embedding": embedding,
            "states": n_mamba * per_layer_state,
            "kv_per_token": n_attention * 2 * kv * dh * 2}


def test_nemotron_h_state_and_limit_decode_by_hand():
    """Nemotron-H-56B: 54 Mamba-2 layers, each with a conv state of 3 × (16,384 + 2·8·256) and an
    SSM state of 256 × 64 × 256 elements, in bfloat16: 459,620,352 bytes a sequence. The limit's
    batch-1 decode at context 1,000 on 8 B200s reads the weights, the attention layers' cache
    and the states once: within 3% of their bytes over 8 × the peak bandwidth (within 0.5% of
    it without the input embedding, a lookup of one row the limit does not read)."""
    config = json.loads(H56.read_text())
    hand = _hand(config)
    assert hand["n_mamba"] == 54
    assert hand["states"] == 54 * (3 * (16384 + 2 * 8 * 256) + 256 * 64 * 256) * 2 == 459_620_352
    model = from_hf_config(H56)
    assert isinstance(model, LayeredModel)
    assert model.state_bytes_per_sequence == pytest.approx(hand["states"], rel=1e-12)
    assert model.total_params == pytest.approx(hand["params"], rel=1e-12)
    assert model.kv_bytes_per_token == pytest.approx(hand["kv_per_token"], rel=1e-12)
    gpu = get_gpu("b200")
    context = 1000.0
    read = 2 * hand["params"] + hand["kv_per_token"] * context + hand["states"]
    expected = read / (8 * gpu.hbm_bandwidth)
    latency = min(float(fm.compile_branch(model, gpu, two_d, 1.0, context, curve="limit")
                        ["latency"](8.0, 1.0, 1.0, 1.0)) for two_d in (False, True))
    assert latency == pytest.approx(expected, rel=0.03)
    without_lookup = (read - 2 * hand["embedding"]) / (8 * gpu.hbm_bandwidth)
    assert latency == pytest.approx(without_lookup, rel=0.005)


def test_the_state_is_a_fixed_cache_and_absent_blocks_weigh_nothing():
    """The Mamba-2 states do not grow with the context (only the 10 attention layers' cache
    does); the groups without a mixer or a feed-forward block count no parameters for it."""
    model = from_hf_config(H56)
    gpu = get_gpu("b200")
    need = [float(fm.compile_branch(model, gpu, False, 1.0, ctx, curve="physical")["need"](
        8.0, 1.0, 1.0, 1.0)) for ctx in (0.0, 4000.0)]
    assert need[0] == pytest.approx(model.weights_bytes + model.state_bytes_per_sequence,
                                    rel=1e-9)
    assert need[1] - need[0] == pytest.approx(4000.0 * 10 * 2 * 8 * 128 * 2, rel=1e-9)
    arch = model.architecture
    for piece, group in zip(model.pieces, arch.groups, strict=True):
        if group.attention.span == "none":
            assert piece.attention_params == 0.0 and piece.kv_bytes_per_token == 0.0
        if group.ffn.kind == "none":
            assert piece.ff_params == 0.0 and piece.shared_params == 0.0


def test_nano_state_is_float32_and_its_moe_layers_are_timed():
    """Nemotron-3 Nano keeps its SSM state in float32 (mamba_ssm_cache_dtype) and its conv state
    at the activations' bfloat16 (as vLLM's Mamba cache does): 23 Mamba-2 layers of
    64 × 64 × 128 elements at 4 bytes and 3 × (4,096 + 2·8·128) at 2."""
    config = json.loads(NANO.read_text())
    assert config["mamba_ssm_cache_dtype"] == "float32"
    model = from_hf_config(NANO)
    n = config["hybrid_override_pattern"].count("M")
    assert n == 23
    assert model.state_bytes_per_sequence == pytest.approx(
        n * (64 * 64 * 128 * 4 + 3 * (4096 + 2 * 8 * 128) * 2), rel=1e-12)
    latency = fm.compile_branch(model, get_gpu("h100"), False, 1.0, 1000.0,
                                curve="physical")["latency"](8.0, 1.0, 1.0, 1.0)
    assert 0 < float(latency) < 1

"""Model and GPU presets, the counting rules behind them, and input validation.

Counting rules: Erdil (2025) sec. 3.1-3.2 and its reference code. Published sizes: Dubey et al.
(2024) for Llama 3, Brown et al. (2020) for GPT-3, Mistral AI (2024) for Mixtral 8x22B,
DeepSeek-AI (2024) for DeepSeek-V3, Chowdhery et al. (2022) for PaLM.
"""

from __future__ import annotations

import dataclasses

import pytest

from inference_math.core.symbols import (
    c_kv,
    c_q,
    d_ff,
    d_head,
    d_model,
    g,
    n_experts,
    n_ff_in,
    n_ff_out,
    n_layers,
    n_q,
    p_act,
    vocab,
)
from inference_math.core.validation import InputError, lookup, positive, positive_int
from inference_math.derivations import architecture as arch
from inference_math.presets.hardware import GPUS, get_gpu
from inference_math.presets.models import MODELS, get_model

# --- counting rules (typed from Erdil 2025 sec. 3.1-3.2 and its reference code) -------------

KV_HEADS = 2 * n_q / g  # K and V heads, grouped-query attention
SHAPE = (n_layers, n_q, g, d_head, d_model, d_ff, n_experts, n_ff_in, n_ff_out, vocab, p_act,
         c_kv, c_q)


def test_attention_params_grouped_query(assert_same):
    """Erdil (2025) sec. 3.1: L·((n_q + 2n_q/g)·d_head·d_model + n_q·d_head·d_model)."""
    expected = n_layers * ((n_q + KV_HEADS) * d_head * d_model + n_q * d_head * d_model)
    assert_same(arch.attention_params(), expected, SHAPE)


def test_attention_params_multi_head_latent(assert_same):
    """Erdil (2025) sec. 3.1 (MLA): down-projections, up-projections and the output projection."""
    per_layer = (2 * c_kv * d_model + c_q * d_model + KV_HEADS * d_head * c_kv
                 + n_q * d_head * c_q + n_q * d_head * d_model)
    assert_same(arch.attention_params_mla(), n_layers * per_layer, SHAPE)


def test_feedforward_params(assert_same):
    """Erdil (2025) sec. 3.2: L·n_expert·(m_in + m_out)·d_model·d_ff."""
    expected = n_layers * n_experts * (n_ff_in + n_ff_out) * d_model * d_ff
    assert_same(arch.feedforward_params(), expected, SHAPE)


def test_embedding_params(assert_same):
    """Erdil (2025) reference code: untied input and output embeddings, 2·n_vocab·d_model."""
    assert_same(arch.embedding_params(), 2 * vocab * d_model, SHAPE)


def test_kv_cache_bytes(assert_same):
    """Erdil (2025) sec. 3.1: (2·n_q/g)·d_head·L·p_act bytes per token of context."""
    assert_same(arch.kv_cache_bytes_per_token(), KV_HEADS * d_head * n_layers * p_act, SHAPE)


def test_kv_cache_bytes_mla(assert_same):
    """Erdil (2025) sec. 3.1 (MLA): the latent c_kv per layer, c_kv·L·p_act."""
    assert_same(arch.kv_cache_bytes_per_token_mla(), c_kv * n_layers * p_act, SHAPE)


# --- preset totals ---------------------------------------------------------------------------


def test_llama_3_8b_exact_parameter_count():
    """Erdil (2025) counting on Llama 3 8B (Dubey et al. 2024 shape), computed by hand."""
    layers, d, ff, heads, group, head, v = 32, 4096, 14336, 32, 4, 128, 128256
    attention = layers * ((heads + 2 * heads // group) * head * d + heads * head * d)
    feedforward = layers * 1 * (2 + 1) * d * ff
    embeddings = 2 * v * d
    assert attention + feedforward + embeddings == 8_029_995_008
    model = get_model("llama-3-8b")
    assert model.total_params == 8_029_995_008
    assert model.attention_params == attention
    assert model.ff_params == feedforward
    assert model.embedding_params == embeddings


@pytest.mark.parametrize(
    ("name", "published", "rtol"),
    [
        ("llama-3-8b", 8.0e9, 0.01),  # Dubey et al. (2024)
        ("llama-3-70b", 70.6e9, 0.01),  # Dubey et al. (2024)
        ("gpt-3", 175e9, 0.005),  # Brown et al. (2020)
        ("mixtral-8x22b", 141e9, 0.015),  # Mistral AI (2024)
        ("palm-540b", 540e9, 0.015),  # Chowdhery et al. (2022)
        ("gpt-4", 1.8e12, 0.015),  # rumoured size the paper assumes (Patel 2023)
        # DeepSeek-AI (2024): 671B (main model, without the multi-token-prediction module); the
        # preset counts ~666B because, like the paper's code, it has no dense leading layers and
        # no separate shared expert (see the MoE chapter).
        ("deepseek-v3-paper", 671e9, 0.015),
    ],
)
def test_total_params_match_published_sizes(name, published, rtol):
    """Published parameter counts (rounded) of each preset."""
    assert abs(get_model(name).total_params / published - 1) < rtol


def test_mixtral_active_params_match_published_size():
    """Mistral AI (2024): Mixtral 8x22B uses 39B active parameters per token."""
    assert abs(get_model("mixtral-8x22b").active_params / 39e9 - 1) < 0.015


@pytest.mark.parametrize("name", [n for n, m in MODELS.items() if m.n_experts == 1])
def test_dense_models_have_all_parameters_active(name):
    """Erdil (2025) eq. 21 with s = 1: a dense model's active parameters are its total."""
    model = get_model(name)
    assert model.active_params == model.total_params
    assert model.sparsity == 1


@pytest.mark.parametrize("name", sorted(MODELS))
def test_totals_are_the_sum_of_the_parts(name):
    """Erdil (2025) eq. 20: N = N_attn + N_ff + N_unembed, all positive."""
    model = get_model(name)
    parts = (model.attention_params, model.ff_params, model.embedding_params)
    # the reference code's GPT-3.5 guess counts no vocabulary
    assert all(part > 0 for part in parts[:2])
    assert parts[2] > 0 or model.vocab == 0
    assert model.total_params == sum(parts)
    assert model.weights_bytes == model.weight_bytes * model.total_params


def test_kv_bytes_per_token_llama_3_70b():
    """Erdil (2025) sec. 3.1: 2 (K, V) · 8 KV heads · 128 · 80 layers · 2 bytes = 327,680."""
    assert 2 * 8 * 128 * 80 * 2 == 327_680
    assert get_model("llama-3-70b").kv_bytes_per_token == 327_680


def test_kv_bytes_per_token_llama_3_8b():
    """Erdil (2025) sec. 3.1: 2 · 8 KV heads · 128 · 32 layers · 2 bytes = 131,072."""
    assert get_model("llama-3-8b").kv_bytes_per_token == 2 * 8 * 128 * 32 * 2


def test_kv_bytes_per_token_deepseek_v3_uses_the_latent():
    """Erdil (2025) sec. 3.1 (MLA): c_kv = 512 (DeepSeek-AI 2024) · 58 layers · 2 bytes.

    The reference code, and so the preset, models the 58 MoE layers only.
    """
    assert get_model("deepseek-v3-paper").kv_bytes_per_token == 512 * 58 * 2


def test_deepseek_v3_sparsity_uses_whole_number_division():
    """Erdil (2025) reference code: s = n_experts // n_active = 256 // 9 = 28."""
    assert get_model("deepseek-v3-paper").sparsity == 28


def test_head_dim_defaults_to_d_model_over_heads():
    """Llama 3 (Dubey et al. 2024): head width 128 = 8192/64."""
    assert get_model("llama-3-70b").head_dim == 128
    assert get_model("gpt-4").head_dim == 192


# --- preset lookup ---------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["llama-3-70b", "Llama 3 70B", "LLAMA_3_70B", "llama3-70b"])
def test_get_model_ignores_case_and_separators(spelling):
    """validation.lookup: names are matched case- and separator-insensitively."""
    assert get_model(spelling) is MODELS["llama-3-70b"]


@pytest.mark.parametrize("spelling", ["h100", "H100", "h-100"])
def test_get_gpu_ignores_case_and_separators(spelling):
    """validation.lookup: names are matched case- and separator-insensitively."""
    assert get_gpu(spelling) is GPUS["h100"]


def test_unknown_model_name_lists_the_choices():
    """An unknown preset raises InputError naming the choices."""
    with pytest.raises(InputError) as caught:
        get_model("llama-5-1t")
    message = str(caught.value)
    assert "llama-5-1t" in message
    assert all(name in message for name in MODELS)


def test_unknown_gpu_name_lists_the_choices():
    """An unknown GPU raises InputError naming the choices."""
    with pytest.raises(InputError) as caught:
        get_gpu("b900")
    message = str(caught.value)
    assert "b900" in message
    assert all(name in message for name in GPUS)


def test_input_error_is_a_value_error():
    """Callers catching ValueError also catch InputError."""
    assert issubclass(InputError, ValueError)


# --- invalid presets ---------------------------------------------------------------------------

LLAMA = MODELS["llama-3-8b"]
DEEPSEEK = MODELS["deepseek-v3-paper"]
H100 = GPUS["h100"]


@pytest.mark.parametrize(
    ("base", "changes", "field"),
    [
        (LLAMA, {"d_model": -4096}, "d_model"),
        (LLAMA, {"d_model": 0}, "d_model"),
        (LLAMA, {"layers": 2.5}, "layers"),
        (LLAMA, {"d_ff": float("nan")}, "d_ff"),
        (LLAMA, {"group_size": 5}, "group_size"),
        (LLAMA, {"n_active_experts": 2}, "n_active_experts"),
        (LLAMA, {"weight_bytes": 0}, "weight_bytes"),
        (LLAMA, {"vocab": -1}, "vocab"),
        (LLAMA, {"d_head": 0}, "d_head"),
        (LLAMA, {"ff_matrix_count": (2, 1, 1)}, "ff_matrix_count"),
        (LLAMA, {"ff_matrix_count": (0, 1)}, "ff_matrix_count"),
        (LLAMA, {"source": ""}, "source"),
        (DEEPSEEK, {"mla_q_dim": None}, "mla_kv_dim and mla_q_dim"),
        (DEEPSEEK, {"mla_kv_dim": None}, "mla_kv_dim and mla_q_dim"),
        (DEEPSEEK, {"mla_kv_dim": -512}, "mla_kv_dim"),
        (DEEPSEEK, {"group_size": 2}, "group_size"),
    ],
)
def test_invalid_model_raises_input_error_naming_the_field(base, changes, field):
    """Model.__post_init__: bad shapes are refused with the field in the message."""
    with pytest.raises(InputError, match=field):
        dataclasses.replace(base, **changes)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"hbm_bandwidth": 0}, "hbm_bandwidth"),
        ({"hbm_bandwidth": -3.3e12}, "hbm_bandwidth"),
        ({"hbm_bytes": float("inf")}, "hbm_bytes"),
        ({"price_per_hour": 0}, "price_per_hour"),
        ({"flop_cap": 1.2}, "flop_cap"),
        ({"flop_cap": 0}, "flop_cap"),
        ({"bandwidth_cap": 1.5}, "bandwidth_cap"),
        ({"node_size": 0}, "node_size"),
        ({"kernel_launch_s": -1e-6}, "kernel_launch_s"),
        ({"intranode_allreduce_bandwidth": 0}, "intranode_allreduce_bandwidth"),
        ({"flops_by_weight_bits": {}}, "flops_by_weight_bits"),
        ({"flops_by_weight_bits": {16: 0.0}}, r"flops_by_weight_bits\[16\]"),
        ({"source": ""}, "source"),
    ],
)
def test_invalid_gpu_raises_input_error_naming_the_field(changes, field):
    """GPU.__post_init__: bad hardware numbers are refused with the field in the message."""
    with pytest.raises(InputError, match=field):
        dataclasses.replace(H100, **changes)


def test_gpu_accepts_zero_kernel_launch_time():
    """A zero launch overhead is allowed (allow_zero in GPU.__post_init__)."""
    assert dataclasses.replace(H100, kernel_launch_s=0).kernel_launch_s == 0


def test_flops_for_an_unknown_weight_width_lists_the_known_ones():
    """GPU.flops: a bit width without a figure raises InputError listing those it has."""
    with pytest.raises(InputError, match="3-bit.*4, 8, 16"):
        H100.flops(3)


# --- GPU presets against published figures ------------------------------------------------------


def test_h100_matches_its_datasheet_as_rounded_in_the_paper():
    """NVIDIA (2023) H100 SXM: 989 TFLOP/s bf16, 1979 fp8 dense, 3.35 TB/s, 80 GB (Erdil 2025
    rounds to 1e15, 2e15, 3.3e12)."""
    assert abs(H100.flops(16) / 989e12 - 1) < 0.02
    assert abs(H100.flops(8) / 1979e12 - 1) < 0.02
    assert abs(H100.bandwidth() / 3.35e12 - 1) < 0.02
    assert H100.hbm_bytes == 80e9


def test_h100_price_is_about_two_dollars_per_hour():
    """Erdil (2025) sec. 2: an H100 rents for about $2 per hour."""
    assert abs(H100.price_per_hour - 2.0) / 2.0 < 0.06


def test_a100_matches_its_datasheet():
    """NVIDIA (2020) A100 SXM 80 GB: 312 TFLOP/s bf16, 624 TOP/s int8, ~2.0 TB/s."""
    a100 = get_gpu("a100")
    assert a100.flops(16) == 312e12
    assert a100.flops(8) == 624e12
    assert abs(a100.bandwidth() / 2.039e12 - 1) < 0.02


@pytest.mark.parametrize("name", sorted(GPUS))
def test_capped_rates_are_the_caps_times_the_peaks(name):
    """hardware.py: capped = peak × cap, and caps lie in (0, 1]."""
    gpu = get_gpu(name)
    assert gpu.flops(16, capped=True) == pytest.approx(gpu.flops(16) * gpu.flop_cap, rel=1e-15)
    assert gpu.bandwidth(capped=True) == pytest.approx(gpu.hbm_bandwidth * gpu.bandwidth_cap,
                                                       rel=1e-15)
    assert 0 < gpu.flop_cap <= 1 and 0 < gpu.bandwidth_cap <= 1


# --- validation.py ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (0, "> 0"),
        (0.0, "> 0"),
        (-1, "> 0"),
        (-1e-300, "> 0"),
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        (float("-inf"), "finite"),
        ("abc", "number"),
        ("", "number"),
        (None, "number"),
        ([1.0], "number"),
        ("5", "number"),
        (True, "number"),
    ],
)
def test_positive_rejects_bad_values_naming_the_field(value, reason):
    """validation.positive: InputError whose message names the field and the problem."""
    with pytest.raises(InputError) as caught:
        positive("hbm_bandwidth", value)
    message = str(caught.value)
    assert message.startswith("hbm_bandwidth")
    assert reason in message


def test_positive_accepts_positive_numbers_and_zero_when_allowed():
    """validation.positive: finite positive values come back as floats."""
    assert positive("x", 3) == 3.0 and isinstance(positive("x", 3), float)
    assert positive("x", 1e-300) == 1e-300
    assert positive("x", 0, allow_zero=True) == 0.0
    with pytest.raises(InputError, match=">= 0"):
        positive("x", -1, allow_zero=True)


def test_positive_int_requires_whole_numbers():
    """validation.positive_int: 4 and 4.0 pass, 2.5 and 0 fail naming the field."""
    assert positive_int("layers", 4) == 4
    assert positive_int("layers", 4.0) == 4
    with pytest.raises(InputError, match="layers must be a whole number"):
        positive_int("layers", 2.5)
    with pytest.raises(InputError, match="layers must be > 0"):
        positive_int("layers", 0)


def test_lookup_names_the_kind_and_the_choices():
    """validation.lookup: the error says what was looked up and lists the table."""
    table = {"alpha-1": 1, "beta-2": 2}
    assert lookup("widget", "ALPHA 1", table) == 1
    with pytest.raises(InputError, match=r"unknown widget 'gamma'; choose one of: alpha-1, beta-2"):
        lookup("widget", "gamma", table)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_parameter_counts_are_whole_numbers(name):
    """A parameter count is an integer; float64 holds it exactly below 2^53."""
    model = get_model(name)
    assert model.total_params < 2**53
    assert model.total_params == int(model.total_params)
    assert model.kv_bytes_per_token == int(model.kv_bytes_per_token)


def test_parse_positive_reads_command_line_text():
    """validation.parse_positive: text is parsed, then checked like any number."""
    from inference_math.core.validation import parse_positive

    assert parse_positive("--t-hop", "2e-6") == 2e-6
    with pytest.raises(InputError, match="--t-hop must be a number"):
        parse_positive("--t-hop", "fast")


def test_model_without_d_head_needs_heads_dividing_width():
    """4096/24 is not whole: a model must then state d_head instead of silently rounding it."""
    with pytest.raises(InputError, match="d_head is needed"):
        dataclasses.replace(get_model("llama-3-8b"), n_q_heads=24, group_size=4)
    explicit = dataclasses.replace(get_model("llama-3-8b"), n_q_heads=24, group_size=4, d_head=128)
    assert explicit.head_dim == 128


@pytest.mark.parametrize("grid", [0.5, 1, -3])
def test_frontier_grid_must_have_two_points_per_axis(grid):
    from inference_math.fullmodel.toy_model import reference_code_frontier

    with pytest.raises(InputError, match="grid"):
        reference_code_frontier(get_model("llama-3-8b"), get_gpu("h100"), grid=grid)


def test_embedding_model_preset_counts_one_vocabulary_matrix():
    """Qwen3-Embedding-8B: 7.57e9 parameters as Mazurek (2025) states (15.14 GB in bf16); it has an
    input embedding and no LM head, so one vocabulary matrix is counted, not two."""
    model = get_model("qwen3-embedding-8b")
    assert abs(model.total_params / 7.57e9 - 1) < 0.001
    assert abs(model.weights_bytes / 15.14e9 - 1) < 0.001
    assert model.embedding_params == model.vocab * model.d_model


def test_embedding_matrices_must_be_one_or_two():
    with pytest.raises(InputError, match="embedding_matrices"):
        dataclasses.replace(get_model("llama-3-8b"), embedding_matrices=3)

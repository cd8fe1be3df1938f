"""Models from a Hugging Face config.json (presets.hf_config), get_model(path) and describe-model."""

from __future__ import annotations

import json
import math

import pytest

from inference_math import cli
from inference_math.core.validation import InputError
from inference_math.presets import hf_config as hc
from inference_math.presets.layered import LayeredModel
from inference_math.presets.models import Model, describe, get_model

FIXTURES = hc.FIXTURES


def fixture(stem: str):
    return FIXTURES / f"{stem}.config.json"


def arch(stem: str) -> hc.Architecture:
    return hc.read_architecture(fixture(stem))


def run(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- published totals -----------------------------------------------------------------------------

def test_every_shipped_config_has_a_published_total():
    stems = {p.name.removesuffix(".config.json") for p in FIXTURES.glob("*.config.json")}
    assert set(hc.PUBLISHED) <= stems  # the rest: tests/test_hf_corpus.py


@pytest.mark.parametrize("row", hc.published_comparison(), ids=lambda r: r["model"])
def test_counts_match_the_published_totals(row):
    """Total and active parameters within 1% of the published figures, or within the stated
    tolerance where the figure itself is coarser (a reason is then given)."""
    for kind in ("total", "active"):
        tolerance = row[f"{kind}_tolerance"]
        assert abs(row[f"{kind}_gap"]) <= tolerance, (kind, row)
        if tolerance > 0.01:
            assert row["why"], row["model"]


def test_qwen3_dense_counts_from_their_shapes():
    """Qwen3-8B/32B have no total on their cards beyond '8.2B'/'32.8B'; check the shapes."""
    eight = arch("Qwen--Qwen3-8B")
    per_layer = 4096 * 128 * (32 + 8 + 8 + 32) + 3 * 4096 * 12288
    assert eight.total_params == 36 * per_layer + 2 * 151936 * 4096
    assert abs(eight.total_params / 8.2e9 - 1) < 0.01
    assert abs(arch("Qwen--Qwen3-32B").total_params / 32.8e9 - 1) < 0.01


# --- layer mixes ----------------------------------------------------------------------------------

def _mix(a: hc.Architecture) -> list[tuple]:
    return [(g.count, g.attention.span, g.attention.heads, g.ffn.kind) for g in a.groups]


@pytest.mark.parametrize("stem, mix", [
    ("meta-llama--Meta-Llama-3.1-70B", [(80, "full", "GQA", "dense")]),
    ("mistralai--Mixtral-8x7B-v0.1", [(32, "full", "GQA", "moe")]),
    ("deepseek-ai--DeepSeek-V3", [(3, "full", "MLA", "dense"), (58, "full", "MLA", "moe")]),
    ("moonshotai--Kimi-K2-Instruct", [(1, "full", "MLA", "dense"), (60, "full", "MLA", "moe")]),
    ("openai--gpt-oss-120b", [(18, "sliding", "GQA", "moe"), (18, "full", "GQA", "moe")]),
    ("meta-llama--Llama-4-Scout-17B-16E-Instruct",
     [(36, "chunked", "GQA", "moe"), (12, "full", "GQA", "moe")]),
    ("meta-llama--Llama-4-Maverick-17B-128E-Instruct",
     [(24, "chunked", "GQA", "dense"), (12, "chunked", "GQA", "moe"), (12, "full", "GQA", "moe")]),
    ("google--gemma-4-26B-A4B", [(25, "sliding", "GQA", "moe"), (5, "full", "GQA", "moe")]),
    ("Qwen--Qwen3.5-397B-A17B", [(45, "linear", "linear", "moe"), (15, "full", "GQA", "moe")]),
])
def test_layer_mixes(stem, mix):
    assert _mix(arch(stem)) == mix


def test_details_of_the_mixes():
    ds = arch("deepseek-ai--DeepSeek-V3")
    assert ds.groups[1].ffn == hc.FeedForward("moe", 2048, 256, 8, 1, 2048)
    assert ds.groups[0].attention.mla == (1536, 512, 64, 128)
    assert ds.n_mtp == 1 and ds.mtp_params > 11e9
    # the MTP layer is reported, not counted: the checkpoint's 685B = 671B + 14B, the 14B
    # including its own copies of the embedding and output head
    assert abs((ds.mtp_params + ds.embedding_params) / 14e9 - 1) < 0.05
    assert arch("moonshotai--Kimi-K2-Instruct").n_mtp == 0
    oss = arch("openai--gpt-oss-20b")
    assert oss.groups[0].attention.window == 128 and oss.groups[0].attention.sinks
    scout = arch("meta-llama--Llama-4-Scout-17B-16E-Instruct")
    assert scout.groups[0].attention.window == 8192
    assert scout.groups[0].ffn == hc.FeedForward("moe", 8192, 16, 1, 1, 8192)
    gemma = arch("google--gemma-4-26B-A4B")
    full = gemma.groups[1].attention
    assert (full.d_head, full.n_kv, full.m_kv) == (512, 2, 1) and gemma.tied
    assert gemma.groups[0].attention.window == 1024
    qwen = arch("Qwen--Qwen3.5-397B-A17B")
    assert qwen.groups[1].attention.m_q == 2 and qwen.state_bytes == 4 and qwen.n_mtp == 1


def test_kv_growth_is_capped_by_windows_and_linear_layers():
    oss = arch("openai--gpt-oss-120b")
    assert oss.kv_bytes_per_token == 36 * 2048 and oss.kv_bytes_per_token_long == 18 * 2048
    assert oss.kv_bytes_at(100) == 36 * 2048 * 100
    assert oss.kv_bytes_at(131072) == 18 * 2048 * (128 + 131072)
    qwen = arch("Qwen--Qwen3.5-397B-A17B")
    state = 45 * (64 * 128 * 128 * 4 + 3 * (2 * 2048 + 8192) * 2)
    assert qwen.state_bytes_per_sequence == state
    assert qwen.kv_bytes_at(131072) == state + 15 * 2 * 2 * 256 * 2 * 131072
    ds = arch("deepseek-ai--DeepSeek-V3")
    assert ds.kv_bytes_at(1000) == 61 * (512 + 64) * 2 * 1000


def test_weight_bytes_follow_the_quantization_config():
    oss = arch("openai--gpt-oss-120b")
    experts = 36 * 128 * 3 * 2880 * 2880
    assert oss.quantized_params == experts
    assert oss.weight_bytes() == (experts * 4.25 + (oss.total_params - experts) * 16) / 8
    assert abs(oss.weight_bytes() / (60.8 * 2**30) - 1) < 0.01  # the card's 60.8 GiB checkpoint
    assert oss.weight_bytes(8) == oss.total_params
    ds = arch("deepseek-ai--DeepSeek-V3")
    linear = ds.total_params - ds.embedding_params - 58 * 256 * 7168
    assert ds.quantized_params == linear
    assert ds.weight_bytes() == pytest.approx((linear * (8 + 32 / 128**2)
                                               + (ds.total_params - linear) * 16) / 8)
    # The Hub's safetensors count for Llama 3.1 8B, 8,030,261,248, less its 65 RMSNorm vectors
    # (two per layer and the final one), which the count leaves out.
    assert arch("meta-llama--Meta-Llama-3.1-8B").weight_bytes() == 2 * (8_030_261_248
                                                                        - 65 * 4096)


# --- the uniform full model -----------------------------------------------------------------------

@pytest.mark.parametrize("stem, preset", [
    ("meta-llama--Meta-Llama-3.1-8B", "llama-3.1-8b"),
    ("meta-llama--Meta-Llama-3.1-70B", "llama-3-70b"),
    ("mistralai--Mixtral-8x7B-v0.1", "mixtral-8x7b"),
    ("mistralai--Mixtral-8x22B-v0.1", "mixtral-8x22b"),
])
def test_a_config_gives_the_presets_model(stem, preset):
    """Llama 3.1 70B shares Llama 3 70B's architecture: the same counts, cache and layout."""
    ours, theirs = get_model(str(fixture(stem))), get_model(preset)
    assert isinstance(ours, Model)
    for attr in ("total_params", "active_params", "kv_bytes_per_token", "weights_bytes",
                 "sparsity", "head_dim"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    for attr in ("d_model", "d_ff", "layers", "n_q_heads", "group_size", "ff_matrix_count",
                 "n_experts", "n_active_experts", "vocab", "embedding_matrices", "weight_bytes",
                 "activation_bytes", "mla_kv_dim"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr


def test_the_405b_preset_keeps_the_reference_codes_kv_heads():
    """The llama-3.1-405b preset reproduces the paper's code, which gives 405B 16 KV heads
    (group_size 8); the published config has 8 (num_key_value_heads), so only the K and V
    projections and the cache differ."""
    ours, theirs = get_model(str(fixture("meta-llama--Meta-Llama-3.1-405B"))), \
        get_model("llama-3.1-405b")
    assert (ours.group_size, theirs.group_size) == (16, 8)
    assert theirs.total_params - ours.total_params == 126 * 2 * 8 * 128 * 16384
    assert theirs.kv_bytes_per_token == 2 * ours.kv_bytes_per_token
    assert ours.ff_params == theirs.ff_params


def test_qwen3_models_for_the_full_model():
    eight = Model.from_hf_config(fixture("Qwen--Qwen3-8B"))
    assert (eight.d_model, eight.layers, eight.n_q_heads, eight.group_size, eight.head_dim,
            eight.d_ff, eight.vocab, eight.embedding_matrices) == (4096, 36, 32, 4, 128, 12288,
                                                                   151936, 2)
    assert eight.total_params == arch("Qwen--Qwen3-8B").total_params == 8_190_427_136
    assert eight.kv_bytes_per_token == 36 * 2 * 8 * 128 * 2
    big = Model.from_hf_config(fixture("Qwen--Qwen3-32B"))
    assert big.d_head == 128 and big.head_dim == 128  # not 5120 / 64 = 80
    assert big.total_params == arch("Qwen--Qwen3-32B").total_params
    moe = Model.from_hf_config(FIXTURES / "Qwen--Qwen3-30B-A3B.config.json")
    full = arch("Qwen--Qwen3-30B-A3B")
    router = 48 * 128 * 2048  # the Model has no router term
    assert moe.total_params == full.total_params - router
    assert moe.active_params == full.active_params - router
    assert (moe.n_experts, moe.n_active_experts, moe.d_ff) == (128, 8, 768)


@pytest.mark.parametrize("stem, groups", [
    ("deepseek-ai--DeepSeek-V3", 2), ("moonshotai--Kimi-K2-Instruct", 2),
    ("openai--gpt-oss-20b", 2), ("meta-llama--Llama-4-Scout-17B-16E-Instruct", 2),
    ("meta-llama--Llama-4-Maverick-17B-128E-Instruct", 3), ("google--gemma-4-26B-A4B", 2),
])
def test_other_architectures_are_layer_groups_in_the_full_model(stem, groups):
    """What one uniform Model cannot hold, the full model times by layer groups (LayeredModel),
    with the counts of describe-model."""
    model = get_model(str(fixture(stem)))
    assert isinstance(model, LayeredModel) and len(model.pieces) == groups
    a = arch(stem)
    assert model.total_params == pytest.approx(a.total_params, rel=1e-12)
    assert model.kv_bytes_per_token == pytest.approx(a.kv_bytes_per_token, rel=1e-12)
    assert model.layers == sum(group.count for group in a.groups)


def test_linear_attention_is_in_the_full_model():
    """Qwen3.5's linear-attention layers are a group of their own, their state a fixed cache."""
    model = get_model(str(fixture("Qwen--Qwen3.5-397B-A17B")))
    assert isinstance(model, LayeredModel)
    linear = [piece for piece in model.pieces if piece.fixed_context is not None]
    assert [piece.shape.layers for piece in linear] == [45]


# --- bad input ------------------------------------------------------------------------------------

LLAMA = json.loads(fixture("meta-llama--Meta-Llama-3.1-8B").read_text())


def _write(tmp_path, content, name="config.json") -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


BAD = [
    ({"model_type": "jamba", "layers_block_type": ["mamba", "attention"], **{
        k: v for k, v in LLAMA.items() if k != "model_type"}}, "jamba: state-space (Mamba)"),
    ({**LLAMA, "model_type": "nemotron_h", "hybrid_override_pattern": "M-M*"},
     "nemotron_h: hybrid_override_pattern has 4 entries for num_hidden_layers=32"),
    ({**LLAMA, "model_type": "nemotron_h", "hybrid_override_pattern": "M-Mx"},
     "nemotron_h: hybrid_override_pattern must be letters of M * - E"),
    ({**LLAMA, "model_type": "llama", "mamba_d_state": 16}, "llama: state-space (Mamba) layers "
                                                            "(mamba_d_state)"),
    ({**LLAMA, "model_type": "deci", "block_configs": [{"attention": {}}]},
     "deci: block_configs must list 32 objects with 'attention' and 'ffn'"),
    ({**LLAMA, "model_type": "frobnicator", "frob_width": 7},
     "frobnicator: field 'frob_width' is not understood"),
    ({**json.loads(fixture("deepseek-ai--DeepSeek-V3").read_text()), "compress_ratios": [4] * 61},
     "deepseek_v3: compress_ratios (compressed attention) is not read"),
    ({**json.loads(fixture("Qwen--Qwen3-30B-A3B").read_text()), "num_experts_per_tok": 0},
     "qwen3_moe: config.json has no experts per token"),
    ({k: v for k, v in LLAMA.items() if k != "hidden_size"}, "llama: config.json has no "
                                                             "'hidden_size'"),
    ({k: v for k, v in LLAMA.items() if k != "model_type"}, "config.json has no 'model_type'"),
    ({**LLAMA, "num_hidden_layers": "32"}, "llama: num_hidden_layers must be a whole number"),
    ({**LLAMA, "num_hidden_layers": 31.5}, "llama: num_hidden_layers must be a whole number"),
    ({**LLAMA, "num_key_value_heads": 7}, "llama: num_key_value_heads=7 does not divide"),
    ({**LLAMA, "tie_word_embeddings": "no"}, "llama: tie_word_embeddings must be true or false"),
    ({**LLAMA, "torch_dtype": "int3"}, "llama: torch_dtype 'int3'"),
    ({**json.loads(fixture("openai--gpt-oss-20b").read_text()), "layer_types": ["full_attention"]},
     "gpt_oss: layer_types has 1 entries for num_hidden_layers=24"),
    ({**json.loads(fixture("openai--gpt-oss-20b").read_text()),
      "layer_types": ["mamba"] * 24}, "gpt_oss: layer_types[0]='mamba'"),
    ({**json.loads(fixture("deepseek-ai--DeepSeek-V3").read_text()),
      "quantization_config": {"quant_method": "awq"}}, "deepseek_v3: quantization_config "
                                                       "quant_method 'awq'"),
    ({**LLAMA, "model_type": "qwen3", "use_sliding_window": True},
     "qwen3: use_sliding_window=true"),
    ({**json.loads(fixture("mistralai--Mixtral-8x7B-v0.1").read_text()),
      "num_experts_per_tok": 9}, "mixtral: num_experts_per_tok=9 exceeds the 8 experts"),
    ({**json.loads(fixture("deepseek-ai--DeepSeek-V3").read_text()), "num_experts_per_tok": 300},
     "deepseek_v3: num_experts_per_tok=300 exceeds the 256 experts"),
    ({**LLAMA, "intermediate_size": [14336] * 16 + [8192] * 16},
     "llama: intermediate_size must be a whole number >= 1, got [14336"),
    ([1, 2, 3], "config.json must hold a JSON object, got list"),
    ('{"model_type": "llama", "hidden_size": 4096,', "config.json is not valid JSON"),
    ('{"model_type": "llama", "hidden_size": 40', "config.json is not valid JSON"),
    ("", "config.json is not valid JSON"),
    ({**LLAMA, "hidden_size": float("nan")}, "llama: hidden_size must be a whole number"),
    ({**LLAMA, "vocab_size": -5}, "llama: vocab_size must be a whole number >= 1"),
]


@pytest.mark.parametrize("content, message", BAD, ids=[m for _, m in BAD])
def test_bad_configs_are_one_line_naming_type_and_field(tmp_path, capsys, content, message):
    path = _write(tmp_path, content)
    with pytest.raises(InputError, match=None) as info:
        hc.read_architecture(path)
    assert str(info.value).startswith(message) or message in str(info.value), str(info.value)
    code, out, err = run(capsys, "describe-model", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert message in err
    code, out, err = run(capsys, "max-speed", "--model", path, "--gpu", "h100")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_paths_that_name_no_config(tmp_path, capsys):
    code, _, err = run(capsys, "describe-model", str(tmp_path))
    assert code == 2 and "no config.json at" in err and err.count("\n") == 1
    code, _, err = run(capsys, "describe-model", str(tmp_path / "missing.json"))
    assert code == 2 and "no config.json at" in err
    code, _, err = run(capsys, "describe-model", "no-such-preset")
    assert code == 2 and "unknown model 'no-such-preset'" in err
    (tmp_path / "config.json").write_bytes(b"\xff\xfe{")
    code, _, err = run(capsys, "describe-model", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_a_preset_name_stays_a_preset_beside_a_folder_of_that_name(tmp_path, monkeypatch):
    (tmp_path / "llama-3-70b").mkdir()
    (tmp_path / "mine").mkdir()
    _write(tmp_path / "mine", LLAMA)
    monkeypatch.chdir(tmp_path)
    assert get_model("llama-3-70b") is get_model("Llama-3-70B")
    assert get_model("mine").total_params == get_model("llama-3.1-8b").total_params


@pytest.mark.parametrize("stem", ["google--gemma-4-26B-A4B", "Qwen--Qwen3.5-397B-A17B",
                                  "meta-llama--Llama-4-Maverick-17B-128E-Instruct"])
def test_a_text_config_alone_reads_as_the_whole(tmp_path, stem):
    """The text model's own config (model_type gemma4_text, ...) counts as the wrapper does."""
    config = json.loads(fixture(stem).read_text())
    text = {"torch_dtype": config.get("torch_dtype", "bfloat16"),
            "tie_word_embeddings": config.get("tie_word_embeddings", False),
            **config["text_config"]}
    assert hc.read_architecture(_write(tmp_path, text)).total_params == arch(stem).total_params


def test_a_folder_holding_a_config_is_read(tmp_path):
    folder = tmp_path / "Meta-Llama-3.1-8B"
    folder.mkdir()
    _write(folder, LLAMA)
    a = hc.read_architecture(folder)
    assert a.name == "Meta-Llama-3.1-8B"
    assert a.total_params == arch("meta-llama--Meta-Llama-3.1-8B").total_params


# --- describe-model -------------------------------------------------------------------------------

FIELDS = {"total_params", "active_params", "layers", "kv_bytes_per_token", "weight_bytes",
          "mtp_params", "kv_bytes_at_context", "active_params_without_input_embedding"}


def test_describe_model_json_for_a_config(capsys):
    code, out, err = run(capsys, "describe-model", str(fixture("openai--gpt-oss-120b")), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert FIELDS <= set(data)
    assert data["kv_bytes_at_context"]["131072"] == 18 * 2048 * (128 + 131072)
    assert [layer["count"] for layer in data["layers"]] == [18, 18]
    assert data["layers"][0]["attention"]["window"] == 128
    assert data["quantization"] == "mxfp4" and data["quantized_bits"] == 4.25
    assert data["full_model"] is None  # timed by layer groups
    code, out, _ = run(capsys, "describe-model", str(fixture("openai--gpt-oss-120b")), "--json",
                       "--weight-bits", "8")
    data8 = json.loads(out)
    assert data8["weight_bytes"] == data8["total_params"] and data8["quantization"] is None


@pytest.mark.parametrize("name", ["llama-3-70b", "deepseek-v3", "deepseek-v3-paper", "mixtral-8x22b",
                                  "gpt-3"])
def test_describe_model_works_for_presets(capsys, name):
    code, out, _ = run(capsys, "describe-model", name, "--json")
    data = json.loads(out)
    model = get_model(name)
    assert code == 0 and data["total_params"] == model.total_params
    assert data["kv_bytes_at_context"]["1024"] == model.kv_bytes_per_token * 1024
    assert data["weight_bytes"] == pytest.approx(model.weights_bytes, rel=1e-12)
    assert sum(layer["count"] for layer in data["layers"]) == model.layers


def test_describe_model_text(capsys):
    code, out, _ = run(capsys, "describe-model", str(fixture("Qwen--Qwen3.5-397B-A17B")))
    assert code == 0
    assert "total parameters   396.35 B" in out and "multi-token-prediction" in out
    assert "45 x linear attention" in out and "constant state" in out
    code, out, _ = run(capsys, "describe-model", "llama-3-70b", "--weight-bits", "4")
    assert code == 0 and "35.276 GB (4 bits)" in out


@pytest.mark.parametrize("bits", ["0.5", "33", "nan", "x"])
def test_describe_model_weight_bits_range(capsys, bits):
    code, out, err = run(capsys, "describe-model", "llama-3-70b", "--weight-bits", bits)
    assert code == 2 and out == "" and "--weight-bits" in err and err.count("\n") == 1


def test_every_fixture_describes_as_strict_json():
    for path in sorted(FIXTURES.glob("*.config.json")):
        if "compress_ratios" in path.read_text():  # DeepSeek-V4: refused (test_hf_corpus)
            continue
        data = describe(str(path))
        text = json.dumps(data, allow_nan=False)
        assert json.loads(text)["total_params"] > 0
        assert all(math.isfinite(v) for v in data["kv_bytes_at_context"].values())


def test_full_model_commands_take_a_config_path(capsys):
    path = str(fixture("Qwen--Qwen3-8B"))
    code, out, err = run(capsys, "max-speed", "--model", path, "--gpu", "h100", "--no-pipeline",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["tokens_per_s"] > 0


WEIRD = [None, "x", [1], {"a": 1}, -1, 0, 2.5, 1e30, True, float("inf")]


#: The first 17 fixtures and one configuration of each family the 2025-26 corpus adds.
FUZZED = sorted(set(hc.PUBLISHED) | {
    "Qwen--Qwen3-8B", "Qwen--Qwen3-VL-30B-A3B-Instruct", "Qwen--Qwen3.5-27B",
    "deepseek-ai--DeepSeek-V3.2", "moonshotai--Kimi-K2.5", "nvidia--Nemotron-H-56B-Base-8K",
    "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
    "deepseek-ai--DeepSeek-V4-Flash", "Qwen--Qwen3-32B-FP8-Static-PerTensor"})


@pytest.mark.parametrize("stem", FUZZED)
def test_no_field_value_crashes_the_reader(stem):
    """Fuzz: every field of every shipped config (and of its text_config) replaced by odd values
    either reads, with finite counts, or raises InputError; never another exception."""
    config = json.loads(fixture(stem).read_text())
    paths = [(key,) for key in config] + [("text_config", key)
                                          for key in config.get("text_config") or {}]
    for path in paths:
        for value in WEIRD:
            changed = json.loads(json.dumps(config))
            target = changed if len(path) == 1 else changed["text_config"]
            target[path[-1]] = value
            try:
                a = hc.parse(changed, stem)
                data = hc.describe_architecture(a)
            except InputError as exc:
                assert "\n" not in str(exc)
                continue
            json.dumps(data, allow_nan=False)


# --- reading by what fields mean ------------------------------------------------------------------

def test_a_new_model_type_is_read_by_its_fields(tmp_path, capsys):
    """A Llama under a name never seen: the same counts, read_by_fields in the JSON and one line
    of notice on standard error."""
    path = _write(tmp_path, {**LLAMA, "model_type": "frobnicator"})
    new, llama = hc.read_architecture(path), arch("meta-llama--Meta-Llama-3.1-8B")
    assert new.read_by_fields and not llama.read_by_fields
    assert new.total_params == llama.total_params and new.groups == llama.groups
    code, out, err = run(capsys, "describe-model", path, "--json")
    assert code == 0 and json.loads(out)["read_by_fields"] is True
    # the notice, and the note of what the fields could not say (the feed-forward block's form)
    assert err.count("\n") == 2 and "frobnicator" in err and "read by" in err
    assert "assumed gated (SwiGLU, three matrices)" in err


def test_zero_or_null_means_absent_and_aliases_agree(tmp_path):
    """shared_expert_intermediate_size: 0 is no shared expert; num_local_experts and
    num_experts_per_token read as num_experts and num_experts_per_tok."""
    qwen = json.loads(fixture("Qwen--Qwen3-30B-A3B").read_text())
    base = arch("Qwen--Qwen3-30B-A3B")
    zero = hc.parse({**qwen, "shared_expert_intermediate_size": 0, "n_shared_experts": None})
    assert zero.groups == base.groups
    renamed = {k: v for k, v in qwen.items() if k not in ("num_experts", "num_experts_per_tok")}
    renamed.update(num_local_experts=128, num_experts_per_token=8)
    assert hc.parse(renamed).total_params == base.total_params
    shared = hc.parse({**qwen, "shared_expert_intermediate_size": 1024})
    assert shared.total_params == base.total_params + 48 * 3 * 2048 * 1024


def test_a_multimodal_wrappers_text_config_is_the_language_model():
    vl = arch("Qwen--Qwen3-VL-8B-Instruct")
    text = arch("Qwen--Qwen3-8B")
    assert vl.groups == text.groups and vl.total_params == text.total_params
    kimi = arch("moonshotai--Kimi-K2.5")
    assert kimi.groups[1].ffn == arch("moonshotai--Kimi-K2-Instruct").groups[1].ffn


def test_nvfp4_weights_from_the_hf_quant_config_beside_the_config():
    """DeepSeek-V3.1-NVFP4: routed, shared and dense feed-forward weights and the output
    projection of attention in NVFP4 (4 + 8/16 bits), the other attention projections (listed in
    exclude_modules), the routers, embeddings and output head in 16 bits: about 380 GB, not the
    1,342 GB of 16-bit weights. The checkpoint also states an FP8 KV cache."""
    ds = arch("nvidia--DeepSeek-V3.1-NVFP4")
    d, layers, n_q = 7168, 61, 128
    kept = layers * (d * 1536 + 1536 * n_q * 192 + d * (512 + 64) + 512 * n_q * 256)
    routers = 58 * 256 * d
    nvfp4 = ds.total_params - ds.embedding_params - routers - kept
    assert ds.quantized_params == pytest.approx(nvfp4)
    expected = (nvfp4 * 4.5 + (ds.total_params - nvfp4) * 16) / 8
    assert ds.weight_bytes() == pytest.approx(expected)
    assert 370e9 < ds.weight_bytes() < 395e9
    assert ds.kv_cache_bits == 8 and arch("deepseek-ai--DeepSeek-V3").kv_cache_bits is None
    model = get_model(str(fixture("nvidia--DeepSeek-V3.1-NVFP4")))
    assert model.kv_cache_bits == 8
    assert model.weights_bytes == pytest.approx(expected)


def test_mixed_precision_module_by_module():
    """Qwen3.6-27B-NVFP4: attention and linear attention in FP8, the MLPs and the output head
    in NVFP4 (quantized_layers), embeddings, gates and convolutions in 16 bits."""
    q = arch("nvidia--Qwen3.6-27B-NVFP4")
    plain = arch("Qwen--Qwen3.5-27B")
    assert q.total_params == plain.total_params
    mlp = 64 * 3 * 5120 * 17408
    full = 16 * (5120 * 256 * (2 * 24 + 4 + 4) + 24 * 256 * 5120)
    linear = 48 * ((2 * 16 * 128 + 48 * 128) * 5120 + 2 * 48 * 128 * 5120)
    head = 248320 * 5120
    assert q.quantized_params == pytest.approx(mlp + full + linear + head)
    assert q.weight_bytes() == pytest.approx(((mlp + head) * 4.5 + (full + linear) * 8
                                              + (q.total_params - mlp - head - full - linear) * 16)
                                             / 8)


def test_layer_matrices_sum_to_the_derived_counts():
    """The named matrices the storage is read by add up to each layer's derived count."""
    for stem in ("deepseek-ai--DeepSeek-V3.2", "Qwen--Qwen3.5-397B-A17B", "openai--gpt-oss-120b",
                 "google--gemma-4-26B-A4B", "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
                 "meta-llama--Llama-4-Maverick-17B-128E-Instruct"):
        a = arch(stem)
        names = hc._naming(a.model_type)
        for group, layer in zip(a.groups, a.layers, strict=True):
            matrices = hc.layer_matrices(group.attention, group.ffn, a.d_model, names)
            assert sum(p for _, p, _, _ in matrices) == pytest.approx(
                layer["attention"] + layer["ff"]), (stem, group)


def test_mamba_hybrids_are_counted_and_timed(capsys):
    """Nemotron-H 56B: 54 Mamba-2, 10 attention and 54 MLP layers; each Mamba-2 layer counted by
    its matrices, its state by eq-layers-state-linear; the full model times it (it refused it
    before issue 22; tests/test_mamba_hybrids.py checks the timing)."""
    h = arch("nvidia--Nemotron-H-56B-Base-8K")
    d, heads, head_dim, groups, state = 8192, 256, 64, 8, 256
    inner = heads * head_dim
    mamba = d * (2 * inner + 2 * groups * state + heads) + 4 * (inner + 2 * groups * state) \
        + inner * d
    attention = d * 128 * (64 + 8 + 8 + 64)
    mlp = 2 * d * 32768
    assert [g.count for g in h.groups] == [54, 54, 10]
    assert h.total_params == 54 * mamba + 10 * attention + 54 * mlp + 2 * 131072 * d
    assert h.state_bytes_per_sequence == 54 * (heads * head_dim * state * 2
                                               + 3 * (inner + 2 * groups * state) * 2)
    path = str(fixture("nvidia--Nemotron-H-56B-Base-8K"))
    code, out, err = run(capsys, "max-speed", "--model", path, "--gpu", "h100")
    assert code == 0 and "Traceback" not in err
    data = describe(path)
    assert data["full_model"] is None


QUANTIZED = ["nvidia--DeepSeek-V3.1-NVFP4", "nvidia--Qwen3.6-27B-NVFP4", "moonshotai--Kimi-K2.5",
             "openai--gpt-oss-20b", "deepseek-ai--DeepSeek-V3", "Qwen--Qwen3-32B-FP8-Static-PerTensor",
             "nvidia--Gemma-4-31B-IT-NVFP4", "Qwen--Qwen3-30B-A3B-FP8"]


@pytest.mark.parametrize("stem", QUANTIZED)
def test_no_quantization_value_crashes_the_reader(stem):
    """Fuzz: every field of a quantization_config and of an hf_quant_config.json's
    'quantization' (and of their first config group's weights) replaced by odd values either
    reads, with finite weight bytes, or raises InputError in one line."""
    from inference_math.presets import checkpoint_precision as cp
    config = json.loads(fixture(stem).read_text())
    hf_quant = cp.load_quant_file(cp.quant_file_beside(fixture(stem)))
    sources = []
    if hf_quant is not None:
        sources.append(("hf_quant", hf_quant["quantization"]))
    top = "quantization_config" in config
    quant = config.get("quantization_config") or config.get("text_config", {}).get(
        "quantization_config")
    if quant is not None:
        sources.append(("config", quant))
        groups = quant.get("config_groups") or {}
        if groups:
            sources.append(("weights", next(iter(groups.values())).get("weights") or {}))
    assert sources, stem
    for where, target in sources:
        for key in list(target):
            for value in WEIRD:
                old = target[key]
                target[key] = value
                try:
                    changed = json.loads(json.dumps(config))
                    a = hc.parse(changed, stem, json.loads(json.dumps(hf_quant))
                                 if hf_quant is not None else None)
                    assert math.isfinite(a.weight_bytes()), (where, key, value)
                except InputError as exc:
                    assert "\n" not in str(exc)
                finally:
                    target[key] = old
    assert top or quant is None or "text_config" in config


def test_compressed_tensors_int4_experts():
    """Kimi K2.5: compressed-tensors 'pack-quantized' INT4 in groups of 32 with 16-bit scales
    (4 + 16/32 bits) for every linear layer but lm_head, attention, shared experts and the dense
    MLP (its ignore list of regular expressions): the 60 MoE layers' routed experts only."""
    k = arch("moonshotai--Kimi-K2.5")
    experts = 60 * 384 * 3 * 7168 * 2048
    assert k.quantized_params == experts and k.quantized_bits == 4.5
    assert k.weight_bytes() == pytest.approx((experts * 4.5 + (k.total_params - experts) * 16) / 8)
    assert k.kv_cache_bits is None


def _blocks(attention_group, ffn_mult, no_op_attention=()):
    return [{"attention": {"no_op": i in no_op_attention, "replace_with_linear": False,
                           "n_heads_in_group": None if i in no_op_attention else attention_group[i]},
             "ffn": {"no_op": False, "replace_with_linear": False, "ffn_mult": ffn_mult[i]}}
            for i in range(32)]


def test_per_layer_block_configs_are_grouped(tmp_path, capsys):
    """DeciLM / Nemotron-NAS block_configs: each layer's own key-value heads and feed-forward
    width (int(2·ffn_mult·d/3) rounded up to 256), layers alike grouped; timed by the full model
    while every layer has both blocks, refused in one line naming block_configs when one lacks
    attention (no_op)."""
    groups = [8] * 16 + [4] * 16
    mults = [3.5] * 8 + [1.3125] * 24
    config = {**LLAMA, "model_type": "nemotron-nas", "block_configs": _blocks(groups, mults)}
    a = hc.parse(config)
    d = 4096
    wide, narrow = 3.5 * 2 * d / 3, 1.3125 * 2 * d / 3  # 9557.33 -> 9728; 3584 exactly
    assert (int(wide) + 255) // 256 * 256 == 9728 and narrow == 3584
    attention = {8: d * 128 * (32 + 4 + 4 + 32), 4: d * 128 * (32 + 8 + 8 + 32)}
    layers = sum(attention[g] + 3 * d * (9728 if m == 3.5 else 3584)
                 for g, m in zip(groups, mults, strict=True))
    assert a.total_params == layers + 2 * 128256 * d
    assert [g.count for g in a.groups] == [8, 8, 16] and a.read_by_fields
    assert isinstance(get_model(_write(tmp_path, config)), LayeredModel)
    holes = {**config, "block_configs": _blocks(groups, mults, no_op_attention={5, 6})}
    assert hc.parse(holes).total_params == a.total_params - 2 * attention[8]
    path = _write(tmp_path, holes, "holes.json")
    code, out, err = run(capsys, "max-speed", "--model", path, "--gpu", "h100")
    assert code == 2 and err.count("\n") == 1 and "block_configs" in err and "no_op" in err


DEEPSEEK = json.loads(fixture("deepseek-ai--DeepSeek-V3").read_text())


def test_mla_without_query_compression(capsys, tmp_path):
    """q_lora_rank null (DeepSeek-V2's and Kimi Linear's q_proj): one d x n_q·(nope + rope)
    query projection in place of q_a_proj and q_b_proj; the full model refuses it in one line."""
    direct = hc.parse({**DEEPSEEK, "q_lora_rank": None, "quantization_config": None})
    base = arch("deepseek-ai--DeepSeek-V3")
    d, n_q = 7168, 128
    per_layer = d * n_q * 192 - (d * 1536 + 1536 * n_q * 192)
    assert direct.total_params == base.total_params + 61 * per_layer
    assert direct.kv_bytes_per_token == base.kv_bytes_per_token
    path = _write(tmp_path, {**DEEPSEEK, "q_lora_rank": None})
    code, _, err = run(capsys, "max-speed", "--model", path, "--gpu", "h100")
    assert code == 2 and err.count("\n") == 1 and "q_lora_rank=null" in err


def test_kimi_delta_attention_layers(tmp_path, capsys):
    """Kimi Linear (model_type kimi_linear, read by its fields): Kimi Delta Attention in the
    layers linear_attn_config.kda_layers names (from 1), MLA without query compression in the
    others, counted by the matrices of KimiDeltaAttention; each KDA layer keeps a float32 state
    of heads x head_dim^2 and its convolutions' last 3 inputs."""
    d, heads, hd, n = 2304, 32, 128, 8
    config = {"model_type": "kimi_linear", "hidden_size": d, "num_hidden_layers": n,
              "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 163840,
              "intermediate_size": 9216, "moe_intermediate_size": 1024, "num_experts": 16,
              "num_experts_per_token": 4, "num_shared_experts": 1, "first_k_dense_replace": 1,
              "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
              "qk_rope_head_dim": 64, "v_head_dim": 128, "mla_use_nope": True,
              "moe_router_activation_func": "sigmoid", "tie_word_embeddings": False,
              "linear_attn_config": {"kda_layers": [1, 2, 3, 5, 6, 7], "full_attn_layers": [4, 8],
                                     "num_heads": heads, "head_dim": hd,
                                     "short_conv_kernel_size": 4}}
    a = hc.parse(config)
    assert a.read_by_fields
    kda = 3 * d * heads * hd + 4 * 3 * heads * hd + 2 * (d * hd + hd * heads * hd) + d * heads \
        + heads * hd * d
    mla = d * 32 * 192 + d * (512 + 64) + 512 * 32 * 256 + 32 * 128 * d
    dense, moe = 3 * d * 9216, 16 * 3 * d * 1024 + 3 * d * 1024 + 16 * d
    assert a.total_params == 6 * kda + 2 * mla + dense + 7 * moe + 2 * 163840 * d
    assert a.state_bytes_per_sequence == 6 * (heads * hd * hd * 4 + 3 * 3 * heads * hd * 2)
    assert a.kv_bytes_per_token == 2 * (512 + 64) * 2
    names = hc._naming(a.model_type)
    for group, layer in zip(a.groups, a.layers, strict=True):
        assert sum(p for _, p, _, _ in hc.layer_matrices(group.attention, group.ffn, d, names)) \
            == layer["attention"] + layer["ff"]
    assert "Kimi Delta Attention" in describe(_write(tmp_path, config))["layers"][0]["description"]


def test_a_qwen2_moe_is_read_by_its_fields():
    """Qwen2-MoE (not a model_type this reader was checked against): every layer MoE with one
    shared expert of shared_expert_intermediate_size, the routed experts of moe_intermediate_size;
    Qwen1.5-MoE-A2.7B's shape gives its card's 14.3B total and 2.7B activated (embeddings
    included, as eq. 21 counts them)."""
    config = {"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
              "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936,
              "intermediate_size": 5632, "moe_intermediate_size": 1408, "num_experts": 60,
              "num_experts_per_tok": 4, "shared_expert_intermediate_size": 5632,
              "decoder_sparse_step": 1, "mlp_only_layers": [], "use_sliding_window": False,
              "sliding_window": 32768, "max_window_layers": 21, "norm_topk_prob": False,
              "output_router_logits": False, "router_aux_loss_coef": 0.001, "rope_theta": 1e6,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16", "qkv_bias": True}
    a = hc.parse(config)
    d = 2048
    layer = 4 * d * d + 60 * 3 * d * 1408 + 3 * d * 5632 + 60 * d
    assert a.read_by_fields and a.total_params == 24 * layer + 2 * 151936 * d
    assert abs(a.total_params / 14.3e9 - 1) < 0.01
    assert abs(a.active_params / 2.7e9 - 1) < 0.01


def test_a_folder_holding_an_hf_quant_config(tmp_path):
    """A checkpoint folder: config.json and hf_quant_config.json side by side, as NVIDIA publishes
    them; the same weights as the named copies beside each other in data/hf_configs."""
    stem = "nvidia--Qwen3-235B-A22B-NVFP4"
    (tmp_path / "config.json").write_text(fixture(stem).read_text())
    assert hc.read_architecture(tmp_path).weight_bytes() == pytest.approx(
        hc.read_architecture(tmp_path / "config.json").weight_bytes())
    plain = hc.read_architecture(tmp_path).weight_bytes()
    assert plain == pytest.approx(2 * arch(stem).total_params)  # no quantization stated yet
    (tmp_path / "hf_quant_config.json").write_text(
        (FIXTURES / f"{stem}.hf_quant_config.json").read_text())
    a = hc.read_architecture(tmp_path)
    assert a.weight_bytes() == pytest.approx(arch(stem).weight_bytes()) and a.kv_cache_bits == 8
    assert a.weight_bytes() < 0.3 * plain
    (tmp_path / "hf_quant_config.json").write_text("{")
    with pytest.raises(InputError, match="hf_quant_config.json cannot be read"):
        hc.read_architecture(tmp_path)

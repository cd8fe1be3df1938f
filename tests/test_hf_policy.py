"""The reader's policy by meaning: the table of fields, the classification of unknown fields, and
what the user assumes or ignores.

Property tests mutate every shipped config.json: an unknown harmless field never causes a
refusal and leaves every count unchanged; an unknown structural field is always refused in one
line naming it, and ignoring it reads the same counts, recorded on the Architecture.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inference_math.core.validation import InputError
from inference_math.presets import hf_config as hc
from inference_math.presets.hf_config import fields as F
from inference_math.presets.hf_config.policy import STRUCTURAL_WORDS, classify

STEMS = sorted(p.name.removesuffix(".config.json") for p in hc.FIXTURES.glob("*.config.json"))
PACKAGE = Path(hc.__file__).parent


@cache
def _config(stem: str) -> str:
    return (hc.FIXTURES / f"{stem}.config.json").read_text()


def _quant(stem: str) -> dict | None:
    beside = hc.FIXTURES / f"{stem}.hf_quant_config.json"
    return json.loads(beside.read_text()) if beside.is_file() else None


def _counts(arch: hc.Architecture) -> tuple:
    return (arch.total_params, arch.active_params, arch.kv_bytes_per_token,
            arch.kv_bytes_per_token_long, arch.state_bytes_per_sequence, arch.mtp_params,
            arch.weight_bytes(), tuple(g.count for g in arch.groups))


@cache
def _baseline(stem: str) -> tuple:
    return _counts(hc.parse(json.loads(_config(stem)), stem, _quant(stem)))


def _read(stem: str, extra: dict, **kw) -> hc.Architecture:
    config = json.loads(_config(stem))
    config.update(extra)
    return hc.parse(config, stem, _quant(stem), **kw)


# --- the table --------------------------------------------------------------------------------

def test_every_field_the_reader_reads_is_in_the_table():
    """Each field a family reader, the pattern readers or the reader ask for by name (f.int("..."),
    f.raw, f.has, f.flag, f.int_list) and every field of the older sets is a row of the table."""
    read = set()
    for module in PACKAGE.glob("*.py"):
        read |= set(re.findall(r'\b(?:f|outer)\.(?:int|raw|has|flag|int_list)\("([a-z_0-9]+)"',
                               module.read_text()))
    nested = {"kda_layers", "num_heads", "short_conv_kernel_size"}  # linear_attn_config's
    older = F.NEUTRAL | F._FAMILY_FIELDS | set(F.SSM_FIELDS) | set(F.UNREAD) | F._V4_FIELDS
    assert (read - nested) | older <= set(F.FIELDS)


def test_the_table_renders_as_markdown_with_every_field():
    table = F.field_table_markdown()
    lines = table.splitlines()
    assert lines[0] == "| fields | meaning | changes | source |"
    assert len(lines) == 2 + len(F.FIELD_GROUPS)
    assert all(f"`{name}`" in table for name in F.FIELDS)
    assert all(line.count(" | ") == 3 for line in lines[2:])


def test_no_field_is_in_two_groups():
    names = [n for group in F.FIELD_GROUPS for n in group[0].split()]
    assert len(names) == len(set(names))


# --- classification ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, value, kind", [
    # harmless fields of this year's releases, each of which refused a whole config before
    ("use_mtp", True, "harmless"), ("mtp_loss_scaling_factor", 0.3, "harmless"),
    ("rope_theta_local", 10000.0, "harmless"), ("router_bias_update_rate", 0.001, "harmless"),
    ("use_qk_layernorm", True, "harmless"), ("norm_type", "rmsnorm", "harmless"),
    ("expert_dtype", None, "harmless"), ("init_std", 0.006, "harmless"),
    ("rope_yarn", {"factor": 4.0, "beta_fast": 32}, "harmless"),
    # structural ones: a hybrid sliding-window layout with its own heads and RoPE
    ("swa_num_attention_heads", 64, "structural"), ("swa_head_dim", 128, "structural"),
    ("sliding_window_pattern", 6, "structural"), ("hybrid_layer_pattern", [0, 1, 1], "structural"),
    ("attn_layout", "SSSF", "structural"), ("mtp_num_layers", 1, "structural"),
    ("moe_router_topk", 8, "structural"), ("num_dense_layers", 3, "structural"),
    ("n_shared", 2, "structural"), ("frob_width", 7, "structural"),
    ("swa_config", {"num_heads": 32}, "structural"), ("attn_head_dim", 128, "structural"),
    ("moe_router_scaling_factor", 3.0, "harmless"),
])
def test_classify(name, value, kind):
    assert classify(name, value) == kind


# --- property tests on mutated shipped configs --------------------------------------------------

_PLAIN = [w for w in ("use", "enable", "foo", "bar", "alpha", "beta", "rope", "norm", "scale",
                      "theta", "loss", "coef", "init", "std", "eps", "bias", "dropout", "act",
                      "fused", "kernel", "cast", "fp") if w not in STRUCTURAL_WORDS]
_NEW = "zq"  # in every generated name: never a field of the table
harmless_names = st.lists(st.sampled_from(_PLAIN), min_size=1, max_size=3).map(
    lambda ws: "_".join([_NEW, *ws]))
harmless_values = st.one_of(
    st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12), st.integers(-10**6, 10**6))
structural_names = st.tuples(
    st.sampled_from(["draft", "swa", "local", "extra", "aux"]),
    st.sampled_from(["num_{}_layers", "num_{}_heads", "{}_head_dim", "{}_hidden_size",
                     "{}_experts", "{}_lora_rank", "{}_groups", "{}_window", "{}_layer_pattern",
                     "n_{}", "{}_layer_types"])).map(lambda t: t[1].format(t[0]) + "_" + _NEW)
structural_values = st.one_of(
    st.integers(0, 10**6), st.lists(st.integers(0, 3), min_size=1, max_size=8),
    st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=1, max_size=8),
    st.dictionaries(st.sampled_from(["num_heads", "head_dim", "layers"]), st.integers(1, 512),
                    min_size=1, max_size=3))
_SETTINGS = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


def _place(stem: str, name: str, value, nested: bool) -> dict:
    """The mutation: the field at the top, or in the language model of a wrapper."""
    config = json.loads(_config(stem))
    if nested and isinstance(config.get("text_config"), dict):
        return {"text_config": {**config["text_config"], name: value}}
    return {name: value}


@_SETTINGS
@given(stem=st.sampled_from(STEMS), name=harmless_names, value=harmless_values,
       nested=st.booleans())
def test_an_unknown_harmless_field_changes_nothing(stem, name, value, nested):
    arch = _read(stem, _place(stem, name, value, nested))
    assert _counts(arch) == _baseline(stem)
    assert name in arch.ignored and any(repr(name) in note for note in arch.notes)


@_SETTINGS
@given(stem=st.sampled_from(STEMS), name=structural_names, value=structural_values,
       nested=st.booleans())
def test_an_unknown_structural_field_is_refused_by_name_and_can_be_ignored(stem, name, value,
                                                                         nested):
    assert classify(name, value) == "structural"
    extra = _place(stem, name, value, nested)
    with pytest.raises(InputError) as err:
        _read(stem, extra)
    message = str(err.value)
    assert "\n" not in message and repr(name) in message and "is not understood" in message
    arch = _read(stem, extra, ignore={name})
    assert _counts(arch) == _baseline(stem)
    assert name in arch.ignored and any(repr(name) in note for note in arch.notes)
    assumed = _read(stem, extra, assume={name: value})
    assert _counts(assumed) == _baseline(stem)
    assert assumed.assumed[0][0] == name


# --- assume and ignore of known fields -----------------------------------------------------------

def test_assume_replaces_a_known_field_and_says_so():
    stem = "meta-llama--Meta-Llama-3.1-8B"
    arch = _read(stem, {}, assume={"num_hidden_layers": 16})
    assert sum(g.count for g in arch.groups) == 16
    assert arch.assumed == (("num_hidden_layers", "16"),)
    assert arch.notes == ("assumed num_hidden_layers=16 as asked (was 32 in config.json)",)


def test_ignore_a_known_field_reads_without_it():
    stem = "deepseek-ai--DeepSeek-V3"
    arch = _read(stem, {}, ignore={"num_nextn_predict_layers"})
    assert arch.n_mtp == 0 and arch.total_params == _baseline(stem)[0]
    assert arch.ignored == ("num_nextn_predict_layers",)


def test_ignore_of_an_absent_field_is_noted_and_both_is_refused():
    arch = _read("Qwen--Qwen3-8B", {}, ignore={"nonesuch"})
    assert arch.notes == ("ignore 'nonesuch': config.json has no such field",)
    with pytest.raises(InputError, match="'x' is both assumed and ignored"):
        _read("Qwen--Qwen3-8B", {}, assume={"x": 1}, ignore={"x"})


def test_read_architecture_takes_assume_and_ignore(tmp_path):
    config = {**json.loads(_config("Qwen--Qwen3-8B")), "swa_num_attention_heads": 8}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(InputError, match="'swa_num_attention_heads' is not understood"):
        hc.read_architecture(path)
    arch = hc.read_architecture(path, ignore={"swa_num_attention_heads"})
    assert arch.total_params == _baseline("Qwen--Qwen3-8B")[0]
    described = hc.describe_architecture(arch)
    assert described["ignored"] == ["swa_num_attention_heads"] and described["notes"]


# --- the command line ------------------------------------------------------------------------------

def _run(capsys, *argv):
    from inference_math import cli
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _mutated(tmp_path, **extra) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**json.loads(_config("Qwen--Qwen3-8B")), **extra}))
    return path


def test_cli_refuses_a_structural_field_in_one_line(tmp_path, capsys):
    path = _mutated(tmp_path, swa_num_attention_heads=8)
    code, out, err = _run(capsys, "describe-model", path)
    assert code == 2 and not out and err.count("\n") == 1
    assert "'swa_num_attention_heads' is not understood" in err and "--ignore" in err


def test_cli_ignore_and_assume_with_notes_on_standard_error(tmp_path, capsys):
    # use_fused_rope: a harmless flag no config of the table holds (use_mtp, which stood here,
    # is read since MiniMax's MTP modules are)
    path = _mutated(tmp_path, swa_num_attention_heads=8, use_fused_rope=True)
    code, out, err = _run(capsys, "describe-model", path, "--ignore", "swa_num_attention_heads",
                          "--json")
    assert code == 0
    described = json.loads(out)
    assert described["ignored"] == ["swa_num_attention_heads", "use_fused_rope"]
    assert described["total_params"] == _baseline("Qwen--Qwen3-8B")[0]
    assert "ignored 'swa_num_attention_heads' as asked" in err and "'use_fused_rope'" in err
    code, out, err = _run(capsys, "describe-model", path, "--assume", "num_hidden_layers=18",
                          "--assume", "swa_num_attention_heads=8", "--quiet", "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["assumed"] == {"num_hidden_layers": 18, "swa_num_attention_heads": 8}
    assert json.loads(out)["layer_count"] == 18


def test_cli_options_reach_a_model_read_while_parsing(tmp_path, capsys):
    path = _mutated(tmp_path, swa_num_attention_heads=8)
    code, _, err = _run(capsys, "max-speed", "--model", path, "--gpu", "h100")
    assert code == 2 and "'swa_num_attention_heads' is not understood" in err
    code, out, err = _run(capsys, "max-speed", "--model", path, "--gpu", "h100", "--ignore",
                          "swa_num_attention_heads", "--json")
    assert code == 0 and "as asked" in err
    (reading,) = json.loads(out)["config_readings"]
    assert reading["ignored"] == ["swa_num_attention_heads"] and reading["notes"]


def test_cli_bad_options_are_one_line(tmp_path, capsys):
    path = _mutated(tmp_path)
    for argv in (("describe-model", path, "--assume", "foo"),
                 ("describe-model", "llama-3-70b", "--ignore", "foo")):
        code, out, err = _run(capsys, *argv)
        assert code == 2 and not out and err.count("\n") == 1 and "Traceback" not in err

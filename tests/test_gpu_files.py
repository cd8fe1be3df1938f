"""GPU files: the presets' data file, a user's file given to get_gpu / --gpu, and their errors.

A user's file holds one GPU, its fields at the top level (the schema of one table of
``presets/gpus.toml``). Every problem is one InputError line naming the file and the field; the
command line reports it with exit status 2.
"""

from __future__ import annotations

import json
import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from inference_math.cli import main
from inference_math.core.validation import InputError
from inference_math.presets.hardware import GPUS, SCHEMA, get_gpu, read_gpu_file

ROOT = Path(__file__).resolve().parents[1]

# An H100 typed from the paper's reference code (Erdil 2025): 9e11/4, 5e10/2, 3.15·2/3 = 2.1.
H100_FILE = """\
name = "H100 SXM"
source = "nvidia2023h100,erdil2025inference"
note = "989 TFLOP/s bf16 and 1979 TFLOP/s fp8 dense, rounded as in the paper"
flops_by_weight_bits = { 4 = 2e15, 8 = 2e15, 16 = 1e15 }
hbm_bandwidth = 3.3e12
hbm_bytes = 80e9
intranode_allreduce_bandwidth = 225e9
internode_allreduce_bandwidth = 25e9
node_size = 8
price_per_hour = 2.1
flop_cap = 0.7
bandwidth_cap = 0.75
kernel_launch_s = 4e-6
"""


def write(tmp_path: Path, text: str | bytes, name: str = "gpu.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _toml_value(value) -> str:
    """A TOML literal for a preset field (typed here, independent of the package's reader)."""
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, float | int):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(json.dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}"
                                for k, v in value.items()) + " }"
    raise TypeError(value)


def to_toml(gpu) -> str:
    lines = []
    for name in ("name", "source", "note", "flops_by_weight_bits", "hbm_bandwidth", "hbm_bytes",
                 "intranode_allreduce_bandwidth", "internode_allreduce_bandwidth", "ici_bandwidth",
                 "node_size", "price_per_hour", "flop_cap", "bandwidth_cap", "kernel_launch_s",
                 "collective_model", "software_stack", "assumed", "provisional", "sources"):
        value = getattr(gpu, name)
        if value is not None and value != () and value != {}:
            lines.append(f"{name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


# --- round trips ----------------------------------------------------------------------------------


def test_a_hand_typed_h100_file_is_the_h100_preset(tmp_path):
    gpu = get_gpu(write(tmp_path, H100_FILE))
    assert gpu == GPUS["h100"]
    assert gpu.flops(4) == gpu.flops(8) == 2e15 and gpu.node_size == 8
    assert type(gpu.node_size) is int and type(gpu.hbm_bytes) is float


@pytest.mark.parametrize("key", sorted(GPUS))
def test_every_preset_written_to_a_file_reads_back_the_same(tmp_path, key):
    """get_gpu(path) returns the preset when the file has the preset's fields."""
    preset = GPUS[key]
    path = write(tmp_path, to_toml(preset), f"{key}.toml")
    for argument in (str(path), path):  # a path as text (as --gpu gives it) or a Path
        gpu = get_gpu(argument)
        assert gpu == preset
        assert repr(gpu) == repr(preset)
        assert (gpu.assumed, gpu.provisional, gpu.sources) == (
            preset.assumed, preset.provisional, preset.sources)


def test_a_relative_path_is_read_from_the_working_directory(tmp_path, monkeypatch):
    write(tmp_path, H100_FILE, "mine.toml")
    monkeypatch.chdir(tmp_path)
    assert get_gpu("mine.toml") == GPUS["h100"]
    assert get_gpu("./mine.toml") == GPUS["h100"]


def test_a_preset_name_wins_over_a_file_of_the_same_name(tmp_path, monkeypatch):
    write(tmp_path, H100_FILE.replace("H100 SXM", "impostor"), "h100")
    monkeypatch.chdir(tmp_path)
    assert get_gpu("h100") is GPUS["h100"]


def test_optional_fields_default_as_in_the_dataclass(tmp_path):
    text = "\n".join(line for line in H100_FILE.splitlines()
                     if not line.startswith(("note", "intranode", "internode")))
    gpu = get_gpu(write(tmp_path, text))
    assert gpu.note == "" and gpu.collective_model == "nccl" and gpu.ici_bandwidth is None
    assert gpu.software_stack == "cuda"
    assert gpu.intranode_allreduce_bandwidth is None and gpu.internode_allreduce_bandwidth is None
    assert not gpu.has_collective_model


# --- errors: one line naming the file and the field ---------------------------------------------


def _variant(old: str, new: str) -> str:
    assert old in H100_FILE
    return H100_FILE.replace(old, new)


BAD_FILES = [
    (_variant('name = "H100 SXM"', 'name = "H100 SXM'), "malformed TOML"),
    (_variant("hbm_bytes = 80e9", "hbm_bytes = 80e9\nhbm_bw = 3e12"), "unknown field 'hbm_bw'"),
    (_variant("hbm_bytes = 80e9\n", ""), "missing field 'hbm_bytes'"),
    (_variant('source = "nvidia2023h100,erdil2025inference"\n', ""), "missing field 'source'"),
    (_variant("flops_by_weight_bits = { 4 = 2e15, 8 = 2e15, 16 = 1e15 }\n", ""),
     "missing field 'flops_by_weight_bits'"),
    (_variant("hbm_bandwidth = 3.3e12", 'hbm_bandwidth = "3.3e12"'),
     "hbm_bandwidth must be a number, got string '3.3e12'"),
    (_variant("node_size = 8", "node_size = true"), "node_size must be a number, got boolean"),
    (_variant("hbm_bytes = 80e9", "hbm_bytes = [80e9]"), "hbm_bytes must be a number, got array"),
    (_variant('name = "H100 SXM"', "name = 100"), "name must be a string, got integer"),
    (_variant("hbm_bytes = 80e9", "hbm_bytes = -80e9"), "hbm_bytes must be > 0"),
    (_variant("price_per_hour = 2.1", "price_per_hour = 0"), "price_per_hour must be > 0"),
    (_variant("kernel_launch_s = 4e-6", "kernel_launch_s = -4e-6"), "kernel_launch_s must be >= 0"),
    (_variant("hbm_bandwidth = 3.3e12", "hbm_bandwidth = inf"), "hbm_bandwidth must be finite"),
    (_variant("hbm_bandwidth = 3.3e12", "hbm_bandwidth = nan"), "hbm_bandwidth must be finite"),
    (_variant("internode_allreduce_bandwidth = 25e9", "internode_allreduce_bandwidth = -inf"),
     "internode_allreduce_bandwidth must be finite"),
    (_variant("16 = 1e15", "16 = -1e15"), r"flops_by_weight_bits\.16 must be > 0"),
    (_variant("16 = 1e15", "fp16 = 1e15"), "flops_by_weight_bits key 'fp16'"),
    (_variant("{ 4 = 2e15, 8 = 2e15, 16 = 1e15 }", "1e15"), "flops_by_weight_bits must be a table"),
    (_variant("{ 4 = 2e15, 8 = 2e15, 16 = 1e15 }", "{}"), "flops_by_weight_bits must not be empty"),
    (_variant("node_size = 8", "node_size = 8.5"), "node_size must be a whole number"),
    (_variant("flop_cap = 0.7", "flop_cap = 1.5"), r"flop_cap must be in \(0, 1\]"),
    (_variant("kernel_launch_s = 4e-6", 'kernel_launch_s = 4e-6\ncollective_model = "mesh"'),
     "collective_model must be 'nccl' or 'torus'"),
    (_variant("kernel_launch_s = 4e-6", 'kernel_launch_s = 4e-6\nsoftware_stack = "triton"'),
     "software_stack must be one of 'cuda', 'rocm', 'xla', 'other', got 'triton'"),
    (H100_FILE + 'assumed = ["speed"]\n', "assumed names 'speed'"),
    (H100_FILE + 'provisional = "hbm_bytes"\n', "provisional must be an array"),
    (H100_FILE + '[sources]\nspeed = "me"\n', r"sources\.speed is not a number field"),
    (H100_FILE + "[sources]\nhbm_bytes = 80\n", r"sources\.hbm_bytes must be a string"),
    ("[h100]\n" + H100_FILE, r"holds tables of GPUs \(\[h100\]"),
    (b'name = "H100 \xff"\n', "not UTF-8"),
]


@pytest.mark.parametrize(("text", "needle"), BAD_FILES)
def test_a_bad_file_is_one_input_error_naming_the_file_and_the_field(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        get_gpu(str(path))
    message = str(caught.value)
    assert message.startswith(f"GPU file {str(path)!r}: "), message
    assert re.search(needle, message), message
    assert "\n" not in message


def test_a_missing_or_unreadable_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"GPU file .*nowhere\.toml.*cannot be read"):
        get_gpu(str(tmp_path / "nowhere.toml"))
    with pytest.raises(InputError, match="cannot be read"):
        read_gpu_file(tmp_path)  # a directory
    with pytest.raises(InputError, match="cannot be read"):
        get_gpu("dir/with\x00nul.toml")
    with pytest.raises(InputError, match="larger than"):
        get_gpu(write(tmp_path, "# " + "x" * 1_000_000 + "\n" + H100_FILE, "huge.toml"))


def test_an_unknown_name_that_is_not_a_path_lists_presets_and_files():
    with pytest.raises(InputError, match=r"unknown GPU 'b900'; choose one of: h100.*\.toml"):
        get_gpu("b900")


# --- the command line ---------------------------------------------------------------------------


def test_the_command_line_runs_on_a_gpu_file(tmp_path, capsys):
    path = write(tmp_path, H100_FILE)
    code = main(["toy-max-speed", "--model", "llama-3-70b", "--gpu", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    preset = main(["toy-max-speed", "--model", "llama-3-70b", "--gpu", "h100", "--json"])
    out_preset, _ = capsys.readouterr()
    assert preset == 0 and json.loads(out) == json.loads(out_preset)


@pytest.mark.parametrize("command", ["toy-max-speed", "max-speed", "frontier", "preferred"])
@pytest.mark.parametrize(("text", "needle"), [BAD_FILES[0], BAD_FILES[1], BAD_FILES[5], BAD_FILES[9]])
def test_a_bad_gpu_file_exits_2_with_one_line(tmp_path, capsys, command, text, needle):
    path = write(tmp_path, text)
    code = main([command, "--model", "llama-3-8b", "--gpu", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"inference-math: error: argument --gpu: GPU file {str(path)!r}: ")
    assert re.search(needle, err) and err.count("\n") == 1


def test_the_full_model_refuses_a_file_without_collective_bandwidths(tmp_path, capsys):
    text = "\n".join(line for line in H100_FILE.splitlines() if not line.startswith("internode"))
    path = write(tmp_path, text)
    code = main(["max-speed", "--model", "llama-3-8b", "--gpu", str(path)])
    _, err = capsys.readouterr()
    assert code == 2 and "argument --gpu:" in err and "internode_allreduce_bandwidth" in err


# --- the shipped example and the README ---------------------------------------------------------


def _example() -> bytes:
    return resources.files("inference_math").joinpath("data/examples/my_gpu.toml").read_bytes()


def test_the_shipped_example_file_is_a_gpu(tmp_path):
    gpu = get_gpu(write(tmp_path, _example(), "my_gpu.toml"))
    assert gpu.has_collective_model and gpu.price_per_hour == 1.69
    assert gpu.flops(16) == 1e15 and gpu.assumed == ("flop_cap", "bandwidth_cap", "kernel_launch_s")


def test_the_readme_example_is_the_shipped_file_and_parses(tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Your own GPU"):]
    blocks = re.findall(r"```toml\n(.*?)```", section, re.S)
    assert blocks, "the README's 'Your own GPU' has a toml example"
    assert blocks[0] == _example().decode()
    assert get_gpu(write(tmp_path, blocks[0])).name == tomllib.loads(blocks[0])["name"]


def test_the_readme_documents_every_field_of_the_schema():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Your own GPU"):]
    section = section[:section.index("\n## ")]
    missing = [name for name in SCHEMA if f"`{name}`" not in section]
    assert not missing, missing


def test_the_data_file_and_the_example_are_package_data():
    text = (ROOT / "pyproject.toml").read_text()
    data = tomllib.loads(text)["tool"]["setuptools"]["package-data"]["inference_math"]
    assert "presets/*.toml" in data and "data/examples/*.toml" in data

"""The inference-math command line: outputs against the paper, and one-line errors with exit 2."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math import cli
from inference_math.cli import build_parser, main
from inference_math.fullmodel import search as search_module
from inference_math.fullmodel.cache import ENV as CACHE_ENV
from inference_math.fullmodel.search import Setting
from inference_math.presets.hardware import GPUS, get_gpu
from inference_math.presets.models import MODELS, get_model

FULL = ["max-speed", "--model", "llama-3-8b", "--gpu", "h100"]

# The GPU presets without collective bandwidths, which the full model cannot time.
NO_COLLECTIVES = {"tpu-v4": "TPU v4", "tpu-v5e": "TPU v5e", "tpu-v5p": "TPU v5p",
                  "rtx-4090": "RTX 4090"}


def strict_json(text: str):
    """json.loads that refuses NaN and ±Infinity (JSON has neither) and overflowing numbers."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    def finite(number_text):
        number = float(number_text)
        if not math.isfinite(number):
            raise ValueError(f"{number_text} overflows a float")
        return number

    return json.loads(text, parse_constant=refuse, parse_float=finite)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_toy_max_speed_json_reproduces_table1_row(capsys):
    """Erdil (2025) Table 1: Llama 3 70B, 234 tok/s at 26 GPUs (t_hop = 1 µs, n_reduce = 4)."""
    code, out, err = run(capsys, "toy-max-speed", "--model", "llama-3-70b", "--gpu", "h100",
                         "--json")
    assert code == 0 and err == ""
    row = json.loads(out)
    assert row["max_tokens_per_s"] == pytest.approx(234, rel=5e-3)
    assert abs(row["optimal_gpus"] - 26) <= 1
    assert row["min_latency_ms"] == pytest.approx(1e3 / row["max_tokens_per_s"])


def test_toy_max_speed_table_output_names_the_model(capsys):
    code, out, _ = run(capsys, "toy-max-speed", "--model", "Llama-3-8B", "--gpu", "H100")
    assert code == 0
    assert "Llama 3 8B" in out and "966" in out  # Table 1: 966 tok/s


def test_capped_bandwidth_is_slower(capsys):
    """With 75% of the bandwidth, eq. 14 predicts 0.75^(1/3) of the speed for N* >> 1."""
    _, out_peak, _ = run(capsys, "toy-max-speed", "--model", "gpt-4", "--gpu", "h100", "--json")
    _, out_cap, _ = run(capsys, "toy-max-speed", "--model", "gpt-4", "--gpu", "h100", "--json",
                        "--capped")
    ratio = json.loads(out_cap)["max_tokens_per_s"] / json.loads(out_peak)["max_tokens_per_s"]
    assert ratio == pytest.approx(0.75 ** (1 / 3), rel=0.02)


def test_models_and_gpus_list_every_preset(capsys):
    code, out, _ = run(capsys, "models", "--json")
    names = {row["name"] for row in json.loads(out)}
    assert code == 0 and {"llama-3-8b", "gpt-4", "palm-62b", "deepseek-v3-paper"} <= names
    code, out, _ = run(capsys, "gpus")
    assert code == 0 and "H100 SXM" in out and "3.3e+12" in out  # paper: 3.3 TB/s


def test_models_mark_the_papers_presets_and_their_quirks(capsys):
    """The paper's Llama 3.1 405B has 128 query heads in groups of 8, so 16 KV heads; the released
    config has 8. Per token over 126 layers, keys and values of 128 values at 2 bytes:
    16 heads 126·2·16·128·2 = 1,032,192 B, 8 heads 516,096 B, twice as much."""
    code, out, _ = run(capsys, "models", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert code == 0
    paper = rows["llama-3.1-405b"]
    assert paper["origin"] == "paper" and paper["paper_preset"] is True
    assert paper["kv_bytes_per_token"] == 126 * 2 * 16 * 128 * 2
    assert rows["llama-3.1-405b-config"]["kv_bytes_per_token"] == 126 * 2 * 8 * 128 * 2
    assert "16 KV heads" in paper["quirk"] and "has 8" in paper["quirk"]
    assert "2.00x the KV cache" in paper["quirk"]
    assert rows["llama-3.1-405b-config"]["origin"] == "config"
    assert rows["llama-3.1-405b-config"]["paper_preset"] is False
    assert rows["llama-3.1-405b-config"]["quirk"] is None
    assert rows["palm-62b"]["origin"] == "typed" and not rows["palm-62b"]["paper_preset"]
    assert {row["origin"] for row in rows.values()} == {"paper", "typed", "config"}
    assert all(row["paper_preset"] == (row["origin"] == "paper") for row in rows.values())
    code, out, _ = run(capsys, "models")
    line = next(text for text in out.splitlines() if text.startswith("llama-3.1-405b "))
    assert " paper " in line and "Llama 3.1 405B *" in line
    assert "  llama-3.1-405b: 16 KV heads" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["toy-max-speed", "--model", "llama-9000", "--gpu", "h100"], "unknown model 'llama-9000'"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "tpu-v99"], "unknown GPU 'tpu-v99'"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--t-hop=-1e-6"],
         "--t-hop: must be in [1e-12, 1000]"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--t-hop", "0"],
         "--t-hop: must be in [1e-12, 1000]"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--n-reduce", "zero"],
         "--n-reduce: must be a number"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--t-hop", "inf"],
         "--t-hop: must be finite"),
        (["toy-max-speed", "--model", "gpt-3"], "required: --gpu"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["models", "--colour"], "unrecognized arguments: --colour"),
        (["models", "--colour", "a\nb"], "unrecognized arguments: --colour a\\nb"),
        (["toy-max-speed", "--model", "gpt-4", "--gpu", "h100", "--t-hop", "1e-320"],
         "--t-hop: must be in [1e-12, 1000]"),
        (["toy-max-speed", "--model", "gpt-4", "--gpu", "h100", "--n-reduce", "1e-320"],
         "--n-reduce: must be in [0.001, 1000]"),
        ([*FULL, "--price", "1e308"], "--price: must be in [0.0001, 10000]"),
        ([*FULL, "--price", "5e-324"], "--price: must be in [0.0001, 10000]"),
        ([*FULL, "--context", "1e12"], "--context: must be in [0, 1e+09]"),
        ([*FULL, "--drafter", "tiny"], "argument --drafter: unknown model 'tiny'"),
        ([*FULL, "--drafter", "llama-3-8b", "--acceptance", "1"], "--acceptance: must be in [0, 1)"),
        ([*FULL, "--drafter", "llama-3-8b", "--acceptance", "-0.1"],
         "--acceptance: must be in [0, 1)"),
        ([*FULL, "--drafter", "llama-3-8b", "--acceptance", "nan"], "--acceptance: must be finite"),
        ([*FULL, "--acceptance", "0.5"], "argument --acceptance: needs --drafter"),
        (["preferred", *FULL[1:], "--alpha", "1e3"], "--alpha: must be in [0, 20]"),
        (["max-speed", "--model", "llama-3-8b", "--gpu", "a100", "--weight-bits", "4"],
         "argument --weight-bits: A100 SXM has no FLOP/s figure for 4-bit weights"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("inference-math: error:")
    assert needle in err
    assert "Traceback" not in err


def test_console_script_runs_as_a_process():
    """The installed entry point exits 2 with a one-line message, not a traceback."""
    proc = subprocess.run([sys.executable, "-m", "inference_math.cli", "toy-max-speed",
                           "--model", "nope", "--gpu", "h100"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown model" in proc.stderr


def test_every_json_output_is_strict_json(capsys, monkeypatch, tmp_path):
    """Each subcommand's --json parses without NaN or Infinity; no drafter means a null latency."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))  # frontier, max-speed, preferred: one search
    drafted = ["max-speed", "--model", "llama-3-70b", "--gpu", "h100", "--drafter", "llama-3-8b"]
    commands = [["models"], ["gpus"], ["toy-max-speed", "--model", "gpt-4", "--gpu", "h100"],
                ["toy-max-speed", "--model", "llama-3-70b", "--gpu", "h100", "--t-hop", "12"],
                ["frontier", *FULL[1:]], FULL, ["preferred", *FULL[1:]], drafted]
    for argv in commands:
        code, out, err = run(capsys, *argv, "--json")
        assert code == 0 and err == "", argv
        data = strict_json(out)
        rows = data if isinstance(data, list) else [data]
        for row in rows:
            if "gamma" in row:
                assert (row["draft_latency_s"] is None) == (row["gamma"] == 1), argv
        if argv is drafted:
            assert rows[0]["gamma"] > 1 and rows[0]["draft_latency_s"] > 0


def test_strict_json_refuses_what_python_would_print():
    for text in ('{"x": NaN}', '{"x": Infinity}', "[-Infinity]", "[1e999]"):
        with pytest.raises(ValueError):
            strict_json(text)


@pytest.mark.parametrize("command", ["frontier", "max-speed", "preferred"])
@pytest.mark.parametrize("gpu", sorted(NO_COLLECTIVES))
def test_full_model_refuses_gpus_without_collective_bandwidths(capsys, command, gpu):
    """One line naming --gpu, the preset and the missing field; no TypeError from the search."""
    code, out, err = run(capsys, command, "--model", "llama-3-8b", "--gpu", gpu)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "argument --gpu:" in err and NO_COLLECTIVES[gpu] in err
    assert "internode_allreduce_bandwidth" in err


def test_a_context_whose_kv_cache_fits_no_instance_names_the_context(capsys):
    """Llama 3.1 405B on Groq LPUs: 10^9 tokens of KV cache exceed 2^18 chips of 230 MB."""
    model = get_model("llama-3.1-405b")
    assert model.kv_bytes_per_token * 1e9 > 2**18 * 230e6
    code, out, err = run(capsys, "max-speed", "--model", "llama-3.1-405b", "--gpu", "groq-lpu",
                         "--context", "1e9")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "argument --context: infeasible" in err


def test_acceptance_zero_is_accepted_with_a_drafter():
    """P = 0 is legal (the drafter never helps), as the message's [0, 1) says."""
    args = build_parser().parse_args([*FULL, "--drafter", "llama-3-8b", "--acceptance", "0"])
    assert args.acceptance == 0.0


def test_toy_optimum_is_at_least_the_gpus_that_hold_the_weights(capsys):
    """Llama 3 70B: 141 GB of 16-bit weights need 2 H100s of 80 GB; a 12 s hop makes 2 optimal.

    Erdil (2025) eq. 9 at N = 2: L·n_reduce·2·t_hop·(sqrt(2) − 1) + p·N/(2·B).
    """
    model = get_model("llama-3-70b")
    code, out, _ = run(capsys, "toy-max-speed", "--model", "llama-3-70b", "--gpu", "h100",
                       "--t-hop", "12", "--json")
    row = strict_json(out)
    assert code == 0 and math.ceil(2 * model.total_params / 80e9) == 2
    assert row["optimal_gpus"] == row["memory_floor_gpus"] == 2 and row["memory_bound"]
    latency = 80 * 4 * 2 * 12 * (math.sqrt(2) - 1) + 2 * model.total_params / (2 * 3.3e12)
    assert row["min_latency_ms"] == pytest.approx(1e3 * latency, rel=1e-12)


def test_an_unusable_cache_directory_is_one_line_naming_the_variable(capsys, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    code, out, err = run(capsys, *FULL)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert CACHE_ENV in err and "Traceback" not in err


def test_the_stated_ranges_are_the_checked_ones(capsys):
    """The module docstring and --help state each flag's range as the check reads it."""
    for flag, interval in cli.RANGES.items():
        assert f"{flag} {interval}" in cli.__doc__
        command = ("toy-max-speed" if flag in ("--t-hop", "--n-reduce")
                   else "compare" if flag == "--speed" else "preferred")
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and f"in {interval}" in " ".join(out.split())


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "toy-max-speed", "--help")
    assert code == 0 and "--t-hop" in out and "[1e-12, 1000]" in out


def _cli(*argv, **kwargs):
    return subprocess.run([sys.executable, "-m", "inference_math.cli", *argv], **kwargs)


def test_a_closed_pipe_ends_quietly_with_status_141():
    """`inference-math models --json | head -c 0`: a reader gone, as for SIGPIPE (128 + 13)."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = _cli("models", "--json", stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert proc.returncode == 128 + 13
    assert proc.stderr == b""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_one_line_and_exit_1():
    with open("/dev/full", "w") as full:
        proc = _cli("models", stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "No space left on device" in proc.stderr


def test_a_closed_standard_output_is_one_line_and_exit_1():
    """`inference-math models >&-`: Python starts with sys.stdout None; say so, no traceback."""
    proc = _cli("models", stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "standard output is closed" in proc.stderr


# --- property: any command line ends in valid output or one error line -----------------------

NUMBERS = st.one_of(
    st.sampled_from(["-1", "0", "-0", "1", "0.5", "12", "1e-320", "5e-324", "1e308", "1e999",
                     "nan", "NaN", "inf", "-inf", "Infinity", "", " ", "abc", "0x10", "1_0"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
)
GARBAGE = st.one_of(st.text(max_size=8), st.sampled_from(["tiny", "H100", "", "-", "--json"]))
MODEL_NAMES = st.one_of(st.sampled_from(sorted(MODELS)), GARBAGE)
GPU_NAMES = st.one_of(st.sampled_from(sorted(GPUS)), GARBAGE)
TOY_OPTIONS = st.lists(st.one_of(
    st.tuples(st.sampled_from(["--t-hop", "--n-reduce"]), NUMBERS),
    st.tuples(st.sampled_from(["--capped", "--json"])),
    st.tuples(GARBAGE),
), max_size=4)

# For the full model, a flag that is bad whatever else the command line says: the search (20 s)
# must never start, and every such line must be refused before it.
POISON = st.one_of(
    st.tuples(st.just("--gpu"), st.sampled_from(sorted(NO_COLLECTIVES) + ["tpu-v99", ""])),
    st.tuples(st.just("--model"), st.sampled_from(["tiny", "llama-9000", ""])),
    st.tuples(st.just("--drafter"), st.sampled_from(["tiny", "gpt-5", "--json"])),
    st.tuples(st.just("--price"), st.sampled_from(["-1", "0", "1e308", "5e-324", "nan", "x", "1e5"])),
    st.tuples(st.just("--context"), st.sampled_from(["-1", "1e12", "inf", "nan", "many"])),
    st.tuples(st.just("--acceptance"), st.sampled_from(["1", "-0.1", "2", "nan", "one"])),
    st.tuples(st.just("--weight-bits"), st.sampled_from(["3", "32", "x", "8.0"])),
    st.tuples(st.just("--alpha"), st.sampled_from(["-1", "21", "1e3", "inf"])),
    st.tuples(st.just("--t-hop"), NUMBERS),  # not an option of the full model
)
FULL_OPTIONS = st.lists(st.one_of(
    st.tuples(st.sampled_from(["--price", "--context", "--acceptance", "--alpha"]), NUMBERS),
    st.tuples(st.just("--drafter"), MODEL_NAMES),
    st.tuples(st.sampled_from(["--json", "--csv", "--exact", "--no-pipeline"])),
), max_size=3)


@st.composite
def command_lines(draw) -> list[str]:
    command = draw(st.sampled_from(["models", "gpus", "toy-max-speed", "frontier", "max-speed",
                                    "preferred", "frobnicate"]))
    argv = [command]
    if command in ("models", "gpus", "frobnicate"):
        argv += draw(st.lists(st.one_of(st.just("--json"), GARBAGE), max_size=2))
        return argv
    argv += ["--model", draw(MODEL_NAMES), "--gpu", draw(GPU_NAMES)]
    options = draw(TOY_OPTIONS if command == "toy-max-speed" else FULL_OPTIONS)
    if command != "toy-max-speed":
        options.insert(draw(st.integers(0, len(options))), draw(POISON))
    return argv + [word for option in options for word in option]


def _search_must_not_start(*args, **kwargs):
    raise AssertionError("a command line with a bad flag reached the frontier search")


def run_without_search(argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of the command line, failing if it starts a search."""
    out, err = io.StringIO(), io.StringIO()
    found, search_module.frontier = search_module.frontier, _search_must_not_start
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        search_module.frontier = found
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=60, deadline=None)
@given(argv=command_lines())
def test_any_command_line_is_valid_output_or_one_error_line(argv):
    """Exit 0 with finite output (strict JSON under --json), or exit 2 with one line on stderr."""
    code, out, err = run_without_search(argv)
    assert "Traceback" not in err
    if code == 0:
        assert err == ""
        if "--json" in argv:
            strict_json(out)
        assert not re.search(r"\b(nan|inf|infinity)\b", out, re.IGNORECASE)
    else:
        assert code == 2, (code, err)
        assert out == ""
        assert err.startswith("inference-math: error: ") and err.count("\n") == 1
        assert len(err.splitlines()) == 1


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("quiet", [False, True])
def test_a_slow_search_shows_progress_on_a_terminal_only_if_not_quiet(quiet, monkeypatch):
    """tqdm draws after its one-second delay, on standard error, never on standard output."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    setting = Setting(get_model("llama-3-8b"), get_gpu("h100"))
    with cli._progress(setting, quiet) as advance:
        advance("first")
        time.sleep(1.2)
        advance("second")
    assert ("searching" in terminal.getvalue()) is not quiet


def test_no_progress_when_standard_error_is_not_a_terminal(monkeypatch):
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    with cli._progress(Setting(get_model("llama-3-8b"), get_gpu("h100")), False) as advance:
        time.sleep(1.2)
        advance("step")
    assert captured.getvalue() == ""


def test_price_may_name_a_2026_rent_column(capsys):
    """--price neocloud charges the GPU preset's neocloud rent of 2026 (H100: $1.69, B200: $2.34,
    SemiAnalysis InferenceX): the same numbers as --price with that number, on every command
    family that takes a price."""
    same = ["--model", "llama-3-8b", "--gpu", "h100", "--json"]
    named = json.loads(run(capsys, "max-speed", *same, "--price", "neocloud")[1])
    number = json.loads(run(capsys, "max-speed", *same, "--price", "1.69")[1])
    assert named == number
    code, out, err = run(capsys, "compare", "--models", "llama-3-8b", "--gpus", "h100,b200",
                         "--price", "hyperscaler", "--json")
    assert code == 0 and err == ""
    assert [row["usd_per_gpu_hour"] for row in json.loads(out)] == [1.30, 1.95]
    serve = ["serve", "--model", "llama-3-8b", "--gpu", "h100", "--input-len", "512",
             "--output-len", "128", "--curve", "physical", "--quiet", "--json"]
    by_name = json.loads(run(capsys, *serve, "--price", "three_year")[1])
    by_number = json.loads(run(capsys, *serve, "--price", "1.30")[1])
    assert by_name == by_number


@pytest.mark.parametrize("argv, message", [
    (["max-speed", "--model", "llama-3-8b", "--gpu", "a100", "--price", "neocloud"],
     "argument --price: A100 SXM has no 2026 neocloud rent"),
    (["max-speed", "--model", "llama-3-8b", "--gpu", "h100", "--price", "spot"],
     "argument --price: 'spot' is neither a number nor a 2026 rent column"),
])
def test_a_rent_column_without_a_rent_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err

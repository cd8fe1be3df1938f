"""The inference-math command line: outputs against the paper, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from inference_math.cli import main


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
    assert code == 0 and {"llama-3-8b", "gpt-4", "palm-62b", "deepseek-v3"} <= names
    code, out, _ = run(capsys, "gpus")
    assert code == 0 and "H100 SXM" in out and "3.3e+12" in out  # paper: 3.3 TB/s


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["toy-max-speed", "--model", "llama-9000", "--gpu", "h100"], "unknown model 'llama-9000'"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "tpu-v99"], "unknown GPU 'tpu-v99'"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--t-hop=-1e-6"],
         "--t-hop: must be > 0"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--t-hop", "0"],
         "--t-hop: must be > 0"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--n-reduce", "zero"],
         "--n-reduce: must be a number"),
        (["toy-max-speed", "--model", "gpt-3", "--gpu", "h100", "--t-hop", "inf"],
         "--t-hop: must be finite"),
        (["toy-max-speed", "--model", "gpt-3"], "required: --gpu"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["models", "--colour"], "unrecognized arguments: --colour"),
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

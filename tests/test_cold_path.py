"""No command of the CLI imports SymPy: whatever a command needs from a derivation is generated
ahead as NumPy code (codegen/), so SymPy is imported only by the derivations, the code generators,
the book and the tests. Each command runs in a fresh interpreter, which then reports whether
'sympy' is among its modules."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inference_math.cli import build_parser

SHIPPED_POINTS = (Path(__file__).parents[1] / "inference_math" / "data" / "measurements"
                  / "points_engines.csv")

#: Every subcommand with small, fast arguments; {tmp} is the test's temporary folder.
COMMANDS = {
    "models": ["models"],
    "gpus": ["gpus"],
    "toy-max-speed": ["toy-max-speed", "--model", "llama-3-8b", "--gpu", "h100"],
    "frontier": ["frontier", "--model", "llama-3-8b", "--gpu", "h100", "--json"],
    "max-speed": ["max-speed", "--model", "llama-3-70b", "--gpu", "h100"],
    "preferred": ["preferred", "--model", "llama-3-8b", "--gpu", "h100"],
    "compare": ["compare", "--models", "llama-3-8b", "--gpus", "h100", "--json"],
    "describe-model": ["describe-model", "deepseek-v3"],
    "predict": ["predict", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--batch", "8",
                "--input-len", "512", "--output-len", "128"],
    "serve": ["serve", "--model", "llama-3-8b", "--gpu", "h100", "--input-len", "512",
              "--output-len", "128"],
    "measured": ["measured", "{tmp}/points.csv"],
    "engines": ["engines"],
    "sweep": ["sweep", "--models", "llama-3-8b", "--gpus", "h100", "--speeds", "50", "--jobs", "1",
              "--quiet", "--out", "{tmp}/sweep.csv"],
    "sensitivity": ["sensitivity", "--model", "llama-3-8b", "--gpu", "h100", "--speed", "50"],
}

RUN = """
import sys
from inference_math.cli import main
status = main(sys.argv[1:])
print("SYMPY" if "sympy" in sys.modules else "NO-SYMPY", status, file=sys.stderr)
"""


def test_every_subcommand_is_listed():
    parser = build_parser()
    (commands,) = [action for action in parser._actions if action.dest == "command"]
    assert set(commands.choices) == set(COMMANDS)


def _shipped_points(path: Path, rows: int = 3) -> None:
    """The first ``rows`` complete points of the shipped measurements, in their columns."""
    with SHIPPED_POINTS.open() as handle:
        reader = csv.DictReader(line for line in handle if not line.startswith("#"))
        points = [row for row in reader if row["input_len"] and row["output_len"]
                  and row["scenario"] and row["output_tok_s_per_gpu"]][:rows]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(points[0]))
        writer.writeheader()
        writer.writerows(points)


def _environment() -> dict:
    """This process's environment, without the frontier cache (a cached frontier would skip the
    code a command runs) and with one BLAS thread."""
    env = {key: value for key, value in os.environ.items() if key != "INFERENCE_MATH_CACHE"}
    return {**env, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_imports_sympy(command, tmp_path):
    _shipped_points(tmp_path / "points.csv")
    argv = [arg.format(tmp=tmp_path) for arg in COMMANDS[command]]
    done = subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True,
                          env=_environment(), timeout=600)
    report = done.stderr.strip().splitlines()[-1]
    assert report == "NO-SYMPY 0", done.stderr[-2000:]


@pytest.mark.parametrize("command", ["models", "gpus", "describe-model", "engines"])
def test_commands_that_describe_import_no_numpy(command, tmp_path):
    """Listing and describing models, GPUs and engines evaluate counts only, in plain Python
    (NumPy's import is most of such a command's time)."""
    run = RUN.replace('"sympy" in sys.modules else "NO-SYMPY"', '"numpy" in sys.modules else "NO-NUMPY"')
    run = run.replace('"SYMPY"', '"NUMPY"')
    done = subprocess.run([sys.executable, "-c", run, *COMMANDS[command]], capture_output=True,
                          text=True, env=_environment(), timeout=300)
    assert done.stderr.strip().splitlines()[-1] == "NO-NUMPY 0", done.stderr[-2000:]


@pytest.mark.parametrize("module", ["inference_math.fullmodel.search",
                                    "inference_math.serving.serving_frontier",
                                    "inference_math.presets.models"])
def test_run_time_modules_load_no_sympy(module):
    done = subprocess.run([sys.executable, "-c", f"import sys, {module}; "
                           "print('sympy' in sys.modules)"], capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.strip() == "False", done.stderr[-2000:]

"""The command line loads, for each command, only what that command needs: its family module of
cli/ and the library behind it, never the others (a cold start is mostly imports)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import inference_math
from inference_math import cli

CLI = Path(inference_math.__file__).parent / "cli"
#: Library modules (and third-party packages) heavier than a preset lookup.
HEAVY = ("inference_math.fullmodel.search", "inference_math.fullmodel.full_model",
         "inference_math.serving", "inference_math.reality", "inference_math.analysis",
         "inference_math.book", "tqdm", "matplotlib", "joblib", "pyarrow", "scipy")


def loaded_by(*argv: str) -> set[str]:
    """The modules loaded by running the command line with ``argv`` in a fresh interpreter."""
    code = ("import io, contextlib, json, sys\n"
            "from inference_math.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    main(sys.argv[1:])\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         check=True)
    return set(json.loads(out.stdout))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY))


def families(modules: set[str]) -> list[str]:
    return sorted(m.removeprefix("inference_math.cli.") for m in modules
                  if m.startswith("inference_math.cli.")
                  and m not in ("inference_math.cli.common", "inference_math.cli.config_options"))


def test_the_whole_help_loads_no_library_beyond_validation():
    modules = loaded_by("--help")
    assert families(modules) == []
    assert [m for m in modules if m.startswith("inference_math.")
            and m.split(".")[1] not in ("cli", "core")] == []


def test_describe_model_loads_the_presets_only():
    modules = loaded_by("describe-model", "llama-3-70b")
    assert families(modules) == ["describe"]
    assert heavy(modules) == []


def test_max_speed_loads_the_search_but_no_band_serving_or_drawing():
    modules = loaded_by("max-speed", "--model", "llama-3-8b", "--gpu", "h100", "--quiet")
    assert families(modules) == ["bands", "frontier", "setting"]
    assert "inference_math.fullmodel.search" in modules
    assert "tqdm" not in modules  # no progress bar with --quiet, nor off a terminal
    assert [m for m in heavy(modules) if m.split(".")[0] in ("matplotlib", "joblib", "pyarrow")
            or m.startswith(("inference_math.analysis", "inference_math.serving",
                             "inference_math.reality", "inference_math.book"))] == []


def test_the_band_defaults_still_show_in_the_help(capsys):
    from inference_math.analysis.bands import DRAWS, SEED

    assert cli.main(["max-speed", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"draws of the band (default {DRAWS})" in out and f"(default {SEED})" in out


def test_every_command_has_a_family_that_adds_its_arguments_and_runs_it():
    for name, _, module, function in cli.COMMANDS:
        family = cli._family(module)
        assert callable(family.add_arguments) and callable(getattr(family, function)), name


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_no_cli_module_imports_the_package_root_or_is_long(path):
    """The shared helpers are in cli/common.py: no `from .. import cli` (an import cycle), and
    each module stays short enough to read."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is None:
            assert "cli" not in [alias.name for alias in node.names], path.name
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            assert path.name != "common.py"
    assert len(path.read_text().splitlines()) <= 400


def test_names_moved_to_a_family_are_still_importable_from_the_package():
    from inference_math.cli import _fits, _money, _progress  # noqa: F401

    with pytest.raises(AttributeError):
        cli.no_such_name  # noqa: B018

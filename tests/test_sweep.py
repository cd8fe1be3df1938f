"""``sweep``: frontier summaries over a grid, on local processes and on a Dask cluster a test
starts, resumable, every cell a row (infeasible ones with the reason); each row checked against
the frontier computed directly."""

import json
import math
import subprocess
import sys

import pytest

from inference_math.analysis import sweep
from inference_math.analysis.sensitivity import elasticities
from inference_math.cli import main
from inference_math.core.validation import InputError
from inference_math.fullmodel.search import Setting, frontier
from inference_math.presets.hardware import get_gpu
from inference_math.presets.models import get_model

SPEEDS = [20.0, 100.0]


def _cells(contexts=(0.0, 8192.0), gpus=("h100", "a100"), bits=(None,)):
    return sweep.grid(["llama-3-8b"], list(gpus), list(bits), list(contexts), [None], None)


def _direct(row: dict) -> dict:
    """The same cell's numbers from its frontier, computed here."""
    model, gpu = get_model(row["model"]), get_gpu(row["gpu"])
    front = frontier(Setting(model=model, gpu=gpu, context=row["context"], label=model.name))
    top = front.max_speed()
    out = {"max_tokens_per_s": top.tokens_per_s, "usd_per_mtok_at_max": top.usd_per_mtok}
    for speed in SPEEDS:
        point = front.cheapest_at(speed)
        out[f"usd_per_mtok_at_{speed:g}"] = float(front.cost_at_speed(speed))
        out[f"binding_at_{speed:g}"] = point.binding
        out[f"gpus_at_{speed:g}"] = point.gpus
        slowest = min(pt.tokens_per_s for pt in front.points)
        if speed >= slowest:
            report = elasticities(front, speed)
            out[f"eps_hbm_bandwidth_at_{speed:g}"] = report["elasticities"]["hbm_bandwidth"]
            out[f"eps_price_per_hour_at_{speed:g}"] = 1.0
            out[f"binds_at_{speed:g}"] = "+".join(report["binds"])
    return out


def _check_against_frontiers(rows):
    for row in rows:
        assert row["feasible"] and row["infeasible"] is None
        for key, value in _direct(row).items():
            assert row[key] == (value if isinstance(value, str) else pytest.approx(value)), key


def test_a_local_sweep_writes_every_cell_as_its_frontier_gives_it(tmp_path):
    out = tmp_path / "grid.parquet"
    rows, computed = sweep.run(_cells(), SPEEDS, out, jobs=2)
    assert computed == 4 and len(rows) == 4
    assert {(r["gpu"], r["context"]) for r in rows} == {(g, c) for g in ("h100", "a100")
                                                       for c in (0.0, 8192.0)}
    _check_against_frontiers(rows)
    assert sweep.read_rows(out) == rows  # the file holds what the run returned


def test_a_sweep_run_again_computes_only_what_its_file_lacks(tmp_path):
    out = tmp_path / "grid.csv"
    _, computed = sweep.run(_cells(contexts=(0.0,)), SPEEDS, out, jobs=1)
    assert computed == 2
    rows, computed = sweep.run(_cells(contexts=(0.0,)), SPEEDS, out, jobs=1)
    assert computed == 0 and len(rows) == 2
    rows, computed = sweep.run(_cells(contexts=(0.0, 8192.0)), SPEEDS, out, jobs=1)
    assert computed == 2 and len(rows) == 4
    # a row lost (an interrupted run) is computed again, and only it
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:-1]) + "\n")
    rows, computed = sweep.run(_cells(contexts=(0.0, 8192.0)), SPEEDS, out, jobs=1)
    assert computed == 1 and len(rows) == 4
    _check_against_frontiers(rows)
    with pytest.raises(InputError, match="other speeds"):
        sweep.run(_cells(contexts=(0.0,)), [50.0], out, jobs=1)


def test_a_cell_that_cannot_run_is_a_row_with_its_reason(tmp_path):
    """The V100 has no 4-bit FLOP/s figure: that cell is reported, not dropped."""
    cells = sweep.grid(["llama-3-8b"], ["v100"], [4], [0.0], [None], None)
    rows, _ = sweep.run(cells, SPEEDS, tmp_path / "v100.parquet", jobs=1)
    (row,) = rows
    assert row["feasible"] is False and "4" in row["infeasible"]
    assert row["max_tokens_per_s"] is None and row["usd_per_mtok_at_20"] is None


def test_a_sweep_on_a_dask_cluster_gives_the_local_rows(tmp_path):
    distributed = pytest.importorskip("distributed")
    cells = _cells()
    local, _ = sweep.run(cells, SPEEDS, tmp_path / "local.parquet", jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster:
        remote, computed = sweep.run(cells, SPEEDS, tmp_path / "dask.parquet",
                                     scheduler=cluster.scheduler_address)
    assert computed == 4
    assert sorted(map(json.dumps, remote)) == sorted(map(json.dumps, local))


def test_the_command_line_sweeps_and_refuses_bad_input_in_one_line(tmp_path, capsys):
    out = tmp_path / "cli.csv"
    assert main(["sweep", "--models", "llama-3-8b", "--gpus", "h100", "--contexts", "0,4096",
                 "--out", str(out), "--jobs", "1", "--quiet", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out,
                      parse_constant=lambda c: pytest.fail(f"non-finite {c} in JSON"))
    assert len(rows) == 2 and all(math.isfinite(r["max_tokens_per_s"]) for r in rows)
    bad = [["--models", "no-such-model", "--gpus", "h100", "--out", str(tmp_path / "a.csv")],
           ["--models", "llama-3-8b", "--gpus", "h100", "--out", str(tmp_path / "a.txt")],
           ["--models", "llama-3-8b", "--gpus", "h100", "--speeds", "20,-1",
            "--out", str(tmp_path / "a.csv")],
           ["--models", "llama-3-8b", "--gpus", "h100", "--weight-bits", "3",
            "--out", str(tmp_path / "a.csv")],
           ["--models", "llama-3-8b", "--gpus", "h100", "--out", str(tmp_path / "x" / "a.csv")]]
    for args in bad:
        assert main(["sweep", *args]) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("inference-math: error:"), err
    foreign = tmp_path / "foreign.csv"
    foreign.write_text("a,b\n1,2\n")
    assert main(["sweep", "--models", "llama-3-8b", "--gpus", "h100", "--out", str(foreign),
                 "--quiet"]) == 2
    assert "not a sweep's output" in capsys.readouterr().err


@pytest.mark.parametrize("module, argv, needs", [
    ("pyarrow", ["--out", "{tmp}/rows.parquet"], "argument --out: 'rows.parquet' needs pyarrow"),
    ("distributed", ["--out", "{tmp}/rows.csv", "--scheduler", "tcp://127.0.0.1:8786"],
     "argument --scheduler: 'tcp://127.0.0.1:8786' needs distributed"),
])
def test_a_missing_extra_is_one_line_naming_it(module, argv, needs, tmp_path, capsys, monkeypatch):
    """Parquet (pyarrow) and Dask (distributed) come with the 'sweep' extra: without them the
    command refuses in one line naming the extra, exit 2, before computing anything."""
    for name in [m for m in sys.modules if m == module or m.startswith(f"{module}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ImportError
    monkeypatch.setattr(sweep, "run", lambda *a, **k: pytest.fail("the sweep started"))
    code = main(["sweep", "--models", "llama-3-8b", "--gpus", "h100", "--quiet",
                 *[arg.format(tmp=tmp_path) for arg in argv]])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err == (f"inference-math: error: {needs}: "
                            "pip install 'inference-math[sweep]'\n")


def test_a_missing_extra_from_a_fresh_interpreter_has_no_traceback(tmp_path):
    """The same from the installed command line, pyarrow hidden by an import hook."""
    code = ("import builtins, sys\n"
            "real = builtins.__import__\n"
            "def hide(name, *args, **kwargs):\n"
            "    if name == 'pyarrow' or name.startswith('pyarrow.'):\n"
            "        raise ModuleNotFoundError(f'No module named {name!r}')\n"
            "    return real(name, *args, **kwargs)\n"
            "builtins.__import__ = hide\n"
            "from inference_math.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", code, "sweep", "--models", "llama-3-8b", "--gpus",
                           "h100", "--out", str(tmp_path / "rows.parquet"), "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("inference-math: error: argument --out: 'rows.parquet' needs pyarrow: "
                           "pip install 'inference-math[sweep]'\n")
    assert not (tmp_path / "rows.parquet").exists()

"""``inference-math frontier --plot`` and ``inference-math compare``."""

from __future__ import annotations

import csv
import io
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run_without_search, strict_json

from inference_math.cli import DEFAULT_SPEED, main
from inference_math.fullmodel.cache import ENV as CACHE_ENV

HF = resources.files("inference_math").joinpath("data/hf_configs")
QWEN3_8B = str(HF / "Qwen--Qwen3-8B.config.json")
MY_GPU = str(resources.files("inference_math").joinpath("data/examples/my_gpu.toml"))
SMALL = ["--model", "llama-3-8b", "--gpu", "h100", "--quiet"]
PAIRS = ["compare", "--models", "llama-3-8b,llama-3-70b", "--gpus", "h100,b200", "--quiet"]

SVG_START = b"<?xml"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"  # the PNG specification's signature


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    """One frontier cache for the module: each search runs once."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path_factory.getbasetemp() / "frontier-cache"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(code, out, err, needle):
    assert code == 2 and out == ""
    assert err.startswith("inference-math: error: ") and err.count("\n") == 1
    assert needle in err and "Traceback" not in err


# --- frontier --plot -----------------------------------------------------------------------------

@pytest.mark.parametrize("suffix, magic", [(".svg", SVG_START), (".PNG", PNG_MAGIC)])
def test_plot_writes_the_figure_beside_the_table(capsys, tmp_path, suffix, magic):
    path = tmp_path / f"front{suffix}"
    code, plain, err = run(capsys, "frontier", *SMALL)
    assert code == 0
    code, out, err = run(capsys, "frontier", *SMALL, "--plot", str(path))
    assert code == 0 and err == ""
    assert out == plain  # the same table; the figure goes to the file
    data = path.read_bytes()
    assert data.startswith(magic)
    if suffix == ".svg":
        text = data.decode()
        assert "<svg" in text and text.rstrip().endswith("</svg>")
        assert "<dc:date>" not in text  # no date stamp: the same frontier gives the same bytes
        assert "$" in text or "&#36;" in text or "glyph" in text  # drawn text (paths) or labels


def test_plot_with_json_keeps_the_json_strict(capsys, tmp_path):
    path = tmp_path / "front.svg"
    code, out, err = run(capsys, "frontier", *SMALL, "--json", "--plot", str(path))
    assert code == 0 and path.stat().st_size > 1000
    assert len(strict_json(out)) > 10


@pytest.mark.parametrize("target, needle", [
    ("out.pdf", "argument --plot: the file must end in .svg or .png"),
    ("out", "argument --plot: the file must end in .svg or .png"),
    ("missing/out.svg", "argument --plot: no folder"),
    ("folder.svg", "argument --plot: 'FOLDER' is a folder"),
])
def test_a_bad_plot_path_is_one_line_naming_plot(capsys, tmp_path, monkeypatch, target, needle):
    (tmp_path / "folder.svg").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "frontier", *SMALL, "--plot", target)
    one_error_line(code, out, err, needle.replace("FOLDER", target))
    assert not (tmp_path / "out.pdf").exists()


def test_an_unwritable_plot_is_one_line_naming_plot(capsys, tmp_path, monkeypatch):
    from inference_math.book import frontier_plot

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(frontier_plot, "save_frontier_plot", refuse)
    code, out, err = run(capsys, "frontier", *SMALL, "--plot", str(tmp_path / "a.svg"))
    one_error_line(code, out, err, "argument --plot: cannot write")
    assert "Permission denied" in err


def test_only_frontier_draws(capsys, tmp_path):
    code, out, err = run(capsys, "max-speed", *SMALL, "--plot", str(tmp_path / "a.svg"))
    one_error_line(code, out, err, "unrecognized arguments: --plot")


def test_speed_ticks_are_one_two_five_within_the_range():
    from inference_math.book.frontier_plot import speed_ticks

    assert speed_ticks(1.6, 160) == [2, 5, 10, 20, 50, 100]
    assert speed_ticks(0.05, 2000) == [0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000]
    # the limit's frontier spans from tens to millions of tokens/s: one tick per decade
    assert speed_ticks(40, 1e7) == [100, 1e3, 1e4, 1e5, 1e6, 1e7]
    assert speed_ticks(1, 1e10) == [1, 100, 1e4, 1e6, 1e8, 1e10]


def test_speed_labels_are_short():
    from inference_math.book.frontier_plot import speed_label

    assert [speed_label(v) for v in (0.3, 50, 3000, 30000, 1e5, 1e6, 3e7)] == \
        ["0.3", "50", "3,000", "30k", "100k", "1M", "30M"]


# --- compare -------------------------------------------------------------------------------------

def test_compare_table_has_a_row_per_pair_and_states_the_speed(capsys):
    code, out, err = run(capsys, *PAIRS)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert f"at {DEFAULT_SPEED:g} tok/s per user" in lines[0]
    assert lines[1].split() == ["model", "GPU", "bits", "curve", "top", "tok/s", "$/Mtok",
                                "binding"]
    rows = lines[3:lines.index("")]
    assert len(rows) == 4 and all("paper" in row.split() for row in rows)
    assert lines[lines.index("") + 1:] == [
        "curves (by default the paper's for the paper's presets, the physical one for a model "
        "read from a config.json):", "  paper: the reference code's rules at the presets' caps "
        "(Erdil 2025)"]
    for row, (model, gpu) in zip(rows, [("Llama 3 8B", "H100"), ("Llama 3 8B", "B200"),
                                        ("Llama 3 70B", "H100"), ("Llama 3 70B", "B200")],
                                 strict=True):
        assert row.startswith(model) and gpu in row
    assert max(len(line) for line in lines[1:lines.index("")]) <= 80


def _json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0 and err == ""
    return strict_json(out)


def test_compare_json_is_strict_and_each_cost_lies_on_the_frontier(capsys):
    rows = _json(capsys, *PAIRS, "--speed", "40")
    assert [(r["model"], r["gpu"]) for r in rows] == [
        ("Llama 3 8B", "H100 SXM"), ("Llama 3 8B", "B200 SXM"),
        ("Llama 3 70B", "H100 SXM"), ("Llama 3 70B", "B200 SXM")]
    for row in rows:
        assert row["feasible"] and row["infeasible"] is None and row["speed"] == 40
        assert row["max_tokens_per_s"] > 40
        # eq-search-cost at the point that serves 40 tok/s (N GPUs, batch b, speed >= 40): the
        # frontier between the slower neighbour and it is no dearer than that point
        at_least_40 = 1e6 * row["gpus"] / (row["batch"] * 40) * row["usd_per_gpu_hour"] / 3600
        assert 0 < row["usd_per_mtok"] <= at_least_40 * (1 + 1e-9)
        assert row["usd_per_mtok"] < row["usd_per_mtok_at_max"]
        assert row["binding"] in ("kernel launches", "collective latency", "network bandwidth",
                                  "memory", "arithmetic")
    # the 8B is cheaper than the 70B on the same GPU at the same speed
    assert rows[0]["usd_per_mtok"] < rows[2]["usd_per_mtok"]
    assert rows[1]["usd_per_mtok"] < rows[3]["usd_per_mtok"]


def test_compare_cost_rises_with_the_speed_asked(capsys):
    argv = ["compare", "--models", "llama-3-70b", "--gpus", "h100", "--quiet"]
    costs = [_json(capsys, *argv, "--speed", s)[0]["usd_per_mtok"] for s in ("10", "50", "100")]
    assert costs[0] <= costs[1] < costs[2]


def test_compare_csv_parses_with_a_row_per_pair(capsys):
    code, out, err = run(capsys, *PAIRS, "--csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 4
    assert {"model", "gpu", "speed", "max_tokens_per_s", "usd_per_mtok", "binding",
            "infeasible"} <= set(rows[0])
    assert all(row["feasible"] == "1" and row["infeasible"] == "" for row in rows)
    assert float(rows[0]["usd_per_mtok"]) > 0


def test_infeasible_pairs_are_rows_not_dropped(capsys, tmp_path):
    tiny = tmp_path / "tiny.toml"  # a GPU of 1 kB of HBM: no model fits in 2^18 of them
    tiny.write_text(open(MY_GPU).read().replace("hbm_bytes = 80e9", "hbm_bytes = 1e3")
                    .replace('name = "H100 SXM, my cluster"', 'name = "Tiny"'))
    argv = ["compare", "--models", "llama-3-8b", "--gpus", f"h100,{tiny},a100", "--quiet",
            "--weight-bits", "4", "--speed", "100000"]
    rows = _json(capsys, *argv)
    assert [row["feasible"] for row in rows] == [False, False, False]
    beyond, no_fit, no_fp4 = (row["infeasible"] for row in rows)
    assert "beyond the top speed" in beyond and rows[0]["max_tokens_per_s"] < 1e5
    assert "do not fit" in no_fit and rows[1]["max_tokens_per_s"] is None
    assert "no FLOP/s figure for 4-bit" in no_fp4
    assert all(row["usd_per_mtok"] is None and row["binding"] is None for row in rows)
    code, out, err = run(capsys, *argv)
    assert code == 0
    table = out.splitlines()[3:out.splitlines().index("")]
    assert len(table) == 3
    assert "infeasible: beyond top speed" in table[0]
    assert "infeasible: does not fit" in table[1]
    assert "infeasible: no FLOP/s figure" in table[2]
    assert "nan" not in out.lower()


def test_compare_names_each_rows_curve(capsys):
    """A paper preset and a config.json model in one comparison: each row names the curve its
    numbers follow, in the table and the JSON; --curve sets every row's."""
    argv = ["compare", "--models", f"llama-3-8b,{QWEN3_8B}", "--gpus", "h100", "--quiet"]
    rows = _json(capsys, *argv)
    assert [row["curve"] for row in rows] == ["paper", "physical"]
    code, out, _ = run(capsys, *argv)
    lines = out.splitlines()
    table = lines[3:lines.index("")]
    assert code == 0 and len(table) == 2
    assert "paper" in table[0].split() and "physical" in table[1].split()
    assert "  paper: the reference code's rules" in out
    assert "  physical: the book's physical rules" in out
    rows = _json(capsys, *argv, "--curve", "limit")
    assert [row["curve"] for row in rows] == ["limit", "limit"]
    code, out, _ = run(capsys, *argv, "--curve", "limit")
    assert "curves:\n  limit: " in out and "by default" not in out


def test_compare_takes_a_config_json_and_a_gpu_file(capsys):
    rows = _json(capsys, "compare", "--models", QWEN3_8B, "--gpus", f"{MY_GPU},h100", "--quiet")
    assert [row["model"] for row in rows] == ["Qwen/Qwen3-8B"] * 2
    assert rows[0]["gpu"] == "H100 SXM, my cluster" and rows[0]["usd_per_gpu_hour"] == 1.69
    # the same H100 at a lower price: the same speeds, a cost in proportion to the price
    assert rows[0]["max_tokens_per_s"] == pytest.approx(rows[1]["max_tokens_per_s"], rel=1e-12)
    ratio = rows[1]["usd_per_gpu_hour"] / rows[0]["usd_per_gpu_hour"]
    assert rows[1]["usd_per_mtok"] / rows[0]["usd_per_mtok"] == pytest.approx(ratio, rel=1e-9)


@pytest.mark.parametrize("argv, needle", [
    (["--models", "llama-3-8b,,gpt-4", "--gpus", "h100"], "argument --models: an empty name"),
    (["--models", "llama-9000", "--gpus", "h100"], "argument --models: unknown model 'llama-9000'"),
    (["--models", "llama-3-8b", "--gpus", "h100,h900"], "argument --gpus: unknown GPU 'h900'"),
    (["--models", "llama-3-8b", "--gpus", "tpu-v5e"], "argument --gpus:"),
    (["--models", "llama-3-8b", "--gpus", "missing/gpu.toml"], "argument --gpus:"),
    (["--models", "missing/config.json", "--gpus", "h100"], "argument --models:"),
    (["--models", "llama-3-8b", "--gpus", "h100", "--speed", "0"],
     "argument --speed: must be in [0.01, 100000]"),
    (["--models", "llama-3-8b", "--gpus", "h100", "--speed", "nan"], "argument --speed:"),
    (["--models", "llama-3-8b", "--gpus", "h100", "--speed", "fast"], "argument --speed:"),
    (["--models", "llama-3-8b", "--gpus", "h100", "--json", "--csv"], "not allowed with"),
    (["--models", "llama-3-8b"], "required: --gpus"),
])
def test_bad_compare_input_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, "compare", *argv)
    one_error_line(code, out, err, needle)


@pytest.mark.parametrize("usd, text", [(0.0023961, "0.002396"), (18.1, "18.10"), (1234.6, "1235"),
                                       (0.5, "0.5000"), (0.0, "0.00")])
def test_compare_prints_dollars_to_four_significant_digits(usd, text):
    from inference_math.cli import _money

    assert _money(usd) == text


BAD_COMPARE = st.one_of(
    st.tuples(st.just("--models"), st.sampled_from(["", ",", "llama-3-8b,", "tiny", "a/b.json"])),
    st.tuples(st.just("--gpus"), st.sampled_from(["", "h100,,b200", "h900", "tpu-v5e",
                                                  "no/such.toml"])),
    st.tuples(st.just("--speed"), st.sampled_from(["0", "-5", "1e6", "nan", "inf", "fast"])),
    st.tuples(st.just("--weight-bits"), st.sampled_from(["3", "32", "x"])),
    st.tuples(st.just("--price"), st.sampled_from(["0", "1e308", "nan"])),
)


@settings(max_examples=40, deadline=None)
@given(bad=BAD_COMPARE, models=st.sampled_from(["llama-3-8b", "llama-3-8b,gpt-4"]),
       json_out=st.booleans())
def test_any_bad_compare_flag_is_one_line_before_any_search(bad, models, json_out):
    """A bad value anywhere on the line is refused before the first frontier search starts."""
    argv = ["compare", "--models", models, "--gpus", "h100", *bad] + (["--json"] if json_out else [])
    one_error_line(*run_without_search(argv), f"argument {bad[0]}")

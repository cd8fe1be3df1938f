"""Engine families (serving/engines.py), the fit by engine (reality/estimate_fit.py), and the
commands' --engine and ``engines``."""

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from inference_math.cli import main
from inference_math.presets.hardware import get_gpu
from inference_math.reality import estimate_fit as ef
from inference_math.reality import measured_points as mp
from inference_math.serving import engines as E
from inference_math.serving import step_time as st


def test_every_public_row_maps_to_a_family():
    known = set(E.families()) | {E.UNKNOWN}
    seen = {}
    for point in mp.public_points():
        name = E.family(point["engine"])
        assert name in known, point["engine"]
        seen[point["engine"]] = name
    assert E.UNKNOWN not in seen.values(), [k for k, v in seen.items() if v == E.UNKNOWN]
    assert seen["vLLM (ROCm)"] == seen["vLLM"] == "vLLM"
    assert seen["TensorRT-LLM (PyTorch backend)"] == "TensorRT-LLM"
    assert seen["SGLang + ATOM plugin (ROCm)"] == "SGLang + ATOM"
    assert seen["ATOM (ROCm, AITER)"] == "ATOM"
    assert seen["vLLM-Ascend"] == "vLLM-Ascend"


@pytest.mark.parametrize("text, name", [
    ("NVIDIA Dynamo (TensorRT-LLM backend)", "Dynamo + TensorRT-LLM"),
    ("Dynamo + SGLang", "Dynamo + SGLang"), ("Dynamo", "Dynamo"),
    ("DeepSeek inference system", "DeepSeek in-house"), ("", E.UNKNOWN), (None, E.UNKNOWN),
    ("some engine", E.UNKNOWN)])
def test_family_names(text, name):
    assert E.family(text) == name


def test_lookup_ignores_case_and_punctuation():
    assert E.lookup("vllm") == "vLLM"
    assert E.lookup("tensorrt_llm") == E.lookup("trtllm") == "TensorRT-LLM"
    assert E.lookup("dynamo+sglang") == "Dynamo + SGLang"
    assert E.lookup("nope") is None and E.lookup("") is None


def test_without_an_engine_the_pooled_numbers_are_unchanged():
    """The fit by engine leaves the pooled record alone: no engine, or None, is the pooled
    stack's fit, and the held-out comparison's pooled column is the pooled test record."""
    rec = st.fitted_record()
    for gpu in ("h100", "mi300x"):
        g = get_gpu(gpu)
        assert st.fitted(g) == st.fitted(g, None)
        assert st.fitted(g).vector == tuple(rec["parameters"][st.stack_of(g)].values())
        assert (st.fitted(g).band_low, st.fitted(g).band_high) == (rec["band"]["low"],
                                                                   rec["band"]["high"])
    pooled_test = rec["engines"]["test"]["all"]["pooled"]
    assert pooled_test["median_abs_log"] == rec["test"]["median_abs_log"]
    # a family with no points of its own takes its stack's efficiencies and the pooled band
    assert st.fitted(get_gpu("h100"), "Ollama") == st.fitted(get_gpu("h100"))


def test_lambda_infinite_is_the_stack_fit():
    """The penalty's limit: at λ = ∞ a family's values are its stack's; at a very large λ they
    approach them."""
    pooled = ef.stored()
    train = ef.training()
    group = [s for s in train if ef.group_of(s) == ("vLLM", "cuda")]
    weights = ef._weights(train)[[k for k, s in enumerate(train)
                                  if ef.group_of(s) == ("vLLM", "cuda")]]
    assert ef.fit_group(group, pooled["cuda"], math.inf, weights) == pooled["cuda"]
    near = ef.fit_group(group, pooled["cuda"], 1e7, weights)
    for name in ef.PER_ENGINE:
        assert math.isclose(getattr(near, name), getattr(pooled["cuda"], name), rel_tol=1e-3)


def test_the_stored_engine_fit_is_what_the_method_gives():
    """Refitting each family at the stored λ from the stored pooled fit reproduces the stored
    values (2%, or 1e-3 absolute), and the held-out errors it reports."""
    rec = st.fitted_record()["engines"]
    lam = math.inf if rec["lambda"] == "inf" else rec["lambda"]
    pooled = ef.stored()
    groups = ef.fit_groups(ef.training(), pooled, lam)
    stored = {(name, stack): entry for name, stacks in rec["families"].items()
              for stack, entry in stacks.items() if entry["own"]}
    assert set(groups) == set(stored) and len(groups) >= 3
    for group, eff in groups.items():
        for name in st.PARAMETER_NAMES:
            assert math.isclose(getattr(eff, name), stored[group]["parameters"][name],
                                rel_tol=0.02, abs_tol=1e-3), (group, name)
        assert stored[group]["train_setups"] >= ef.MIN_SETUPS
    test = [s for s in ef.samples() if s.held_out]
    r = ef.ratios(test, pooled, groups)
    assert math.isclose(float(np.median(np.abs(r))),
                        rec["test"]["all"]["with_engine"]["median_abs_log"], abs_tol=0.01)
    assert rec["test"]["all"]["pooled"]["median_abs_log"] == st.fitted_record()["test"][
        "median_abs_log"]


class _Fake:
    """A stand-in sample: a setup and an engine version on one family and stack."""

    def __init__(self, setup, version):
        self.setup = setup
        self.version = version


@pytest.mark.parametrize("text, release", [
    ("0.6.3.post2.dev308+gb489fc3c", "0.6"), ("0.4.3+rocm614", "0.4"), ("1.2.0rc1", "1.2"),
    ("rocm/atom-dev:sglang-v0.5.10-nightly_20260520", "0.5"),
    ("commit 4181e424 / rocm/atom-dev 2026-05-22", None), ("", None), (None, None),
    ("rocm/vllm-dev:20250112", None)])
def test_release_line_of_a_version(text, release):
    sample = ef.Sample(probe=SimpleNamespace(resolved=SimpleNamespace(
        point={"engine_version": text})), quantity="", measured=1.0, setup="", held_out=False)
    assert ef.release_of(sample) == release


def test_release_offsets_shrink_setup_means_by_n0(monkeypatch):
    """Two setups of release 0.6 (mean misses 0.3 and 0.1, by hand from their points) and one
    of 0.7 (mean −0.4): at n0 = 1 the offsets are (0.3 + 0.1)/3 and −0.4/2; at n0 = ∞ none."""
    items = [_Fake("a", "0.6.1"), _Fake("a", "0.6.1"), _Fake("b", "0.6.3"), _Fake("c", "0.7.0")]
    monkeypatch.setattr(ef, "release_key", lambda s: ("vLLM", "cuda", s.version[:3]))
    r = np.array([0.2, 0.4, 0.1, -0.4])
    offsets = ef.release_offsets(items, r, 1.0)
    assert offsets == pytest.approx({("vLLM", "cuda", "0.6"): 0.4 / 3,
                                     ("vLLM", "cuda", "0.7"): -0.2})
    assert ef.release_offsets(items, r, math.inf) == {}
    assert ef._less(items, r, offsets) == pytest.approx([0.2 - 0.4 / 3, 0.4 - 0.4 / 3,
                                                         0.1 - 0.4 / 3, -0.2])


def test_the_stored_release_analysis_is_what_the_method_gives():
    """The stored release record: n0 has the least out-of-fold factor of its grid, n0 = ∞ is
    the engine's own out-of-fold factor (the stored λ's), and the held-out
    factors recompute from the stored fits (1e-3)."""
    rec = st.fitted_record()["engines"]
    rel = rec["release"]
    cv = rel["cv_factor"]
    assert math.isclose(cv["inf"], math.exp(rec["cv_median_abs_log"][str(rec["lambda"])]),
                        rel_tol=1e-3)
    chosen = "inf" if rel["n0"] == "inf" else f"{rel['n0']:g}"
    assert cv[chosen] <= min(cv.values()) + 1e-4
    lam = math.inf if rec["lambda"] == "inf" else rec["lambda"]
    pooled = ef.stored()
    groups = ef.fit_groups(ef.training(), pooled, lam)
    test = [s for s in ef.samples() if s.held_out]
    r = ef.ratios(test, pooled, groups)
    n0 = math.inf if rel["n0"] == "inf" else float(rel["n0"])
    offsets = ef.release_offsets(ef.training(), ef.ratios(ef.training(), pooled, groups), n0)
    assert math.isclose(math.exp(float(np.median(np.abs(ef._less(test, r, offsets))))),
                        rel["test_factor"], rel_tol=1e-3)
    # the floor: each held-out setup less its own mean; never above the uncorrected factor
    setups = {s.setup for s in test}
    means = {u: float(np.mean([x for s, x in zip(test, r, strict=True) if s.setup == u]))
             for u in setups}
    floor = [x - means[s.setup] for s, x in zip(test, r, strict=True)]
    assert math.isclose(math.exp(float(np.median(np.abs(floor)))),
                        rel["test_factor_setup_known"], rel_tol=1e-3)
    assert rel["test_factor_setup_known"] < rec["test"]["all"]["with_engine"]["median_factor"]


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", [
    ["serve", "--model", "llama-3-8b", "--gpu", "h100", "--input-len", "512",
     "--output-len", "128"],
    ["predict", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--batch", "8",
     "--input-len", "512", "--output-len", "128"],
    ["frontier", "--model", "llama-3-8b", "--gpu", "h100"]])
def test_unknown_engine_is_one_line_exit_2(capsys, command):
    code, out, err = _run(capsys, *command, "--engine", "warp-drive")
    assert code == 2 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--engine" in lines[0] and "vLLM" in lines[0]
    assert "Traceback" not in err


def test_engine_off_the_estimate_is_refused(capsys):
    code, _, err = _run(capsys, "predict", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1",
                        "--batch", "8", "--input-len", "512", "--output-len", "128",
                        "--curve", "physical", "--engine", "vllm")
    assert code == 2 and "--engine" in err and len(err.strip().splitlines()) == 1


def test_outputs_name_the_engine(capsys):
    base = ["predict", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--batch", "8",
            "--input-len", "512", "--output-len", "128", "--json"]
    _, pooled, _ = _run(capsys, *base)
    _, vllm, _ = _run(capsys, *base, "--engine", "vllm")
    pooled, vllm = json.loads(pooled), json.loads(vllm)
    assert pooled["engine"] == "pooled" and vllm["engine"] == "vLLM"
    assert pooled["output_tokens_per_s_per_gpu"] != vllm["output_tokens_per_s_per_gpu"]
    _, text, _ = _run(capsys, *base[:-1], "--engine", "TensorRT-LLM")
    assert "engine: TensorRT-LLM" in text
    _, text, _ = _run(capsys, "serve", "--model", "llama-3-8b", "--gpu", "h100", "--input-len",
                      "512", "--output-len", "128", "--engine", "sglang")
    assert "engine SGLang" in text.splitlines()[0]
    _, rows, _ = _run(capsys, "serve", "--model", "llama-3-8b", "--gpu", "h100", "--input-len",
                      "512", "--output-len", "128", "--json")
    assert {row["engine"] for row in json.loads(rows)} == {"pooled"}


def test_engines_command(capsys):
    code, text, _ = _run(capsys, "engines")
    assert code == 0
    for name in ("TensorRT-LLM", "vLLM", "SGLang", "ATOM", "Dynamo"):
        assert name in text
    assert "held-out median factor" in text
    code, out, _ = _run(capsys, "engines", "--json")
    data = json.loads(out)
    rows = {(r["engine"], r["stack"]): r for r in data["engines"]}
    assert rows[("vLLM", "cuda")]["efficiencies"] == "own"
    assert rows[("NVIDIA NIM", "cuda")]["efficiencies"] == "stack's"
    assert rows[("NVIDIA NIM", "cuda")]["t_fixed_s"] == st.fitted_record()["parameters"]["cuda"][
        "t_fixed_s"]
    assert sum(r["train_points"] + r["test_points"] for r in data["engines"]) == len(ef.samples())

"""The generated counts: current, equal to SymPy's own evaluation, SymPy-free at run time, and the
plain-Python functions equal to the NumPy ones bit for bit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sp

from inference_math.codegen import counts_codegen as codegen
from inference_math.core.numeric import evaluate
from inference_math.derivations import layer_mix
from inference_math.presets import counts_numpy, counts_python
from inference_math.presets.counts import count


def test_generated_module_is_current():
    # regenerating from the derivations gives the committed text byte for byte
    assert codegen.module_source() == codegen.TARGET.read_text()
    assert codegen.module_source(python=True) == codegen.PYTHON_TARGET.read_text()


def _random_values(name: str, rng, groups: int) -> dict:
    """Registry name -> a positive value over twelve decades (a list of ``groups`` values for a
    per-group symbol of a sum over the groups)."""
    expr = codegen.COUNTS[name]().rhs
    per_group = set()
    if expr.atoms(sp.Sum):
        sums, _, _, others = layer_mix._plan(expr)
        per_group = {codegen._NAMES[a] for _, args in sums for a in args} - {
            codegen._NAMES[a] for a in others}
    _, args = counts_python.FUNCTIONS[name]
    return {arg: ([float(v) for v in 10 ** rng.uniform(-3, 9, groups)]
                  if arg in per_group else float(10 ** rng.uniform(-3, 9)))
            for arg in args}


@pytest.mark.parametrize("name", sorted(codegen.COUNTS))
def test_python_counts_are_the_numpy_counts_bit_for_bit(name):
    """The plain-Python function of each count against the NumPy function of the same
    derivation, at values over twelve decades and one to seven layer groups: equal, not close."""
    rng = np.random.default_rng(sum(map(ord, name)))
    python, numpy_fn = counts_python.FUNCTIONS[name][0], counts_numpy.FUNCTIONS[name][0]
    for groups in range(1, 8):
        values = _random_values(name, rng, groups)
        arrays = [np.asarray(v) if isinstance(v, list) else np.float64(v) for v in values.values()]
        assert python(*values.values()) == float(numpy_fn(*arrays)), values


def test_counts_fall_back_to_numpy_where_python_would_raise_or_add_otherwise():
    """A division by zero gives NumPy's infinity, not an exception; a sum over more groups than
    plain Python adds in NumPy's order is NumPy's (pairwise) sum."""
    values = {"d_head": 128.0, "g": 0.0, "n_layers": 80.0, "n_q": 64.0, "p_act": 2.0}
    assert count("kv_cache_bytes_per_token", values) == np.inf
    rng = np.random.default_rng(0)
    many = _random_values("total_params", rng, 40)
    arrays = [np.asarray(v) if isinstance(v, list) else np.float64(v) for v in many.values()]
    assert count("total_params", many) == float(counts_numpy.total_params(*arrays))


@pytest.mark.parametrize("name", sorted(codegen.COUNTS))
def test_generated_count_equals_sympy_evaluation(name):
    """Each generated function, at random positive values (three layer groups for a sum over
    groups), against SymPy's evaluation of the derivation."""
    expr = codegen.COUNTS[name]().rhs
    rng = np.random.default_rng(len(name))
    if expr.atoms(sp.Sum):
        sums, _, _, others = layer_mix._plan(expr)
        per_group = {a for body, args in sums for a in args}
        values = {a: list(rng.uniform(1, 100, 3)) for a in per_group - set(others)}
        values.update({a: float(rng.uniform(1, 100)) for a in others})
        expected = layer_mix.evaluate_groups(
            expr, {a: v for a, v in values.items() if isinstance(v, list)},
            {a: v for a, v in values.items() if not isinstance(v, list)})
    else:
        values = {a: float(rng.uniform(1, 100)) for a in expr.free_symbols}
        expected = evaluate(expr, values)
    assert count(name, values) == pytest.approx(expected, rel=1e-12)


def test_counts_on_the_commands_path_do_not_lambdify(monkeypatch):
    """Reading configs, counting presets and describing them call no SymPy lambdify."""
    from inference_math.presets import hf_config as hc
    from inference_math.presets.layered import from_hf_config
    from inference_math.presets.models import MODELS, describe

    def refuse(*args, **kwargs):
        raise AssertionError("lambdify on a command's path")

    monkeypatch.setattr(sp, "lambdify", refuse)
    for stem in ("deepseek-ai--DeepSeek-V3", "nvidia--Qwen3.6-35B-A3B-NVFP4",
                 "openai--gpt-oss-120b", "nvidia--Nemotron-H-56B-Base-8K"):
        path = str(hc.FIXTURES / f"{stem}.config.json")
        assert describe(path)["total_params"] > 0
    assert from_hf_config(hc.FIXTURES / "deepseek-ai--DeepSeek-V3.config.json").total_params > 0
    fresh = dataclasses.replace(MODELS["llama-3-70b"])  # no count cached yet
    assert fresh.total_params == pytest.approx(70.55e9, rel=1e-3)
    assert describe("llama-3-70b")["weight_bytes"] > 0

"""The generated NumPy terms of the full model: current, and equal to SymPy's own evaluation."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from inference_math import get_gpu, get_model
from inference_math.codegen import full_model_codegen as codegen
from inference_math.fullmodel import full_model as fm
from inference_math.fullmodel.terms import term_expression


@pytest.mark.parametrize("rules", fm.RULES)
def test_generated_module_is_current(rules):
    # regenerating from the derivations gives the committed text byte for byte
    assert codegen.module_source(rules) == codegen.TARGETS[rules].read_text()


@pytest.mark.parametrize(("model", "gpu", "two_d"), [
    ("llama-3-70b", "h100", False), ("deepseek-v3-paper", "h100", True), ("mixtral-8x22b", "h100", True),
    ("llama-3-70b", "tpu-v4-erdil", True)])
@pytest.mark.parametrize("name", ["latency", "network_bandwidth", "latency_lower"])
@pytest.mark.parametrize("curve", fm.RULES)
def test_generated_term_equals_sympy_evaluation(model, gpu, two_d, name, curve):
    model, gpu = get_model(model), get_gpu(gpu)
    branch = fm.compile_branch(model, gpu, two_d, q=3.0, context=2000.0, curve=curve)
    rng = np.random.default_rng(0)
    n = np.exp(rng.uniform(0, 9, 40))
    batch = np.exp(rng.uniform(0, 9, 40))
    pp = np.minimum(np.exp(rng.uniform(0, 3, 40)), batch)
    sigma = np.exp(rng.uniform(0, 1, 40))
    values = dict(zip(fm.CONSTANTS, branch.constants, strict=True))
    expr = term_expression(branch.structure, name)
    # an infinite constant (k_sel of dense attention: every token read) as a finite number far
    # beyond any context, so that one substitution of every number meets no ∞ − ∞
    constants = {sym: sp.Float(v if np.isfinite(v) else 1e300) for sym, v in values.items()}
    for i in range(0, 40, 7):
        point = {fm.n_gpu: n[i], fm.b: batch[i], fm.n_pp: pp[i], fm.sigma_attn: sigma[i]}
        # every number in one substitution: substituting the constants first left SymPy a
        # maximum of two shares of an all-to-all in σ alone, which it collapsed to the wrong
        # one (the NIC's share dropped; the generated code keeps both, as the hand checks do)
        expected = float(expr.xreplace({**constants, **{k: sp.Float(v) for k, v in
                                                        point.items()}}).evalf())
        got = float(branch[name](n[i], batch[i], pp[i], sigma[i]))
        assert got == pytest.approx(expected, rel=1e-9, abs=0.0)

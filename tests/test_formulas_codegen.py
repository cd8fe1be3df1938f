"""The generated serving module (fullmodel/formulas_numpy.py) is its derivations, printed."""

import numpy as np
import pytest

from inference_math.codegen import formulas_codegen as codegen
from inference_math.core.numeric import compile_fn
from inference_math.fullmodel import formulas_numpy as gen


def test_the_generated_module_is_current():
    assert codegen.module_source() == codegen.TARGET.read_text()


@pytest.mark.parametrize("name", codegen.FORMULAS)
def test_each_generated_function_equals_its_derivation(name):
    expr, args = codegen._formulas()[name]
    rng = np.random.default_rng(7)
    values = [rng.uniform(0.1, 0.9, 16) for _ in args]
    assert np.allclose(getattr(gen, name)(*values), compile_fn(expr, args)(*values), rtol=1e-12,
                       equal_nan=True)  # experts_hit: no value where k > E


@pytest.mark.parametrize("name", codegen.IN_LAMBDIFY_ORDER)
def test_formulas_once_compiled_by_lambdify_give_the_same_bits(name):
    """What a command evaluated through compile_fn before it was generated (the toy model's
    optimum and reference latency, the prefill prices) gives the same floats to the last bit."""
    expr, args = codegen._formulas()[name]
    rng = np.random.default_rng(11)
    values = [np.exp(rng.uniform(-5, 25, 64)) for _ in args]
    with np.errstate(all="ignore"):
        got = np.asarray(getattr(gen, name)(*values), dtype=float)
    assert np.array_equal(got, compile_fn(expr, args)(*values), equal_nan=True)

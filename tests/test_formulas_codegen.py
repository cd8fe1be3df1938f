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
    assert np.allclose(getattr(gen, name)(*values), compile_fn(expr, args)(*values), rtol=1e-12)

"""Shared helpers for the inference_math test suite.

The house rule: every test compares the package with an *independent* value (an expression typed
fresh from Erdil (2025), a number printed in the paper, a published count or an identity), never
with a re-run of the package itself.
"""

from __future__ import annotations

import json
import os
from importlib import resources

import numpy as np
import pytest
import sympy as sp
from hypothesis import settings

#: Settings for every property-based test: realistic, fast, no timing flakiness.
settings.register_profile("inference_math", max_examples=50, deadline=None)
# The examples are derandomized, so that a red run (CI's or a fresh clone's) can be reproduced
# exactly; HYPOTHESIS_EXPLORE=1 draws new ones each run, to look for counterexamples.
settings.register_profile("derandomized", parent=settings.get_profile("inference_math"),
                          derandomize=True)
settings.load_profile("inference_math" if os.environ.get("HYPOTHESIS_EXPLORE")
                      else "derandomized")

N_POINTS = 20
RTOL = 1e-10


def _rhs(expr_or_eq):
    return expr_or_eq.rhs if isinstance(expr_or_eq, sp.Equality) else sp.sympify(expr_or_eq)


def random_positive_values(symbols, n: int = N_POINTS, seed: int = 0, overrides=None) -> dict:
    """``n`` random positive values per symbol, spread over six orders of magnitude.

    ``overrides`` maps a symbol to a callable ``rng -> array`` for symbols whose domain is
    narrower (for example the MoE sparsity s > 1).
    """
    rng = np.random.default_rng(seed)
    overrides = overrides or {}
    values = {}
    for sym in symbols:
        if sym in overrides:
            values[sym] = np.asarray(overrides[sym](rng), dtype=float)
        else:
            values[sym] = 10 ** rng.uniform(-3, 3, n)
    return values


def _assert_same(derived, expected, symbols, *, overrides=None, simplify=True, rtol=RTOL):
    """``derived`` equals ``expected`` symbolically and at ~20 random positive points.

    ``derived`` may be an ``Eq`` (its rhs is used). ``symbols`` is the explicit argument tuple
    of the numeric check; it must cover every free symbol of both sides.
    """
    lhs = _rhs(derived)
    rhs = _rhs(expected)
    args = tuple(symbols)
    missing = (lhs.free_symbols | rhs.free_symbols) - set(args)
    assert not missing, f"numeric check lacks values for {missing}"
    if simplify:
        assert sp.simplify(lhs - rhs) == 0, f"{lhs} != {rhs}"
    values = random_positive_values(args, overrides=overrides)
    with np.errstate(all="ignore"):
        got = np.broadcast_to(sp.lambdify(args, lhs, "numpy")(*values.values()), (N_POINTS,))
        want = np.broadcast_to(sp.lambdify(args, rhs, "numpy")(*values.values()), (N_POINTS,))
    assert np.all(np.isfinite(want)), "expected expression is not finite at the sample points"
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=rtol)


@pytest.fixture
def assert_same():
    """The check ``simplify(derived - expected) == 0`` plus a 20-point random numeric check."""
    return _assert_same


@pytest.fixture(scope="session")
def reference() -> dict:
    """The paper's numbers shipped with the package (Erdil 2025, Table 1, Figure 1, ...)."""
    path = resources.files("inference_math") / "data" / "erdil2025_reference.json"
    return json.loads(path.read_text())


def load_reference_csv(name: str) -> dict[str, np.ndarray]:
    """One of the reference-code frontier CSVs of inference_math/data, as columns."""
    path = resources.files("inference_math") / "data" / name
    with resources.as_file(path) as real:
        table = np.genfromtxt(real, delimiter=",", names=True, comments="#")
    return {name: np.asarray(table[name], dtype=float) for name in table.dtype.names}


@pytest.fixture(scope="session")
def reference_csv():
    """Loader of the author's Figure 1 frontier CSVs (Erdil 2025 reference code, c2c4fa9)."""
    return load_reference_csv

"""Every display form is its derivation: equal symbolically and at random positive values.

A display form (inference_math.book.display_forms) is what the chapters and the derivation index
print instead of SymPy's canonical result. After ``doit()`` and the substitution of its named
constants' values, it must be the tested derivation: the difference simplifies to zero (branch by
branch for a piecewise result) and vanishes at random positive values of every symbol.
"""

from __future__ import annotations

import random

import pytest
import sympy as sp
from sympy.core.function import AppliedUndef

from inference_math import DERIVATIONS
from inference_math.book import display_forms
from inference_math.book.display import latex
from inference_math.book.display_forms import FORMS, display_eq, label_of
from inference_math.book.typeset import eq_tex, tex
from inference_math.core import symbols as S

SAMPLES = 40


def _expanded(form) -> sp.Basic:
    """The display form's right-hand side with its parts evaluated and constants substituted."""
    shown = form.build()
    rhs = shown.rhs.doit()
    constants = {k: v.doit() for k, v in form.constants().items()}
    return rhs.subs(constants)


def _numeric(expr, point):
    """The value at 30 digits, as a SymPy number: a power of a large base (a token's miss chance
    raised to the batch's tokens) stays finite where a double would overflow."""
    return sp.N(expr.subs(point), 30)


def _random_point(rng, symbols):
    # Magnitudes across six decades, so that every branch of a maximum, a minimum or a piecewise
    # result is reached at some points.
    return {s: sp.Float(10 ** rng.uniform(-3, 3), 30) if not s.is_integer else rng.randint(1, 64)
            for s in symbols}


@pytest.mark.parametrize("label", sorted(FORMS))
def test_display_form_is_the_derivation(label):
    form = FORMS[label]
    derived = DERIVATIONS[label].function()
    shown = form.build()
    assert shown.lhs == derived.lhs, f"{label}: the display form's left side is not the derivation's"
    expanded = _expanded(form)
    if isinstance(derived.rhs, sp.Piecewise):
        assert isinstance(expanded, sp.Piecewise) and len(expanded.args) == len(derived.rhs.args)
        for (value, _), (want, _) in zip(expanded.args, derived.rhs.args, strict=True):
            assert sp.simplify(value - want) == 0, f"{label}: a branch differs"
    else:
        assert sp.simplify(expanded - derived.rhs) == 0, f"{label}: {expanded} != {derived.rhs}"
    rng = random.Random(label)
    derived_rhs = derived.rhs
    if derived_rhs.has(sp.Sum):
        # a sum over layer groups: three groups, each group's quantities a symbol of their own
        groups = {S.n_groups: 3}
        expanded, derived_rhs = (e.subs(groups).doit() for e in (expanded, derived_rhs))
        own = {a: sp.Symbol(f"{a.base}_{a.indices[0]}", positive=True)
               for e in (expanded, derived_rhs) for a in e.atoms(sp.Indexed)}
        expanded, derived_rhs = expanded.xreplace(own), derived_rhs.xreplace(own)
    # functions shown unevaluated (the full model's M_rw, t_AR, ...) are opaque values here: the
    # same application the same value in both forms
    applied = sorted(expanded.atoms(AppliedUndef) | derived_rhs.atoms(AppliedUndef),
                     key=sp.default_sort_key)
    opaque = {a: sp.Symbol(f"u_{i}", positive=True) for i, a in enumerate(applied)}
    expanded, derived_rhs = expanded.xreplace(opaque), derived_rhs.xreplace(opaque)
    symbols = sorted(derived_rhs.free_symbols | expanded.free_symbols, key=sp.default_sort_key)
    for _ in range(SAMPLES):
        point = _random_point(rng, symbols)
        got, want = _numeric(expanded, point), _numeric(derived_rhs, point)
        assert abs(got - want) <= 1e-20 + 1e-12 * abs(want), f"{label} at {point}: {got} != {want}"


@pytest.mark.parametrize("label", sorted(FORMS))
def test_chapters_and_index_print_the_display_form(label):
    derived = DERIVATIONS[label].function()
    assert label_of(derived) == label
    assert display_eq(derived) == FORMS[label].build()
    assert eq_tex(FORMS[label].build(), written=True) in latex(derived)


def test_display_forms_name_what_sympy_left_as_fractions():
    """The issue's examples: no 2500/9, no NCCL constants in seconds, no 2/3 powers of symbols."""
    for label in ("eq-deepseek-cost-per-mtok", "eq-search-cost", "eq-longctx-kv-floor",
                  "eq-prefill-input-cost"):
        text = latex(DERIVATIONS[label].function())
        assert "2500" not in text and r"10^{6}" in text and "3600" in text, text
    nccl = latex(DERIVATIONS["eq-coll-nccl"].function())
    assert "250000" not in nccl and "2500000" not in nccl and "lat}}^{\\mathrm{LL}}" in nccl
    wall = latex(DERIVATIONS["eq-wall-minimum-latency"].function())
    assert r"\frac{2}{3}" not in wall and wall.count("2/3") == 1, wall


def test_where_lines_are_the_constants_of_a_where_form():
    label = "eq-embeddings-crossover-length"
    lines = display_forms.where_lines(DERIVATIONS[label].function())
    assert [symbol for symbol, _, _ in lines] == list(FORMS[label].constants())
    assert "where" in latex(DERIVATIONS[label].function())


def test_a_where_line_written_for_reading_keeps_its_order():
    # the busiest rank's minimum is written 1 + excess; the burst's mean half a step first
    step = latex(DERIVATIONS["eq-est-step-latency"].function())
    assert r"\min\biggl(1 + \rho_{\mathrm{r}}" in step, step
    run = latex(DERIVATIONS["eq-queue-run-mean"].function())
    assert r"\frac{t_{\mathrm{burst}}}{2} \left(1 + " in run, run


def test_sums_print_positive_terms_first():
    n_layers, n_dense = sp.symbols("n_l n_d", positive=True)
    assert tex(n_layers - n_dense) == "n_{l} - n_{d}"
    assert tex(1 - n_dense / n_layers) == r"1 - \frac{n_{d}}{n_{l}}"
    assert tex(-n_dense - 1) == "- n_{d} - 1"

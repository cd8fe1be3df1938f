"""Evaluating SymPy expressions over NumPy arrays (inference_math.core.numeric)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from inference_math.core.numeric import compile_fn, evaluate
from inference_math.core.symbols import b, flops, hbm_bw, n_param, p
from inference_math.derivations.roofline import critical_batch, token_latency


def test_argument_order_is_the_given_tuple():
    """compile_fn uses the explicit argument tuple, never the unordered free_symbols."""
    ratio = p / n_param
    assert compile_fn(ratio, (p, n_param))(2.0, 8.0) == 0.25
    assert compile_fn(ratio, (n_param, p))(2.0, 8.0) == 4.0


def test_argument_order_on_a_paper_equation():
    """Erdil (2025) sec. 2.1, b* = p·C/(2B): swapping C and B in the tuple swaps the inputs."""
    forward = compile_fn(critical_batch(), (p, flops, hbm_bw))
    swapped = compile_fn(critical_batch(), (p, hbm_bw, flops))
    assert forward(2.0, 1e15, 3.3e12) == pytest.approx(2.0 * 1e15 / (2 * 3.3e12), rel=1e-15)
    assert swapped(2.0, 3.3e12, 1e15) == pytest.approx(2.0 * 1e15 / (2 * 3.3e12), rel=1e-15)


def test_an_eq_is_evaluated_through_its_rhs():
    """Passing sympy.Eq compiles its right-hand side (Erdil 2025 eq. 1)."""
    args = (p, n_param, hbm_bw, flops, b)
    fn = compile_fn(token_latency(), args)
    # memory bound: p·N/B; compute bound: 2·N·b/C
    assert fn(2.0, 8e9, 3.3e12, 1e15, 1.0) == pytest.approx(2.0 * 8e9 / 3.3e12, rel=1e-15)
    assert fn(2.0, 8e9, 3.3e12, 1e15, 1e4) == pytest.approx(2 * 8e9 * 1e4 / 1e15, rel=1e-15)


def test_vectorized_over_arrays_and_broadcast_together():
    """Scalars and arrays broadcast; the result has the broadcast shape and dtype float64."""
    fn = compile_fn(p * n_param, (p, n_param))
    out = fn(np.array([1, 2, 4])[:, None], np.array([10, 100]))
    assert out.shape == (3, 2)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[10, 100], [20, 200], [40, 400]])


def test_a_constant_expression_is_broadcast_to_the_input_shape():
    """SymPy compiles a constant to a scalar; compile_fn broadcasts it to the inputs' shape."""
    out = compile_fn(sp.Integer(3), (p,))(np.ones((2, 3)))
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out, np.full((2, 3), 3.0))


def test_an_expression_independent_of_an_argument_takes_the_full_shape():
    """An argument the expression ignores still shapes the output."""
    out = compile_fn(2 * p, (p, n_param))(1.5, np.arange(4.0))
    assert out.shape == (4,)
    np.testing.assert_array_equal(out, np.full(4, 3.0))


def test_missing_symbol_raises_value_error_naming_it():
    """An argument tuple without a free symbol is refused, naming the symbol."""
    with pytest.raises(ValueError, match="needs values for") as caught:
        compile_fn(p * n_param / hbm_bw, (p,))
    message = str(caught.value)
    assert str(n_param) in message
    assert str(hbm_bw) in message


def test_evaluate_returns_floats_for_scalars_and_arrays_for_arrays():
    """evaluate: a mapping symbol → value; float for all-scalar input, else float64 array."""
    scalar = evaluate(p * n_param, {p: 2, n_param: 8e9})
    assert isinstance(scalar, float) and scalar == 16e9
    array = evaluate(p * n_param, {p: [1, 2], n_param: 8e9})
    assert isinstance(array, np.ndarray)
    np.testing.assert_array_equal(array, [8e9, 16e9])


def test_evaluate_uses_the_mapping_not_its_order():
    """evaluate pairs each value with its key, whatever the insertion order."""
    assert evaluate(p / n_param, {n_param: 8.0, p: 2.0}) == 0.25
    assert evaluate(p / n_param, {p: 2.0, n_param: 8.0}) == 0.25


def test_evaluate_missing_symbol_raises_value_error():
    """evaluate refuses a mapping without every free symbol."""
    with pytest.raises(ValueError, match=str(n_param).replace("\\", "\\\\")):
        evaluate(p * n_param, {p: 2.0})


def test_division_by_zero_gives_inf_without_warnings():
    """compile_fn silences NumPy's divide warnings; the value is inf (an infeasible point)."""
    with np.errstate(all="raise"):
        out = compile_fn(p / n_param, (p, n_param))(1.0, np.array([0.0, 2.0]))
    assert np.isinf(out[0]) and out[1] == 0.5

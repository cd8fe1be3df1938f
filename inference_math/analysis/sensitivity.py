"""How a serving cost responds to its inputs: elasticities of the cost at a fixed speed per user.

The cost at a speed S is the least cost per token, eq-search-cost, over instances that serve S:
minimize ln N − ln b + ln t over (ln N, ln b) with t ≤ 1/S and the memory need within the HBM
(:mod:`.continuum`, the search with N and b real and the layout held). The step time t is the
largest of smooth pieces (eq-phys-forward-latency), so the optimum sits where one piece equals
1/S with N at its best, or on a corner where two constraints bind at once (memory and
arithmetic time equal, or a piece and the HBM's capacity). By the envelope theorem the cost's
elasticity in an input x is the Lagrangian's partial in ln x at the optimum: with one binding
piece eq-sens-one-term, with two binding constraints eq-sens-corner (SymPy derives both, in
:mod:`.sensitivity_rules`; they are evaluated here through the code generated from them). The
constraints' partials in ln N, ln b and ln x are central differences of the generated terms at
the optimum; the degenerate cases (three constraints at once, or a speed that does not bind)
solve the same Karush-Kuhn-Tucker conditions by non-negative least squares.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import numpy as np
from scipy.optimize import nnls

from ..core import names as N
from ..core.units import usd_per_million_tokens
from ..core.validation import InputError, positive
from . import continuum as cm

# --- the inputs ---------------------------------------------------------------------------------

def gpu_inputs(setting) -> list[str]:
    """The GPU's numbers an elasticity is given for, by their names in ``gpus --json``."""
    gpu = setting.gpu
    names = ["hbm_bandwidth", "hbm_bytes", f"flops_{setting.flop_bits}bit"]
    names += [name for name in ("intranode_allreduce_bandwidth", "internode_allreduce_bandwidth")
              if getattr(gpu, name)]
    if setting.curve_name != "limit" and gpu.kernel_launch_s > 0:  # the limit launches nothing
        names.append("kernel_launch_s")
    return names


def scaled_gpu(gpu, name: str, factor: float):
    """The GPU with its number ``name`` (of :func:`gpu_inputs`) multiplied by ``factor``; the
    FLOP/s at every weight width."""
    if name.startswith("flops_"):
        return replace(gpu, flops_by_weight_bits={bits: value * factor for bits, value
                                                  in gpu.flops_by_weight_bits.items()})
    return replace(gpu, **{name: getattr(gpu, name) * factor})


def _gpu_scaled(gpu, name: str, factor: float) -> dict:
    return {"gpu": scaled_gpu(gpu, name, factor)}


def inputs(setting) -> dict:
    """The inputs an elasticity is given for, by their names in ``gpus --json`` and
    ``describe-model --json`` (and ``context``, ``collective_latency``): for each, a function of a
    factor giving :meth:`.continuum.Problem.of`'s arguments with the input scaled by it."""
    out = {name: partial(_gpu_scaled, setting.gpu, name) for name in gpu_inputs(setting)}
    out["collective_latency"] = lambda f: {"latency_scale": f}
    out["price_per_hour"] = lambda f: {}
    out["weight_bytes"] = lambda f: {"constants": {N.p: f, N.p_emb: f}}
    out["kv_bytes_per_token"] = lambda f: {"kv_scale": setting.kv_scale * f}
    if setting.context > 0:
        out["context"] = lambda f: {"context": setting.context * f}
    return out


PRICE = "price_per_hour"
STEP = 1e-4  # of ln x, for the constraints' partials at the optimum (they are smooth there)
STEP_Y = 1e-6  # of ln N and ln b
ACTIVE = 1e-6  # a constraint within this of its bound (in its log) binds
FD_STEP = 1e-3  # of ln x, for the re-optimized differences the elasticities are tested against


def _constraints(problem, log_n: float, log_b: float, speed: float) -> dict:
    """The log of each constraint at (ln N, ln b), ≤ 0 where it holds: the pieces against the
    step time (0 for the largest), the speed, the HBM's capacity and N_PP ≤ N."""
    n, lb = np.atleast_1d(log_n), np.atleast_1d(log_b)
    parts = problem.parts(n, lb)
    with np.errstate(divide="ignore"):
        pieces = np.log(problem.pieces(parts))[:, 0]
    out = {name: pieces[k] for k, name in enumerate(cm.PIECES)}
    out["capacity"] = float(np.log(parts["need"][0]) - n[0] - math.log(problem.hbm_cap))
    out["min_gpus"] = float(np.log(parts["pp"][0]) - n[0])
    out["speed"] = float(max(pieces) + math.log(speed))
    return out


def _kkt(problem, opt, speed: float) -> tuple[str, list, dict, dict]:
    """Which constraints bind at the optimum, their gradients in (ln N, ln b), and their
    multipliers from the Karush-Kuhn-Tucker conditions in (ln N, ln b, τ), f = ln N − ln b + τ
    with each piece's log ≤ τ and τ ≤ −ln S (non-negative least squares); and the case:
    'one' (eq-sens-one-term), 'corner' (eq-sens-corner) or 'general'."""
    here = _constraints(problem, opt.log_n, opt.log_b, speed)
    top = max(here[name] for name in cm.PIECES)
    active = [name for name in cm.PIECES if here[name] >= top - ACTIVE]
    active += [name for name in ("capacity", "min_gpus") if here[name] >= -ACTIVE]
    speed_binds = here["speed"] >= -ACTIVE
    grad = {}
    for name in active:
        shifted = [_constraints(problem, opt.log_n + dn, opt.log_b + db, speed)[name]
                   for dn, db in ((STEP_Y, 0), (-STEP_Y, 0), (0, STEP_Y), (0, -STEP_Y))]
        grad[name] = ((shifted[0] - shifted[1]) / (2 * STEP_Y),
                      (shifted[2] - shifted[3]) / (2 * STEP_Y))
    columns = [(*grad[name], -1.0 if name in cm.PIECES else 0.0) for name in active]
    names = list(active)
    if speed_binds:
        columns.append((0.0, 0.0, 1.0))
        names.append("speed")
    weights, _ = nnls(np.array(columns).T, -np.array([1.0, -1.0, 1.0]))
    weights = dict(zip(names, weights, strict=True))
    if speed_binds and len(active) == 1 and active[0] in cm.PIECES:
        case = "one"
    elif speed_binds and len(active) == 2 and all(weights[name] > 0 for name in active):
        case = "corner"
    else:
        case = "general"
    return case, active, grad, weights


CASES = {"one": "one binding piece (eq-sens-one-term)",
         "corner": "two binding constraints (eq-sens-corner)",
         "general": "the Karush-Kuhn-Tucker conditions (non-negative least squares)"}


def _partials(setting, layout, opt, speed: float, make) -> dict:
    """Each constraint's partial in ln x at the optimum, x scaled by ``make``."""
    shifted = []
    for sign in (1.0, -1.0):
        problem = cm.Problem.of(setting, layout, **make(math.exp(sign * STEP)))
        shifted.append(_constraints(problem, opt.log_n, opt.log_b, speed))
    return {name: (shifted[0][name] - shifted[1][name]) / (2 * STEP) for name in shifted[0]}


def _elasticity(case, active, grad, weights, partials, eps_price: float) -> float:
    from ..fullmodel import formulas_numpy as gen
    if case == "one":
        (name,) = active
        return float(gen.sens_one_term(grad[name][1], partials[name], eps_price))
    if case == "corner":
        a, c = active
        return float(gen.sens_corner(*grad[a], partials[a], *grad[c], partials[c], eps_price))
    return eps_price + sum(weight * partials[name] for name, weight in weights.items()
                           if name != "speed")


def elasticities(front, speed: float) -> dict:
    """Elasticities of the cost at ``speed`` tokens/s per user in each input of :func:`inputs`
    (eq-sens-one-term or eq-sens-corner at the continuum optimum), with the binding term of the
    frontier point that serves that speed and the constraints that bind at the optimum."""
    setting = front.setting
    positive("speed", speed)
    if setting.drafter is not None:
        raise InputError("elasticities are derived for frontiers without speculative decoding")
    slowest = min(pt.tokens_per_s for pt in front.points)
    if speed < slowest:
        raise InputError(f"{speed:g} tok/s per user is below the frontier's slowest "
                         f"point, {slowest:.3g}, where its cost no longer depends on the speed")
    layouts = cm.candidate_layouts(front, speed)
    found = cm.ranked(setting, layouts, speed)
    opt, problem = found[0]
    # where another layout is nearly as cheap the cost has a kink (the cheaper of two) this far
    # away in ln C: the elasticity is that of the cheapest layout, for smaller moves
    others = [o for o, _ in found[1:] if max(abs(o.log_n - opt.log_n), abs(o.log_b - opt.log_b),
                                             abs(o.log_cost - opt.log_cost)) > 1e-9]
    gap = others[0].log_cost - opt.log_cost if others else None
    case, active, grad, weights = _kkt(problem, opt, speed)
    out = {}
    for name, make in inputs(setting).items():
        partials = _partials(setting, problem.layout, opt, speed, make)
        value = _elasticity(case, active, grad, weights, partials, 1.0 if name == PRICE else 0.0)
        out[name] = value + 0.0 if math.isfinite(value) else None
    if setting.context == 0:
        out["context"] = 0.0
    serving = front.cheapest_at(speed)
    return {"speed": speed,
            "usd_per_mtok": float(front.cost_at_speed(np.array([speed]))[0]),
            "usd_per_mtok_continuum": usd_per_million_tokens(math.exp(opt.log_cost),
                                                             setting.usd_per_hour),
            "gpus": opt.gpus, "batch": opt.batch, "binding": serving.binding,
            "binds": active, "method": CASES[case], "layout_gap": gap, "elasticities": out}


def finite_differences(front, speed: float, names=None, step: float = FD_STEP) -> dict:
    """Central differences of the continuum optimum's cost in each input (re-optimized at
    x·e^±step, the frontier's layouts held): what :func:`elasticities` is tested against."""
    setting = front.setting
    layouts = cm.candidate_layouts(front, speed)
    out = {}
    for name, make in inputs(setting).items():
        if names is not None and name not in names:
            continue
        if name == PRICE:
            out[name] = 1.0
            continue
        costs = [cm.cheapest_of(setting, layouts, speed, **make(math.exp(sign * step)))[0].log_cost
                 for sign in (1.0, -1.0)]
        out[name] = (costs[0] - costs[1]) / (2 * step)
    return out


def input_values(setting) -> dict:
    """The value of each input of :func:`inputs` (None for the collectives' latency, a scale)."""
    gpu = setting.gpu
    values = {
        "hbm_bandwidth": gpu.hbm_bandwidth, "hbm_bytes": gpu.hbm_bytes,
        f"flops_{setting.flop_bits}bit": gpu.flops(setting.flop_bits),
        "intranode_allreduce_bandwidth": gpu.intranode_allreduce_bandwidth,
        "internode_allreduce_bandwidth": gpu.internode_allreduce_bandwidth,
        "kernel_launch_s": gpu.kernel_launch_s, "collective_latency": None,
        "price_per_hour": setting.usd_per_hour,
        "weight_bytes": setting.w * setting.model.total_params,
        "kv_bytes_per_token": setting.model.kv_bytes_per_token * setting.kv_scale,
        "context": setting.context,
    }
    return {name: values[name] for name in inputs(setting)} | {"context": setting.context}


def __getattr__(name: str):
    """The derivations of :mod:`.sensitivity_rules` (``one_term``, ``corner``) by this module's
    name too, for the book: loaded on first use, so that importing this module loads no SymPy."""
    if name in ("one_term", "corner"):
        from . import sensitivity_rules
        return getattr(sensitivity_rules, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

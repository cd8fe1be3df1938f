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
solve the same Karush-Kuhn-Tucker conditions by non-negative least squares, and their one-sided
values are the extremes over the multipliers that satisfy them.

An elasticity describes the optimum, the limit of the search as its grid is refined: the search's
own cost at a speed lies up to about 1% above it, in a saw-tooth as an input moves, so re-running
the search with an input moved by a few per cent or less measures the grid. How far a derivative
holds is estimated to first order: until another candidate layout's cost, moving at its own
elasticity, meets the cheapest one's, or until a constraint that does not bind reaches its bound
as the optimum moves.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import numpy as np
from scipy.optimize import linprog, nnls

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
    out["weight_bytes"] = lambda f: {"constants": {N.p: f, N.p_emb: f, N.p_attn: f, N.p_sh: f}}
    out["kv_bytes_per_token"] = lambda f: {"kv_scale": setting.kv_scale * f}
    if setting.context > 0:
        out["context"] = lambda f: {"context": setting.context * f}
    return out


PRICE = "price_per_hour"
STEP = 1e-4  # of ln x, for the constraints' partials at the optimum (they are smooth there)
STEP_Y = 1e-6  # of ln N and ln b
ACTIVE = 1e-6  # a constraint within this of its bound (in its log) binds
FD_STEP = 1e-3  # of ln x, for the re-optimized differences the elasticities are tested against
REACH = 2.0  # how far an elasticity's range is followed, as a factor of the input


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


def _kkt(problem, opt, speed: float) -> tuple[str, list, dict, dict, tuple, dict]:
    """Which constraints bind at the optimum, every constraint's gradient in (ln N, ln b), and
    the binding ones' multipliers from the Karush-Kuhn-Tucker conditions in (ln N, ln b, τ),
    f = ln N − ln b + τ with each piece's log ≤ τ and τ ≤ −ln S (non-negative least squares);
    the case: 'one' (eq-sens-one-term), 'corner' (eq-sens-corner) or 'general'; and the
    conditions' system (names, matrix, right-hand side, residual) for :func:`_one_sided`; and
    every constraint's log at the optimum (:func:`_constraints`)."""
    here = _constraints(problem, opt.log_n, opt.log_b, speed)
    top = max(here[name] for name in cm.PIECES)
    active = [name for name in cm.PIECES if here[name] >= top - ACTIVE]
    active += [name for name in ("capacity", "min_gpus") if here[name] >= -ACTIVE]
    speed_binds = here["speed"] >= -ACTIVE
    shifted = [_constraints(problem, opt.log_n + dn, opt.log_b + db, speed)
               for dn, db in ((STEP_Y, 0), (-STEP_Y, 0), (0, STEP_Y), (0, -STEP_Y))]
    grad = {name: ((shifted[0][name] - shifted[1][name]) / (2 * STEP_Y),
                   (shifted[2][name] - shifted[3][name]) / (2 * STEP_Y)) for name in here}
    columns = [(*grad[name], -1.0 if name in cm.PIECES else 0.0) for name in active]
    names = list(active)
    if speed_binds:
        columns.append((0.0, 0.0, 1.0))
        names.append("speed")
    matrix, rhs = np.array(columns).T, -np.array([1.0, -1.0, 1.0])
    weights, residual = nnls(matrix, rhs)
    weights = dict(zip(names, weights, strict=True))
    if speed_binds and len(active) == 1 and active[0] in cm.PIECES:
        case = "one"
    elif speed_binds and len(active) == 2 and all(weights[name] > 0 for name in active):
        case = "corner"
    else:
        case = "general"
    return case, active, grad, weights, (names, matrix, rhs, residual), here


CASES = {"one": "one binding piece (eq-sens-one-term)",
         "corner": "two binding constraints (eq-sens-corner)",
         "general": "the Karush-Kuhn-Tucker conditions (non-negative least squares)"}
#: Where the network alone binds the limit: its collectives have no latency, so their time is
#: the bytes per GPU, which grow as b/N, and every instance with the same b/N costs the same.
RIDGE = ("; the network alone binds and has no latency in the limit, so every instance with the "
         "same batch per GPU costs the same: the optimum is a ridge, not a point, and a re-run "
         "of the search may move along it")


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


def _one_sided(case, system, partials, value: float, eps_price: float) -> tuple[float, float]:
    """The cost's one-sided elasticities (upward, downward) in x.

    Where the multipliers are unique (one binding piece, or a corner whose two multipliers are
    positive) both are the elasticity. Where more constraints bind than the conditions need, the
    multipliers form a polytope Λ, and the value's directional derivatives are the extremes of
    the Lagrangian's partial over it: upward max over Λ, downward min over Λ (exact for a
    linear or convex problem; in general Gauvin and Dubeau, 1982, bound them so). The
    conditions are held to the least-squares residual of the differences."""
    if case != "general":
        return value, value
    names, matrix, rhs, residual = system
    if not names:
        return value, value
    cost = np.array([0.0 if name == "speed" else partials[name] for name in names])
    slack = max(1e-6, 2.0 * residual)
    bounds = dict(A_ub=np.vstack([matrix, -matrix]),
                  b_ub=np.concatenate([rhs + slack, -rhs + slack]), bounds=[(0, None)] * len(names))
    low, high = linprog(cost, **bounds), linprog(-cost, **bounds)
    if low.status != 0 or high.status != 0:
        return value, value
    return eps_price - float(high.fun), eps_price + float(low.fun)


def _path(case, active, grad, partials) -> tuple[float, float] | None:
    """How the optimum's (ln N, ln b) moves with ln x, to first order: at a corner both binding
    constraints stay at their bounds (the implicit function theorem); with one binding piece ln N
    is held (to first order the cost does not depend on its move, and where N sits on a kink,
    as at a node's edge, it does not move) and ln b keeps the piece at its bound."""
    if case == "one":
        (name,) = active
        g_b = grad[name][1]
        return (0.0, -partials[name] / g_b) if g_b else None
    if case == "corner":
        jac = np.array([grad[name] for name in active])
        if abs(np.linalg.det(jac)) < 1e-12:
            return None
        move = np.linalg.solve(jac, -np.array([partials[name] for name in active]))
        return float(move[0]), float(move[1])
    return None


def _constraint_reach(case, active, grad, here, partials, speed: float) -> dict:
    """For each direction, the smallest |Δ ln x| at which a constraint that does not bind at
    the optimum reaches its bound along :func:`_path`, and its name: its slack (in logs) over the
    rate at which the slack closes."""
    move = _path(case, active, grad, partials)
    out = {"up": (math.inf, None), "down": (math.inf, None)}
    if move is None:
        return out
    for name in (*cm.PIECES, "capacity", "min_gpus"):
        if name in active:
            continue
        level = here[name] + (math.log(speed) if name in cm.PIECES else 0.0)
        if not math.isfinite(level) or level >= 0:
            continue
        rate = partials[name] + grad[name][0] * move[0] + grad[name][1] * move[1]
        if not math.isfinite(rate) or abs(rate) < 1e-12:
            continue
        side = "up" if rate > 0 else "down"
        reach = -level / abs(rate)
        if reach < out[side][0]:
            out[side] = (reach, name)
    return out


def _layout_reach(eps: float, others: list[tuple[float, float]]) -> dict:
    """For each direction, the smallest |Δ ln x| at which another layout, ``gap`` dearer in
    ln C and with elasticity ``other``, becomes as cheap (the two costs' logs linear in ln x):
    upward where other < eps, at gap/(eps − other); downward where other > eps."""
    out = {"up": (math.inf, None), "down": (math.inf, None)}
    for gap, other in others:
        if other is None or other == eps:
            continue
        side = "up" if other < eps else "down"
        reach = gap / abs(eps - other)
        if reach < out[side][0]:
            out[side] = (reach, other)
    return out


def _relative(log_change: float, side: str) -> float | None:
    """A change of ln x as a relative change of x (None: no end found within a factor of
    :data:`REACH`, beyond which a first-order estimate says nothing)."""
    if not log_change <= math.log(REACH):
        return None
    return math.expm1(log_change) if side == "up" else -math.expm1(-log_change)


class _At:
    """One layout's optimum at a speed, with what its elasticities need."""

    def __init__(self, setting, opt, problem, speed: float):
        self.setting, self.opt, self.problem, self.speed = setting, opt, problem, speed
        (self.case, self.active, self.grad, self.weights, self.system,
         self.here) = _kkt(problem, opt, speed)

    def partials(self, make) -> dict:
        return _partials(self.setting, self.problem.layout, self.opt, self.speed, make)

    def elasticity(self, partials, eps_price: float) -> float:
        return _elasticity(self.case, self.active, self.grad, self.weights, partials, eps_price)


def _clean(value):
    return value + 0.0 if value is not None and math.isfinite(value) else None


def elasticities(front, speed: float) -> dict:
    """Elasticities of the cost at ``speed`` tokens/s per user in each input of :func:`inputs`
    (eq-sens-one-term or eq-sens-corner at the continuum optimum), with the binding term of the
    frontier point that serves that speed and the constraints that bind at the optimum.

    For each input also: the one-sided elasticities (``one_sided``: upward and downward, equal
    where the multipliers are unique) and how far they hold (``holds``): the relative change of
    the input, upward and downward, at which another candidate layout becomes as cheap or a
    constraint that does not bind reaches its bound (both to first order), with what takes over
    (``by``: "layout" or the constraint's name) and, where a layout does, its elasticity
    (``then``). ``grid_gap`` is ln of the search's cost at the speed over the optimum's: a
    re-run of the search resolves a change of the cost only well beyond it."""
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
    others = [(o, p) for o, p in found[1:]
              if max(abs(o.log_n - opt.log_n), abs(o.log_b - opt.log_b),
                     abs(o.log_cost - opt.log_cost)) > 1e-9]
    gap = others[0][0].log_cost - opt.log_cost if others else None
    best = _At(setting, opt, problem, speed)
    rivals = [(o.log_cost - opt.log_cost, _At(setting, o, p, speed)) for o, p in others]
    out, sided, holds = {}, {}, {}
    for name, make in inputs(setting).items():
        eps_price = 1.0 if name == PRICE else 0.0
        partials = best.partials(make)
        value = _clean(best.elasticity(partials, eps_price))
        out[name] = value
        if value is None:
            sided[name] = {"up": None, "down": None}
            holds[name] = {side: None for side in ("up", "down", "up_by", "down_by", "then_up",
                                                   "then_down")}
            continue
        up, down = _one_sided(best.case, best.system, partials, value, eps_price)
        sided[name] = {"up": _clean(up), "down": _clean(down)}
        rival_eps = [(g, _clean(r.elasticity(r.partials(make), eps_price))) for g, r in rivals]
        by_layout = _layout_reach(value, rival_eps)
        by_constraint = _constraint_reach(best.case, best.active, best.grad, best.here,
                                          partials, speed)
        entry = {}
        for side in ("up", "down"):
            (lay, then), (con, which) = by_layout[side], by_constraint[side]
            reach, by = (lay, "layout") if lay <= con else (con, which)
            entry[side] = _clean(_relative(reach, side))
            entry[f"{side}_by"] = by if entry[side] is not None else None
            entry[f"then_{side}"] = then if entry[f"{side}_by"] == "layout" else None
        holds[name] = entry
    if setting.context == 0:
        out["context"] = 0.0
        sided["context"] = {"up": 0.0, "down": 0.0}
        holds["context"] = {side: None for side in ("up", "down", "up_by", "down_by",
                                                    "then_up", "then_down")}
    serving = front.cheapest_at(speed)
    grid_cost = float(front.cost_at_speed(np.array([speed]))[0])
    continuum_cost = usd_per_million_tokens(math.exp(opt.log_cost), setting.usd_per_hour)
    return {"speed": speed,
            "usd_per_mtok": grid_cost,
            "usd_per_mtok_continuum": continuum_cost,
            "grid_gap": _clean(math.log(grid_cost / continuum_cost)),
            "gpus": opt.gpus, "batch": opt.batch, "binding": serving.binding,
            "binds": best.active, "method": CASES[best.case] + (RIDGE if ridge(setting, best.active) else ""),
            "layout_gap": gap,
            "elasticities": out, "one_sided": sided, "holds": holds}


def ridge(setting, binds) -> bool:
    """Whether the optimum is a ridge (:data:`RIDGE`): the limit, with the network alone
    binding."""
    return setting.curve_name == "limit" and list(binds) == ["network"]


def finite_differences(front, speed: float, names=None, step: float | dict = FD_STEP,
                       one_sided: bool = False) -> dict:
    """Differences of the continuum optimum's cost in each input, re-optimized at x·e^±step
    (``step`` a number, or one per input), the frontier's layouts held: what
    :func:`elasticities` is tested against. Central, or with ``one_sided`` forward and
    backward from the optimum ({"up": ..., "down": ...} per input)."""
    setting = front.setting
    layouts = cm.candidate_layouts(front, speed)
    base = cm.cheapest_of(setting, layouts, speed)[0].log_cost if one_sided else None
    out = {}
    for name, make in inputs(setting).items():
        if names is not None and name not in names:
            continue
        if name == PRICE:
            out[name] = {"up": 1.0, "down": 1.0} if one_sided else 1.0
            continue
        h = step[name] if isinstance(step, dict) else step
        costs = [cm.cheapest_of(setting, layouts, speed, **make(math.exp(sign * h)))[0].log_cost
                 for sign in (1.0, -1.0)]
        out[name] = ({"up": (costs[0] - base) / h, "down": (base - costs[1]) / h} if one_sided
                     else (costs[0] - costs[1]) / (2 * h))
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

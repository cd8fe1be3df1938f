"""The frontier search of the full model: every (N, b) of a log grid × every branch, vectorized.

For one model on one GPU the search evaluates eq-full-forward-latency over a 400 × 400 log grid
of instance sizes N (from the smallest instance whose HBM holds the weights, to 2^18 GPUs) and
batch sizes b (1 to 2^(18 + log2 s)), for every branch at once: 1-D and 2-D tensor parallelism,
11 pipeline degrees ({1} and 10 log-spaced values in [1, min(b, L)]) and 6 attention scale-downs
(log-spaced in [1, N_TP]). The fastest branch wins at each point; with speculative decoding the
target is evaluated at q = 1..γ_max tokens and the drafter at q = 1 on the same instance, and
eq-spec-latency picks the best γ. The Pareto frontier of speed against cost is then extracted
exactly, or with the reference code's 1,000 latency thresholds.

The search is exact but skips work that cannot change the frontier: every branch is evaluated at
σ = 1, which gives both a latency each point reaches and a lower bound of each branch over σ;
only branches whose lower bounds of latency and cost are not beaten by reached points are then
evaluated at the other σ (:func:`evaluate_grid` with ``frontier_only=True``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from ..core.allocation import reuse_freed_pages
from ..core.in_order import in_order
from ..core.units import usd_per_million_tokens
from ..core.validation import InputError, of_kind, positive
from ..presets.hardware import GPU
from ..presets.layered import LayeredModel
from ..presets.models import Model
from . import branch as fm
from .cache import cached
from .pareto import pareto_front, pareto_front_thresholds
from .spec_step import spec_latency_fn

GRID = 400
MAX_LOG2_GPUS = 18
PP_VALUES = 10
SCALEDOWN_VALUES = 6
GAMMA_MAX = 5
BLOCK = 2**16  # grid points × branches evaluated at once (bounds the memory of a search)
# Grid points × branches of one block of the σ = 1 pass, for one q: small enough that the
# temporaries of the generated function stay in a core's L2 cache (measured: 7 rows of the grid
# per block evaluate 30% faster than 14), with a little less per block for each further q.
CACHE_BLOCK = 2**15


@dataclass(frozen=True)
class Setting:
    """One frontier: a model served on a GPU, with the options of the paper's comparisons."""

    model: Model
    gpu: GPU
    weight_bytes: float | None = None  # None: the model's own
    context: float = 0.0  # ℓ, tokens already in the KV cache of each sequence
    drafter: Model | None = None  # speculative decoding with this drafter
    acceptance: float = 0.8
    use_pp: bool = True
    price: float | None = None  # $/GPU-hour; None: the GPU's
    label: str = ""
    curve: str | None = None  # 'paper', 'physical' or 'limit' (CURVES); None: default_curve
    kv_bits: float | None = None  # bits per KV-cache element; None: the model's stated or 16

    def __post_init__(self):
        for role, value in (("model", self.model), ("drafter", self.drafter)):
            if value is not None and not isinstance(value, LayeredModel):
                of_kind(role, value, Model)
        of_kind("gpu", self.gpu, GPU)
        self.gpu.require_collective_model()
        if self.weight_bytes is not None:
            positive("weight_bytes", self.weight_bytes)
        self.gpu.flops(self.flop_bits)  # InputError if the GPU has no FLOP/s for these weights
        if self.drafter is not None:
            self.gpu.flops(self.drafter.weight_bits)
        positive("context", self.context, allow_zero=True)
        if not 0 <= positive("acceptance", self.acceptance, allow_zero=True) < 1:
            raise InputError(f"acceptance must be in [0, 1), got {self.acceptance!r}")
        if self.price is not None:
            positive("price", self.price)
        if self.curve is not None and self.curve not in CURVES:
            raise InputError(f"curve must be one of {', '.join(CURVES)}, got {self.curve!r}")
        if self.kv_bits is not None and not KV_BITS[0] <= positive("kv_bits", self.kv_bits) \
                <= KV_BITS[1]:
            raise InputError(f"kv_bits must lie in [{KV_BITS[0]:g}, {KV_BITS[1]:g}], "
                             f"got {self.kv_bits!r}")

    @property
    def curve_name(self) -> str:
        """The curve this setting is evaluated on: ``curve``, or the model's default."""
        return default_curve(self.model) if self.curve is None else self.curve

    @property
    def kv_scale(self) -> float:
        """The cache's bytes at ``kv_bits`` over the model's own (eq-kv-bytes at p_act)."""
        return kv_scale(self.model, self.kv_bits)

    @property
    def drafter_kv_scale(self) -> float:
        return kv_scale(self.drafter, self.kv_bits) if self.drafter is not None else 1.0

    @property
    def w(self) -> float:
        return self.model.weight_bytes if self.weight_bytes is None else self.weight_bytes

    @property
    def flop_bits(self) -> int:
        """The weight bits that choose the GPU's FLOP/s: the model's (a LayeredModel's main
        format), or those of ``weight_bytes``."""
        return self.model.weight_bits if self.weight_bytes is None else round(8 * self.weight_bytes)

    @property
    def usd_per_hour(self) -> float:
        return self.gpu.price_per_hour if self.price is None else self.price

    @property
    def speculative(self) -> bool:
        return self.drafter is not None and self.acceptance > 0


CURVES = fm.RULES
KV_BITS = (1.0, 32.0)


def default_curve(model) -> str:
    """The reference code's rules for the paper's own models ('paper'), the book's physical
    rules for every model read from a config.json ('physical')."""
    if isinstance(model, LayeredModel) or getattr(model, "experts_spread", False):
        return "physical"
    return "paper"


def kv_bits_of(model, kv_bits: float | None = None) -> float:
    """Bits of one KV-cache element: ``kv_bits``, else the cache precision the checkpoint
    states (``kv_cache_bits``), else 16."""
    if kv_bits is not None:
        return float(kv_bits)
    stated = getattr(model, "kv_cache_bits", None)
    return 16.0 if stated is None else float(stated)


def kv_scale(model, kv_bits: float | None) -> float:
    """Cache bytes at :func:`kv_bits_of` over those the model's counts carry (its activation
    bytes per element); 1 when neither a width nor the checkpoint states one."""
    if kv_bits is None and getattr(model, "kv_cache_bits", None) is None:
        return 1.0
    shape = model.pieces[0].shape if isinstance(model, LayeredModel) else model
    return kv_bits_of(model, kv_bits) / 8 / shape.activation_bytes


def grid(model: Model, gpu: GPU, weight_bytes: float) -> tuple[np.ndarray, np.ndarray]:
    """The reference code's grid: instance sizes from the weights-fit minimum and batch sizes."""
    n_min = weight_bytes * model.total_params / gpu.hbm_bytes
    if n_min >= 2.0**MAX_LOG2_GPUS:
        raise InputError(f"model {model.name!r} does not fit in 2^{MAX_LOG2_GPUS} {gpu.name} GPUs")
    n = np.logspace(np.log2(n_min), MAX_LOG2_GPUS, GRID, base=2)
    batch = np.logspace(0, MAX_LOG2_GPUS + np.log2(model.sparsity), GRID, base=2)
    return n, batch


def pipeline_degrees(model: Model, batch: np.ndarray, use_pp: bool) -> np.ndarray:
    """Pipeline degrees tried at each batch size: shape (len(batch), 11), or (len(batch), 1)."""
    if not use_pp:
        return np.ones((batch.size, 1))
    top = np.minimum(batch, model.layers)
    steps = np.linspace(0.0, 1.0, PP_VALUES)
    return np.concatenate([np.ones((batch.size, 1)), top[:, None] ** steps[None, :]], axis=1)


@dataclass
class BranchGrid:
    """Fastest branch at every (N, b): its latency and the indices that identify it."""

    latency: np.ndarray  # (nN, nb)
    two_d: np.ndarray
    pp_index: np.ndarray
    sigma_index: np.ndarray


@dataclass
class _UnitScaledown:
    """The σ = 1 pass of :func:`fastest_branch`: the fastest branch there, and every branch's
    lower bound over σ (shape (nN, nb, layouts × distinct N_PP degrees), float32 rounded down),
    infinite for a branch already refined (its exact latency is in the grid). Branch c is the
    layout c // D and the N_PP degree ``degrees[c % D]`` (of D distinct ones: a degree repeating
    the one before it, 1 twice, is neither evaluated nor refined)."""

    grid: BranchGrid
    lowers: np.ndarray
    fns: list
    pp: np.ndarray
    degrees: np.ndarray
    lower: np.ndarray  # the point's lower bound over every branch and σ, tightened by _refine


def _last_axis_min(values: np.ndarray) -> np.ndarray:
    """The minimum over the last axis, a short one (the branches): a loop over its columns is
    about twice as fast as NumPy's reduction over a short contiguous axis."""
    out = values[..., 0].copy()
    for column in range(1, values.shape[-1]):
        np.minimum(out, values[..., column], out=out)
    return out


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _rounded_down(bound: np.ndarray) -> np.ndarray:
    """A lower bound as float32 no larger than it: still a lower bound, in half the memory.

    Scaled by 1 − 2⁻²³ in float64 before rounding to the nearest float32 (a relative change of
    at most 2⁻²⁴ for normal numbers, and latencies are far above float32's smallest), so the
    result never exceeds ``bound``; a finite bound beyond float32's range becomes its largest.
    """
    low = np.empty(np.shape(bound), dtype=np.float32)
    with np.errstate(over="ignore"):
        np.multiply(bound, 1 - 2.0**-23, out=low, casting="unsafe")
    infinite = np.isinf(low)
    if infinite.any():  # only the infinities can be finite bounds that overflowed
        over = np.isfinite(np.broadcast_to(bound, low.shape)[infinite])
        if over.any():
            low[infinite] = np.where(over, _FLOAT32_MAX, low[infinite])
    return low


def _unit_scaledown(model: Model, gpu: GPU, n: np.ndarray, batch: np.ndarray, qs: tuple,
                    context: float, weight_bytes: float, use_pp: bool, curve: str = "paper",
                    kv: float = 1.0) -> list[_UnitScaledown]:
    """The σ = 1 pass for each number of tokens per pass in ``qs``, evaluated together: what
    does not depend on q (the layout's degrees, collective latencies, weight reads) once."""
    pp = pipeline_degrees(model, batch, use_pp)
    npp = pp.shape[1]
    options = dict(curve=curve, kv_scale=kv)
    fns = [[fm.compile_branch(model, gpu, layout, q, context, weight_bytes, **options)
            for layout in (False, True)] for q in qs]
    every_q = np.array(qs, dtype=float).reshape(-1, 1, 1, 1)
    together = [fm.compile_branch(model, gpu, layout, every_q, context, weight_bytes, **options)
                for layout in (False, True)]
    exact_second = curve != "paper"  # 'search' gives the latency at σ = 1, not what completes it
    distinct = np.concatenate([[True], np.any(pp[:, 1:] != pp[:, :-1], axis=0)])
    degrees = np.flatnonzero(distinct)  # a repeated degree is never evaluated nor refined
    lowers = np.empty((len(qs), n.size, batch.size, len(together), degrees.size),
                      dtype=np.float32)
    bound = np.empty((len(qs), n.size, batch.size), dtype=np.float32)
    best = np.empty((len(qs), n.size, batch.size))
    choice = np.empty((len(qs), n.size, batch.size), dtype=np.intp)
    # beyond b = L every batch size tries the same degrees: passed once, broadcast over b, the
    # terms that do not depend on b are evaluated once per (N, N_PP) (the same values)
    varying = np.flatnonzero(np.any(pp != pp[-1], axis=1))
    split = varying[-1] + 1 if varying.size else 0
    groups = [(cols, pp[None, cols, distinct] if cols.start < split else
               pp[None, split:split + 1, distinct])
              for cols in (slice(0, split), slice(split, batch.size)) if cols.start < cols.stop]
    def blocks():
        for cols, degree in groups:
            width = cols.stop - cols.start
            rows = max(1, round(CACHE_BLOCK / (width * npp * (1 + (len(qs) - 1) / 8))))
            for start in range(0, n.size, rows):
                yield slice(start, start + rows), cols, degree

    def evaluate(task):  # each block writes its own slices of the arrays: blocks run at once
        block, cols, degree = task
        terms = together[0]["search"](n[block, None, None], batch[None, cols, None], degree,
                                      1.0)  # 1-D, then 2-D layout
        for number in range(len(together)):
            lower, second = terms[2 * number:2 * number + 2]
            shape = np.broadcast_shapes(lower.shape, second.shape)
            low = lowers[:, block, cols, number] = _rounded_down(lower)
            # rounding down is monotone, so it commutes with the minimum over branches
            if number == 0:
                bound_here = _last_axis_min(low)
            else:
                bound[:, block, cols] = np.minimum(bound_here, _last_axis_min(low))
            at_one = (np.broadcast_to(second, shape) if exact_second else lower + second)
            k = np.argmin(at_one, axis=3)
            value = np.take_along_axis(at_one, k[..., None], axis=3)[..., 0]
            if number == 0:
                best[:, block, cols], choice[:, block, cols] = value, degrees[k]
            else:  # the first minimum over both layouts, as an argmin over all branches
                here = best[:, block, cols]
                wins = (value < here) | (np.isnan(value) & ~np.isnan(here))
                best[:, block, cols] = np.where(wins, value, here)
                choice[:, block, cols] = np.where(wins, number * npp + degrees[k],
                                                  choice[:, block, cols])

    for _ in in_order(evaluate, blocks()):
        pass
    return [_UnitScaledown(BranchGrid(best[k], (choice[k] // npp).astype(np.int8),
                                      (choice[k] % npp).astype(np.int8),
                                      np.zeros(best[k].shape, dtype=np.int8)),
                           lowers[k].reshape(n.size, batch.size, -1), fns[k], pp, degrees,
                           bound[k].astype(float))
            for k in range(len(qs))]


def _refine_blocks(rows: np.ndarray, columns: np.ndarray, degrees: np.ndarray, layouts: int,
                   size: int):
    """The branches to refine, (point's row, branch column), in blocks of ``size``: for each
    layout its rows and their N_PP degrees, in the order given."""
    for number in range(layouts):
        here = columns // degrees.size == number
        row, k = rows[here], degrees[columns[here] - number * degrees.size]
        for start in range(0, row.size, size):
            yield number, row[start:start + size], k[start:start + size]


def _refine(first: _UnitScaledown, n: np.ndarray, batch: np.ndarray,
            points: np.ndarray | None = None, keep=None, passes=("hopeful", "rest")) -> BranchGrid:
    """Complete the σ = 1 pass at the flat grid ``points`` (all if None) with the other σ.

    Two passes: first the most promising branch of each point ('hopeful'), then whatever can
    still beat the best latency found ('rest'). ``keep(lowers, rows)``, given branches' lower
    bounds at ``points[rows]``, selects those worth refining (all if None). A branch refined
    gets an infinite lower bound (its latency is in the grid), so it is never refined again.
    """
    found, pp, degrees = first.grid, first.pp, first.degrees
    steps = np.linspace(0.0, 1.0, SCALEDOWN_VALUES)[1:]
    if points is None:
        points = np.arange(found.latency.size)
    branches = first.lowers.shape[-1]
    all_lowers = first.lowers.reshape(-1, branches)  # a view
    lowers = all_lowers[points]
    # flat views of the grid: the latency found (updated in place) and the branch chosen
    best, two_d, pp_index, sigma_index = (found.latency.reshape(-1), found.two_d.reshape(-1),
                                          found.pp_index.reshape(-1), found.sigma_index.reshape(-1))
    touched = np.zeros(points.size, dtype=bool)
    for which in passes:
        if which == "hopeful":  # each point's branch of smallest bound, if below the best found
            column = np.argmin(lowers, axis=1)
            rows = np.flatnonzero(lowers[np.arange(points.size), column] < best[points])
            columns = column[rows]
        else:
            rows, columns = np.nonzero(lowers < best[points, None])  # by point, then by branch
        if keep is not None:
            kept = keep(lowers[rows, columns], rows)
            rows, columns = rows[kept], columns[kept]
        lowers[rows, columns] = np.inf
        all_lowers[points[rows], columns] = np.inf
        touched[rows] = True

        def evaluate(task):  # the blocks' latencies at once; the best found updated in order
            number, row_here, kk = task
            at = points[row_here]
            i, j = np.divmod(at, batch.size)
            cn, cb, cp = n[i, None], batch[j, None], pp[j, kk][:, None]
            latency = first.fns[number]["latency"](cn, cb, cp, (cn / cp) ** steps)
            step = np.argmin(latency, axis=1)
            return task, at, step, latency[np.arange(step.size), step]

        blocks = _refine_blocks(rows, columns, degrees, len(first.fns), BLOCK // steps.size)
        for (number, row_here, kk), at, step, value in in_order(evaluate, blocks):
            # several branches of one point may improve it: keep the fastest of each point
            # (its pairs are consecutive, by N_PP degree; of equal values the first)
            new = np.concatenate([[True], row_here[1:] != row_here[:-1]])
            segment = np.cumsum(new) - 1
            fastest = np.fmin.reduceat(value, np.flatnonzero(new))
            at_min = np.flatnonzero(value == fastest[segment])
            first_of = np.concatenate([[True], segment[at_min][1:] != segment[at_min][:-1]])
            win = at_min[first_of]
            win = win[value[win] < best[at[win]]]
            best[at[win]] = value[win]
            two_d[at[win]] = number
            pp_index[at[win]] = kk[win]
            sigma_index[at[win]] = step[win] + 1
    # the lower bound changes only where a branch was refined (or the latency found fell)
    rows = np.flatnonzero(touched)
    at = points[rows]
    first.lower.reshape(-1)[at] = np.minimum(best[at], _last_axis_min(lowers[rows]))
    return found


def fastest_branch(model: Model, gpu: GPU, n: np.ndarray, batch: np.ndarray, q: float,
                   context: float, weight_bytes: float, use_pp: bool, curve: str = "paper",
                   kv: float = 1.0) -> BranchGrid:
    """Minimum of eq-full-forward-latency over all branches at every (N, b) of the grid.

    Exact, but it skips work that cannot win. Only attention depends on the scale-down σ, and
    its memory and arithmetic terms are smallest at σ = 1 (every GPU of the stage shares them),
    while its all-reduces only add time. So a branch evaluated at σ = 1 gives both an exact
    latency (an upper bound for the point) and, without its attention all-reduces, a lower bound
    for every σ ('latency_lower' of :func:`~inference_math.fullmodel.terms.term_expression`). The
    other five σ are evaluated only for the (layout, N_PP) branches whose lower bound beats the
    best latency found at σ = 1. The grid is evaluated in blocks, so memory stays bounded.
    """
    first, = _unit_scaledown(model, gpu, n, batch, (q,), context, weight_bytes, use_pp, curve, kv)
    return _refine(first, n, batch)


@dataclass
class GridResult:
    """Token latency (per token, after speculative decoding) and cost over the whole grid."""

    setting: Setting
    n: np.ndarray
    batch: np.ndarray
    latency: np.ndarray  # s per token per request
    gpu_seconds: np.ndarray  # GPU-s per token
    target: list[BranchGrid]  # target forward passes at q = 1..γ_max
    drafter: BranchGrid | None
    gamma: np.ndarray  # chosen γ (1: no speculation)

    @property
    def usd_per_mtok(self) -> np.ndarray:
        return usd_per_million_tokens(self.gpu_seconds, self.setting.usd_per_hour)


def search_steps(setting: Setting) -> int:
    """How many times :func:`frontier` reports progress for ``setting`` (see ``progress``)."""
    passes = 2 if setting.speculative else 1
    return passes + 2 * passes + 1


def _noop(step: str) -> None:
    return None


def evaluate_grid(setting: Setting, frontier_only: bool = False,
                  progress: Callable[[str], None] = _noop, fastest_only: bool = False) -> GridResult:
    """Latency and cost at every (N, b) with the fastest branch (and γ) at each.

    ``frontier_only=True`` is exact wherever a point can be on the Pareto frontier of speed
    against cost, and skips the rest. After the σ = 1 pass every point has a latency it reaches
    (an upper bound) and, for each branch, a lower bound; a branch whose lower bounds of the
    latency per token and of the cost are both beaten by what another point reaches cannot put
    its point on the frontier, and is not refined over σ (nor a point with no such branch left).
    Off the frontier the grid then holds upper bounds.

    ``fastest_only=True`` (with ``frontier_only``) is exact only where a point can be the
    fastest: a branch is refined only if its lower bound of the latency per token does not
    exceed the smallest latency some point reaches (slightly enlarged, as in
    :func:`_frontier_latency`).
    """
    model, gpu, w = setting.model, setting.gpu, setting.w
    n, batch = grid(model, gpu, w)
    reuse_freed_pages()
    gammas = range(1, GAMMA_MAX + 1) if setting.speculative else range(1, 2)
    curve = setting.curve_name
    firsts = _unit_scaledown(model, gpu, n, batch, tuple(gammas), setting.context, w, setting.use_pp,
                             curve, setting.kv_scale)
    progress("target at σ = 1")
    if setting.speculative:
        firsts += _unit_scaledown(setting.drafter, gpu, n, batch, (1,), setting.context,
                                  setting.drafter.weight_bytes, setting.use_pp, curve,
                                  setting.drafter_kv_scale)
        progress("drafter at σ = 1")
    if frontier_only:
        # the bounds tighten after each stage: the drafter first, as it enters every γ > 1
        targets = list(range(len(gammas)))
        stages = [(targets, "hopeful"), (targets, "rest")]
        if setting.speculative:
            draft = [len(gammas)]
            stages = [(draft, "hopeful"), (targets, "hopeful"), (draft, "rest"), (targets, "rest")]
        points = np.arange(n.size * batch.size)
        per_token = (n[:, None] / batch[None, :]).ravel()
        for which, passes in stages:
            # a point once dominated stays so (bounds only tighten), and never dominates another
            lower, upper = (_token_latency(setting, [bound.ravel()[points] for bound in bounds])[0]
                            for bounds in ([f.lower for f in firsts], [f.grid.latency for f in firsts]))
            limit = (_fastest_latency(upper) if fastest_only
                     else _frontier_latency(per_token[points], upper))
            undominated = ~(lower > limit)
            points, limit = points[undominated], limit[undominated]
            keeps = _branches_kept(setting, firsts, points, limit)
            for k in which:
                _refine(firsts[k], n, batch, points, keeps[k], (passes,))
            progress(f"refining over σ ({passes})")
        grids = [first.grid for first in firsts]
    else:
        grids = [_refine(first, n, batch) for first in firsts]
        progress("refining over σ")
    target, drafter = (grids[:-1], grids[-1]) if setting.speculative else (grids, None)
    latency, gamma = _token_latency(setting, [found.latency for found in grids])
    gpu_seconds = n[:, None] * latency / batch[None, :]
    return GridResult(setting, n, batch, latency, gpu_seconds, target, drafter, gamma)


# Relative slack on the latency a point may reach and still be on the frontier: it absorbs the
# rounding of :func:`_frontier_latency` (a few ulps), so pruning stays on the safe side.
_SLACK = 1e-9


def _frontier_latency(per_token: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The largest latency at which points of GPU-seconds per token per second of latency
    ``per_token`` (eq-search-cost: N·t/b, N/b given) are not dominated by a point reaching a
    latency of ``upper`` at ``per_token`` (one of them faster *and* cheaper), slightly enlarged:
    a latency above it, and its cost, are never on the frontier.

    Along the frontier of the reached points latency rises and cost falls, so they dominate a
    latency t at N/b = p iff t > min_i max(t_i, c_i/p) (t_i, c_i: a frontier point's latency
    and cost); the minimum sits where t_i crosses c_i/p, i.e. where the frontier's own N/b,
    c_i/t_i, falls below p. One search per point, then any number of latencies of that point
    (its branches, the γ levels) are compared with this bound.
    """
    front = pareto_front(upper, per_token * upper)
    if front.size == 0:
        return np.full(per_token.shape, np.inf)
    fast = upper[front]
    cheapest = per_token[front] * fast
    # the frontier's N/b falls along it: the first frontier point whose N/b is at most p
    rising = per_token[front][::-1]
    j = front.size - np.searchsorted(rising, per_token, side="right")
    pad_fast = np.append(fast, np.inf)
    pad_cost = np.append(cheapest, np.inf)
    after = np.maximum(pad_fast[j], pad_cost[j] / per_token)
    before = np.where(j > 0, np.maximum(fast[j - 1], cheapest[j - 1] / per_token), np.inf)
    return np.minimum(after, before) * (1 + _SLACK)


def _fastest_latency(upper: np.ndarray) -> np.ndarray:
    """The largest latency at which a point can still be (or tie with) the fastest, given the
    latencies ``upper`` points reach, slightly enlarged: the bound of ``fastest_only``."""
    finite = upper[np.isfinite(upper)]
    top = finite.min() * (1 + _SLACK) if finite.size else np.inf
    return np.full(upper.shape, top)


def _branches_kept(setting: Setting, firsts: list, points: np.ndarray,
                   bound: np.ndarray) -> list:
    """For each forward pass (target at q = 1..γ_max, then the drafter) a function selecting
    branches, from their lower bounds at ``points[rows]``, whose lower bound of the latency per
    token (eq-spec-latency, increasing in both latencies, with the other pass at its lower
    bound) does not exceed the point's frontier latency ``bound[rows]`` (:func:`_frontier_latency`)."""
    if not setting.speculative:
        return [lambda lowers, rows: ~(lowers > bound[rows])]
    *target, draft = [first.lower.ravel()[points] for first in firsts]

    def spec(k, t_p, t_q):
        return spec_latency_fn(t_p, t_q, k + 1, setting.acceptance) if k else t_p

    def keep_target(k):
        return lambda lowers, rows: ~(spec(k, lowers, draft[rows]) > bound[rows])

    def keep_draft(lowers, rows):
        limit = bound[rows]
        kept = np.zeros(rows.shape, dtype=bool)
        for k in range(1, len(target)):
            kept |= ~(spec(k, target[k][rows], lowers) > limit)
        return kept
    return [keep_target(k) for k in range(len(target))] + [keep_draft]


def _token_latency(setting: Setting, latencies: list) -> tuple[np.ndarray, np.ndarray]:
    """Latency per token and the γ chosen, from the target's forward latencies at q = 1..γ_max
    and (last) the drafter's, by eq-spec-latency; without speculation the one forward pass.

    eq-spec-latency increases with both latencies, so lower (upper) bounds give a lower (upper)
    bound."""
    if not setting.speculative:
        return latencies[0], np.ones(latencies[0].shape, dtype=np.int8)
    *target, draft = latencies
    per_gamma = np.stack([target[0]] + [
        spec_latency_fn(target[k], draft, k + 1, setting.acceptance) for k in range(1, len(target))])
    choice = np.argmin(per_gamma, axis=0)
    return np.take_along_axis(per_gamma, choice[None], axis=0)[0], (choice + 1).astype(np.int8)


@dataclass(frozen=True)
class FrontierPoint:
    """One point of a frontier with the configuration that reaches it."""

    tokens_per_s: float
    usd_per_mtok: float
    gpus: float
    batch: float
    two_d: bool
    n_pp: float
    n_tp: float
    n_ep: float
    n_tp_ff: float
    n_tp_attn: float
    attn_scaledown: float
    gamma: int
    target_latency_s: float
    draft_latency_s: float
    draft_share: float  # of a speculative step's time, the drafter's γ passes (0 without)
    mfu: float
    binding: str  # the largest share of a step: kernel launches, collective latency, network
    #               bandwidth, memory or arithmetic of the target pass, or the drafter's passes
    terms: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        out = asdict(self)
        out.update({f"t_{k}_s": v for k, v in out.pop("terms").items()})
        return out


@dataclass
class Frontier:
    setting: Setting
    points: list[FrontierPoint]

    def max_speed(self) -> FrontierPoint:
        return max(self.points, key=lambda pt: pt.tokens_per_s)

    def preferred(self, alpha: float = 3.0) -> FrontierPoint:
        """The point maximizing tok/s^α / ($/Mtok) (eq-search-preference, generated from its
        derivation into :mod:`.formulas_numpy`)."""
        from .formulas_numpy import preference as generated
        positive("alpha", alpha, allow_zero=True)
        arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                       for v in (*self.arrays(), alpha)))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            value = generated(*arrays)
        return self.points[int(np.argmax(value))]

    def table(self) -> np.ndarray:
        """The frontier as a structured NumPy array, fastest point first, with the columns of the
        command line's ``--csv`` (:data:`FRONTIER_COLUMNS`); ``pandas.DataFrame(front.table())``
        turns it into a data frame."""
        rows = sorted((pt.as_dict() for pt in self.points), key=lambda row: -row["tokens_per_s"])
        dtype = [(key, _COLUMN_DTYPES[spec[-1]]) for key, _, spec in FRONTIER_COLUMNS]
        return np.array([tuple(row[key] for key, _ in dtype) for row in rows], dtype=dtype)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        speed = np.array([pt.tokens_per_s for pt in self.points])
        cost = np.array([pt.usd_per_mtok for pt in self.points])
        return speed, cost

    def cheapest_at(self, speed: float) -> FrontierPoint | None:
        """The cheapest frontier point at least ``speed`` tokens/s per user (None: beyond the
        top speed): the configuration that serves that speed."""
        fast = [pt for pt in self.points if pt.tokens_per_s >= speed]
        return min(fast, key=lambda pt: pt.usd_per_mtok) if fast else None

    def cost_at_speed(self, speed: np.ndarray) -> np.ndarray:
        """Cost of the frontier at given speeds (log-log interpolation; nan outside its range)."""
        x, y = self.arrays()
        order = np.argsort(x)
        out = np.exp(np.interp(np.log(speed), np.log(x[order]), np.log(y[order]),
                               left=np.nan, right=np.nan))
        return out


def frontier(setting: Setting, exact: bool = False,
             progress: Callable[[str], None] = _noop) -> Frontier:
    """The Pareto frontier of tokens/s per request against $/Mtok for one setting.

    ``exact=False`` reads it at the reference code's 1,000 latency thresholds (its maxima and
    preferred points are those of the paper); ``exact=True`` keeps every frontier point.
    ``progress(step)`` is called after each of the :func:`search_steps` steps of the search
    (not at all when the frontier comes from the cache).
    """
    return cached("frontier", (setting, exact), lambda: _frontier(setting, exact, progress))


def fastest(setting: Setting, exact: bool = False,
            progress: Callable[[str], None] = _noop) -> FrontierPoint:
    """The frontier's fastest point, ``frontier(setting, exact).max_speed()``, found without
    refining the branches that cannot be the fastest (``fastest_only`` of :func:`evaluate_grid`).
    """
    return cached("fastest", (setting, exact), lambda: _frontier(setting, exact, progress,
                                                                 fastest_only=True).points[0])


def _frontier(setting: Setting, exact: bool, progress: Callable[[str], None] = _noop,
              fastest_only: bool = False) -> Frontier:
    result = evaluate_grid(setting, frontier_only=True, progress=progress,
                           fastest_only=fastest_only)
    # the reference code's thresholds span 100x the fastest latency; a frontier of the physical
    # rules is read over its whole range (the limit's fastest point is far faster than any
    # speed served)
    span = 100.0 if setting.curve_name == "paper" else None
    pick = (pareto_front(result.latency, result.gpu_seconds) if exact
            else pareto_front_thresholds(result.latency, result.gpu_seconds, span=span))
    if pick.size == 0:
        raise InputError(f"no feasible configuration for {setting.model.name} on {setting.gpu.name}")
    if fastest_only:  # the grid is exact only near its fastest point, the first picked
        pick = pick[:1]
    points = describe_points(result, pick)
    progress("describing the frontier")
    return Frontier(setting, points)


# Columns of a frontier in the CLI's table and CSV: (key of FrontierPoint.as_dict, heading, format)
FRONTIER_COLUMNS = (
    ("tokens_per_s", "tok/s", ".1f"), ("usd_per_mtok", "$/Mtok", ".3f"), ("gpus", "GPUs", ".1f"),
    ("batch", "batch", ".1f"), ("two_d", "2-D", "d"), ("n_pp", "PP", ".2f"), ("n_tp", "TP", ".2f"),
    ("n_ep", "EP", ".1f"), ("n_tp_attn", "TP attn", ".2f"), ("gamma", "gamma", "d"),
    ("mfu", "MFU", ".3f"), ("binding", "binding", "s"),
)

_COLUMN_DTYPES = {"f": np.float64, "d": np.int64, "s": "U32"}

BINDING = ("kernel launches", "collective latency", "network bandwidth", "memory", "arithmetic",
           "drafter passes")


def _mfu(setting: Setting, n, batch, pp, sigma, two_d, latency) -> np.ndarray:
    """Model FLOPs utilization of points: the accepted tokens' FLOPs over what the peaks could
    do in the time per token. The FLOPs are those the curve times: eq-full-flops at the weights'
    peak under the paper's rules; under the physical rules and the limit eq-phys-flop-time's,
    each at its peak rate, which is the limit's arithmetic time (no pass is faster, so MFU ≤ 1)."""
    if setting.curve_name == "paper":
        flops = fm.forward_flops_fn(setting.model)(batch, 1.0, setting.context)
        return flops / (n * setting.gpu.flops(setting.flop_bits) * latency)
    busy = np.zeros(n.size)
    for layout in (False, True):
        here = two_d == layout
        if here.any():
            arithmetic = fm.compile_branch(setting.model, setting.gpu, layout, 1.0,
                                           setting.context, setting.w, curve="limit",
                                           kv_scale=setting.kv_scale)["arithmetic"]
            busy[here] = np.broadcast_to(arithmetic(n[here], batch[here], pp[here], sigma[here]),
                                         (here.sum(),))
    return busy / latency


def describe_points(result: GridResult, flat_indices: np.ndarray) -> list[FrontierPoint]:
    """The configuration, term breakdown and binding term of grid points (vectorized)."""
    setting = result.setting
    i, j = np.unravel_index(flat_indices, result.latency.shape)
    n, batch = result.n[i], result.batch[j]
    gamma = result.gamma[i, j].astype(int)
    pp_all = pipeline_degrees(setting.model, result.batch, setting.use_pp)
    size = i.size
    two_d, pp, sigma_step, target = (np.zeros(size, bool), np.ones(size), np.zeros(size),
                                     np.zeros(size))
    for g in np.unique(gamma):
        branch = result.target[g - 1]
        here = gamma == g
        two_d[here] = branch.two_d[i[here], j[here]] > 0
        pp[here] = pp_all[j[here], branch.pp_index[i[here], j[here]]]
        sigma_step[here] = branch.sigma_index[i[here], j[here]]
        target[here] = branch.latency[i[here], j[here]]
    tp = n / pp
    sigma = tp ** (sigma_step / (SCALEDOWN_VALUES - 1))
    names = ("kernel", "network", "memory", "arithmetic", "network_latency", "network_bandwidth")
    terms = {name: np.zeros(size) for name in names}
    for g in np.unique(gamma):
        for layout in (False, True):
            here = (gamma == g) & (two_d == layout)
            if not here.any():
                continue
            fns = fm.compile_branch(setting.model, setting.gpu, layout, g, setting.context, setting.w,
                                    curve=setting.curve_name, kv_scale=setting.kv_scale)
            for name in names:
                terms[name][here] = np.broadcast_to(
                    fns[name](n[here], batch[here], pp[here], sigma[here]), (here.sum(),))
    latency = result.latency[i, j]
    cost = usd_per_million_tokens(n * latency / batch, setting.usd_per_hour)
    draft = (result.drafter.latency[i, j] if result.drafter is not None else np.full(size, np.nan))
    draft = np.where(gamma > 1, draft, np.nan)
    mfu = _mfu(setting, n, batch, pp, sigma, two_d, latency)
    # A speculative step is γ drafter passes and one target pass (eq-spec-latency): the binding
    # term is the largest share of that step, the drafter's passes counted as one share.
    drafting = np.where(gamma > 1, gamma * np.nan_to_num(draft), 0.0)
    contributions = np.stack([terms["kernel"], terms["network_latency"], terms["network_bandwidth"],
                              np.where(terms["memory"] >= terms["arithmetic"], terms["memory"], -1.0),
                              np.where(terms["memory"] < terms["arithmetic"], terms["arithmetic"], -1.0),
                              drafting])
    binding = np.argmax(contributions, axis=0)
    draft_share = drafting / (drafting + target)
    points = []
    for x in range(size):
        ep = fm.expert_parallel_value(setting.model, tp[x], batch[x] / pp[x],
                                      gamma[x] if setting.curve_name != "paper" else 1.0)
        points.append(FrontierPoint(
            tokens_per_s=float(1.0 / latency[x]), usd_per_mtok=float(cost[x]), gpus=float(n[x]),
            batch=float(batch[x]), two_d=bool(two_d[x]), n_pp=float(pp[x]), n_tp=float(tp[x]),
            n_ep=ep, n_tp_ff=max(1.0, float(tp[x]) / max(1.0, ep)),
            n_tp_attn=float(tp[x] / sigma[x]), attn_scaledown=float(sigma[x]),
            gamma=int(gamma[x]), target_latency_s=float(target[x]),
            draft_latency_s=float(draft[x]), draft_share=float(draft_share[x]), mfu=float(mfu[x]),
            binding=BINDING[binding[x]],
            terms={name: float(terms[name][x]) for name in names}))
    return points


def __getattr__(name: str):
    """The derivations of :mod:`.search_rules` (``cost_per_million_tokens``,
    ``user_preference``) by this module's name too, for the book: loaded on first use, so that
    importing this module loads no SymPy."""
    if name in ("cost_per_million_tokens", "user_preference"):
        from . import search_rules
        return getattr(search_rules, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The serving frontier: output tokens per second per GPU against tokens per second per user.

For a workload of T_in prompt and T_out output tokens per request, :func:`serving_frontier`
searches deployments served aggregated (chunked prefill inside decode steps) or disaggregated
(a prefill pool and a decode pool) and returns the Pareto frontier of throughput per GPU, the
GPU time of prefill counted, against speed per user (1/TPOT), under optional TTFT and TPOT
limits. The rules of the composition are :mod:`.serving_rules`; a step's time is
:mod:`.step_time` under the chosen curve ('estimate' by default, 'limit', 'physical', 'paper').

What is searched (every combination is evaluated in one vectorized call per curve):

- an instance of N GPUs in one pipeline stage, N a power of two from 1 to 64 (and the NVLink
  domain's size where it is larger than 8, such as 72), at least the GPUs that hold the weights;
- attention tensor-parallel over the instance (σ = 1) or, for a mixture of experts,
  data-parallel over it (σ = N, DeepSeek's and SGLang's DP attention), the experts parallel as
  eq-phys-expert-parallel sets;
- b sequences decoding together, b = 1, √2, 2, ... up to 8,192 (rounded), at least one per
  data-parallel group, as far as the HBM holds the weights and every sequence's cache at the
  mean decode context T_in + T_out/2;
- aggregated: a step's budget of C = 512 ... 16,384 prompt tokens, or exactly b·T_in/T_out
  (every step carries its share) where that is 512 or more, never less than that share (else
  prefill falls behind);
- disaggregated: prefill instances of N_pre GPUs passing P = 1 ... 64 prompts at once; the pool
  with the most input tokens per GPU-second whose TTFT meets the limit serves every decode layout.

A layout that cannot hold a single sequence, or no layout meeting the limits, is infeasible:
:class:`ServeError` names the reason.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ..core.validation import InputError, of_kind, positive
from ..fullmodel import branch as fm
from ..fullmodel.pareto import pareto_front
from ..presets.hardware import GPU
from ..presets.layered import LayeredModel
from ..presets.models import Model
from . import step_time as st
from .engines import check_engine
from .predict import Precisions

BATCHES = np.unique(np.round(2.0 ** (np.arange(27) / 2)))
CHUNKS = (512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0)
PROMPTS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
MAX_INSTANCE = 64
TERM_NAMES = ("kernel", "network_latency", "network_bandwidth", "memory", "arithmetic")
BINDING = {"kernel": "kernel launches", "network_latency": "collective latency",
           "network_bandwidth": "network bandwidth", "memory": "memory",
           "arithmetic": "arithmetic"}
ESTIMATE_BINDING = dict(BINDING, kernel="fixed step time")


class ServeError(InputError):
    """A serving frontier that cannot be formed, naming the field (``field``)."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass(frozen=True)
class Workload(Precisions):
    """What is served: the model on a GPU, request lengths, precisions, price and limits."""

    model: Model | LayeredModel
    gpu: GPU
    input_len: float
    output_len: float
    weight_bits: float | None = None
    kv_bits: float | None = None
    curve: str = "estimate"
    disaggregated: bool = False
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    price: float | None = None
    engine: str | None = None  # an engine family's efficiencies (estimate only); None: pooled

    def __post_init__(self):
        of_kind("model", self.model, (Model, LayeredModel))
        of_kind("gpu", self.gpu, GPU)
        self.gpu.require_collective_model()
        for name in ("input_len", "output_len"):
            positive(name, getattr(self, name))
        for name in ("ttft_ms", "tpot_ms", "price"):
            if getattr(self, name) is not None:
                positive(name, getattr(self, name))
        if self.curve not in st.CURVES:
            raise ServeError("curve", f"must be one of {', '.join(st.CURVES)}, "
                                      f"got {self.curve!r}")
        check_engine(self.engine, self.curve, ServeError)
        if self.kv_bits is not None and not 1 <= positive("kv_bits", self.kv_bits) <= 32:
            raise ServeError("kv_bits", f"must lie in [1, 32], got {self.kv_bits:g}")
        if self.weight_bits is not None:
            positive("weight_bits", self.weight_bits)
        try:
            self.gpu.flops(self.flop_bits)
        except InputError as exc:
            raise ServeError("weight_bits", str(exc)) from None

    @property
    def context(self) -> float:
        """Mean KV length of decode: the prompt and half the output."""
        return self.input_len + self.output_len / 2

    @property
    def usd_per_hour(self) -> float:
        return self.gpu.price_per_hour if self.price is None else self.price

    @property
    def cached_model(self):
        """The model with its cache at kv_bits (a LayeredModel's groups rescaled)."""
        from .predict import Deployment
        return Deployment(self.model, self.gpu, 1, 1, self.input_len, self.output_len,
                          kv_bits=self.kv_bits, whole_degrees=False).cached_model


@dataclass(frozen=True)
class ServingPoint:
    """One point of the serving frontier with its layout (see the module docstring)."""

    tokens_per_s_per_user: float
    output_tokens_per_s_per_gpu: float
    ttft_ms: float
    tpot_ms: float
    usd_per_mtok_output: float
    usd_per_mtok_input: float
    mode: str  # 'aggregated' or 'disaggregated'
    decode: dict  # gpus, tp, dp, ep, batch (sequences), chunk (aggregated)
    prefill: dict | None  # disaggregated: gpus, tp, dp, ep, prompts; pool ratio
    binding_decode: str
    binding_prefill: str
    curve: str
    band_low: float | None = None
    band_high: float | None = None
    prefill_gpus_per_decode_gpu: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class ServingFrontier:
    workload: Workload
    points: list = field(default_factory=list)

    def max_speed(self) -> ServingPoint:
        return self.points[0]

    def max_throughput(self) -> ServingPoint:
        return self.points[-1]

    def throughput_at(self, speed: float) -> float:
        """Output tokens/s per GPU at ``speed`` tokens/s per user, read off the frontier (the
        most of any point at least that fast; 0 beyond the top speed)."""
        fast = [p.output_tokens_per_s_per_gpu for p in self.points
                if p.tokens_per_s_per_user >= speed]
        return max(fast) if fast else 0.0


def instance_sizes(gpu: GPU) -> list[float]:
    sizes = {2.0 ** k for k in range(int(math.log2(MAX_INSTANCE)) + 1)}
    if gpu.node_size > 8:
        sizes.add(float(min(gpu.node_size, 2 * MAX_INSTANCE)))
    return sorted(sizes)


@dataclass(frozen=True)
class _Grid:
    n: np.ndarray
    sigma: np.ndarray
    batch: np.ndarray
    q: np.ndarray
    extra: np.ndarray  # chunk (decode grid) or prompts (prefill grid)


def _layouts(work: Workload) -> list[tuple[float, float]]:
    moe = work.model.n_experts > 1
    return [(n, s) for n in instance_sizes(work.gpu) for s in ((1.0, n) if moe and n > 1
                                                                else (1.0,))]


def _decode_grid(work: Workload) -> _Grid:
    """Every (instance, σ, batch, chunk): chunk 0 is a step without prompt tokens, else a
    step's budget of prompt tokens: exactly the batch's share b·T_in/T_out, or a larger one of
    :data:`CHUNKS`. No budget is below the smallest of CHUNKS (engines default to thousands of
    tokens; one of a few tokens would trickle a prompt over hundreds of steps), and σ data-
    parallel groups need at least σ sequences."""
    rows = []
    ratio = work.input_len / work.output_len
    for n, s in _layouts(work):
        for batch in BATCHES[BATCHES >= s]:  # each data-parallel group holds a sequence
            share = batch * ratio
            rows.append((n, s, batch, 0.0))
            if share >= CHUNKS[0]:
                rows.append((n, s, batch, share))
            rows += [(n, s, batch, c) for c in CHUNKS if c > share]
    n, s, batch, chunk = (np.array(col) for col in zip(*rows, strict=False))
    return _Grid(n, s, batch, 1.0 + chunk / batch, chunk)


def _prefill_grid(work: Workload) -> _Grid:
    rows = [(n, s, prompts) for n, s in _layouts(work) for prompts in PROMPTS]
    n, s, prompts = (np.array(col) for col in zip(*rows, strict=False))
    return _Grid(n, s, prompts, np.full(n.shape, work.input_len), prompts)


def _evaluate(work: Workload, grid: _Grid, context: float, eff,
              arithmetic=None) -> tuple[np.ndarray, dict]:
    return st.step(work.curve, work.model, work.gpu, grid.n, grid.sigma, grid.batch, grid.q,
                   context, work.weight_bytes, logits=1.0, kv_scale=work.kv_scale, eff=eff,
                   arithmetic=arithmetic)


def _chunk_grid(work: Workload, grid: _Grid) -> _Grid:
    """The chunk of each row of a decode grid as a pass of its own: its C tokens as C/T_in
    prompts of T_in tokens after an empty cache (eq-prefill-ttft's point), so that each token
    attends over its own prompt, at the mean causal context (T_in − 1)/2, in the cheaper MLA
    form (a plain row's stand-in is one prompt, unused)."""
    tokens = np.where(grid.extra > 0, grid.extra, work.input_len)
    return _Grid(grid.n, grid.sigma, tokens / work.input_len,
                 np.full(grid.n.shape, work.input_len), grid.extra)


def prompt_floor(work: Workload, n: np.ndarray) -> np.ndarray:
    """The limit's TTFT on instances of ``n`` GPUs: one prompt's arithmetic over their peaks
    (eq-phys-flop-time at the limit; :mod:`inference_math.reality.ttft_floor`). However an
    engine schedules the prompt among other requests, its first token cannot come sooner."""
    one = np.ones(np.shape(n))
    grid = _Grid(np.asarray(n, dtype=float), one, one, np.full(np.shape(n), work.input_len),
                 np.zeros(np.shape(n)))
    return _evaluate(work, grid, 0.0, None)[1]["arithmetic_peak"]


@dataclass(frozen=True)
class _Steps:
    """The steps of a decode grid: latency and terms of each row's step, of its decode tokens
    alone and of its chunk alone."""

    latency: np.ndarray
    terms: dict
    decode: dict
    chunk: dict


def decode_steps(work: Workload, grid: _Grid, eff) -> _Steps:
    """Every step of a decode grid (:func:`_decode_grid`). A mixed step reads what a pass of
    b sequences of 1 + C/b tokens at the decode context reads (the weights once, the decode
    tokens' cache, every token's activations), and does the FLOPs of its decode tokens at
    that context plus those of its chunk at its own prompts' (:func:`_chunk_grid`): the FLOPs
    of a pass add, and a chunk's tokens attend over their prompts, not over a decode
    sequence's cache."""
    ones = np.ones(grid.n.shape)
    plain = _Grid(grid.n, grid.sigma, grid.batch, ones, np.zeros(grid.n.shape))
    _, decode = _evaluate(work, plain, work.context, eff)
    _, chunk = _evaluate(work, _chunk_grid(work, grid), 0.0, eff)
    arithmetic = decode["arithmetic_peak"] + np.where(grid.extra > 0,
                                                      chunk["arithmetic_peak"], 0.0)
    latency, terms = _evaluate(work, grid, work.context, eff, arithmetic=arithmetic)
    return _Steps(latency, terms, decode, chunk)


def step_grid(n, sigma, batch, chunk) -> _Grid:
    """A decode grid of given rows (arrays or numbers): b sequences decoding on N GPUs at σ,
    with a chunk of C prompt tokens (0: a plain step)."""
    n, sigma, batch, chunk = (np.atleast_1d(np.asarray(x, dtype=float))
                              for x in np.broadcast_arrays(n, sigma, batch, chunk))
    return _Grid(n, sigma, batch, 1.0 + chunk / batch, chunk)


def mixed_raw(work: Workload, grid: _Grid) -> st.RawTerms:
    """The estimate's raw terms of every step of a decode grid, the mixed steps' arithmetic
    summed from their sides as :func:`decode_steps` sums it (for a fit, which evaluates the
    same steps at many efficiencies)."""
    def raw(g: _Grid, context: float) -> st.RawTerms:
        return st.raw_terms(work.model, work.gpu, g.n, g.sigma, g.batch, g.q, context,
                            work.weight_bytes, 1.0, work.kv_scale)
    plain = _Grid(grid.n, grid.sigma, grid.batch, np.ones(grid.n.shape), np.zeros(grid.n.shape))
    arithmetic = raw(plain, work.context).arithmetic + np.where(
        grid.extra > 0, raw(_chunk_grid(work, grid), 0.0).arithmetic, 0.0)
    return replace(raw(grid, work.context), arithmetic=arithmetic)


def mixed_share(steps: _Steps, grid: _Grid) -> np.ndarray:
    """φ_in of eq-serve-mixed-split for every row: the share of its step the chunk pays, by
    the resource that binds the step (memory or arithmetic after the curve's efficiencies),
    from the three passes' times of that resource at peak."""
    memory = steps.terms["memory"] >= steps.terms["arithmetic"]

    def use(terms):
        return np.where(memory, terms["memory_peak"], terms["arithmetic_peak"])
    share = serve_fns()["mixed_split"](use(steps.terms), use(steps.decode), use(steps.chunk),
                                       grid.batch, np.where(grid.extra > 0, grid.extra, 1.0))
    return np.where(grid.extra > 0, share, 0.0)


def _binding(terms: dict, index: int, estimate: bool) -> str:
    values = {name: float(terms[name][index]) for name in TERM_NAMES}
    overlap = max(values["memory"], values["arithmetic"])
    shares = dict(values, memory=overlap if values["memory"] >= values["arithmetic"] else -1.0,
                  arithmetic=overlap if values["memory"] < values["arithmetic"] else -1.0)
    names = ESTIMATE_BINDING if estimate else BINDING
    return names[max(shares, key=shares.get)]


def _cost(gpus, seconds, tokens, usd_per_hour):
    """eq-search-cost: $ per million tokens for ``tokens`` made in ``seconds`` on ``gpus``."""
    from ..fullmodel.formulas_numpy import cost
    with np.errstate(divide="ignore", invalid="ignore"):
        return cost(np.asarray(gpus, dtype=float), seconds, tokens, usd_per_hour)


def _expert_parallel(work: Workload, n: float, batch: float, sigma: float, q: float) -> float:
    return fm.expert_parallel_value(work.model, n, batch, q) if work.model.n_experts > 1 else 1.0


def _layout(work: Workload, n, sigma, sequences, q, **extra) -> dict:
    return dict(gpus=float(n), tp=float(n / sigma), dp=float(sigma),
                ep=_expert_parallel(work, n, sequences, sigma, q), **extra)


def aggregated(work: Workload, eff=None) -> dict:
    """Every aggregated candidate as arrays: TPOT, rate per GPU, TTFT, costs, and what to read
    a point's layout and binding terms from (eq-serve-mean-step, eq-serve-aggregated-ttft,
    eq-serve-aggregated-rate, eq-serve-mixed-split, eq-serve-gpu-seconds)."""
    grid = _decode_grid(work)
    steps = decode_steps(work, grid, eff)
    latency, terms = steps.latency, steps.terms
    key = {(n, s, bb): i for i, (n, s, bb, c) in
           enumerate(zip(grid.n, grid.sigma, grid.batch, grid.extra, strict=False)) if c == 0.0}
    dec_index = np.array([key[(n, s, bb)] for n, s, bb in zip(grid.n, grid.sigma, grid.batch, strict=False)])
    t_dec = latency[dec_index]
    mixed = grid.extra > 0
    t_mix = latency
    chunk = np.where(mixed, grid.extra, 1.0)
    fns = serve_fns()
    tpot = fns["mean_step"](grid.batch, grid.extra, work.input_len, work.output_len, t_dec, t_mix)
    if work.curve == "limit":
        ttft = prompt_floor(work, grid.n)
    else:
        ttft = fns["aggregated_ttft"](t_mix, fns["chunks_of_prompt"](work.input_len, grid.extra))
    phi = mixed_share(steps, grid)
    with np.errstate(invalid="ignore"):
        rate = grid.batch / (grid.n * tpot)
        g_out = fns["output_gpu_seconds"](grid.n, grid.batch, chunk, work.input_len,
                                          work.output_len, t_dec, t_mix, phi)
        g_in = fns["input_gpu_seconds"](grid.n, chunk, t_mix, phi)
    ok = mixed & np.isfinite(tpot) & np.isfinite(t_dec)
    one = np.ones(grid.n.shape)
    return dict(grid=grid, tpot=np.where(ok, tpot, np.inf), ttft=ttft, rate=rate,
                usd_out=_cost(one, g_out, one, work.usd_per_hour),
                usd_in=_cost(one, g_in, one, work.usd_per_hour),
                terms=terms, dec_index=dec_index, ok=ok)


@dataclass(frozen=True)
class _Prefill:
    index: int
    rate: float  # input tokens/s per GPU
    ttft: float  # s
    t_pre: float
    usd_in: float


def prefill_pool(work: Workload, eff=None):
    """Every prefill candidate: pass time, input tokens/s per GPU, TTFT (eq-serve-kv-transfer,
    eq-serve-disaggregated-ttft) and the terms of each pass."""
    grid = _prefill_grid(work)
    t_pre, terms = _evaluate(work, grid, 0.0, eff)
    t_pre = np.where(_prefill_fits(work, grid), t_pre, np.inf)
    fns = serve_fns()
    cache = float(work.cached_model.kv_bytes_at(work.input_len)) \
        if isinstance(work.model, LayeredModel) else work.model.kv_bytes_per_token * \
        work.kv_scale * work.input_len
    nic = 2.0 * work.gpu.internode_allreduce_bandwidth
    ttft = (prompt_floor(work, grid.n) if work.curve == "limit"
            else fns["disaggregated_ttft"](t_pre, cache, grid.n, nic))
    rate = grid.batch * work.input_len / (grid.n * t_pre)
    usd_in = _cost(grid.n, t_pre, grid.batch * work.input_len, work.usd_per_hour)
    return grid, t_pre, ttft, rate, usd_in, terms


def _prefill_fits(work: Workload, grid: _Grid) -> np.ndarray:
    """Whether a prefill pass fits once it has stored its prompts' cache: eq-phys-memory-need
    at the context T_in, the P prompts' cache held as the layout holds it (its copies)."""
    return st.fits(work.curve, work.model, work.gpu, grid.n, grid.sigma, grid.batch, grid.q,
                   work.input_len, work.weight_bytes, logits=1.0, kv_scale=work.kv_scale)


def _best_prefill(work: Workload, eff=None):
    grid, t_pre, ttft, rate, usd_in, terms = prefill_pool(work, eff)
    limit = math.inf if work.ttft_ms is None else work.ttft_ms / 1e3
    ok = np.isfinite(t_pre) & (ttft <= limit)
    if not ok.any():
        return None
    i = int(np.argmax(np.where(ok, rate, -np.inf)))
    return grid, terms, _Prefill(i, float(rate[i]), float(ttft[i]), float(t_pre[i]),
                                 float(usd_in[i]))


def serve_fns() -> dict:
    """The serving rules (eq-serve-mean-step, eq-serve-aggregated-ttft, eq-serve-open-loop-rate,
    eq-serve-open-loop-ttft, eq-serve-mixed-split,
    eq-serve-gpu-seconds, eq-serve-disaggregated-ttft, eq-serve-disaggregated-rate, the pools' ratio of
    eq-prefill-disagg-ratio), generated from their derivations into :mod:`.formulas_numpy`."""
    from ..fullmodel import formulas_numpy as gen

    def quiet(fn):
        def call(*args):  # an infeasible step's infinities may meet: inf − inf is NaN, not a warning
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return fn(*args)
        return call
    return {name: quiet(getattr(gen, name)) for name in (
        "chunk_share", "chunks_of_prompt", "mean_step", "aggregated_ttft", "open_loop_rate",
        "open_loop_ttft", "mixed_split", "output_gpu_seconds", "input_gpu_seconds",
        "disaggregated_ttft", "disaggregated_rate", "pool_ratio")}


def serving_frontier(work: Workload, eff=None) -> ServingFrontier:
    """The Pareto frontier of output tokens/s per GPU against tokens/s per user (module
    docstring), fastest per user first."""
    of_kind("workload", work, Workload)
    if work.curve == "estimate" and eff is None:
        eff = st.fitted(work.gpu, work.engine)
    points = _disaggregated(work, eff) if work.disaggregated else _aggregated(work, eff)
    if not points:
        raise ServeError("model", _why_infeasible(work))
    return ServingFrontier(work, points)


def _limits(work: Workload, tpot, ttft):
    ok = np.isfinite(tpot)
    if work.tpot_ms is not None:
        ok &= tpot <= work.tpot_ms / 1e3
    if work.ttft_ms is not None:
        ok &= ttft <= work.ttft_ms / 1e3
    return ok


def _band(work: Workload, eff, rate: float) -> tuple[float | None, float | None]:
    if work.curve != "estimate":
        return None, None
    return rate * math.exp(eff.band_low), rate * math.exp(eff.band_high)


def _aggregated(work: Workload, eff) -> list[ServingPoint]:
    c = aggregated(work, eff)
    grid, terms = c["grid"], c["terms"]
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = c["ok"] & _limits(work, c["tpot"], c["ttft"])
        front = pareto_front(np.where(ok, c["tpot"], np.inf), 1.0 / c["rate"])
    estimate = work.curve == "estimate"
    points = []
    for i in front:
        j = c["dec_index"][i]
        chunk = float(grid.extra[i])
        rate = float(c["rate"][i])
        low, high = _band(work, eff, rate)
        points.append(ServingPoint(
            tokens_per_s_per_user=1.0 / float(c["tpot"][i]), output_tokens_per_s_per_gpu=rate,
            ttft_ms=float(c["ttft"][i]) * 1e3, tpot_ms=float(c["tpot"][i]) * 1e3,
            usd_per_mtok_output=float(c["usd_out"][i]), usd_per_mtok_input=float(c["usd_in"][i]),
            mode="aggregated",
            decode=_layout(work, grid.n[i], grid.sigma[i], grid.batch[i], 1.0,
                           batch=float(grid.batch[i]), chunk=chunk),
            prefill=None, binding_decode=_binding(terms, j, estimate),
            binding_prefill=_binding(terms, i, estimate), curve=work.curve,
            band_low=low, band_high=high))
    return points


def _disaggregated(work: Workload, eff) -> list[ServingPoint]:
    best = _best_prefill(work, eff)
    if best is None:
        return []
    pgrid, pterms, pre = best
    grid = _decode_grid(work)
    plain = grid.extra == 0.0
    grid = _Grid(grid.n[plain], grid.sigma[plain], grid.batch[plain], grid.q[plain],
                 grid.extra[plain])
    t_dec, terms = _evaluate(work, grid, work.context, eff)
    fns = serve_fns()
    rho = work.input_len / work.output_len
    with np.errstate(divide="ignore", invalid="ignore"):
        rate_dec = grid.batch / (grid.n * t_dec)
        rate = fns["disaggregated_rate"](rate_dec, pre.rate, rho)
        ok = _limits(work, t_dec, np.full(t_dec.shape, pre.ttft))
        front = pareto_front(np.where(ok, t_dec, np.inf), 1.0 / rate)
    estimate = work.curve == "estimate"
    usd_out = _cost(grid.n, t_dec, grid.batch, work.usd_per_hour)
    i_pre = pre.index
    prefill = _layout(work, pgrid.n[i_pre], pgrid.sigma[i_pre], pgrid.batch[i_pre],
                      work.input_len, prompts=float(pgrid.batch[i_pre]))
    points = []
    for i in front:
        r = float(rate[i])
        low, high = _band(work, eff, r)
        points.append(ServingPoint(
            tokens_per_s_per_user=1.0 / float(t_dec[i]), output_tokens_per_s_per_gpu=r,
            ttft_ms=pre.ttft * 1e3, tpot_ms=float(t_dec[i]) * 1e3,
            usd_per_mtok_output=float(usd_out[i]), usd_per_mtok_input=pre.usd_in,
            mode="disaggregated",
            decode=_layout(work, grid.n[i], grid.sigma[i], grid.batch[i], 1.0,
                           batch=float(grid.batch[i])),
            prefill=prefill, binding_decode=_binding(terms, i, estimate),
            binding_prefill=_binding(pterms, i_pre, estimate), curve=work.curve,
            band_low=low, band_high=high,
            prefill_gpus_per_decode_gpu=float(fns["pool_ratio"](rate_dec[i], pre.rate, rho))))
    return points


def evaluate_points(work: Workload, points, eff=None) -> dict[str, np.ndarray]:
    """The configurations of serving-frontier ``points`` (decode layout, batch and chunk; the
    prefill pool) evaluated again under ``work``, which may differ from theirs in its numbers
    (another GPU's values, say) but not in its lengths or mode: arrays of
    ``tokens_per_s_per_user``, ``output_tokens_per_s_per_gpu`` and ``usd_per_mtok_output``, by
    the same rules as :func:`serving_frontier` (0, 0 and infinity where a configuration no
    longer fits). Used by :mod:`.bands`."""
    if work.curve == "estimate" and eff is None:
        eff = st.fitted(work.gpu, work.engine)
    decode = [p.decode for p in points]
    n, sigma, batch = (np.array([d[key] for d in decode], dtype=float)
                       for key in ("gpus", "dp", "batch"))
    fns = serve_fns()
    with np.errstate(divide="ignore", invalid="ignore"):
        if work.disaggregated:
            grid = _Grid(n, sigma, batch, np.ones(n.size), np.zeros(n.size))
            t_dec = _evaluate(work, grid, work.context, eff)[0]
            pre = points[0].prefill
            prompts = float(pre["prompts"])
            pgrid = _Grid(np.array([pre["gpus"]]), np.array([pre["dp"]]), np.array([prompts]),
                          np.array([work.input_len]), np.array([prompts]))
            t_pre = np.where(_prefill_fits(work, pgrid), _evaluate(work, pgrid, 0.0, eff)[0],
                             np.inf)
            pre_rate = prompts * work.input_len / (pre["gpus"] * t_pre)
            rate = fns["disaggregated_rate"](batch / (n * t_dec), pre_rate,
                                             work.input_len / work.output_len)
            tpot = t_dec
        else:
            chunk = np.array([d["chunk"] for d in decode], dtype=float)
            size = n.size
            grid = _Grid(np.tile(n, 2), np.tile(sigma, 2), np.tile(batch, 2),
                         np.concatenate([np.ones(size), 1.0 + chunk / batch]),
                         np.concatenate([np.zeros(size), chunk]))
            steps = decode_steps(work, grid, eff)
            t_dec, t_mix = steps.latency[:size], steps.latency[size:]
            phi = mixed_share(steps, grid)[size:]
            tpot = fns["mean_step"](batch, chunk, work.input_len, work.output_len, t_dec, t_mix)
            rate = batch / (n * tpot)
            g_out = fns["output_gpu_seconds"](n, batch, chunk, work.input_len, work.output_len,
                                              t_dec, t_mix, phi)
        rate = np.where(np.isfinite(tpot), rate, 0.0)
        usd_out = (_cost(n, t_dec, batch, work.usd_per_hour) if work.disaggregated else
                   _cost(np.ones(n.size), g_out, np.ones(n.size), work.usd_per_hour))
        return {"tokens_per_s_per_user": np.where(np.isfinite(tpot), 1.0 / tpot, 0.0),
                "output_tokens_per_s_per_gpu": rate,
                "usd_per_mtok_output": usd_out}


def _why_infeasible(work: Workload) -> str:
    largest = max(instance_sizes(work.gpu))
    eff = st.fitted(work.gpu, work.engine) if work.curve == "estimate" else None
    if work.disaggregated and _best_prefill(work, eff) is None:
        return (f"no prefill pool of up to {largest:g} {work.gpu.name} GPUs meets the TTFT "
                f"limit of {work.ttft_ms:g} ms" if work.ttft_ms is not None else
                f"{work.model.name} does not fit in {largest:g} {work.gpu.name} GPUs")
    limits = [f"{name} {value:g} ms" for name, value in (("TTFT", work.ttft_ms),
                                                           ("TPOT", work.tpot_ms))
              if value is not None]
    if limits:
        return (f"no deployment of {work.model.name} on up to {largest:g} {work.gpu.name} "
                f"GPUs meets the limits ({', '.join(limits)})")
    return (f"{work.model.name} with one sequence of {work.context:g} tokens does not fit in "
            f"{largest:g} {work.gpu.name} GPUs")

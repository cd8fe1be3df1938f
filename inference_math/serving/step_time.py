"""The time of one step (one forward pass) of a deployment, under each of the book's curves.

``paper``, ``physical`` and ``limit`` are the full model's branches (:mod:`.full_model`). The
``estimate`` (:mod:`.estimate_rules`) reads three terms of them, the limit's memory and
arithmetic times (at the hardware's peaks, the arithmetic re-timed at the precision each part
runs at in an engine: :func:`compute_rates`) and the physical network time, and evaluates
eq-est-step-latency at the fitted efficiencies (:class:`Efficiency`, stored in
``data/estimate_parameters.json`` by :mod:`.estimate_fit`). The raw terms do not depend on the
efficiencies, so a fit computes them once (:func:`raw_terms`) and evaluates only the closed form
at each trial (:func:`estimate_latency`).

Every function takes arrays of batch b and tokens per sequence q (broadcast elementwise) on one
instance of N GPUs in one pipeline stage with attention data-parallel degree σ.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from importlib import resources

import numpy as np

from ..core import names as N
from ..fullmodel import branch as fm

CURVES = ("estimate", "limit", "physical", "paper")
PARAMETER_FILE = "estimate_parameters.json"


@dataclass(frozen=True)
class Efficiency:
    """The estimate's seven parameters on one software stack (eq-est-step-latency) and its band.

    ``band_low`` and ``band_high`` are quantiles of ln(measured / estimate) on the held-out
    split: a rate R has the band [R·e^band_low, R·e^band_high].
    """

    t_fixed_s: float
    eta_mem: float
    beta_half_bytes: float
    eta_flop: float
    m_half_tokens: float
    omega: float
    rho_route: float = 1.0
    band_low: float = 0.0
    band_high: float = 0.0

    @property
    def vector(self) -> tuple[float, ...]:
        """The parameters in the order of estimate_rules.PARAMETERS."""
        return (self.t_fixed_s, self.eta_mem, self.beta_half_bytes, self.eta_flop,
                self.m_half_tokens, self.omega, self.rho_route)

    @classmethod
    def from_vector(cls, values, band=(0.0, 0.0)) -> Efficiency:
        return cls(*(float(v) for v in values), band_low=float(band[0]),
                   band_high=float(band[1]))


PARAMETER_NAMES = tuple(f.name for f in fields(Efficiency))[:7]
#: The share of HBM an engine gives its weights and cache under the estimate and the physical
#: curve (the limit takes all of it): :data:`~inference_math.fullmodel.branch.ENGINE_MEMORY_FRACTION`.
ENGINE_MEMORY_FRACTION = fm.ENGINE_MEMORY_FRACTION
#: Software stacks (the GPU's ``software_stack``) with efficiencies of their own; a GPU of any
#: other stack (TPUs, Groq: no public measurement was gathered) takes the first's.
FITTED_STACKS = ("cuda", "rocm")
#: The parameters each stack has its own value of: what the vendor's software sets (the fixed
#: time per step, the fractions of bandwidth and FLOP/s its kernels reach). The shapes of the
#: efficiency curves and the overlap are shared.
PER_STACK = ("t_fixed_s", "eta_mem", "eta_flop")


def stack_of(gpu) -> str:
    """The stack whose efficiencies the estimate uses on ``gpu`` (:data:`FITTED_STACKS`)."""
    stack = getattr(gpu, "software_stack", FITTED_STACKS[0])
    return stack if stack in FITTED_STACKS else FITTED_STACKS[0]


@cache
def fitted_record() -> dict:
    """The stored fit: parameters per stack, band and the fit's report
    (data/estimate_parameters.json)."""
    path = resources.files("inference_math") / "data" / PARAMETER_FILE
    return json.loads(path.read_text())


def fitted(gpu, engine: str | None = None) -> Efficiency:
    """The fitted efficiencies of ``gpu``'s software stack (:func:`stack_of`) and the band;
    with ``engine`` (a family of :mod:`~inference_math.serving.engines`), that engine's own on
    the stack when the fit gave it some (:func:`~inference_math.reality.estimate_fit.engine_record`), else the
    stack's (None: the pooled estimate)."""
    record = fitted_record()
    own = engine_entry(gpu, engine)
    if own is not None and own["own"]:
        return Efficiency(**own["parameters"], band_low=own["band"]["low"],
                          band_high=own["band"]["high"])
    return Efficiency(**record["parameters"][stack_of(gpu)], band_low=record["band"]["low"],
                      band_high=record["band"]["high"])


def engine_entry(gpu, engine: str | None) -> dict | None:
    """What the fit by engine stored of ``engine`` on ``gpu``'s stack (points, setups, values,
    band), or None (no engine, or no point of it on that stack)."""
    if engine is None:
        return None
    families = fitted_record().get("engines", {}).get("families", {})
    return families.get(engine, {}).get(stack_of(gpu))


def engine_label(gpu, engine: str | None) -> str:
    """How an output names the efficiencies it used: 'pooled', or the engine and whether it
    has values of its own on ``gpu``'s stack."""
    if engine is None:
        return "pooled"
    entry = engine_entry(gpu, engine)
    stack = stack_of(gpu)
    if entry is not None and entry["own"]:
        return f"{engine} (own efficiencies on {stack}, {entry['train_setups']} training setups)"
    setups = 0 if entry is None else entry["train_setups"]
    return (f"{engine} (the pooled {stack} efficiencies: {setups} training setups on {stack}, "
            "too few for its own)")


def _step_fn():
    """eq-est-step-latency, generated from its derivation into :mod:`.formulas_numpy`."""
    from ..fullmodel.formulas_numpy import estimate_step
    return estimate_step


@dataclass(frozen=True)
class RawTerms:
    """What the estimate reads of a pass, as arrays: the limit's memory and arithmetic times
    and the routed experts' share of the latter, the physical network time, bytes per GPU per
    layer β, the step's tokens m, a token's experts k, the expert-parallel degree and the
    experts hit (eq-est-experts-hit), the HBM the deployment needs and whether it fits."""

    memory: np.ndarray
    arithmetic: np.ndarray
    arithmetic_experts: np.ndarray
    network: np.ndarray
    beta: np.ndarray
    m: np.ndarray
    k: np.ndarray
    ep: np.ndarray
    hit: np.ndarray
    need: np.ndarray
    fits: np.ndarray

    def take(self, index) -> RawTerms:
        return RawTerms(**{k: np.asarray(v)[index] for k, v in asdict(self).items()})


def _branches(model, gpu, q, context, weight_bytes, logits, kv_scale, curves):
    return {curve: fm.compile_branch(model, gpu, False, q, context, weight_bytes, curve=curve,
                                     logits=logits, kv_scale=kv_scale) for curve in curves}


def compute_rates(model, gpu, weight_bytes: float | None = None) -> tuple[float, float, float]:
    """FLOP/s the limit divides by (the weights' precision), FLOP/s the weights' matmuls run at
    in an engine, and FLOP/s of attention over the cache.

    8- and 16-bit weights multiply at their own precision (FP8 and BF16 tensor cores). 4-bit
    weights are multiplied with wider activations: FP8 on a chip with FP4 tensor cores (its
    4-bit figure exceeds its 8-bit one: the B200, GB200, MI355X; W4A8, as the engines' MXFP4
    mixture-of-experts kernels run), BF16 on one without (the H100, H200, MI300X: W4A16, the
    weights widened in the kernel). Attention over the cache runs at 16 bits (FlashAttention's
    BF16 path). The limit keeps the weights' own rate: the most any kernel could do.
    """
    own = weight_bytes is None or weight_bytes == model.weight_bytes
    bits = model.weight_bits if own else round(8 * weight_bytes)
    limit_rate = gpu.flops(bits)
    if bits >= 8:
        weights_rate = limit_rate
    elif gpu.flops(bits) > gpu.flops(8):
        weights_rate = gpu.flops(8)
    else:
        weights_rate = gpu.flops(16)
    return limit_rate, weights_rate, gpu.flops(16)


def raw_terms(model, gpu, n, sigma, batch, q, context: float, weight_bytes: float | None = None,
              logits=None, kv_scale: float = 1.0, pp: float = 1.0) -> RawTerms:
    """The estimate's inputs for passes of ``batch`` sequences of ``q`` tokens at ``context``:
    the limit's arithmetic time re-timed at the rates of :func:`compute_rates` (the part over
    the cache is the arithmetic at ``context`` less the arithmetic at an empty cache)."""
    batch = np.asarray(batch, dtype=float)
    q = np.broadcast_to(np.asarray(q, dtype=float), batch.shape) if np.ndim(q) else float(q)
    peak, weights_rate, attention_rate = compute_rates(model, gpu, weight_bytes)
    # the limit's arithmetic with every FLOP at the peak, re-timed below at the engine's rates
    limit = fm.compile_branch(model, gpu, False, q, context, weight_bytes, curve="limit",
                              logits=logits, kv_scale=kv_scale, attention_flops=peak)
    br = {"limit": limit, **_branches(model, gpu, q, context, weight_bytes, logits, kv_scale,
                                      ("physical",))}
    args = (n, batch, pp, sigma)
    empty = fm.compile_branch(model, gpu, False, q, 0.0, weight_bytes, curve="limit",
                              logits=logits, kv_scale=kv_scale,
                              attention_flops=peak)["arithmetic"](*args)
    arithmetic = np.asarray(br["limit"]["arithmetic"](*args), dtype=float)
    arithmetic = (empty * peak / weights_rate + (arithmetic - empty) * peak / attention_rate)
    memory = np.asarray(br["limit"]["memory"](*args), dtype=float)
    need = np.asarray(br["physical"]["need"](*args), dtype=float)
    shape = np.broadcast_shapes(np.shape(memory), batch.shape)
    tokens = batch * q
    experts, k = routed_experts(model)
    routed = routed_active_params(model)
    # the routed experts' matmuls at the weights' engine rate (eq-phys-flop-time's experts)
    arithmetic_experts = 2 * routed * tokens / (np.asarray(n, dtype=float) * weights_rate)
    ep = expert_parallel(model, np.asarray(n, dtype=float) / pp, tokens / pp)
    from ..fullmodel.formulas_numpy import experts_hit
    hit = experts_hit(float(experts), float(k), tokens) if experts > 1 else np.ones_like(tokens)
    return RawTerms(
        memory=np.broadcast_to(memory, shape),
        arithmetic=np.broadcast_to(arithmetic, shape),
        arithmetic_experts=np.broadcast_to(arithmetic_experts, shape),
        network=np.broadcast_to(br["physical"]["network"](*args), shape),
        beta=np.broadcast_to(memory * gpu.bandwidth(capped=False) / model.layers, shape),
        m=np.broadcast_to(tokens, shape),
        k=np.broadcast_to(float(k), shape),
        ep=np.broadcast_to(ep, shape),
        hit=np.broadcast_to(hit, shape),
        need=np.broadcast_to(need, shape),
        fits=np.broadcast_to(need <= n * usable_bytes(gpu), shape))


def routed_experts(model) -> tuple[int, int]:
    """A model's routed experts per layer E and a token's k (1 and 1: a dense model); of a
    model with layer groups, its MoE groups' (they share E and k in every bundled config)."""
    if model.n_experts <= 1:
        return 1, 1
    return int(model.n_experts), int(model.n_active_experts)


def routed_active_params(model) -> float:
    """Routed-expert weights one token multiplies by, all layers (0: a dense model): the
    routed experts' share of eq-phys-flop-time's n_ff/s."""
    pieces = getattr(model, "pieces", None)
    if pieces is not None:
        return sum(p.ff_params / p.shape.sparsity for p in pieces if p.shape.n_experts > 1)
    return model.ff_params / model.sparsity if model.n_experts > 1 else 0.0


def expert_parallel(model, n_tp, tokens) -> np.ndarray:
    """The expert-parallel degree of eq-phys-expert-parallel: min(N_TP, E) once a micro-batch
    carries 2·s tokens, else 1 (every GPU holds a slice of every expert)."""
    experts, _ = routed_experts(model)
    on = np.asarray(tokens, dtype=float) >= fm.EP_MIN_TOKENS_PER_EXPERT * model.sparsity
    return np.where(on & (experts > 1), np.minimum(n_tp, experts), 1.0)


def fits(curve: str, model, gpu, n, sigma, batch, q, context: float,
         weight_bytes: float | None = None, logits=None, kv_scale: float = 1.0) -> np.ndarray:
    """Whether a pass's weights and cache at ``context`` fit the HBM ``curve`` lets them fill
    (eq-phys-memory-need; the estimate holds what the physical rules hold)."""
    batch = np.asarray(batch, dtype=float)
    q = np.broadcast_to(np.asarray(q, dtype=float), batch.shape) if np.ndim(q) else float(q)
    rules = "physical" if curve == "estimate" else curve
    branch = fm.compile_branch(model, gpu, False, q, context, weight_bytes, curve=rules,
                               logits=logits, kv_scale=kv_scale)
    ok = np.asarray(branch["feasible"](n, batch, 1.0, sigma), dtype=float) > 0
    return np.broadcast_to(ok, batch.shape)


def usable_bytes(gpu) -> float:
    """HBM per GPU the estimate lets an engine fill (:data:`ENGINE_MEMORY_FRACTION`)."""
    return ENGINE_MEMORY_FRACTION * gpu.hbm_bytes


def estimate_latency(raw: RawTerms, eff: Efficiency) -> np.ndarray:
    """eq-est-step-latency at the raw terms (infinite where the deployment does not fit)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value = _step_fn()(raw.memory, raw.arithmetic, raw.arithmetic_experts, raw.network,
                           raw.beta, raw.m, raw.k, raw.ep, raw.hit, *eff.vector)
    return np.where(raw.fits, value, np.inf)


def estimate_parts(raw: RawTerms, eff: Efficiency) -> dict[str, np.ndarray]:
    """The estimate's step split into the search's terms: the fixed time (as 'kernel'), the
    network time left serial, and memory and arithmetic at their reachable fractions (the
    arithmetic: the whole step's at eq-est-step-latency with no memory or network time)."""
    bw = eff.eta_mem * raw.beta / (raw.beta + eff.beta_half_bytes)
    zero = np.zeros(np.shape(raw.memory))
    vector = (*eff.vector[:5], 0.0, *eff.vector[6:])  # t_0 = 0 below, ω = 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        arithmetic = _step_fn()(zero, raw.arithmetic, raw.arithmetic_experts, zero, raw.beta,
                                raw.m, raw.k, raw.ep, raw.hit, 0.0, *vector[1:])
    return {"kernel": np.full(np.shape(raw.memory), eff.t_fixed_s),
            "network_latency": zero,
            "network_bandwidth": (1 - eff.omega) * raw.network,
            "memory": raw.memory / bw, "arithmetic": arithmetic}


def step(curve: str, model, gpu, n, sigma, batch, q, context: float,
         weight_bytes: float | None = None, logits=None, kv_scale: float = 1.0,
         eff: Efficiency | None = None,
         arithmetic=None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Latency of a pass under ``curve`` and its terms (kernel, network_latency,
    network_bandwidth, memory, arithmetic, and memory_peak and arithmetic_peak: the memory and
    arithmetic times at the peaks, before the estimate's efficiencies), as arrays over batch and
    q; infinite where the deployment does not fit.

    ``arithmetic``, if given, is the pass's arithmetic time at peak to use instead of its own
    (a mixed step's, summed from its decode tokens and its chunk: the FLOPs of a pass add);
    the curve 'paper' keeps its own, as the reference code times a mixed step."""
    batch = np.asarray(batch, dtype=float)
    if curve == "estimate":
        eff = fitted(gpu) if eff is None else eff
        raw = raw_terms(model, gpu, n, sigma, batch, q, context, weight_bytes, logits, kv_scale)
        if arithmetic is not None:
            raw = replace(raw, arithmetic=np.broadcast_to(arithmetic, np.shape(raw.memory)))
        parts = estimate_parts(raw, eff)
        parts.update(memory_peak=raw.memory, arithmetic_peak=raw.arithmetic)
        return estimate_latency(raw, eff), parts
    if curve not in fm.RULES:
        raise ValueError(f"unknown curve {curve!r} (known: {', '.join(CURVES)})")
    q = np.broadcast_to(np.asarray(q, dtype=float), batch.shape) if np.ndim(q) else float(q)
    branch = fm.compile_branch(model, gpu, False, q, context, weight_bytes, curve=curve,
                               logits=logits, kv_scale=kv_scale)
    args = (n, batch, 1.0, sigma)
    shape = batch.shape
    terms = {name: np.broadcast_to(np.asarray(branch[name](*args), dtype=float), shape)
             for name in ("kernel", "network_latency", "network_bandwidth", "memory",
                          "arithmetic")}
    latency = np.broadcast_to(np.asarray(branch["latency"](*args), dtype=float), shape)
    if arithmetic is not None and curve != "paper":
        terms["arithmetic"] = np.broadcast_to(np.asarray(arithmetic, dtype=float), shape)
        fits = np.asarray(branch["feasible"](*args), dtype=float) > 0
        with np.errstate(invalid="ignore", over="ignore"):
            value = fm._overlapped(branch["kernel"](*args), branch["network"](*args),
                                   terms["memory"], terms["arithmetic"], _omega(branch))
        latency = np.broadcast_to(np.where(fits, value, np.inf), shape)
    terms.update(memory_peak=terms["memory"], arithmetic_peak=terms["arithmetic"])
    return latency, terms


def _omega(branch) -> float:
    """The share ω of the network time a branch hides (eq-phys-forward-latency)."""
    if isinstance(branch, fm.GroupedBranch):
        return branch.omega
    return float(branch.constants[fm.CONSTANTS.index(N.omega_net)])


@dataclass(frozen=True)
class EstimateBranch:
    """The estimate in the full model's branch interface: ``branch[name](N, b, N_PP, σ)`` for
    'latency', the search's terms (:func:`estimate_parts`), and 'need' and 'feasible' (the
    physical rules': the estimate holds what they hold)."""

    model: object
    gpu: object
    q: object
    context: float
    weight_bytes: float | None
    logits: object
    kv_scale: float
    eff: Efficiency

    def __getitem__(self, name: str):
        def call(n, batch, pp, sigma):
            if name in ("need", "feasible"):
                branch = fm.compile_branch(self.model, self.gpu, False, self.q, self.context,
                                           self.weight_bytes, curve="physical",
                                           logits=self.logits, kv_scale=self.kv_scale)
                need = branch["need"](n, batch, pp, sigma)
                if name == "need":
                    return need
                return np.where(np.asarray(need) <= np.asarray(n) * usable_bytes(self.gpu),
                                branch["feasible"](n, batch, pp, sigma), 0.0)
            raw = raw_terms(self.model, self.gpu, n, sigma, batch, self.q, self.context,
                            self.weight_bytes, self.logits, self.kv_scale, pp)
            if name == "latency":
                return estimate_latency(raw, self.eff)
            return estimate_parts(raw, self.eff)[name]
        return call

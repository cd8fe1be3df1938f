"""A point prediction of the full model for a given deployment, instead of a search.

One replica of ``tp × pp`` GPUs decodes ``batch`` sequences together; the full model
(eq-full-forward-latency) is evaluated at N = tp·pp, b = batch, N_PP = pp and the attention
scale-down σ = 1 (attention on all the stage's GPUs), in the 1-D tensor-parallel layout unless
``two_d``. The expert-parallel degree is not free: eq-full-expert-parallel sets it from the
micro-batch (min(N_TP, E) once b/N_PP ≥ 2·s, else 1), and a requested ``ep`` is accepted only
when it equals that value.

Decode is evaluated at the mean context of a request, input plus half the output, unless a
context is given. Speculative decoding follows eq-spec-latency: with a drafter the target
verifies γ tokens (q = γ) and the drafter runs γ passes at q = 1 on the same instance; the γ in
1..GAMMA_MAX with the lowest latency per token is chosen, as the search does at each point.
Multi-token prediction (MTP) is a drafter-free speculative step: one target pass verifies
q = ⌈T⌉ tokens (the smallest pass that can yield T tokens on average) and yields T accepted
tokens, eq-spec-latency with t_Q = 0 and its expected tokens per step (1 − α^γ)/(1 − α) = T.
The MTP head's own pass (one layer) is not counted.

The full model's rules are a choice (``curve``): the estimate ('estimate', the default here and
on the command line: the physical rules at the efficiencies fitted on public measurements,
:mod:`.step_time`, with its band of output tokens per second per GPU in ``band_low`` and
``band_high``), the book's physical rules at the presets' caps ('physical'), the limit
('limit': physical rules at the hardware's peaks, network hidden behind compute, no launch
time) or the reference code's ('paper').

Whether the deployment fits, and the largest batch that does, count the weights and the KV cache
of the whole batch at the decode context: under the physical rules eq-phys-memory-need (every
micro-batch's cache, each entry held once per copy, eq-phys-kv-copies); under the paper's, its
weights plus every sequence's cache (the reference code checks one micro-batch's, which
undercounts the cache N_PP-fold when N_PP > 1).

A model with layer groups (:class:`~inference_math.presets.layered.LayeredModel`: DeepSeek-V3's
dense and MoE layers, gpt-oss's sliding and full attention) is timed by eq-full-grouped-latency;
a sliding-window group's cache stops growing at its window (``LayeredModel.kv_bytes_at``), and
``kv_bits`` rescales every group's cache.

Data-parallel attention (``dp_attention``, as DeepSeek's and SGLang's large expert-parallel
deployments run) is the physical rules' attention data-parallel degree σ = N_TP: every GPU of
the replica holds all of attention's weights and its own sequences' cache, attention needs no
all-reduce (eq-phys-memory-time, eq-phys-network-time, eq-phys-memory-need); the experts stay
parallel as eq-phys-expert-parallel sets. The reference code's rules have no such layout.

Prefill is eq-prefill-ttft: one prompt per micro-batch, q = input_len, ℓ = 0 (under the physical
rules logits for its last token only, q_LM = 1); the input price
is eq-prefill-input-cost and the disaggregated split eq-prefill-disagg-ratio at this request's
input:output ratio.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ..core.validation import InputError, of_kind, positive
from ..fullmodel import branch as fm
from ..fullmodel import formulas_numpy as gen
from ..fullmodel.search import BINDING, GAMMA_MAX, kv_scale
from ..fullmodel.spec_step import spec_latency_fn
from ..presets.hardware import GPU
from ..presets.layered import LayeredModel
from ..presets.models import Model
from .engines import check_engine

MAX_MTP_TOKENS = 16  # accepted tokens per MTP step; beyond any published draft length
KV_BITS = (1.0, 32.0)
DEFAULT_CURVE = "estimate"  # the command line's predict and serve default to it too


class DeploymentError(InputError):
    """Bad input for a deployment, naming the field (``field``: 'tp', 'batch', ...)."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.detail = message


def _positive(name: str, value, allow_zero: bool = False) -> float:
    try:
        return positive(name, value, allow_zero=allow_zero)
    except InputError as exc:
        raise DeploymentError(name, str(exc).removeprefix(f"{name} ")) from None


def _whole(name: str, value) -> int:
    number = _positive(name, value)
    if number != int(number):
        raise DeploymentError(name, f"must be a whole number, got {value!r}")
    return int(number)


class Precisions:
    """The bytes of a weight and of a cache element of a ``model`` at ``weight_bits`` and
    ``kv_bits`` (None: the model's own), shared by a Deployment and a serving Workload."""

    @property
    def weight_bytes(self) -> float:
        return self.model.weight_bytes if self.weight_bits is None else self.weight_bits / 8

    @property
    def flop_bits(self) -> int:
        """The weight bits that choose the GPU's FLOP/s (a LayeredModel's: its main format's)."""
        return self.model.weight_bits if self.weight_bits is None else round(self.weight_bits)

    @property
    def kv_scale(self) -> float:
        """The KV-cache bytes at ``kv_bits`` (default: the checkpoint's stated cache precision)
        over the model's own (its activation bytes)."""
        return kv_scale(self.model, self.kv_bits)


@dataclass(frozen=True)
class Deployment(Precisions):
    """One model replica: ``tp`` × ``pp`` GPUs decoding ``batch`` sequences together.

    ``weight_bits`` (default the model's) and ``kv_bits`` (default the model's activation
    bytes) set the bytes of a weight and of a KV-cache element; ``price`` is $/GPU-hour (default
    the GPU's); ``context`` the KV length of decode (default input_len + output_len/2).
    ``whole_degrees=False`` accepts fractional degrees and batches (the search's grid points) and
    skips the checks that the degrees divide the heads. Raises DeploymentError naming the field.
    """

    model: Model | LayeredModel
    gpu: GPU
    tp: float
    batch: float
    input_len: float
    output_len: float
    pp: float = 1
    ep: float | None = None
    weight_bits: int | None = None
    kv_bits: float | None = None
    drafter: Model | LayeredModel | None = None
    acceptance: float | None = None
    mtp_accepted: float | None = None
    price: float | None = None
    context: float | None = None
    two_d: bool = False
    sigma: float = 1.0
    prefill_batch: float = 1.0  # prompts per micro-batch of a prefill pass (input price only)
    whole_degrees: bool = True
    dp_attention: bool = False  # attention data-parallel over the replica (module docstring)
    curve: str = DEFAULT_CURVE  # 'estimate', 'physical', 'limit' or 'paper' (module docstring)
    engine: str | None = None  # an engine family's efficiencies (estimate only); None: pooled

    def __post_init__(self):
        of_kind("model", self.model, (Model, LayeredModel))
        of_kind("gpu", self.gpu, GPU)
        self.gpu.require_collective_model()
        whole = _whole if self.whole_degrees else _positive
        for name in ("tp", "pp", "batch"):
            whole(name, getattr(self, name))
        for name in ("input_len", "output_len", "prefill_batch", "sigma"):
            _positive(name, getattr(self, name))
        if self.context is not None:
            _positive("context", self.context, allow_zero=True)
        if self.price is not None:
            _positive("price", self.price)
        if self.weight_bits is not None:
            _positive("weight_bits", self.weight_bits)
        try:
            self.gpu.flops(self.flop_bits)
        except InputError as exc:
            if self.weight_bits is not None:
                raise DeploymentError("weight_bits", str(exc)) from None
            raise DeploymentError("model", f"{exc} (the mean of {self.model.name}'s weights); "
                                           f"set the weight bits") from None
        if self.kv_bits is not None:
            bits = _positive("kv_bits", self.kv_bits)
            if not KV_BITS[0] <= bits <= KV_BITS[1]:
                raise DeploymentError("kv_bits", f"must lie in [{KV_BITS[0]:g}, {KV_BITS[1]:g}], "
                                                 f"got {bits:g}")
        if self.curve not in (*fm.RULES, "estimate"):
            raise DeploymentError("curve", f"must be one of estimate, {', '.join(fm.RULES)}, "
                                           f"got {self.curve!r}")
        check_engine(self.engine, self.curve, DeploymentError)
        if self.dp_attention and self.curve == "paper":
            raise DeploymentError("dp_attention", "data-parallel attention is a layout of the "
                                                  "physical rules; the paper's curve has none")
        self._check_speculation()
        if self.whole_degrees and not self.dp_attention:
            self._check_heads()
        if self.dp_attention and self.pp != 1:
            raise DeploymentError("pp", f"data-parallel attention is modelled in one stage, "
                                        f"got {self.pp:g}")
        if self.pp > self.model.layers:
            raise DeploymentError("pp", f"{self.pp:g} pipeline stages exceed the "
                                        f"{self.model.layers} layers of {self.model.name}")
        if self.pp > self.batch:
            raise DeploymentError("pp", f"{self.pp:g} pipeline stages need at least one sequence "
                                        f"per micro-batch, got a batch of {self.batch:g}")
        if self.ep is not None:
            _positive("ep", self.ep)
            rule = self.expert_parallel
            if self.ep != rule:
                raise DeploymentError("ep", f"the full model sets the expert-parallel degree by "
                                            f"eq-full-expert-parallel: {rule:g} for {self.model.name} "
                                            f"at tp {self.tp:g} and a micro-batch of "
                                            f"{self.batch / self.pp:g}, got {self.ep:g}")

    def _check_speculation(self):
        if self.drafter is not None:
            of_kind("drafter", self.drafter, (Model, LayeredModel))
            try:
                self.gpu.flops(self.drafter.weight_bits)
            except InputError as exc:
                raise DeploymentError("drafter", str(exc)) from None
            if self.mtp_accepted is not None:
                raise DeploymentError("mtp_accepted", "MTP needs no drafter: give one of them")
            if self.acceptance is None:
                raise DeploymentError("acceptance", "a drafter needs an acceptance probability")
        if self.acceptance is not None:
            if self.drafter is None:
                raise DeploymentError("acceptance", "needs a drafter")
            value = _positive("acceptance", self.acceptance, allow_zero=True)
            if not value < 1:
                raise DeploymentError("acceptance", f"must be in [0, 1), got {value:g}")
        if self.mtp_accepted is not None:
            value = _positive("mtp_accepted", self.mtp_accepted)
            if not 1 <= value <= MAX_MTP_TOKENS:
                raise DeploymentError("mtp_accepted", f"accepted tokens per step must lie in "
                                                      f"[1, {MAX_MTP_TOKENS}], got {value:g}")

    def _check_heads(self):
        """Tensor parallelism splits the query heads and splits (or replicates) the KV heads, of
        every layer group."""
        tp, name = int(self.tp), self.model.name
        for shape in _shapes(self.model):
            if shape.n_q_heads % tp:
                raise DeploymentError("tp", f"{tp} does not divide the {shape.n_q_heads} query "
                                            f"heads of {name}")
            kv_heads = 1 if shape.is_mla else shape.n_q_heads // shape.group_size
            if kv_heads % tp and tp % kv_heads:
                raise DeploymentError("tp", f"{tp} neither divides the {kv_heads} KV heads of "
                                            f"{name} nor is a multiple of them")

    @property
    def gpus(self) -> float:
        return self.tp * self.pp

    @property
    def attention_dp(self) -> float:
        """σ: attention's data-parallel degree (N_TP with dp_attention, else the given σ)."""
        return self.tp if self.dp_attention else self.sigma


    @property
    def kv_bytes_per_token(self) -> float:
        """Bytes one token adds to a sequence's cache (every window still open)."""
        return self.model.kv_bytes_per_token * self.kv_scale

    @property
    def cached_model(self) -> Model | LayeredModel:
        """The model with its cache at ``kv_bits``: a LayeredModel's groups rescaled (a uniform
        Model's cache is rescaled in its branch's constants)."""
        if not isinstance(self.model, LayeredModel) or self.kv_scale == 1.0:
            return self.model
        pieces = tuple(replace(piece, kv_bytes_per_token=piece.kv_bytes_per_token * self.kv_scale,
                               window_bytes_per_token=piece.window_bytes_per_token
                               * self.kv_scale) for piece in self.model.pieces)
        return replace(self.model, pieces=pieces)

    def kv_bytes_at(self, context: float) -> float:
        """Cache bytes of one sequence of ``context`` tokens, windows capping their groups."""
        if isinstance(self.model, LayeredModel):
            return self.cached_model.kv_bytes_at(context)
        return self.kv_bytes_per_token * context

    @property
    def weights_bytes(self) -> float:
        """Bytes of all weights: the model's own (a LayeredModel's groups each at their bytes),
        or every parameter at ``weight_bits``."""
        if self.weight_bits is None:
            return self.model.weights_bytes
        return self.model.total_params * self.weight_bytes

    @property
    def decode_context(self) -> float:
        return self.input_len + self.output_len / 2 if self.context is None else self.context

    @property
    def usd_per_hour(self) -> float:
        return self.gpu.price_per_hour if self.price is None else self.price

    @property
    def expert_parallel(self) -> float:
        """eq-full-expert-parallel (paper) or eq-phys-expert-parallel at this deployment's degree
        and decode micro-batch."""
        return fm.expert_parallel_value(self.model, self.tp, self.batch / self.pp)


@dataclass(frozen=True)
class Prediction:
    """What the full model predicts for a Deployment; None where a value does not exist
    (a deployment that does not fit has no latency; an empty context bounds no batch)."""

    tpot_ms: float | None
    tokens_per_s_per_user: float | None
    output_tokens_per_s_per_gpu: float | None
    ttft_ms: float | None
    usd_per_mtok_output: float | None
    usd_per_mtok_input: float | None
    fits: bool
    max_batch: int | None
    binding_decode: str | None
    binding_prefill: str | None
    gpus: float
    context: float
    n_ep: float
    gamma: float  # tokens verified per target pass (1: no speculation)
    memory_need_gb: float
    memory_gb: float
    weights_gb: float
    prefill_gpus_per_decode_gpu: float | None  # eq-prefill-disagg-ratio at input_len:output_len
    prefill_pass_ms: float | None  # one prefill pass of prefill_batch prompts per micro-batch
    binding_prefill_pass: str | None  # its binding term
    mfu: float | None  # FLOPs of the accepted tokens over the peaks' (_mfu), as the search's MFU
    curve: str = DEFAULT_CURVE  # the rules the numbers follow (Deployment.curve)
    band_low: float | None = None  # the estimate's band of output tokens/s per GPU
    band_high: float | None = None
    decode_terms_ms: dict = field(default_factory=dict)
    prefill_terms_ms: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _shapes(model) -> list[Model]:
    """The uniform shapes of a model: itself, or each layer group's."""
    if isinstance(model, LayeredModel):
        return [piece.shape for piece in model.pieces]
    return [model]


TERMS = ("kernel", "network_latency", "network_bandwidth", "memory", "arithmetic")


def _branch(dep: Deployment, model, q: float, context: float, weight_bytes: float,
            prefill: bool = False) -> fm.Branch | fm.GroupedBranch:
    """The deployment's branch at q tokens per pass; a prefill pass computes one token's
    logits (q_LM = 1), decode and verification every token's."""
    if dep.curve == "estimate":
        from . import step_time as st
        return st.EstimateBranch(model, dep.gpu, q, context, weight_bytes,
                                 1.0 if prefill else None,
                                 dep.kv_scale if model is dep.model else 1.0,
                                 st.fitted(dep.gpu, dep.engine))
    return fm.compile_branch(model, dep.gpu, dep.two_d, q, context, weight_bytes,
                             curve=dep.curve, logits=1.0 if prefill else None,
                             kv_scale=dep.kv_scale if model is dep.model else 1.0)


def _terms(branch, args: tuple) -> dict[str, float]:
    return {name: float(branch[name](*args)) for name in (*TERMS, "latency")}


def prefill_terms(dep: Deployment) -> dict[str, float]:
    """The terms of eq-prefill-ttft for one prompt of the deployment, in seconds, whether or not
    the deployment fits ('latency' is then infinite; the other terms are still the model's)."""
    branch = _branch(dep, dep.model, dep.input_len, 0.0, dep.weight_bytes, prefill=True)
    return _terms(branch, (dep.gpus, dep.pp, dep.pp, dep.attention_dp))


def _memory(dep: Deployment, branch, context: float) -> tuple[float, float, int | None]:
    """HBM the deployment needs at its batch, the weights' share, and the largest batch that
    fits (None: the cache does not grow with the batch)."""
    n, pp, sigma = dep.gpus, dep.pp, dep.attention_dp
    capacity = n * _usable(dep)
    if dep.curve == "paper":
        per_sequence = dep.kv_bytes_at(context)
        weights = dep.weights_bytes
        top = None if per_sequence <= 0 else max(0, math.floor((capacity - weights) / per_sequence))
        return weights + per_sequence * dep.batch, weights, top

    def need(batch):
        return float(branch["need"](n, batch, pp, sigma))
    weights = need(0.0)
    if need(1.0) <= weights:
        return need(dep.batch), weights, None
    if need(1.0) > capacity:
        return need(dep.batch), weights, 0
    low, high = 1, 2
    while need(float(high)) <= capacity:  # eq-phys-memory-need grows with the batch
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if need(float(middle)) <= capacity else (low, middle)
    return need(dep.batch), weights, low


def _usable(dep: Deployment) -> float:
    """HBM per GPU the deployment's curve lets it fill: all of it under the limit and the
    paper's rules, an engine's share (step_time.ENGINE_MEMORY_FRACTION) under the estimate
    and the physical rules."""
    from ..fullmodel.branch import hbm_capacity
    return hbm_capacity(dep.gpu, "physical" if dep.curve == "estimate" else dep.curve)


def binding_term(terms: dict[str, float], drafting: float = 0.0) -> str:
    """The largest share of a step (the search's BINDING names): kernel launches, collective
    latency, network bandwidth, the larger of memory and arithmetic, or the drafter's passes."""
    overlap = max(terms["memory"], terms["arithmetic"])
    shares = [terms["kernel"], terms["network_latency"], terms["network_bandwidth"],
              overlap if terms["memory"] >= terms["arithmetic"] else -1.0,
              overlap if terms["memory"] < terms["arithmetic"] else -1.0, drafting]
    return BINDING[int(np.argmax(shares))]


def _float64(fn):
    """A generated function taking its arguments as float64, as SymPy's compiled ones did."""
    def call(*values):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(*(np.asarray(v, dtype=float) for v in values))
    return call


def _cost_fns():
    """eq-search-cost, eq-prefill-input-cost and eq-prefill-disagg-ratio, generated from their
    derivations into :mod:`inference_math.fullmodel.formulas_numpy`."""
    return _float64(gen.cost), _float64(gen.input_cost), _float64(gen.disaggregated_ratio)


def _mtp_latency(target: float, accepted: float) -> float:
    """Latency per token of an MTP step: one target pass yielding T tokens, t_P / T (eq-spec-latency
    with t_Q = 0, whose expected tokens per step (1 − α^γ)/(1 − α) is T)."""
    return target / accepted


def predict(dep: Deployment) -> Prediction:
    """The full model at one deployment (see the module docstring); never searches."""
    of_kind("deployment", dep, Deployment)
    n, batch, pp, sigma = dep.gpus, dep.batch, dep.pp, dep.attention_dp
    args = (n, batch, pp, sigma)
    w, ctx_decode = dep.weight_bytes, dep.decode_context
    base = _branch(dep, dep.model, 1.0, ctx_decode, w)
    need, weights, max_batch = _memory(dep, base, ctx_decode)
    capacity = n * _usable(dep)
    fits = bool(base["feasible"](*args) > 0) and need <= capacity
    common = dict(gpus=n, context=ctx_decode, n_ep=dep.expert_parallel,
                  memory_need_gb=need / 1e9, memory_gb=capacity / 1e9, weights_gb=weights / 1e9,
                  max_batch=max_batch, fits=fits, curve=dep.curve)
    if not fits:
        return Prediction(tpot_ms=None, tokens_per_s_per_user=None,
                          output_tokens_per_s_per_gpu=None, ttft_ms=None,
                          usd_per_mtok_output=None, usd_per_mtok_input=None,
                          binding_decode=None, binding_prefill=None, gamma=1,
                          prefill_gpus_per_decode_gpu=None, prefill_pass_ms=None, binding_prefill_pass=None,
                          mfu=None, **common)
    token, steps, terms, drafting = _decode(dep, base, args, ctx_decode, w)
    prompt = _branch(dep, dep.model, dep.input_len, 0.0, w, prefill=True)
    pre_terms = _terms(prompt, (n, pp, pp, sigma))  # one prompt per micro-batch: b = N_PP
    ttft = pre_terms["latency"]
    prompts = pp * dep.prefill_batch
    pass_terms = pre_terms if dep.prefill_batch == 1 else _terms(prompt, (n, prompts, pp, sigma))
    pre_pass = pass_terms["latency"]
    out_cost, in_cost, ratio = _cost_fns()
    usd_out = float(out_cost(n, token, batch, dep.usd_per_hour))
    usd_in = float(in_cost(n, pre_pass, prompts, dep.input_len, dep.usd_per_hour))
    mfu = _mfu(dep, args, ctx_decode, w, token)
    return Prediction(
        mfu=mfu, tpot_ms=token * 1e3, tokens_per_s_per_user=1.0 / token,
        output_tokens_per_s_per_gpu=batch / (n * token), ttft_ms=ttft * 1e3,
        usd_per_mtok_output=usd_out, usd_per_mtok_input=usd_in,
        binding_decode=binding_term(terms, drafting), binding_prefill=binding_term(pre_terms),
        gamma=steps, prefill_pass_ms=pre_pass * 1e3, binding_prefill_pass=binding_term(pass_terms),
        prefill_gpus_per_decode_gpu=float(ratio(dep.input_len / dep.output_len, usd_in, usd_out)),
        decode_terms_ms={k: v * 1e3 for k, v in terms.items()},
        prefill_terms_ms={k: v * 1e3 for k, v in pre_terms.items()},
        **_band(dep, batch / (n * token)), **common)


def _mfu(dep: Deployment, args: tuple, context: float, w: float, token: float) -> float:
    """FLOPs of a decode pass's accepted tokens over what the GPUs' peaks could do in the time per
    token, with the FLOPs the curve times: eq-full-flops at the weights' peak for the paper's
    rules; for the others eq-phys-flop-time's, each at its peak rate (the limit's arithmetic
    time, which no pass undercuts, so at most 1)."""
    if dep.curve == "paper":
        flops = float(fm.forward_flops_fn(dep.model)(dep.batch, 1.0, context))
        return flops / (dep.gpus * dep.gpu.flops(dep.flop_bits) * token)
    busy = fm.compile_branch(dep.model, dep.gpu, dep.two_d, 1.0, context, w, curve="limit",
                             kv_scale=dep.kv_scale)["arithmetic"](*args)
    return float(busy) / token


def _band(dep: Deployment, rate: float) -> dict:
    """The estimate's band of output tokens/s per GPU (the 10th-90th percentiles of its
    out-of-fold errors)."""
    if dep.curve != "estimate":
        return {}
    from . import step_time as st
    eff = st.fitted(dep.gpu, dep.engine)
    return {"band_low": rate * math.exp(eff.band_low), "band_high": rate * math.exp(eff.band_high)}


def _decode(dep: Deployment, base, args: tuple, context: float, w: float):
    """Latency per output token, tokens verified per pass, the target's terms and the drafter's
    share of a step."""
    if dep.mtp_accepted is not None:
        q = math.ceil(dep.mtp_accepted)
        terms = _terms(_branch(dep, dep.model, float(q), context, w), args)
        return _mtp_latency(terms["latency"], dep.mtp_accepted), q, terms, 0.0
    terms = _terms(base, args)
    if dep.drafter is None or dep.acceptance == 0:
        return terms["latency"], 1, terms, 0.0
    draft = float(_branch(dep, dep.drafter, 1.0, context, dep.drafter.weight_bytes)["latency"](
        *args))
    best = (terms["latency"], 1, terms, 0.0)
    if not math.isfinite(draft):
        return best
    for g in range(2, GAMMA_MAX + 1):
        target = _terms(_branch(dep, dep.model, float(g), context, w), args)
        per_token = float(spec_latency_fn(target["latency"], draft, g, dep.acceptance))
        if per_token < best[0]:
            best = (per_token, g, target, g * draft)
    return best

"""The full model's branches at a model's and a GPU's numbers, evaluated without SymPy.

A *branch* is one parallel layout of eq-full-forward-latency (eq-phys-forward-latency under the
physical rules and the limit; eq-full-grouped-latency for a model with layer groups) with the
model's and the GPU's numbers bound: ``compile_branch(...)[name](N, b, N_PP, σ)``. Its terms are
the NumPy functions :mod:`inference_math.codegen.full_model_codegen` generated from
:func:`inference_math.fullmodel.terms.term_expression` into the committed modules
``full_model_numpy*.py`` (a test checks they are current), and the numbers are keyed by registry
names (:mod:`inference_math.core.names`, in the order of :data:`CONSTANTS`), so evaluating the
model imports no SymPy. The derivations themselves are in :mod:`inference_math.fullmodel.full_model`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..core import names as N
from ..presets.layered import LayeredModel, piece_context

KERNELS_PER_LAYER = 4  # serial matmuls per layer, each paying one launch (reference code)
EP_MIN_TOKENS_PER_EXPERT = 2  # expert parallelism switches on at a micro-batch of 2·s


@dataclass(frozen=True)
class Structure:
    """What changes the shape of the latency expression (not just its numbers)."""

    two_d: bool
    moe: bool
    mla: bool
    collective_model: str  # 'nccl' or 'torus'
    rules: str = "paper"  # 'paper' (the reference code's), 'physical' or 'limit': RULES


BRANCH_ARGS = (N.n_gpu, N.b, N.n_pp, N.sigma_attn)
CONSTANTS = (N.q_len, N.ctx, N.p, N.p_act, N.d_model, N.d_ff, N.n_layers, N.n_q, N.g, N.d_head,
             N.n_experts, N.n_active, N.s, N.n_ff_in, N.n_ff_out, N.vocab, N.c_kv, N.c_q, N.n_attn, N.n_ff,
             N.n_unembed, N.kv_bytes, N.flops, N.hbm_bw, N.hbm_cap, N.t_kernel, N.node_size, N.bw_ar_intra,
             N.bw_ar_inter, N.n_sh, N.d_ff_shared, N.xi_ep, N.omega_net, N.q_lm, N.p_disp, N.p_emb,
             N.k_top, N.kv_idx, N.f_idx, N.w_idx, N.kv_win, N.ctx_win, N.r_cmp, N.st_cmp, N.xi_idx,
             N.d_rope, N.d_nope, N.xi_mha, N.flops_attn, N.p_attn, N.p_sh,
             N.flops_proj)


# The limit counts no kernel launch: a captured graph launches its kernels back to back, and
# programmatic dependent launch overlaps each kernel's start with the previous one's end; a
# launch time is a measured property of a software stack, not a floor of the hardware.
LIMIT_KERNEL_S = 0.0
#: The share of HBM an engine gives its weights and cache under the curves 'physical' and
#: 'estimate' (the limit, a bound, takes all of it): vLLM's default ``gpu_memory_utilization``,
#: 0.9 (github:vllm-project/vllm:vllm/config/cache.py@c1d86421174a87056edc90a41dc9942391509e84);
#: the rest holds activations, CUDA graphs and the allocator's slack. Not fitted.
ENGINE_MEMORY_FRACTION = 0.9


def hbm_capacity(gpu, curve: str) -> float:
    """HBM per GPU that weights and cache may fill under ``curve``: all of it in the limit and
    the paper's rules, :data:`ENGINE_MEMORY_FRACTION` of it under the physical rules."""
    return gpu.hbm_bytes * (ENGINE_MEMORY_FRACTION if curve == "physical" else 1.0)


def model_values(model, gpu, weight_bytes: float | None = None,
                 flop_bits: int | None = None, curve: str = "paper") -> dict:
    """Numbers for the model and GPU symbols: capped FLOP/s and bandwidth, as the paper uses
    (the curves 'paper' and 'physical'), or their peaks and no launch time ('limit').

    The FLOP/s are those of ``flop_bits``-bit weights (default: the bytes per weight, rounded).
    The expert dispatch travels in FP8 (p_disp = 1) where the weights are 8-bit or narrower,
    as DeepSeek's engine sends it, else at the activations' bytes; the limit always in FP8.
    No network time is hidden (ω = 0) except in the limit (ω = 1).
    """
    w = model.weight_bytes if weight_bytes is None else weight_bytes
    values = {sym: 0.0 for sym in CONSTANTS}
    values.update(model.name_values())
    intra = gpu.intranode_allreduce_bandwidth
    limit = curve == "limit"
    values.update({
        N.p: w, N.n_attn: model.attention_params, N.n_ff: model.ff_params,
        N.n_unembed: model.embedding_params, N.kv_bytes: model.kv_bytes_per_token,
        N.flops: gpu.flops(round(8 * w) if flop_bits is None else flop_bits, capped=not limit),
        N.hbm_bw: gpu.bandwidth(capped=not limit),
        N.hbm_cap: hbm_capacity(gpu, curve), N.t_kernel: LIMIT_KERNEL_S if limit else gpu.kernel_launch_s,
        N.node_size: gpu.node_size,
        N.bw_ar_intra: math.inf if intra is None else intra,
        N.bw_ar_inter: gpu.internode_allreduce_bandwidth,
        N.n_sh: 0.0, N.d_ff_shared: model.d_ff, N.xi_ep: 1.0 if model.experts_spread else 0.0,
        N.omega_net: 1.0 if limit else 0.0, N.q_lm: 1.0,
        N.p_disp: 1.0 if limit or w <= 1 else model.activation_bytes, N.p_emb: w,
        N.p_attn: w, N.p_sh: w,
        # dense attention: every cached token read, no indexer (eq-sparse-mean-read at k = ∞)
        N.k_top: math.inf, N.kv_idx: 0.0, N.f_idx: 0.0, N.w_idx: 0.0,
        # no compression, window or compressor (eq-compressed-read at r_c = 1, M_W = S_cmp = 0)
        N.kv_win: 0.0, N.ctx_win: 0.0, N.r_cmp: 1.0, N.st_cmp: 0.0, N.xi_idx: 1.0,
    })
    return values


def attention_rate(gpu, weight_bits: int, kv_bits: float, curve: str = "paper") -> float:
    """FLOP/s of attention over the cache, C_attn of eq-phys-flop-time: the rate of the cache's
    precision, 8-bit for a cache of 8 bits or fewer (FP8 attention kernels), else 16-bit
    (FlashAttention's and FlashMLA's BF16), at the preset's cap; in the limit at the peak, and
    no slower than the weights' peak (a kernel may cast the cache to the weights' format). The
    paper's rules time every FLOP at the weights' rate and leave it unused."""
    width = 8 if kv_bits <= 8 else 16
    table = gpu.flops_by_weight_bits
    if width not in table:
        return gpu.flops(weight_bits, capped=curve != "limit")
    if curve == "limit":
        return max(gpu.flops(width), gpu.flops(weight_bits))
    return gpu.flops(width, capped=True)


def projection_rate(gpu, weight_bits: int, attention_bits: float, curve: str = "paper") -> float:
    """FLOP/s of attention's projections, C_proj of eq-phys-flop-time: the rate of the bits
    attention's weights are stored in (gpt-oss's BF16 beside its MXFP4 experts), at the preset's
    cap; the weights' rate where the GPU states none for them, and in the limit no slower than
    the weights' peak (an engine may store them as the experts are). The paper's rules leave it
    unused."""
    bits = round(attention_bits)
    if curve == "paper" or bits == weight_bits or bits not in gpu.flops_by_weight_bits:
        return gpu.flops(weight_bits, capped=curve != "limit")
    if curve == "limit":
        return max(gpu.flops(bits), gpu.flops(weight_bits))
    return gpu.flops(bits, capped=True)


def _set_attention_rate(values: dict, gpu, weight_bits: int, activation_bytes: float,
                        kv_scale: float, curve: str, rate: float | None) -> None:
    """C_attn at the cache's bits (its activation bytes rescaled by ``kv_scale``), or ``rate``."""
    values[N.flops_attn] = (attention_rate(gpu, weight_bits, 8 * activation_bytes * kv_scale,
                                           curve) if rate is None else rate)
    values[N.flops_proj] = projection_rate(gpu, weight_bits, 8 * values[N.p_attn], curve)


def structure_of(model, gpu, two_d: bool, curve: str = "paper") -> Structure:
    return Structure(two_d=two_d, moe=model.n_experts > 1, mla=model.is_mla,
                     collective_model=gpu.collective_model, rules=curve)


TERM_NAMES = ("kernel", "network_attention", "network_rest", "memory_attention", "memory_rest",
              "arithmetic_attention", "arithmetic_rest", "need", "network", "memory", "arithmetic",
              "latency", "feasible", "fixed", "network_latency", "network_bandwidth", "latency_lower",
              "pipeline", "pipeline_latency", "pipeline_bandwidth")
# What the search evaluates over the whole grid at σ = 1, as one function sharing subexpressions:
# the lower bound over σ and the attention all-reduces (lower bound + them = latency at σ = 1).
SEARCH_TERMS = ("latency_lower", "network_attention")
# Under the physical rules σ changes more than the attention all-reduces, so the search
# evaluates the latency at σ = 1 itself.
SEARCH_TERMS_PHYSICAL = ("latency_lower", "latency")
# What a GroupedBranch sums over its groups, as one function sharing subexpressions.
PARTS = ("kernel", "network_rest", "network_attention", "memory", "arithmetic", "need", "pipeline")
PARTS_PHYSICAL = PARTS + ("memory_floor", "need_floor")
# The rules a structure's terms follow: the reference code's, the book's physical rules at the
# presets' caps, and the limit (the physical rules at the hardware's peaks, at line rate).
RULES = ("paper", "physical", "limit")
TERM_NAMES_PHYSICAL = TERM_NAMES + ("memory_floor", "need_floor")
STRUCTURES = tuple(Structure(two_d, moe, mla, model, rules) for rules in RULES
                   for model in ("nccl", "torus")
                   for moe in (False, True) for mla in (False, True) for two_d in (False, True))


def search_terms(structure: Structure) -> tuple[str, ...]:
    return SEARCH_TERMS if structure.rules == "paper" else SEARCH_TERMS_PHYSICAL


def parts_of(structure: Structure) -> tuple[str, ...]:
    return PARTS if structure.rules == "paper" else PARTS_PHYSICAL


def term_names(structure: Structure) -> tuple[str, ...]:
    return TERM_NAMES if structure.rules == "paper" else TERM_NAMES_PHYSICAL


def compile_term(structure: Structure, name: str) -> callable:
    """NumPy function of (N, b, N_PP, σ, *CONSTANTS) for one term (see :func:`term_expression`),
    for 'search' (of a 1-D structure) the tuple of :data:`SEARCH_TERMS` of the 1-D and then of
    the 2-D layout, and for 'parts' the tuple of :data:`PARTS`.

    The function is generated from :func:`term_expression` ahead of time by
    :mod:`inference_math.codegen.full_model_codegen` into :mod:`inference_math.fullmodel.full_model_numpy`, so
    evaluating the model needs no SymPy work.
    """
    return _generated(structure.rules).TERMS[(structure.two_d, structure.moe, structure.mla,
                                              structure.collective_model, structure.rules, name)]


@cache
def _generated(rules: str):
    """The generated module of one set of rules, imported on first use."""
    import importlib
    suffix = "" if rules == "paper" else f"_{rules}"
    return importlib.import_module(f"{__package__}.full_model_numpy{suffix}")


def compile_branch(model, gpu, two_d: bool, q: float = 1.0, context: float = 0.0,
                   weight_bytes: float | None = None, curve: str = "paper",
                   logits: float | None = None, kv_scale: float = 1.0,
                   attention_flops: float | None = None) -> Branch | GroupedBranch:
    """Functions of (N, b, N_PP, σ) for one model, GPU, layout, tokens per pass q and context ℓ.

    ``compile_branch(...)["latency"](N, b, N_PP, σ)``; any name of :func:`compile_term`. ``q``
    may be an array, whose shape is then broadcast in front of the arguments'. A model with
    layer groups (:class:`~inference_math.presets.layered.LayeredModel`) gets a
    :class:`GroupedBranch`, with the same names. ``curve`` picks the rules (:data:`RULES`);
    ``logits`` is q_LM, the tokens per sequence whose logits the pass computes (default q; 1
    for a prefill pass); ``kv_scale`` multiplies the cache's bytes (another KV precision);
    ``attention_flops`` sets C_attn (default :func:`attention_rate` at the cache's bits).
    """
    if curve not in RULES:
        raise ValueError(f"unknown curve {curve!r} (known: {', '.join(RULES)})")
    options = (q, context, weight_bytes, curve, logits, kv_scale, attention_flops)
    if isinstance(model, LayeredModel):
        layouts = {layout: [_piece_branch(piece, model, gpu, layout, *options)
                            for piece in model.pieces] for layout in (False, True)}
        return GroupedBranch(layouts[two_d], layouts[True] if not two_d else None,
                             hbm_capacity(gpu, curve), curve)
    values = model_values(model, gpu, weight_bytes, curve=curve)
    values.update({N.q_len: q, N.ctx: float(context), N.kv_bytes: values[N.kv_bytes] * kv_scale})
    _set_attention_rate(values, gpu, round(8 * values[N.p]), model.activation_bytes, kv_scale,
                        curve, attention_flops)
    return Branch(structure_of(model, gpu, two_d, curve), _constants(values, q, logits))


def _constants(values: dict, q, logits: float | None = None) -> tuple:
    lm = q if logits is None else logits
    return tuple(q if sym == N.q_len and isinstance(q, np.ndarray)
                 else lm if sym == N.q_lm and isinstance(lm, np.ndarray)
                 else float(lm) if sym == N.q_lm else float(values[sym])
                 for sym in CONSTANTS)


def _piece_branch(piece, model, gpu, two_d: bool, q, context: float,
                  weight_bytes: float | None, curve: str = "paper", logits: float | None = None,
                  kv_scale: float = 1.0, attention_flops: float | None = None) -> Branch:
    """One layer group of a LayeredModel as a uniform Branch: its own counts, its cache capped
    at its window, and the FLOP/s of the model's weights (not of the group's)."""
    own = weight_bytes is None or weight_bytes == model.weight_bytes
    bits = model.weight_bits if own else round(8 * weight_bytes)
    values = model_values(piece.shape, gpu, piece.weight_bytes if own else weight_bytes, bits,
                          curve=curve)
    values.update({
        N.q_len: q, N.ctx: piece_context(piece, float(context)),
        N.n_attn: piece.attention_params, N.n_ff: piece.ff_params,
        N.kv_bytes: piece.kv_bytes_per_token * kv_scale, N.n_sh: float(piece.n_shared),
        N.d_ff_shared: float(piece.d_shared),
        # a query of a sliding-window group attends to at most its window, its pass's own
        # tokens too: eq-sparse-mean-read's min(ℓ + j, k) with k the window (the paper's rules
        # count the pass's causal mean, as the reference code does; a chunked group's query
        # sees only its chunk, counted as the causal mean, which overcounts a pass longer than
        # one chunk)
        N.k_top: (min(piece.top_k, piece.window) if curve != "paper" and piece.sliding
                  else piece.top_k),
        N.kv_idx: piece.indexer_bytes_per_token,
        N.f_idx: piece.indexer_flops, N.w_idx: piece.indexer_params,
        N.kv_win: piece.window_bytes_per_token * kv_scale, N.ctx_win: piece.window_tokens,
        N.r_cmp: piece.compression,
        # the compressors' pending state as the reference code holds it; the limit counts none
        # (a running softmax pools a window in a few vectors, whatever r_c)
        N.st_cmp: 0.0 if curve == "limit" else piece.state_bytes,
        N.xi_idx: 1.0 if piece.indexer_replicated else 0.0,
    })
    if curve != "limit" and not own:
        values[N.p_disp] = 1.0 if weight_bytes <= 1 else piece.shape.activation_bytes
    elif curve != "limit":
        values[N.p_disp] = 1.0 if model.weight_bits <= 8 else piece.shape.activation_bytes
    # the embeddings at their own bytes (BF16 beside FP8 layers), every weight at weight_bytes
    values[N.p_emb] = model.embedding_bytes if own else weight_bytes
    if own and curve != "paper" and piece.attention_bytes is not None:
        # each block at its own bytes (eq-phys-memory-time); the paper's rules read every
        # weight of a group at its mean bytes, as the reference code's one p does
        values.update({N.p_attn: piece.attention_bytes, N.p: piece.ff_bytes,
                       N.p_sh: piece.shared_bytes})
    _set_attention_rate(values, gpu, bits, piece.shape.activation_bytes, kv_scale, curve,
                        attention_flops)
    return Branch(structure_of(piece.shape, gpu, two_d, curve), _constants(values, q, logits))


@dataclass(frozen=True)
class Branch:
    """A structure with its numbers bound: ``branch[name]`` is a function of (N, b, N_PP, σ)."""

    structure: Structure
    constants: tuple

    def __getitem__(self, name: str):
        fn = compile_term(self.structure, name)
        constants = self.constants

        def call(n, batch, pp, sigma):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return fn(n, batch, pp, sigma, *constants)
        return call


_ADDITIVE = ("kernel", "network_attention", "network_rest", "memory_attention", "memory_rest",
             "arithmetic_attention", "arithmetic_rest", "need", "network", "memory", "arithmetic",
             "fixed", "network_latency", "network_bandwidth", "pipeline", "pipeline_latency",
             "pipeline_bandwidth")
# terms that hold the pipeline's hops, paid once per pass however many groups there are
_ONCE = {"network_rest": "pipeline", "network": "pipeline", "fixed": "pipeline",
         "network_latency": "pipeline_latency", "network_bandwidth": "pipeline_bandwidth",
         "pipeline": "pipeline", "pipeline_latency": "pipeline_latency",
         "pipeline_bandwidth": "pipeline_bandwidth"}


@dataclass(frozen=True)
class GroupedBranch:
    """A LayeredModel's branch: the Branches of its groups combined (eq-full-grouped-latency).

    ``branch[name]`` has the names of :func:`term_expression`. The additive terms are summed
    over the groups with the pipeline's hops counted once; 'latency' and 'latency_lower' take the
    larger of the summed memory and arithmetic times; feasibility needs the summed weights and
    cache to fit. 'search' (of a 1-D branch) needs the 2-D groups, kept in ``two_d_pieces``.
    Under the physical rules ('physical', 'limit') the latency is eq-phys-forward-latency of the
    summed terms, and 'latency_lower' takes the floors of memory and need over σ.
    """

    pieces: list
    two_d_pieces: list | None
    hbm_cap: float
    curve: str = "paper"

    @property
    def structure(self) -> Structure:
        """The first group's structure (its rules are every group's)."""
        return self.pieces[0].structure

    @property
    def omega(self) -> float:
        return self.pieces[0].constants[CONSTANTS.index(N.omega_net)]

    def _sum(self, pieces, name, n, batch, pp, sigma):
        total = sum(piece[name](n, batch, pp, sigma) for piece in pieces)
        if name in _ONCE and len(pieces) > 1:
            total = total - (len(pieces) - 1) * pieces[0][_ONCE[name]](n, batch, pp, sigma)
        return total

    def _parts(self, pieces, n, batch, pp, sigma) -> dict:
        """The terms of :data:`PARTS` summed over the groups, the hops counted once."""
        names = PARTS if self.curve == "paper" else PARTS_PHYSICAL
        each = [piece["parts"](n, batch, pp, sigma) for piece in pieces]
        out = {name: sum(values[k] for values in each) for k, name in enumerate(names)}
        hops = each[0][PARTS.index("pipeline")]
        out["network_rest"] = out["network_rest"] - (len(pieces) - 1) * hops
        return out

    def _latency(self, pieces, lower: bool, n, batch, pp, sigma):
        """The latency (or its lower bound over σ) and, for the search at σ = 1, what completes
        it there: the attention all-reduces (paper rules) or the latency itself."""
        part = self._parts(pieces, n, batch, pp, sigma)
        network = part["network_rest"] + (0.0 if lower else part["network_attention"])
        if self.curve == "paper":
            latency = part["kernel"] + network + np.maximum(part["memory"], part["arithmetic"])
            fits = self._fits(part["need"], n, batch, pp)
            return np.where(fits, latency, np.inf), part["network_attention"]
        memory, need = (part["memory_floor"], part["need_floor"]) if lower else (part["memory"],
                                                                                 part["need"])
        value = np.where(self._fits(need, n, batch, pp),
                         _overlapped(part["kernel"], network, memory, part["arithmetic"],
                                     self.omega), np.inf)
        if not lower:
            return value, None
        return value, self._latency(pieces, False, n, batch, pp, sigma)[0]

    def _fits(self, need, n, batch, pp):
        """The feasibility of eq-full-memory-need (the summed need) and of N_PP ≤ min(N, b)."""
        return (n * self.hbm_cap >= need) & (pp <= n) & (pp <= batch)

    def __getitem__(self, name: str):
        pieces = self.pieces

        def call(n, batch, pp, sigma):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                if name in _ADDITIVE or name in ("memory_floor", "need_floor"):
                    return self._sum(pieces, name, n, batch, pp, sigma)
                if name in ("latency", "latency_lower"):
                    return self._latency(pieces, name == "latency_lower", n, batch, pp, sigma)[0]
                if name == "feasible":
                    need = self._sum(pieces, "need", n, batch, pp, sigma)
                    return np.asarray(self._fits(need, n, batch, pp), dtype=float)
                if name == "search":
                    out = []
                    for group in (pieces, self.two_d_pieces):
                        out += self._latency(group, True, n, batch, pp, sigma)
                    return tuple(out)
                raise KeyError(name)
        return call


def _overlapped(kernel, network, memory, arithmetic, omega):
    """eq-phys-forward-latency, generated from physical_rules.forward_latency."""
    return _generated("physical").overlapped(kernel, network, memory, arithmetic, omega)


# --- reading one point --------------------------------------------------------------------

def expert_parallel_value(model, tp: float, micro_batch: float, q: float = 1.0) -> float:
    """eq-full-expert-parallel at one point (1 for a dense model; for a LayeredModel, that of
    its sparsest MoE group); with ``q`` tokens per sequence, eq-phys-expert-parallel (pass
    q = 1 for the reference rule, which counts sequences)."""
    if isinstance(model, LayeredModel):
        model = max((piece.shape for piece in model.pieces), key=lambda shape: shape.sparsity)
    if model.n_experts == 1 or micro_batch * q < EP_MIN_TOKENS_PER_EXPERT * model.sparsity:
        return 1.0
    return float(min(tp, model.n_experts))


def forward_flops_fn(model):
    """eq-full-flops for one model as a NumPy function of (b, q, ℓ); a LayeredModel's is the
    sum over its groups, each at the entries its queries attend to: the context capped at its
    window, a sparse group's selection, a compressed group's pooled entries and window (rules 9
    and 10; the indexers' scoring is not counted)."""
    if isinstance(model, LayeredModel):
        parts = [(forward_flops_fn_values(piece.shape, _piece_flop_values(piece), shared=True),
                  piece) for piece in model.pieces]

        def total(batch, q, context):
            return sum(fn(batch, q, _attended(piece, context)) for fn, piece in parts)
        return total
    return forward_flops_fn_values(model, model_values_for_flops(model))


def _attended(piece, context):
    """The cached entries a query of a group attends to at ``context``, in eq-full-flops' ℓ."""
    if piece.fixed_context is not None:
        return piece.fixed_context
    seen = np.minimum(context, piece.window)
    return (np.minimum(seen, piece.top_k) / piece.compression
            + np.minimum(seen, piece.window_tokens))


def _piece_flop_values(piece) -> dict:
    values = model_values_for_flops(piece.shape)
    values.update({N.n_attn: piece.attention_params, N.n_ff: piece.ff_params,
                   N.n_sh: piece.n_shared, N.d_ff_shared: piece.d_shared})
    return values


def forward_flops_fn_values(model, values: dict, shared: bool = False):
    """eq-full-flops at ``values`` as a function of (b, q, ℓ), generated from its derivation into
    :mod:`.formulas_numpy` (no SymPy at run time)."""
    from . import formulas_numpy as gen
    name = f"forward_flops_{'mla' if model.is_mla else 'gqa'}{'_shared' if shared else ''}"
    fn = getattr(gen, name)
    bound = [float(values[arg]) for arg in gen.ARGUMENTS[name][3:]]
    return lambda batch, q, context: fn(batch, q, context, *bound)


def model_values_for_flops(model) -> dict:
    values = dict(model.name_values())
    values.update({N.n_attn: model.attention_params, N.n_ff: model.ff_params,
                   N.n_unembed: model.embedding_params})
    return values

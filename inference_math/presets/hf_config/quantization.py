"""The checkpoint's quantization, layer by layer: each layer's weight matrices under the module
names of its family's model code (:func:`layer_matrices`), the format
:mod:`inference_math.presets.checkpoint_precision` reads for each, summed into
(bits, parameters) per layer and for the embeddings; DeepSeek-V4's matrices and formats, from its
reference code (:func:`_v4_matrices`, :func:`_v4_storage`).

Imports :mod:`.fields` and :mod:`.layer_kinds` of this package.
"""

from __future__ import annotations

from .. import checkpoint_precision as cp
from .fields import _Fields
from .layer_kinds import Attention, FeedForward

#: Module names of each block in the transformers model code of each family (the names the
#: quantization descriptions use), with the defaults of the Llama/Qwen/DeepSeek codes.
_NAMING = {
    "default": {"prefix": "model.", "attn": "self_attn", "linear": "linear_attn",
                "mamba": "mixer", "mlp": "mlp", "experts": "mlp.experts",
                "shared": "mlp.shared_experts", "router": "mlp.gate", "embed": "embed_tokens"},
    "qwen": {"shared": "mlp.shared_expert"},  # Qwen2/3-MoE, Qwen3-Next, Qwen3.5: one shared expert
    "gpt_oss": {"router": "mlp.router"},
    "llama4": {"mlp": "feed_forward", "experts": "feed_forward.experts",
               "shared": "feed_forward.shared_expert", "router": "feed_forward.router"},
    "gemma4": {"experts": "experts", "router": "router", "shared": "mlp"},
    "nemotron_h": {"prefix": "backbone.", "attn": "mixer", "mlp": "mixer",
                   "experts": "mixer.experts", "shared": "mixer.shared_experts",
                   "router": "mixer.gate", "embed": "embeddings"},
}


def _naming(model_type: str) -> dict:
    family = next((key for key in ("gpt_oss", "llama4", "gemma4", "nemotron_h")
                   if model_type.startswith(key)), "qwen" if model_type.startswith("qwen")
                  else "default")
    return {**_NAMING["default"], **_NAMING.get(family, {})}


def layer_matrices(a: Attention, f: FeedForward, d: int,
                   names: dict) -> list[tuple[str, float, str, str]]:
    """The weight matrices of one layer: (module name below the layer, parameters, kind, block),
    kind 'linear', 'router' or 'other' (convolutions), block 'attention' (the mixer, its indexer
    and the MoE router), 'experts' (routed, with their latent projections), 'shared' or 'dense'.
    They sum to the layer's count."""
    out = []
    if a.span == "mamba":
        groups, state, heads, head_dim, conv = a.linear
        inner = heads * head_dim
        out += [(f"{names['mamba']}.in_proj", d * (2 * inner + 2 * groups * state + heads), "linear"),
                (f"{names['mamba']}.conv1d", conv * (inner + 2 * groups * state), "other"),
                (f"{names['mamba']}.out_proj", inner * d, "linear")]
    elif a.heads == "KDA":
        _, d_k, n_v, d_v, conv = a.linear
        m = names["attn"]
        out += [(f"{m}.{p}_proj", n_v * d_k * d, "linear") for p in ("q", "k")]
        out += [(f"{m}.v_proj", n_v * d_v * d, "linear"),
                (f"{m}.q_conv1d", conv * (2 * n_v * d_k + n_v * d_v), "other"),
                (f"{m}.f_a_proj", d * d_v, "linear"), (f"{m}.f_b_proj", d_v * n_v * d_v, "linear"),
                (f"{m}.b_proj", d * n_v, "linear"),
                (f"{m}.g_a_proj", d * d_v, "linear"), (f"{m}.g_b_proj", d_v * n_v * d_v, "linear"),
                (f"{m}.o_proj", n_v * d_v * d, "linear")]
    elif a.span == "linear":
        n_k, d_k, n_v, d_v, conv = a.linear
        m = names["linear"]
        out += [(f"{m}.in_proj_qkv", (2 * n_k * d_k + n_v * d_v) * d, "linear"),
                (f"{m}.in_proj_z", n_v * d_v * d, "linear"), (f"{m}.in_proj_a", n_v * d, "linear"),
                (f"{m}.in_proj_b", n_v * d, "linear"),
                (f"{m}.conv1d", conv * (2 * n_k * d_k + n_v * d_v), "other"),
                (f"{m}.out_proj", n_v * d_v * d, "linear")]
    elif a.mla:
        c_q, c_kv, rope, d_v = a.mla
        m = names["attn"]
        out += [(f"{m}.q_a_proj", d * c_q, "linear"),
                (f"{m}.q_b_proj", c_q * a.n_q * (a.d_head + rope), "linear")] if c_q else [
                (f"{m}.q_proj", d * a.n_q * (a.d_head + rope), "linear")]
        out += [
                (f"{m}.kv_a_proj_with_mqa", d * (c_kv + rope), "linear"),
                (f"{m}.kv_b_proj", c_kv * a.n_q * (a.d_head + d_v), "linear"),
                (f"{m}.o_proj", a.n_q * d_v * d, "linear")]
    elif a.span != "none":
        m = names["attn"]
        out += [(f"{m}.q_proj", a.m_q * a.n_q * a.d_head * d, "linear"),
                (f"{m}.k_proj", a.n_kv * a.d_head * d, "linear")]
        if a.m_kv == 2:
            out.append((f"{m}.v_proj", a.n_kv * a.d_head * d, "linear"))
        out.append((f"{m}.o_proj", a.n_q * a.d_head * d, "linear"))
    if a.indexer:
        heads, head_dim, _ = a.indexer
        m = names["attn"]
        out += [(f"{m}.indexer.wq_b", a.mla[0] * heads * head_dim, "linear"),
                (f"{m}.indexer.wk", d * head_dim, "linear"),
                (f"{m}.indexer.weights_proj", d * heads, "linear")]
    out = [(*matrix, "attention") for matrix in out]
    projections = ("gate_proj", "up_proj", "down_proj") if f.n_in == 2 else ("up_proj", "down_proj")
    if f.kind == "dense":
        out += [(f"{names['mlp']}.{p}", d * f.d_ff, "linear", "dense") for p in projections]
    elif f.kind == "moe":
        width = f.latent or d
        out.append((names["router"], f.n_experts * d, "router", "attention"))
        out += [(f"{names['experts']}.0.{p}", f.n_experts * width * f.d_ff, "linear", "experts")
                for p in projections]
        if f.latent:
            out += [(f"{names['mlp']}.fc1_latent_proj", d * f.latent, "linear", "experts"),
                    (f"{names['mlp']}.fc2_latent_proj", f.latent * d, "linear", "experts")]
        if f.n_shared:
            out += [(f"{names['shared']}.{p}", f.n_shared * d * f.d_shared, "linear", "shared")
                    for p in projections]
    return out


def _storage(layers: list[tuple], precision: cp.Precision | None, names: dict, d: int,
             vocab: int, tied: bool) -> tuple[list[tuple], tuple]:
    """Each layer's quantized weights ((block, bits, parameters), ...) and the embeddings'
    ((bits, parameters), ...)."""
    if precision is None:
        return [()] * len(layers), ()
    prefix = precision.prefix or names["prefix"]
    storage = []
    for i, (a, f) in enumerate(layers):
        stored: dict[tuple[str, float], float] = {}
        for module, params, kind, block in layer_matrices(a, f, d, names):
            fmt = precision.format_of((f"{prefix}layers.{i}.{module}",), linear=kind != "other",
                                      router=kind == "router")
            if fmt is not None:
                stored[block, fmt.bits] = stored.get((block, fmt.bits), 0.0) + params
        storage.append(tuple((block, bits, n) for (block, bits), n in sorted(stored.items())))
    embeddings = []
    head = precision.format_of(("lm_head", "language_model.lm_head", "head"),
                               head=True)
    if head is not None and not tied:
        embeddings.append((head.bits, float(vocab * d)))
    table = precision.format_of((f"{prefix}{names['embed']}",), linear=False)
    if table is not None:
        embeddings.append((table.bits, float(vocab * d)))
    return storage, tuple(embeddings)


def _quantization_summary(precision: cp.Precision | None, groups, embeddings) -> dict | None:
    if precision is None:
        return None
    params = sum(g.count * n for g in groups for _, n in g.quantized) + sum(n for _, n in embeddings)
    if not params:
        return None
    bits = (sum(g.count * b * n for g in groups for b, n in g.quantized)
            + sum(b * n for b, n in embeddings)) / params
    return {"method": precision.method, "bits": bits, "which": "as the checkpoint states",
            "source": precision.source}



def _v4_matrices(a: Attention, f: FeedForward, d: int) -> list[tuple[str, float, str]]:
    """One DeepSeek-V4 layer's weights with their module names and the format its reference
    checkpoint stores them in: 'fp8' (the default), 'bf16' (wo_a, the compressors, the
    indexer's weights_proj, the router), 'fp32' (the hyper-connections and the compressors'
    score offsets) and 'experts' (expert_dtype). They sum to the layer's count."""
    ratio, c_q, _, groups, rank, streams = a.compressed
    width = a.d_head
    out = [("attn.wq_a", d * c_q, "fp8"), ("attn.wq_b", c_q * a.n_q * width, "fp8"),
           ("attn.wkv", d * width, "fp8"), ("attn.wo_a", a.n_q * width * rank, "bf16"),
           ("attn.wo_b", groups * rank * d, "fp8"),
           ("hc", 2 * (2 + streams) * streams * streams * d, "fp32")]

    def compressor(module: str, dim: int) -> list:
        c = 2 if ratio == 4 else 1
        return [(f"{module}.wkv", d * c * dim, "bf16"), (f"{module}.wgate", d * c * dim, "bf16"),
                (f"{module}.ape", ratio * c * dim, "fp32")]
    if ratio:
        out += compressor("attn.compressor", width)
    if a.indexer:
        heads, head_dim, _ = a.indexer
        out += [("attn.indexer.wq_b", c_q * heads * head_dim, "fp8"),
                ("attn.indexer.weights_proj", d * heads, "bf16"),
                *compressor("attn.indexer.compressor", head_dim)]
    out += [("ffn.gate", f.n_experts * d, "bf16"),
            ("ffn.experts", f.n_experts * 3 * d * f.d_ff, "experts"),
            ("ffn.shared_experts", 3 * d * f.d_shared, "fp8")]
    return out


#: DeepSeek-V4's FP4 experts (expert_dtype "fp4"): E2M1 elements with one E8M0 scale per 32
#: (its Linear: float4_e2m1fn_x2 weights, float8_e8m0fnu scales per fp4_block_size = 32).
V4_FP4 = cp.Format("FP4 (E2M1, E8M0 scale per 32)", cp.block_bits(4, 8, 32))


def _v4_storage(layers: list[tuple], precision: cp.Precision | None, f: _Fields,
                d: int) -> list[tuple]:
    """Each DeepSeek-V4 layer's stored formats: the reference checkpoint's (_v4_matrices), with
    the routed experts in the format a checkpoint names them in (NVIDIA's NVFP4
    quantized_layers: its producer, 'dsv4-nvfp4-experts', requantizes the experts only, the
    rest keeping the original's formats), else FP4 when expert_dtype is 'fp4' and FP8 without
    it (SGLang's FP8 conversion). No quantization: every weight at the dtype."""
    if precision is None:
        return [()] * len(layers)
    fp8 = precision.format_of(("attn.wq_a",)) or cp.Format("FP8", 8.0)
    fp4 = f.raw("expert_dtype", None) == "fp4"
    storage = []
    for i, (a, ffn) in enumerate(layers):
        stored: dict[tuple[str, float], float] = {}
        for module, params, kind in _v4_matrices(a, ffn, d):
            if kind == "experts":
                named = precision.format_of((f"layers.{i}.{module}.0.w1",))
                fmt = named if named is not None and named.bits != fp8.bits else \
                    V4_FP4 if fp4 else fp8
            else:
                fmt = {"fp8": fp8, "fp32": cp.Format("FP32", 32.0)}.get(kind)
            block = ("experts" if module == "ffn.experts" else "shared"
                     if module == "ffn.shared_experts" else "attention")
            if fmt is not None:
                stored[block, fmt.bits] = stored.get((block, fmt.bits), 0.0) + params
        storage.append(tuple((block, bits, n) for (block, bits), n in sorted(stored.items())))
    return storage

"""A uniform model: every layer the same shape, and the counts derived from it.

:class:`Model` is a transformer's shape (the presets of :mod:`inference_math.presets.models`, a
group of :mod:`inference_math.presets.layered`). Its counts are evaluated from the SymPy
expressions of :mod:`inference_math.derivations.architecture` and :mod:`~inference_math.derivations.moe`,
never re-typed here, through the NumPy code generated from them
(:mod:`inference_math.presets.counts`), with its numbers keyed by registry names
(:mod:`inference_math.core.names`): no SymPy at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..core import names as N
from ..core.validation import InputError, positive, positive_int
from . import hf_config
from .counts import count


@dataclass(frozen=True)
class Model:
    """A transformer's shape. Raises InputError on construction if a field is invalid."""

    name: str
    d_model: int
    d_ff: int
    layers: int
    n_q_heads: int
    source: str  # bib keys, comma separated
    ff_matrix_count: tuple[int, int] = (1, 1)  # (d_model->d_ff, d_ff->d_model) matrices
    group_size: int = 1  # query heads per KV head
    d_head: int | None = None  # defaults to d_model // n_q_heads
    n_experts: int = 1
    n_active_experts: int = 1
    weight_bytes: float = 2.0
    activation_bytes: float = 2.0
    vocab: int = 0
    parallel_attention: bool = False
    embedding_matrices: int = 2  # 2: untied input and output embeddings; 1: tied, or no LM head
    mla_kv_dim: int | None = None  # set for multi-head latent attention
    mla_q_dim: int | None = None
    # MLA's rotary key and position-free query/key widths per head (qk_rope_head_dim,
    # qk_nope_head_dim; d_head is the value head), and whether its layers can also run as
    # multi-head attention (eq-phys-mla-attention-flops); 0, None and False leave the absorbed
    # form without a rotary part, as the paper counts it
    mla_rope_dim: int = 0
    mla_nope_dim: int | None = None
    mla_multi_head: bool = False
    note: str = field(default="")
    # False: a token's experts share a node (the reference code); True: they are spread over the
    # expert-parallel group's nodes (eq-phys-expert-nodes), as for the models read from configs
    experts_spread: bool = False
    # the KV-cache precision the checkpoint states (kv_cache_quant_algo, kv_cache_scheme), in
    # bits; None when it states none
    kv_cache_bits: float | None = None

    def __post_init__(self):
        where = f"model {self.name!r}"
        for name in ("d_model", "d_ff", "layers", "n_q_heads", "group_size", "n_experts",
                     "n_active_experts"):
            positive_int(f"{where}: {name}", getattr(self, name))
        if self.d_head is not None:
            positive_int(f"{where}: d_head", self.d_head)
        elif self.d_model % self.n_q_heads:
            raise InputError(f"{where}: d_head is needed because n_q_heads {self.n_q_heads} "
                             f"does not divide d_model {self.d_model}")
        if self.vocab != 0:
            positive_int(f"{where}: vocab", self.vocab)
        if self.embedding_matrices not in (1, 2):
            raise InputError(f"{where}: embedding_matrices must be 1 or 2, got {self.embedding_matrices!r}")
        for name in ("weight_bytes", "activation_bytes"):
            positive(f"{where}: {name}", getattr(self, name))
        if len(self.ff_matrix_count) != 2:
            raise InputError(f"{where}: ff_matrix_count must be a pair, got {self.ff_matrix_count!r}")
        for matrices in self.ff_matrix_count:
            positive_int(f"{where}: ff_matrix_count", matrices)
        if self.n_q_heads % self.group_size:
            raise InputError(
                f"{where}: group_size {self.group_size} does not divide n_q_heads {self.n_q_heads}"
            )
        if self.n_active_experts > self.n_experts:
            raise InputError(
                f"{where}: n_active_experts {self.n_active_experts} exceeds n_experts {self.n_experts}"
            )
        if (self.mla_kv_dim is None) != (self.mla_q_dim is None):
            raise InputError(f"{where}: MLA needs both mla_kv_dim and mla_q_dim")
        if self.is_mla:
            positive_int(f"{where}: mla_kv_dim", self.mla_kv_dim)
            positive_int(f"{where}: mla_q_dim", self.mla_q_dim)
            if self.mla_rope_dim:
                positive_int(f"{where}: mla_rope_dim", self.mla_rope_dim)
            if self.mla_nope_dim is not None:
                positive_int(f"{where}: mla_nope_dim", self.mla_nope_dim)
            if self.group_size != 1:
                raise InputError(f"{where}: MLA models need group_size 1, got {self.group_size}")
        if not self.source:
            raise InputError(f"{where}: source must name a bib key")

    @property
    def is_mla(self) -> bool:
        return self.mla_kv_dim is not None

    @property
    def head_dim(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_q_heads

    @property
    def sparsity(self) -> int:
        """s = n_experts // n_active: whole-number division, as in the paper's code."""
        return self.n_experts // self.n_active_experts

    @property
    def weight_bits(self) -> int:
        return round(8 * self.weight_bytes)

    def name_values(self) -> dict:
        """Values of the registry's architecture symbols for this model, keyed by name."""
        values = {
            N.d_model: self.d_model, N.d_ff: self.d_ff, N.n_layers: self.layers,
            N.n_q: self.n_q_heads, N.g: self.group_size, N.d_head: self.head_dim,
            N.n_experts: self.n_experts, N.n_active: self.n_active_experts, N.s: self.sparsity,
            N.n_ff_in: self.ff_matrix_count[0], N.n_ff_out: self.ff_matrix_count[1],
            N.vocab: self.vocab, N.p: self.weight_bytes, N.p_act: self.activation_bytes,
            N.n_emb: self.embedding_matrices,
        }
        if self.is_mla:
            values.update({N.c_kv: self.mla_kv_dim, N.c_q: self.mla_q_dim,
                           N.d_rope: self.mla_rope_dim,
                           N.d_nope: (self.head_dim if self.mla_nope_dim is None
                                      else self.mla_nope_dim),
                           N.xi_mha: 1.0 if self.mla_multi_head else 0.0})
        return values

    def symbol_values(self) -> dict:
        """:meth:`name_values` keyed by the registry's SymPy Symbols, for a derivation's
        ``subs`` (the book, the tests; it imports the symbol registry, no command calls it)."""
        from ..core.symbols import by_name
        return {by_name(name): value for name, value in self.name_values().items()}

    def _count(self, name: str) -> float:
        """The count ``name`` of presets.counts (NumPy code generated from its derivation)."""
        return count(name, self.name_values())

    @cached_property
    def attention_params(self) -> float:
        return self._count("attention_params_mla_uniform" if self.is_mla else "attention_params")

    @cached_property
    def ff_params(self) -> float:
        return self._count("feedforward_params")

    @cached_property
    def embedding_params(self) -> float:
        """m_emb·vocab·d_model (eq-kv-embedding-params; m_emb = 2 gives eq-arch-embedding-params)."""
        return self._count("embedding_params") if self.vocab else 0.0

    def _parts(self) -> dict:
        return {N.n_attn: self.attention_params, N.n_ff: self.ff_params,
                N.n_unembed: self.embedding_params}

    @cached_property
    def total_params(self) -> float:
        """N_attn + N_ff + N_unembed, evaluated from eq-moe-total-params (paper eq. 20)."""
        return count("moe_total_params", self._parts())

    @cached_property
    def active_params(self) -> float:
        """Parameters one token multiplies by: eq-moe-active-params (paper eq. 21), with the
        sparsity s by whole-number division of the experts, as the reference code has it."""
        return count("moe_active_params", {**self._parts(), N.s: self.sparsity})

    @cached_property
    def kv_bytes_per_token(self) -> float:
        return self._count("kv_cache_bytes_per_token_mla" if self.is_mla
                           else "kv_cache_bytes_per_token")

    @property
    def weights_bytes(self) -> float:
        return self.weight_bytes * self.total_params

    @classmethod
    def from_hf_config(cls, path) -> Model:
        """The Model of a Hugging Face config.json (a file or a folder holding one).

        Only architectures that map exactly onto uniform layers are accepted (Llama, Qwen3 dense,
        Mixtral, Qwen3-MoE); any other raises an InputError naming what the full model does not
        yet represent. The Model has no router term, so its MoE counts are those of
        hf_config.read_architecture less the routers (n_experts·d_model per layer).
        """
        return cls(**hf_config.model_fields(hf_config.read_architecture(path)))

"""RL rollouts and LoRA (Mazurek 2025, "AI infrastructure in the 'Era of experience'").

Reinforcement fine-tuning alternates rollout generation, which is decode and so memory bound,
with GRPO optimisation steps. This module derives what the post argues in words: how few
parameters a LoRA adapter trains, why a LoRA training step costs about two thirds of a full one,
how many bits a rollout's reward can carry, the effective sample size of importance-weighted
rollouts, and how serving many adapters on one base model enlarges the batch and lowers the cost
of a rollout token.

The decode step time reuses the pieces of eq-intensity-step-time (:mod:`intensity`); the
adapters add their own weight reads and FLOPs. The GRPO advantage identity and the LoRA and
backpropagation gradients are verified by SymPy on explicit small matrices and returned as
residuals, not registered as equations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    b,
    b_adapt,
    d_ff,
    d_head,
    d_in,
    d_model,
    d_out,
    ess,
    flops,
    gpu_s,
    grpo_group,
    h_reward,
    hbm_bw,
    hbm_cap,
    kv_bytes,
    lora_frac,
    lora_rank,
    lora_tput,
    n_adapt,
    n_adapt_max,
    n_adapt_star,
    n_gpu,
    n_kv,
    n_layers,
    n_levels,
    n_lora,
    n_param,
    n_q,
    n_samples,
    n_train_tok,
    p,
    rho_train,
    seq_kv,
    sigma_lw,
    t_token,
    w_sq_sum,
    w_sum,
)
from ..core.units import usd_per_million_tokens
from ..core.validation import InputError, positive, positive_int
from . import intensity

_POST = "Mazurek (2025), 'AI infrastructure in the Era of experience'"
_DERIVED = f"this book, from {_POST}"

# --- the post's inputs and stated results ---------------------------------------------------
# Typed from the text of the post; its figures and its GRPO table are images and are not used.

#: Everything Mazurek (2025), "AI infrastructure in the 'Era of experience'", states that the book
#: reproduces.
MAZUREK2025_EXPERIENCE: Mapping[str, object] = {
    # "Intelligence involution": DeepSeek output prices V3 -> V3.2 ($/M), "5x"
    "price_v3": 2.19,
    "price_v32": 0.42,
    "price_drop_stated": 5,
    # prompt caching: $0.028 per million cached tokens, 10,000 tokens, 1,000,000 requests
    "cached_usd_per_m": Fraction(28, 1000),
    "cached_tokens": 10_000,
    "requests": 1_000_000,
    "caching_usd_stated": 280,
    # "GRPO 101": the WORDLE credit-assignment example, and Fig. 5's group (rewards image-only)
    "wordle": {"reward": Fraction(1), "baseline": Fraction(1, 5), "advantage_stated": Fraction(4, 5)},
    "grpo_fig5": {"group": 4, "mean_stated": 0.55},
    # "Just 1 bit per rollout"
    "bits_binary_stated": 1,
    "reward_levels": (0, 0.25, 0.5, 0.75, 1.0),
    "bits_levels_stated": 2.3,
    "bits_per_token_sft_stated": 1,
    "bits_per_param_stated": 2,
    # "Backpropagation and LoRA": Llama 3.3 70B MLP down projection, rank 1
    "down_proj": {"d_intermediate": 28_672, "d_hidden": 8_192},
    "full_params_stated": 234_881_024,
    "lora_params_stated": 36_864,
    "fraction_pct_stated": 0.016,
    "typical_ranks": (1, 16),
    "orders_stated": (3, 4),  # "3 to 4 orders of magnitude smaller"
    "backward_over_forward_stated": 2,
    "training_ratio_stated": Fraction(2, 3),
    # "Economies of scale in inference", Fig. 14: SGLang v0.5.5, one B200, Qwen-32B
    "multi_lora": {"throughput_fraction_stated": 0.85, "rank": 32, "adapters": 8},
    # "Everything async and multi-turn": ESS readings
    "ess_on_policy_stated": 1.0,
    "ess_degenerate_stated": 0.1,
    # "Intelligence markets through RFT"
    "single_node_params_stated": 200e9,
}


# --- LoRA: parameters and FLOPs ------------------------------------------------------------


def lora_params() -> sp.Expr:
    """Parameters of one adapter pair: A is r × d_in, B is d_out × r."""
    return lora_rank * d_in + d_out * lora_rank


@derivation("eq-rollouts-lora-fraction", f"{_POST}, 'Backpropagation and LoRA'")
def lora_fraction() -> sp.Eq:
    """Adapter parameters over the matrix's: r·(d_in + d_out)/(d_in·d_out) (eq-rollouts-lora-fraction)."""
    return sp.Eq(lora_frac, sp.factor(lora_params() / (d_in * d_out)))


def layer_matrices() -> dict[str, tuple[sp.Expr, sp.Expr]]:
    """(d_in, d_out) of the seven weight matrices of a grouped-query, gated transformer layer."""
    q_width, kv_width = n_q * d_head, n_kv * d_head
    return {
        "w_q": (d_model, q_width), "w_k": (d_model, kv_width), "w_v": (d_model, kv_width),
        "w_o": (q_width, d_model), "w_gate": (d_model, d_ff), "w_up": (d_model, d_ff),
        "w_down": (d_ff, d_model),
    }


@derivation("eq-rollouts-adapter-params", _DERIVED)
def adapter_params() -> sp.Eq:
    """Parameters of a rank-r adapter on every attention and MLP matrix (eq-rollouts-adapter-params).

    The sum over the seven matrices of each layer of r·(d_in + d_out), the numerator of
    eq-rollouts-lora-fraction.
    """
    per_layer = sum(lora_params().subs({d_in: i, d_out: o}) for i, o in layer_matrices().values())
    return sp.Eq(n_lora, n_layers * lora_rank * sp.expand(per_layer / lora_rank))


def matmul_flops(m: sp.Expr, k: sp.Expr, n: sp.Expr) -> sp.Expr:
    """FLOPs of an (m × k)(k × n) product: 2·m·k·n."""
    return 2 * m * k * n


def training_flops() -> dict[str, dict[str, sp.Expr]]:
    """FLOPs of one linear layer per training step on n_tok tokens, full and LoRA, matmul by matmul.

    Full fine-tuning: forward W·X, backward Wᵀ·G (input gradient) and G·Xᵀ (weight gradient).
    LoRA (z = W·x + B·(A·x)): the forward adds A·X and B·(A·X); the backward computes
    Bᵀ·G once and reuses it for Aᵀ·(Bᵀ·G) (input gradient) and (Bᵀ·G)·Xᵀ (gradient of A), and
    G·(A·X)ᵀ (gradient of B); W gets no gradient.
    """
    n, r = n_train_tok, lora_rank
    base_forward = matmul_flops(d_out, d_in, n)
    base_input_grad = matmul_flops(d_in, d_out, n)
    full = {"forward": base_forward, "input_grad": base_input_grad,
            "weight_grad": matmul_flops(d_out, n, d_in)}
    lora = {
        "forward": base_forward + matmul_flops(r, d_in, n) + matmul_flops(d_out, r, n),
        "input_grad": base_input_grad + matmul_flops(r, d_out, n) + matmul_flops(d_in, r, n),
        "adapter_grad": matmul_flops(d_out, n, r) + matmul_flops(r, n, d_in),
    }
    return {"full": full, "lora": lora}


@derivation("eq-rollouts-training-flops-ratio", f"{_POST}, 'Backpropagation and LoRA'")
def training_flops_ratio() -> sp.Eq:
    """LoRA training FLOPs over full fine-tuning FLOPs: 2/3 + r·(d_in + d_out)/(d_in·d_out).

    (eq-rollouts-training-flops-ratio.) SymPy sums :func:`training_flops`, takes the limit
    r → 0 (the post's 2/3) and factors the remainder, which is the adapter fraction
    eq-rollouts-lora-fraction: the adapters' own matmuls cost six FLOPs per adapter parameter and
    token against six per base parameter and token for a full step.
    """
    counts = training_flops()
    ratio = sp.simplify(sum(counts["lora"].values()) / sum(counts["full"].values()))
    base = sp.limit(ratio, lora_rank, 0)
    return sp.Eq(rho_train, base + sp.factor(sp.simplify(ratio - base)))


def backward_over_forward() -> sp.Expr:
    """Full fine-tuning: backward FLOPs over forward FLOPs (2: an input and a weight gradient)."""
    full = training_flops()["full"]
    return sp.simplify((full["input_grad"] + full["weight_grad"]) / full["forward"])


# --- LoRA and backpropagation gradients, checked by SymPy ----------------------------------


def lora_gradient_formulas(grad_z, a, b_, x) -> dict[str, object]:
    """The post's LoRA gradients for z = (W + B·A)·x and upstream gradient G = ∂J/∂z.

    ∂J/∂B = G·(A·x)ᵀ, ∂J/∂A = Bᵀ·G·xᵀ; the input gradient (W + B·A)ᵀ·G is returned by
    :func:`lora_gradient_residuals`, which needs W. Works on explicit matrices and on
    MatrixSymbols (for display).
    """
    return {"B": grad_z * (a * x).T, "A": b_.T * grad_z * x.T}


def _matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))


def lora_gradient_residuals(d_input: int = 3, d_output: int = 2, rank: int = 1,
                            tokens: int = 2) -> dict[str, sp.Matrix]:
    """Automatic minus hand gradients of a LoRA layer on explicit symbolic matrices.

    J = Σ φ(z) over the entries of z = (W + B·A)·X with φ an undefined function, so ∂J/∂z is a
    general matrix G. Each residual is zero when the post's formula is right. "W" compares ∂J/∂W
    with G·Xᵀ: the gradient that full fine-tuning would compute and LoRA skips.
    """
    sizes = [positive_int(name, v) for name, v in (("d_input", d_input), ("d_output", d_output),
                                                   ("rank", rank), ("tokens", tokens))]
    d_i, d_o, r, n = sizes
    w, a, b_, x = _matrix("W", d_o, d_i), _matrix("A", r, d_i), _matrix("B", d_o, r), _matrix("x", d_i, n)
    z = (w + b_ * a) * x
    zs = _matrix("z", d_o, n)
    phi = sp.Function("phi")
    loss_of_z = sum(phi(e) for e in zs)
    grad_z = zs.applyfunc(lambda e: sp.diff(loss_of_z, e)).subs(dict(zip(zs, z, strict=True)))
    loss = loss_of_z.subs(dict(zip(zs, z, strict=True)))
    formulas = lora_gradient_formulas(grad_z, a, b_, x)

    def grad(matrix):
        return matrix.applyfunc(lambda e: sp.diff(loss, e))

    return {
        "B": (grad(b_) - formulas["B"]).applyfunc(sp.expand),
        "A": (grad(a) - formulas["A"]).applyfunc(sp.expand),
        "x": (grad(x) - (w + b_ * a).T * grad_z).applyfunc(sp.expand),
        "W": (grad(w) - grad_z * x.T).applyfunc(sp.expand),
    }


class sigmoid(sp.Function):  # noqa: N801  (a SymPy function, named like sp.exp)
    """The logistic function σ(z) = 1/(1 + e^(-z)), with derivative σ·(1 − σ)."""

    def fdiff(self, argindex=1):
        s = sigmoid(self.args[0])
        return s * (1 - s)

    def _eval_rewrite_as_exp(self, arg, **kwargs):
        return 1 / (1 + sp.exp(-arg))


def backprop_formulas(x, y, w1, b1, w2, b2) -> dict[str, object]:
    """The post's nine backpropagation steps for a 2-layer sigmoid MLP, in matrix form.

    Examples are columns; N is their number. Step 6 needs W2ᵀ and steps 4 and 8 the transposed
    activations, which the post's scalar notation leaves implicit.
    """
    n_examples = x.shape[1]
    ones = sp.ones(1, n_examples)
    z1 = w1 * x + b1 * ones
    a1 = z1.applyfunc(sigmoid)
    z2 = w2 * a1 + b2 * ones
    a2 = z2.applyfunc(sigmoid)
    loss = sum((y[k] - a2[k]) ** 2 for k in range(len(y))) / (2 * n_examples)  # step 1
    d_a2 = (a2 - y) / n_examples  # step 2
    d_z2 = d_a2.multiply_elementwise(a2.applyfunc(lambda v: v * (1 - v)))  # step 3
    d_a1 = w2.T * d_z2  # step 6
    d_z1 = d_a1.multiply_elementwise(a1.applyfunc(lambda v: v * (1 - v)))  # step 7
    return {"loss": loss, "W2": d_z2 * a1.T, "b2": d_z2 * ones.T,  # steps 4, 5
            "W1": d_z1 * x.T, "b1": d_z1 * ones.T}  # steps 8, 9


def backprop_residuals(n_in: int = 2, n_hidden: int = 3, n_out: int = 2,
                       n_examples: int = 2) -> dict[str, sp.Matrix]:
    """SymPy's derivatives of the loss minus the post's backpropagation steps; zero if they agree."""
    d0, d1, d2, n = (positive_int(name, v) for name, v in (
        ("n_in", n_in), ("n_hidden", n_hidden), ("n_out", n_out), ("n_examples", n_examples)))
    params = {"W1": _matrix("u", d1, d0), "b1": _matrix("c", d1, 1),
              "W2": _matrix("v", d2, d1), "b2": _matrix("e", d2, 1)}
    formulas = backprop_formulas(_matrix("x", d0, n), _matrix("y", d2, n), params["W1"],
                                 params["b1"], params["W2"], params["b2"])
    loss = formulas["loss"]
    return {name: (m.applyfunc(lambda e: sp.diff(loss, e)) - formulas[name]).applyfunc(sp.expand)
            for name, m in params.items()}


# --- information per rollout ---------------------------------------------------------------


@derivation("eq-rollouts-reward-entropy", f"{_POST}, 'Just 1 bit per rollout'")
def reward_entropy() -> sp.Eq:
    """Entropy of a reward with N equally likely values: log₂ N bits (eq-rollouts-reward-entropy).

    SymPy sums −Σ (1/N)·log₂(1/N) over the N values. Equal probabilities maximise the entropy,
    so this is the most a rollout's reward can tell the policy.
    """
    k = sp.Symbol("k", integer=True, positive=True)  # summation index, not a model quantity
    prob = 1 / n_levels
    return sp.Eq(h_reward, sp.simplify(sp.summation(-prob * sp.log(prob, 2), (k, 1, n_levels))))


# --- GRPO advantages and the effective sample size ------------------------------------------------


def grpo_advantages(rewards: Sequence) -> list[sp.Expr]:
    """GRPO's advantages of one group, reward minus group mean, in exact arithmetic."""
    values = [sp.nsimplify(r) for r in rewards]
    if not values:
        raise InputError("rewards must hold at least one reward")
    if any(not v.is_real for v in values):
        raise InputError(f"rewards must be real numbers, got {list(rewards)!r}")
    mean = sp.Add(*values) / len(values)
    return [v - mean for v in values]


def grpo_advantage_sum() -> tuple[sp.Expr, sp.Expr]:
    """Σᵢ Aᵢ for a group of G rollouts with rewards Rᵢ, as an unevaluated sum and its value (0).

    The rewards are a local real IndexedBase: they may be negative, unlike the registry's symbols.
    """
    i = sp.Symbol("i", integer=True, positive=True)
    rewards = sp.IndexedBase(sp.Symbol("R", real=True))
    mean = sp.Sum(rewards[i], (i, 1, grpo_group)) / grpo_group
    total = sp.Sum(rewards[i] - mean, (i, 1, grpo_group))
    return total, sp.simplify(sp.expand(total).doit())


@derivation("eq-rollouts-ess", f"{_POST}, 'Everything async and multi-turn'")
def effective_sample_size() -> sp.Eq:
    """Normalised effective sample size, (Σw)²/(n·Σw²), of n importance weights (eq-rollouts-ess)."""
    return sp.Eq(ess, w_sum**2 / (n_samples * w_sq_sum))


def ess_limits() -> dict[str, sp.Expr]:
    """eq-rollouts-ess for n equal weights c (1) and for one weight c among zeros (1/n)."""
    c = sp.Symbol("c", positive=True)  # the common (or the only nonzero) weight
    expr = effective_sample_size().rhs
    return {"equal": sp.simplify(expr.subs({w_sum: n_samples * c, w_sq_sum: n_samples * c**2})),
            "single": sp.simplify(expr.subs({w_sum: c, w_sq_sum: c**2}))}


def ess_of(weights: Sequence) -> sp.Expr | float:
    """eq-rollouts-ess for explicit weights: exact for integers and fractions, a float otherwise.

    Raises InputError for negative weights or when every weight is zero.
    """
    values = list(weights)
    exact = all(isinstance(w, int | Fraction | sp.Rational) and not isinstance(w, bool) for w in values)
    try:
        numbers = [positive("weights", float(w), allow_zero=True) for w in values]
    except (TypeError, ValueError, InputError):
        numbers = []
    if not numbers or not any(numbers):
        raise InputError(f"weights must be non-negative and not all zero, got {values!r}")
    expr = effective_sample_size().rhs
    if exact:
        rationals = [sp.Rational(w.numerator, w.denominator) if isinstance(w, Fraction)
                     else sp.Rational(w) for w in values]
        return expr.subs({w_sum: sp.Add(*rationals), w_sq_sum: sp.Add(*(v**2 for v in rationals)),
                          n_samples: len(rationals)})
    array = np.asarray(numbers)
    return float(compile_fn(expr, (w_sum, w_sq_sum, n_samples))(array.sum(), (array**2).sum(), array.size))


@derivation("eq-rollouts-ess-lognormal", _DERIVED)
def ess_lognormal() -> sp.Eq:
    """Large-sample ESS of log-normal importance weights: exp(−σ²) (eq-rollouts-ess-lognormal).

    With log w ~ Normal(−σ²/2, σ), so that E[w] = 1 as an importance weight must have, eq-rollouts-ess
    tends to E[w]²/E[w²] as n → ∞; SymPy computes both moments.
    """
    from sympy.stats import E, Normal  # imported here: sympy.stats is slow to import

    log_w = Normal("log_w", -sigma_lw**2 / 2, sigma_lw)
    first = sp.simplify(E(sp.exp(log_w)).rewrite(sp.erf))
    second = sp.simplify(E(sp.exp(2 * log_w)).rewrite(sp.erf))
    if first != 1:
        raise ArithmeticError(f"E[w] should be 1, got {first}")
    return sp.Eq(ess, sp.simplify(first**2 / second))


# --- serving many adapters on one base model --------------------------------------------------


def _positive_fraction(expr: sp.Expr, collect_by: sp.Expr) -> sp.Expr:
    """``expr`` as numerator/denominator with the minus signs moved out of the numerator.

    Display only: SymPy's solve returns both parts negated; the value is unchanged.
    """
    numerator, denominator = sp.fraction(sp.factor(expr))
    if numerator.could_extract_minus_sign():
        numerator, denominator = -numerator, -denominator
    numerator = sp.collect(sp.expand(numerator), collect_by)
    denominator = sp.collect(sp.expand(denominator), collect_by)
    result = sp.Mul(numerator, sp.Pow(denominator, -1), evaluate=False)
    if sp.simplify(result - expr) != 0:
        raise ArithmeticError("rewriting the fraction changed its value")
    return result


@derivation("eq-rollouts-multi-lora-step-time", "this book, from Austin et al. (2025) and " + _POST)
def multi_lora_step_time() -> sp.Eq:
    """Decode step of a batch spread over n_adapt adapters (eq-rollouts-multi-lora-step-time).

    eq-intensity-step-time with the base weights read once, each distinct adapter's N_LoRA
    weights read once, and every token multiplied by the base and by its own adapter.
    """
    load = intensity.weight_load_time().subs(n_param, n_param + n_adapt * n_lora)
    arithmetic = intensity.weight_flops_time().subs(n_param, n_param + n_lora)
    return sp.Eq(t_token, intensity.attention_time() + sp.Max(arithmetic, load))


@derivation("eq-rollouts-multi-lora-cost", "this book, from Erdil (2025) eq. 4 and " + _POST)
def multi_lora_gpu_seconds() -> sp.Eq:
    """GPU-seconds per token, N_GPU·t/b, with b = n_adapt·b_adapt (eq-rollouts-multi-lora-cost).

    Each adapter brings b_adapt concurrent sequences; pooling adapters is what enlarges the batch.
    """
    step = multi_lora_step_time().rhs
    attention, roof = step.as_independent(sp.Max, as_Add=True)
    per_token = sp.expand(n_gpu * attention / b) + sp.Max(
        *(sp.expand(n_gpu * arg / b) for arg in roof.args))
    return sp.Eq(gpu_s, per_token.subs(b, n_adapt * b_adapt))


@derivation("eq-rollouts-adapters-critical", _DERIVED)
def adapters_critical() -> sp.Eq:
    """Adapters at which the weight FLOPs catch up with the weight reads (eq-rollouts-adapters-critical).

    Solved by SymPy from the two arguments of the maximum of eq-rollouts-multi-lora-step-time
    with b = n_adapt·b_adapt. With N_LoRA → 0 it is b*/b_adapt (eq-intensity-critical-batch).
    """
    _, roof = multi_lora_step_time().rhs.as_independent(sp.Max, as_Add=True)
    arithmetic, load = sorted(roof.args, key=lambda arg: arg.has(flops), reverse=True)
    (solution,) = sp.solve(sp.Eq(arithmetic.subs(b, n_adapt * b_adapt), load), n_adapt)
    return sp.Eq(n_adapt_star, _positive_fraction(solution, hbm_bw * b_adapt))


@derivation("eq-rollouts-max-adapters", "this book, from Austin et al. (2025) and " + _POST)
def max_adapters() -> sp.Eq:
    """Most adapters whose weights and KV caches fit beside the base model (eq-rollouts-max-adapters).

    Base weights p·N, n_adapt adapters of p·N_LoRA bytes and n_adapt·b_adapt caches of M_KV·S
    bytes fill the N_GPU·M_HBM of the instance (as eq-kv-max-batch); SymPy solves for n_adapt.
    """
    used = p * (n_param + n_adapt * n_lora) + n_adapt * b_adapt * kv_bytes * seq_kv
    (solution,) = sp.solve(sp.Eq(used, n_gpu * hbm_cap), n_adapt)
    return sp.Eq(n_adapt_max, sp.floor(_positive_fraction(solution, p)))


@derivation("eq-rollouts-lora-throughput", _DERIVED)
def lora_throughput_ratio() -> sp.Eq:
    """Memory-bound throughput with n_adapt adapters over the base model's, same batch.

    (eq-rollouts-lora-throughput.) The ratio of the load branches of eq-intensity-step-time and
    eq-rollouts-multi-lora-step-time: only the adapters' extra bytes slow the step.
    """
    base = intensity.step_time_min().rhs
    lora = intensity.attention_time() + intensity.weight_load_time().subs(n_param,
                                                                         n_param + n_adapt * n_lora)
    return sp.Eq(lora_tput, sp.factor(sp.simplify(base / lora)))


# --- numeric helpers -----------------------------------------------------------------------


def lora_fraction_of(rank, matrix_in, matrix_out) -> float:
    """eq-rollouts-lora-fraction for one matrix. Raises InputError naming the field on bad input."""
    args = (positive("rank", rank), positive_int("matrix_in", matrix_in),
            positive_int("matrix_out", matrix_out))
    return float(compile_fn(lora_fraction(), (lora_rank, d_in, d_out))(*args))


def adapter_param_count(model, rank) -> float:
    """eq-rollouts-adapter-params for a dense model preset (every attention and MLP matrix adapted)."""
    if model.n_experts != 1 or model.is_mla:
        raise InputError(f"model {model.name!r}: adapters are counted for dense GQA models only")
    values = (positive("rank", rank), model.layers, model.d_model, model.d_ff, model.n_q_heads,
              model.n_q_heads // model.group_size, model.head_dim)
    args = (lora_rank, n_layers, d_model, d_ff, n_q, n_kv, d_head)
    return float(compile_fn(adapter_params(), args)(*values))


_SERVING_ARGS = (n_adapt, b_adapt, n_lora, kv_bytes, seq_kv, p, n_param, n_gpu, hbm_bw, flops)


def multi_lora_serving(adapters, *, per_adapter_batch, adapter_params_count, context, model, gpu,
                       n_chips, capped=False) -> dict[str, np.ndarray]:
    """Step time (s), tokens/s and $ per million tokens of a multi-LoRA instance.

    Evaluates eq-rollouts-multi-lora-step-time and eq-rollouts-multi-lora-cost for an array of
    adapter counts; ``model`` and ``gpu`` are presets, ``n_chips`` GPUs share the instance and
    ``adapter_params_count`` is N_LoRA (0 for the base model alone). Prices are the preset's.
    """
    n = np.asarray(adapters, dtype=float)
    if n.size == 0 or not np.all(np.isfinite(n)) or np.any(n <= 0):
        raise InputError(f"adapters must be positive numbers, got {adapters!r}")
    values = (n, positive("per_adapter_batch", per_adapter_batch),
              positive("adapter_params_count", adapter_params_count, allow_zero=True),
              model.kv_bytes_per_token, positive("context", context), model.weight_bytes,
              model.total_params, positive_int("n_chips", n_chips), gpu.bandwidth(capped),
              gpu.flops(model.weight_bits, capped))
    step = compile_fn(multi_lora_step_time().rhs.subs(b, n_adapt * b_adapt), _SERVING_ARGS)(*values)
    gpu_seconds = compile_fn(multi_lora_gpu_seconds(), _SERVING_ARGS)(*values)
    batch = n * values[1]
    return {"step_s": step, "tokens_per_s": batch / step,
            "usd_per_mtok": usd_per_million_tokens(gpu_seconds, gpu.price_per_hour)}


def adapter_limits(*, per_adapter_batch, adapter_params_count, context, model, gpu, n_chips,
                   capped=False) -> dict[str, float]:
    """n*_adapt (eq-rollouts-adapters-critical) and n^max_adapt (eq-rollouts-max-adapters)."""
    values = {b_adapt: positive("per_adapter_batch", per_adapter_batch),
              n_lora: positive("adapter_params_count", adapter_params_count, allow_zero=True),
              kv_bytes: model.kv_bytes_per_token, seq_kv: positive("context", context),
              p: model.weight_bytes, n_param: model.total_params,
              n_gpu: positive_int("n_chips", n_chips), hbm_bw: gpu.bandwidth(capped),
              flops: gpu.flops(model.weight_bits, capped), hbm_cap: gpu.hbm_bytes}
    star_expr = adapters_critical().rhs
    max_expr = max_adapters().rhs.args[0]  # inside the floor
    star = float(compile_fn(star_expr, tuple(values))(*values.values()))
    most = float(compile_fn(max_expr, tuple(values))(*values.values()))
    if most < 0:
        raise InputError(f"model {model.name!r} does not fit in {n_chips} x {gpu.name}")
    return {"critical": star, "max": float(math.floor(most))}

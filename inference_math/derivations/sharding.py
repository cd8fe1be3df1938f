"""How many chips: sharding a dense model for decode (Austin et al. 2025; Pope et al. 2023).

Four questions, each answered by a derivation:

* how far model parallelism can go before moving activations over ICI takes longer than reading
  the weight shards from HBM (the scaling book's Y_max = F/(B·beta));
* when 2-D weight-stationary sharding communicates less than 1-D, in two accountings that are
  kept apart: the scaling book's (bytes, collectives credited with the torus axes they span,
  worked problem Q7 and Appendix B) and the one of the notes on Pope et al. (elements, no axis
  credit); a third derivation with the axis credits as symbols shows why they disagree;
* how many chips the weights need at all (memory lower bound);
* when the activation collectives of decode are latency bound (Appendix C).

The coefficients the sources state are module constants that name their source; closed forms are
derived from them by SymPy (solve, diff, second-derivative checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sympy as sp

from ..core.numeric import compile_fn
from ..core.registry import derivation
from ..core.symbols import (
    alpha_ici,
    b,
    beta_bw,
    buf_lat,
    d_ff,
    d_model,
    flops,
    hbm_bw,
    hbm_cap,
    ici_bw,
    k_1d,
    k_2d,
    msg_bytes,
    n_cross,
    n_cross_bytes,
    n_cross_el,
    n_gpu,
    n_min,
    n_param,
    n_wg,
    n_wg_next,
    n_wg_star,
    net_bw,
    p,
    p_act,
    seq_q,
    t_1d,
    t_1d_el,
    t_2d,
    t_2d_el,
    t_2d_el_star,
    t_2d_star,
    t_coll,
    t_hbm,
    t_hop,
    t_ici,
    t_wg_el,
    t_wg_el_star,
    t_xyz_el,
    tau_hop,
    tok_2d_wg,
    tok_2d_wg_star,
    tok_wg_wg,
    tok_wg_xyz,
    x_2d,
    x_star,
    y_lat,
    y_max,
    y_model,
    y_pre,
    yz_2d,
    yz_star,
)
from ..core.validation import InputError, positive
from .roofline import arithmetic_time

if TYPE_CHECKING:  # a type only: derivations never import the presets
    from ..presets.hardware import GPU

# --- coefficients stated by the sources ---------------------------------------------------------

#: Austin et al. (2025), Q7: steps 1 and 5 of 2-D weight-stationary, an AllGather and a
#: ReduceScatter of the [B, D/X] activations, each over the Y and Z axes.
COLLECTIVES_D_2D = 2
#: Austin et al. (2025), Q7: "we scale our comms by the number of axes over which each operation
#: is performed"; the d_model collectives of steps 1 and 5 span two axes (Y and Z).
AXES_D_2D = 2
#: Austin et al. (2025), Q7: "the AllReduce is twice as expensive" (step 3, over X).
ALLREDUCE_FACTOR = 2
#: Austin et al. (2025), Q7: the AllReduce of step 3 spans the one axis X.
AXES_F_2D = 1
#: Austin et al. (2025), Q7 quotes T = 4BD/(3·W_ici) for 1-D model parallelism "from above". We
#: read it as an AllGather and a ReduceScatter of the bf16 [B, D] activations credited with the
#: three axes of the torus; at 2 bytes per element this reproduces the quoted 4/3 exactly.
COLLECTIVES_1D = 2
AXES_1D = 3
#: Austin et al. (2025), Q7: "assuming F = 4D (as in LLaMA-2)".
F_OVER_D_Q7 = 4
#: Notes on Pope et al. (2023): 1-D weight-stationary moves "about BLE" elements in its
#: all-gather and again in its reduce-scatter; the notes charge no axis credit.
COLLECTIVES_1D_ESTI = 2
#: Notes on Pope et al. (2023): the 2-D cost 8BLE/(sqrt(n)·bandwidth) assumes d_ff = 4·d_model.
F_OVER_D_ESTI = 4
#: Notes on Pope et al. (2023): the printed 2-D coefficient at d_ff = 4·d_model.
ESTI_2D_COEFFICIENT = 8

#: Inputs and printed results quoted from the sources of the chapter "How many chips".
#: AB = Austin et al. (2025), "All About Transformer Inference" (the scaling book, part 7);
#: ESTI = the notes on Pope et al. (2023). "[later rev.]" = a later revision of the AB chapter.
#: Quoted so that the book can compare against them; the chapter and the reproduction record
#: both read them from here.
QUOTED = {
    # AB, sec. "Generation": the model-sharding example and beta "around 8" for TPU v5e.
    "gen_d_ff": 16384, "gen_batch": 32, "gen_beta": 8, "gen_y_max": 64,
    # AB, Q7: F = 4D, the printed coefficient, the printed crossover (81), the later revision's
    # crossover (72), and "ICI bound at around ~20 way tensor parallelism".
    "q7_f_over_d": 4, "q7_t_coeff": 11.3, "q7_crossover_printed": 81,
    "q7_crossover_later_rev": 72, "q7_historic_tp": 20,
    # AB, LLaMA 2-13B table: ffw_multiplier F // D.
    "llama2_13b_f_over_d": 2.7,
    # ESTI, sec. "2D Weight Stationary": d_ff = 4 d_model, 8BLE/sqrt(n), "n_chips > 16".
    "esti_f_over_e": 4, "esti_2d_coeff": 8, "esti_crossover": 16,
    # ESTI, sec. "Partitioning The MLP": a 540B model in int8 on 32 GB cards needs 17 chips.
    "esti_params": 540e9, "esti_chip_bytes": 32e9, "esti_bytes_per_weight": 1,
    "esti_min_chips": 17,
    # ESTI, sec. "Additional Optimizations": 30% of HBM reserved for the KV cache.
    "esti_kv_fraction": 0.30,
    # ESTI, intro: "a 3D torus of up to 256 TPUv4 chips with 270GB/s network bandwidth".
    "esti_net_bytes_per_s": 270e9,
    # ESTI, intro: "29ms/tok latency @ int8 on 64 chips" for PaLM 540B.
    "esti_latency_ms": 29, "esti_latency_chips": 64,
    # AB, sec. "Prefill": model parallelism "up to ... around F / 2550 for 1 axis (usually
    # around 4-8 way sharding)"; the 2550 is alpha_ICI, the arithmetic rate over ICI bandwidth.
    "prefill_alpha": 2550, "prefill_ways_lo": 4, "prefill_ways_hi": 8,
    # AB, App. C: 8-way sharding, 4.5e10 B/s one-direction ICI, 1 us per hop, 360 kB buffer,
    # BS = 16, D = 8192 in int8 = "131kB", the divisor 45,000 of Y > BD/45,000.
    "appc_shards": 8, "appc_ici_bw": 4.5e10, "appc_t_hop": 1e-6, "appc_buffer": 360e3,
    "appc_batch": 16, "appc_d_model": 8192, "appc_act_bytes": 1, "appc_act_printed": 131e3,
    "appc_divisor": 45000,
    # AB, worked problems: the model "based on LLaMA-2 13B", whose shapes the figures use (its
    # problems are answered in the worked-problems chapter from kv_cache.WORKED_*).
    "wp": {"layers": 64, "d_model": 4096, "d_ff": 16384, "n_q": 32, "n_kv": 8, "d_head": 256,
           "vocab": 32128},
}



def _optimise_over_x(cost: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """Minimise a 2-D communication time over X with YZ = N_GPU/X by calculus.

    Returns (X*, T*). Raises ArithmeticError unless there is exactly one positive stationary
    point and the second derivative is positive there.
    """
    along_x = cost.subs(yz_2d, n_gpu / x_2d)
    slope = sp.diff(along_x, x_2d)
    roots = [r for r in sp.solve(sp.Eq(slope, 0), x_2d) if r.is_positive is not False]
    if len(roots) != 1:
        raise ArithmeticError(f"expected one positive stationary point, got {roots}")
    (x_opt,) = roots
    curvature = sp.simplify(sp.diff(along_x, x_2d, 2).subs(x_2d, x_opt))
    if not curvature.is_positive:
        raise ArithmeticError("the stationary point is not a minimum")
    return sp.simplify(x_opt), sp.simplify(along_x.subs(x_2d, x_opt))


# --- generation: how far model parallelism goes ------------------------------------------------


@derivation("eq-sharding-hbm-time", "Austin et al. (2025), sec. 'Generation'")
def hbm_time() -> sp.Eq:
    """Reading one chip's 1/Y share of a d_model x d_ff matrix from HBM (eq-sharding-hbm-time).

    The source writes 2DF/(Y·W_hbm) for bf16 weights; the 2 is p.
    """
    return sp.Eq(t_hbm, p * d_model * d_ff / (y_model * hbm_bw))


@derivation("eq-sharding-ici-time", "Austin et al. (2025), sec. 'Generation'")
def ici_time() -> sp.Eq:
    """Moving the b x d_model activations over ICI, whatever Y (eq-sharding-ici-time).

    The source writes 2BD/W_ici for bf16 activations; the 2 is p_act.
    """
    return sp.Eq(t_ici, p_act * b * d_model / ici_bw)


@derivation("eq-sharding-y-max", "Austin et al. (2025), sec. 'Generation'")
def max_model_parallelism() -> sp.Eq:
    """Y_max = p·F/(p_act·b·beta) with beta = B/W_ICI (eq-sharding-y-max).

    Solved from T_HBM = T_ICI; T_HBM falls with Y and T_ICI does not depend on it, so ICI is the
    bottleneck exactly when Y > Y_max. With p = p_act it is the source's F/(B·beta).
    """
    (y,) = sp.solve(sp.Eq(hbm_time().rhs, ici_time().rhs), y_model)
    return sp.Eq(y_max, sp.simplify(y.subs(ici_bw, hbm_bw / beta_bw)))


@derivation("eq-sharding-beta", "Austin et al. (2025), sec. 'Generation'")
def bandwidth_ratio_definition() -> sp.Eq:
    """beta = B/W_ICI, HBM bandwidth over ICI bandwidth (eq-sharding-beta)."""
    return sp.Eq(beta_bw, hbm_bw / ici_bw)


# --- 2-D weight-stationary, scaling-book accounting (bytes, axis credit) -----------------------


@derivation("eq-sharding-2d-comm", "Austin et al. (2025), Q7 and App. B")
def comm_time_2d() -> sp.Eq:
    """Per-layer MLP communication of 2-D weight-stationary, in bytes (eq-sharding-2d-comm).

    Two d_model collectives of p_act·b·d_model/X bytes credited with two axes, plus an AllReduce
    (counted twice) of p_act·b·d_ff/YZ bytes over one axis. At p_act = 2 it is the source's
    2BD/(X·W) + 4BF/(YZ·W).
    """
    d_part = COLLECTIVES_D_2D * p_act * b * d_model / (x_2d * AXES_D_2D * ici_bw)
    f_part = ALLREDUCE_FACTOR * p_act * b * d_ff / (yz_2d * AXES_F_2D * ici_bw)
    return sp.Eq(t_2d, d_part + f_part)


@derivation("eq-sharding-1d-comm", "Austin et al. (2025), Q7")
def comm_time_1d() -> sp.Eq:
    """Per-layer MLP communication of 1-D model parallelism, in bytes (eq-sharding-1d-comm).

    The source's 4BD/(3·W_ici) at p_act = 2; it does not depend on the number of chips.
    """
    return sp.Eq(t_1d, COLLECTIVES_1D * p_act * b * d_model / (AXES_1D * ici_bw))


def _optimum_2d() -> tuple[sp.Expr, sp.Expr]:
    return _optimise_over_x(comm_time_2d().rhs)


@derivation("eq-sharding-2d-x-opt", "Austin et al. (2025), Q7 (general F: derived)")
def optimal_x_2d() -> sp.Eq:
    """X* = sqrt(N·D/(2F)) (eq-sharding-2d-x-opt); sqrt(N/8) at F = 4D."""
    return sp.Eq(x_star, _optimum_2d()[0])


@derivation("eq-sharding-2d-yz-opt", "Austin et al. (2025), Q7 (general F: derived)")
def optimal_yz_2d() -> sp.Eq:
    """(YZ)* = N/X* = sqrt(2N·F/D) (eq-sharding-2d-yz-opt); sqrt(8N) at F = 4D."""
    return sp.Eq(yz_star, sp.simplify(n_gpu / _optimum_2d()[0]))


@derivation("eq-sharding-2d-t-opt", "Austin et al. (2025), Q7 (general F: derived)")
def optimal_comm_time_2d() -> sp.Eq:
    """T*_2D = 2·sqrt(2)·p_act·b·sqrt(D·F)/(sqrt(N)·W_ICI) (eq-sharding-2d-t-opt).

    At p_act = 2 this is 4·sqrt(2)·B·D·sqrt(F/D)/(sqrt(N)·W); at F = 4D, sqrt(128)·B·D/(sqrt(N)·W).
    """
    return sp.Eq(t_2d_star, _optimum_2d()[1])


@derivation("eq-sharding-2d-crossover", "Austin et al. (2025), Q7 (corrected: erratum)")
def crossover_2d_bytes() -> sp.Eq:
    """N_x = 18·F/D chips (eq-sharding-2d-crossover): T*_2D = T_1D solved for N_GPU.

    72 at F = 4D; the source prints 81 (its 128·(3/4)^2 is 72).
    """
    (n,) = sp.solve(sp.Eq(optimal_comm_time_2d().rhs, comm_time_1d().rhs), n_gpu)
    return sp.Eq(n_cross_bytes, sp.simplify(n))


def optimum_2d_at_ratio(f_over_d=F_OVER_D_Q7) -> dict[str, sp.Expr]:
    """X*, (YZ)*, T*_2D and N_x with d_ff = f_over_d·d_model substituted *before* optimising.

    An independent route to the F = 4D results of Q7 (diff, solve and the second-derivative
    check run on the specialised cost), to compare with the general derivations.
    """
    ratio = sp.nsimplify(f_over_d)
    cost = comm_time_2d().rhs.subs(d_ff, ratio * d_model)
    x_opt, t_opt = _optimise_over_x(cost)
    one_d = comm_time_1d().rhs
    (n,) = sp.solve(sp.Eq(t_opt, one_d), n_gpu)
    return {"x_star": x_opt, "yz_star": sp.simplify(n_gpu / x_opt), "t_star": t_opt,
            "n_cross": sp.simplify(n)}


def printed_crossover_q7() -> sp.Expr:
    """The source's condition N > 128·(3/4)^2, evaluated exactly (it prints 81; it is 72)."""
    return sp.Integer(128) * sp.Rational(3, 4) ** 2


# --- 2-D weight-stationary, element accounting of the notes on Pope et al. ----------------------


@derivation("eq-sharding-esti-1d", "notes on Pope et al. (2023), sec. '1D Weight Stationary'")
def comm_time_1d_elements() -> sp.Eq:
    """1-D weight-stationary: 2·B·L·E elements per layer over the network (eq-sharding-esti-1d).

    B·L is b·T here (T = 1 in decode), E is d_model.
    """
    return sp.Eq(t_1d_el, COLLECTIVES_1D_ESTI * b * seq_q * d_model / net_bw)


@derivation("eq-sharding-esti-2d", "notes on Pope et al. (2023), sec. '2D Weight Stationary' (derived)")
def comm_time_2d_elements() -> sp.Eq:
    """2-D weight-stationary in elements, before optimising (eq-sharding-esti-2d).

    An all-gather and a reduce-scatter of B·L·E/X elements over YZ, and a reduce-scatter and an
    all-gather of B·L·F/YZ elements over X. The notes print only the optimum; this sum is our
    reconstruction, which reproduces it.
    """
    d_part = 2 * b * seq_q * d_model / x_2d
    f_part = 2 * b * seq_q * d_ff / yz_2d
    return sp.Eq(t_2d_el, (d_part + f_part) / net_bw)


def _optimum_2d_elements() -> tuple[sp.Expr, sp.Expr]:
    return _optimise_over_x(comm_time_2d_elements().rhs)


@derivation("eq-sharding-esti-2d-opt", "notes on Pope et al. (2023), sec. '2D Weight Stationary'")
def optimal_comm_time_2d_elements() -> sp.Eq:
    """Least 2-D time over X: 4·B·L·sqrt(E·F)/(sqrt(n)·W) (eq-sharding-esti-2d-opt).

    At F = 4E it is the notes' 8·B·L·E/(sqrt(n_chips)·bandwidth).
    """
    return sp.Eq(t_2d_el_star, _optimum_2d_elements()[1])


def optimal_x_2d_elements() -> sp.Expr:
    """X* = sqrt(n·E/F) in the element accounting (sqrt(n)/2 at F = 4E)."""
    return _optimum_2d_elements()[0]


@derivation("eq-sharding-esti-crossover", "notes on Pope et al. (2023), sec. '2D Weight Stationary'")
def crossover_2d_elements() -> sp.Eq:
    """N_x = 4·F/E chips in the element accounting (eq-sharding-esti-crossover); 16 at F = 4E."""
    (n,) = sp.solve(sp.Eq(optimal_comm_time_2d_elements().rhs, comm_time_1d_elements().rhs),
                    n_gpu)
    return sp.Eq(n_cross_el, sp.simplify(n))


def printed_crossover_esti() -> sp.Expr:
    """Solve 2·B·L·E = 8·B·L·E/sqrt(n) for n, with the notes' printed 2-D cost (F = 4E)."""
    printed_2d = ESTI_2D_COEFFICIENT * b * seq_q * d_model / (sp.sqrt(n_gpu) * net_bw)
    (n,) = sp.solve(sp.Eq(printed_2d, comm_time_1d_elements().rhs), n_gpu)
    return n


# --- why the two crossovers differ ----------------------------------------------------------------


@derivation("eq-sharding-crossover-axis-credit",
            "this book; Austin et al. (2025), Q7 and Pope et al. (2023) as special cases")
def crossover_with_axis_credit() -> sp.Eq:
    """N_x = 4·k_1D^2·F/(k_2D·D) (eq-sharding-crossover-axis-credit).

    The same collectives as above, in bytes (p_act bytes per element), with the 1-D collectives
    credited with k_1D torus axes and the 2-D d_model collectives with k_2D axes. p_act and the
    bandwidth cancel. k_1D = k_2D = 1 gives the notes' 4F/E; k_1D = 3, k_2D = 2 the scaling
    book's 18F/D.
    """
    one_d = COLLECTIVES_1D * p_act * b * d_model / (k_1d * ici_bw)
    two_d = (COLLECTIVES_D_2D * p_act * b * d_model / (k_2d * x_2d * ici_bw)
             + ALLREDUCE_FACTOR * p_act * b * d_ff / (yz_2d * ici_bw))
    _, t_opt = _optimise_over_x(two_d)
    (n,) = sp.solve(sp.Eq(t_opt, one_d), n_gpu)
    return sp.Eq(n_cross, sp.simplify(n))


# --- memory lower bound ---------------------------------------------------------------------------


@derivation("eq-sharding-min-chips", "notes on Pope et al. (2023), sec. 'Partitioning The MLP'")
def min_chips_for_weights() -> sp.Eq:
    """Fewest chips whose HBM holds the weights: ceil(p·N/M_HBM) (eq-sharding-min-chips)."""
    return sp.Eq(n_min, sp.ceiling(p * n_param / hbm_cap))


# --- latency-bound collectives (Appendix C) ------------------------------------------------------


@derivation("eq-sharding-hop-time", "Austin et al. (2025), App. C")
def hop_time() -> sp.Eq:
    """One hop of a collective over Y shards (eq-sharding-hop-time).

    It carries M_msg/Y bytes and costs the larger of that transfer and the fixed latency t_hop.
    """
    return sp.Eq(tau_hop, sp.Max(t_hop, msg_bytes / (y_model * ici_bw)))


@derivation("eq-sharding-latency-buffer", "Austin et al. (2025), App. C")
def latency_bound_buffer() -> sp.Eq:
    """M_lat = Y·W_ICI·t_hop (eq-sharding-latency-buffer): the two terms of the hop time meet."""
    (m,) = sp.solve(sp.Eq(*hop_time().rhs.args), msg_bytes)
    return sp.Eq(buf_lat, m)


@derivation("eq-sharding-latency-ways", "Austin et al. (2025), App. C")
def latency_bound_ways() -> sp.Eq:
    """Y_lat = p_act·b·D/(W_ICI·t_hop) (eq-sharding-latency-ways).

    The b x d_model activations are latency bound on more than Y_lat shards; in int8 with the
    source's 4.5e10 B/s and 1 µs this is its Y > BD/45,000.
    """
    activations = p_act * b * d_model
    (y,) = sp.solve(sp.Eq(latency_bound_buffer().rhs, activations), y_model)
    return sp.Eq(y_lat, y)


@derivation("eq-sharding-ring-allgather", "Austin et al. (2025), App. C (recap of its sec. 3)")
def ring_allgather_time() -> sp.Eq:
    """T = max(t_hop·Y/2, M_msg/W_ICI) for an all-gather over a bidirectional ring of Y chips.

    (eq-sharding-ring-allgather.) Its two terms meet at M_msg = Y·W_ICI·t_hop/2, half the buffer
    of the per-hop rule eq-sharding-latency-buffer that the appendix then applies.
    """
    return sp.Eq(t_coll, sp.Max(t_hop * y_model / 2, msg_bytes / ici_bw))


def ring_allgather_buffer() -> sp.Expr:
    """Message size at which the two terms of eq-sharding-ring-allgather are equal."""
    (m,) = sp.solve(sp.Eq(*ring_allgather_time().rhs.args), msg_bytes)
    return m


# --- numbers --------------------------------------------------------------------------------------


def bandwidth_ratio(gpu: GPU, directions: int = 1) -> float:
    """beta = HBM bandwidth / (directions x one-direction ICI link bandwidth) of a TPU preset.

    ``directions`` = 2 counts both directions of a link. InputError if the preset has no ICI
    figure (the GPU presets) or ``directions`` is not 1 or 2.
    """
    if directions not in (1, 2) or isinstance(directions, bool):
        raise InputError(f"directions must be 1 or 2, got {directions!r}")
    if gpu.ici_bandwidth is None:
        raise InputError(f"ici_bandwidth: preset {gpu.name!r} has no ICI bandwidth")
    fn = compile_fn(bandwidth_ratio_definition(), (hbm_bw, ici_bw))
    return float(fn(gpu.hbm_bandwidth, directions * gpu.ici_bandwidth))


def max_model_parallelism_value(d_ff_value, batch, beta, weight_bytes=2, act_bytes=2):
    """Y_max (eq-sharding-y-max) for numbers or arrays; InputError on a non-positive input."""
    for field, value in (("d_ff", d_ff_value), ("batch", batch), ("beta", beta),
                         ("weight_bytes", weight_bytes), ("act_bytes", act_bytes)):
        _check_positive(field, value)
    fn = compile_fn(max_model_parallelism(), (p, d_ff, p_act, b, beta_bw))
    return _scalar(fn(weight_bytes, d_ff_value, act_bytes, batch, beta))


def min_chips(n_params, bytes_per_weight, chip_bytes) -> int:
    """Fewest chips whose HBM holds the weights (eq-sharding-min-chips)."""
    for field, value in (("n_params", n_params), ("bytes_per_weight", bytes_per_weight),
                         ("chip_bytes", chip_bytes)):
        positive(field, value)
    fn = compile_fn(min_chips_for_weights(), (p, n_param, hbm_cap))
    return int(fn(bytes_per_weight, n_params, chip_bytes))


def latency_bound_buffer_value(n_shards, ici_bandwidth, hop_latency) -> float:
    """M_lat in bytes (eq-sharding-latency-buffer)."""
    for field, value in (("n_shards", n_shards), ("ici_bandwidth", ici_bandwidth),
                         ("hop_latency", hop_latency)):
        positive(field, value)
    fn = compile_fn(latency_bound_buffer(), (y_model, ici_bw, t_hop))
    return float(fn(n_shards, ici_bandwidth, hop_latency))


def latency_bound_ways_value(batch, d_model_value, ici_bandwidth, hop_latency, act_bytes=1):
    """Y_lat (eq-sharding-latency-ways) for numbers or arrays."""
    for field, value in (("batch", batch), ("d_model", d_model_value),
                         ("ici_bandwidth", ici_bandwidth), ("hop_latency", hop_latency),
                         ("act_bytes", act_bytes)):
        _check_positive(field, value)
    fn = compile_fn(latency_bound_ways(), (p_act, b, d_model, ici_bw, t_hop))
    return _scalar(fn(act_bytes, batch, d_model_value, ici_bandwidth, hop_latency))


def comm_times_bytes(n_chips, batch, d_model_value, d_ff_value, ici_bandwidth, act_bytes=2):
    """(T_1D, T*_2D) in seconds, scaling-book accounting, for numbers or arrays of chip counts."""
    for field, value in (("n_chips", n_chips), ("batch", batch), ("d_model", d_model_value),
                         ("d_ff", d_ff_value), ("ici_bandwidth", ici_bandwidth),
                         ("act_bytes", act_bytes)):
        _check_positive(field, value)
    args = (n_gpu, p_act, b, d_model, d_ff, ici_bw)
    values = (n_chips, act_bytes, batch, d_model_value, d_ff_value, ici_bandwidth)
    one_d = compile_fn(comm_time_1d(), args)(*values)
    two_d = compile_fn(optimal_comm_time_2d(), args)(*values)
    return _scalar(one_d), _scalar(two_d)


def _check_positive(field: str, value) -> None:
    """positive() for a scalar, or for every element of an array-like."""
    if np.ndim(value) == 0:
        positive(field, value)
        return
    for item in np.asarray(value, dtype=object).ravel():
        positive(field, item if not isinstance(item, np.generic) else item.item())


def _scalar(out):
    out = np.asarray(out, dtype=float)
    return float(out) if out.ndim == 0 else out


# --- weight-gathered layouts and the MLP communication frontier (notes on Pope et al.) ----------
#
# Element accounting as above: a collective costs the elements of its per-chip result, divided by
# the network bandwidth in elements per second. The weights E_x F_yz (and F_yz E_x) are stored
# split over all n chips; a weight-gathered layout all-gathers them over a group of N_WG chips
# (X, XY or XYZ) before use, and splits the batch over the same group, so the activations move
# only over the remaining n/N_WG chips, as in 2-D weight-stationary.

#: Notes on Pope et al. (2023), sec. 'Weight Gathered': the two MLP weight matrices, E_x F_yz and
#: F_yz E_x, are both all-gathered before use.
WEIGHT_MATRICES_WG = 2
#: The activation collectives of a weight-gathered layout: an all-gather of the input over the
#: chips that split E, and a reduce-scatter of the partial sums of the output over the same chips
#: (as in 1-D and 2-D weight-stationary).
ACTIVATION_COLLECTIVES_WG = 2


@derivation("eq-sharding-wg-comm",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' (cost derived)")
def comm_time_weight_gathered() -> sp.Eq:
    """Weights all-gathered over N_WG < n chips (eq-sharding-wg-comm).

    Each chip ends the weight all-gather with E·F·N_WG/n elements of each matrix; the batch is
    split N_WG ways, so the activation all-gather and reduce-scatter each end with b·T·E/N_WG
    elements. N_WG = X is X-weight-gathered, N_WG = XY is XY-weight-gathered.
    """
    weights = WEIGHT_MATRICES_WG * d_model * d_ff * n_wg / n_gpu
    activations = ACTIVATION_COLLECTIVES_WG * b * seq_q * d_model / n_wg
    return sp.Eq(t_wg_el, (weights + activations) / net_bw)


@derivation("eq-sharding-wg-xyz",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' ('constant communication cost')")
def comm_time_xyz_weight_gathered() -> sp.Eq:
    """XYZ-weight-gathered: 2·E·F/W_net per layer (eq-sharding-wg-xyz).

    The group is every chip (N_WG = n) and the activations B_xyz L E are split over the batch
    only, so no activation collective is left: the weight term of eq-sharding-wg-comm at N_WG = n.
    """
    weights = comm_time_weight_gathered().rhs.subs(b, 0).subs(n_wg, n_gpu)
    return sp.Eq(t_xyz_el, sp.simplify(weights))


def _optimum_weight_gathered() -> tuple[sp.Expr, sp.Expr]:
    cost = comm_time_weight_gathered().rhs
    slope = sp.diff(cost, n_wg)
    roots = [r for r in sp.solve(sp.Eq(slope, 0), n_wg) if r.is_positive is not False]
    if len(roots) != 1:
        raise ArithmeticError(f"expected one positive stationary point, got {roots}")
    (n_opt,) = roots
    if not sp.simplify(sp.diff(cost, n_wg, 2).subs(n_wg, n_opt)).is_positive:
        raise ArithmeticError("the stationary point is not a minimum")
    return sp.simplify(n_opt), sp.simplify(cost.subs(n_wg, n_opt))


@derivation("eq-sharding-wg-group-opt",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' (derived)")
def optimal_gather_group() -> sp.Eq:
    """N*_WG = sqrt(b·T·n/F) (eq-sharding-wg-group-opt): it grows as the root of the tokens."""
    return sp.Eq(n_wg_star, _optimum_weight_gathered()[0])


@derivation("eq-sharding-wg-opt",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' (derived)")
def optimal_comm_time_weight_gathered() -> sp.Eq:
    """Least weight-gathered time over the group: 4·E·sqrt(b·T·F/n)/W_net (eq-sharding-wg-opt)."""
    return sp.Eq(t_wg_el_star, _optimum_weight_gathered()[1])


def _tokens_where(lhs: sp.Expr, rhs: sp.Expr) -> sp.Expr:
    """The tokens per step b·T at which two costs linear in b are equal (one positive root)."""
    roots = [r for r in sp.solve(sp.Eq(lhs, rhs), b) if r.is_positive is not False]
    if len(roots) != 1:
        raise ArithmeticError(f"expected one positive crossing, got {roots}")
    return sp.simplify(roots[0] * seq_q)


@derivation("eq-sharding-wg-switch-2d",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' (derived)")
def switch_tokens_2d_to_weight_gathered() -> sp.Eq:
    """Tokens per step where gathering over N_WG chips ties with the best 2-D split.

    Above it (eq-sharding-wg-switch-2d) the weight-gathered layout communicates less, provided
    its slope in the tokens is the smaller one (N_WG > sqrt(n·E/F)/2); the root is positive exactly then.
    """
    tokens = _tokens_where(optimal_comm_time_2d_elements().rhs, comm_time_weight_gathered().rhs)
    return sp.Eq(tok_2d_wg, tokens)


@derivation("eq-sharding-wg-switch-groups",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' (derived)")
def switch_tokens_between_groups() -> sp.Eq:
    """Tokens per step where groups N_WG < N_WG' tie: F·N·N'/n (eq-sharding-wg-switch-groups)."""
    cost = comm_time_weight_gathered().rhs
    return sp.Eq(tok_wg_wg, _tokens_where(cost, cost.subs(n_wg, n_wg_next)))


@derivation("eq-sharding-wg-switch-xyz",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' (derived)")
def switch_tokens_to_xyz() -> sp.Eq:
    """Tokens where a group N_WG < n ties with XYZ: F·N·(n - N)/n (eq-sharding-wg-switch-xyz)."""
    return sp.Eq(tok_wg_xyz, sp.factor(_tokens_where(comm_time_weight_gathered().rhs,
                                                     comm_time_xyz_weight_gathered().rhs)))


@derivation("eq-sharding-wg-switch-opt",
            "notes on Pope et al. (2023), sec. 'Weight Gathered' (derived)")
def switch_tokens_optimal_layouts() -> sp.Eq:
    """Tokens per step where the best gather group ties with the best 2-D split: b·T = E.

    Both optima (eq-sharding-wg-switch-opt) are found by calculus over a continuous X or N_WG;
    the tie does not depend on n.
    """
    lhs = optimal_comm_time_2d_elements().rhs
    rhs = optimal_comm_time_weight_gathered().rhs
    tokens = sp.solve(sp.Eq(lhs ** 2, rhs ** 2), b)  # both sides are positive
    roots = [r for r in tokens if r.is_positive is not False]
    if len(roots) != 1:
        raise ArithmeticError(f"expected one positive crossing, got {roots}")
    return sp.Eq(tok_2d_wg_star, sp.simplify(roots[0] * seq_q))


def mlp_comm_times_elements(tokens, n_chips, d_model_value, d_ff_value, net_bandwidth, groups):
    """Per-layer MLP communication time (s) of each layout, element accounting, for token arrays.

    Returns a dict: '1D' (eq-sharding-esti-1d), '2D' (eq-sharding-esti-2d-opt), one entry per
    gather group N_WG < n_chips in ``groups`` (eq-sharding-wg-comm) and 'XYZ'
    (eq-sharding-wg-xyz). ``tokens`` is b·T.
    """
    for field, value in (("tokens", tokens), ("n_chips", n_chips), ("d_model", d_model_value),
                         ("d_ff", d_ff_value), ("net_bandwidth", net_bandwidth)):
        _check_positive(field, value)
    for group in groups:
        positive("groups", group)
        if group >= n_chips:
            raise InputError(f"groups: a gather group must be below n_chips, got {group!r}")
    tokens = np.asarray(tokens, dtype=float)
    common = {seq_q: 1, n_gpu: n_chips, d_model: d_model_value, d_ff: d_ff_value,
              net_bw: net_bandwidth}
    out = {}
    for key, eq in (("1D", comm_time_1d_elements()), ("2D", optimal_comm_time_2d_elements())):
        out[key] = compile_fn(eq.rhs.subs(common), (b,))(tokens) * np.ones_like(tokens)
    wg = compile_fn(comm_time_weight_gathered().rhs.subs(common), (b, n_wg))
    for group in groups:
        out[group] = wg(tokens, group) * np.ones_like(tokens)
    xyz = float(comm_time_xyz_weight_gathered().rhs.subs(common))
    out["XYZ"] = np.full_like(tokens, xyz)
    return {key: _scalar(value) for key, value in out.items()}


# --- prefill: model parallelism up to the ICI bound (scaling book, sec. 'Prefill') -------------


@derivation("eq-sharding-prefill-y-max", "Austin et al. (2025), sec. 'Prefill' (derived)")
def prefill_model_parallelism() -> sp.Eq:
    """Most ways of model parallelism for a compute-bound prefill (eq-sharding-prefill-y-max).

    The arithmetic of a Y-way split d_model x d_ff matrix for b tokens, 2·b·d_model·d_ff/(Y·C),
    against moving their activations over ICI, eq-sharding-ici-time; the tokens cancel.
    """
    arithmetic = arithmetic_time().subs(n_param, d_model * d_ff / y_model)
    (root,) = sp.solve(sp.Eq(arithmetic, ici_time().rhs), y_model)
    return sp.Eq(y_pre, sp.simplify(root))


@derivation("eq-sharding-alpha-ici", "Austin et al. (2025), sec. 'Prefill' ('F / 2550')")
def ici_intensity_definition() -> sp.Eq:
    """alpha_ICI = C/W_ICI (eq-sharding-alpha-ici): with 2-byte activations Y_pre = d_ff/alpha."""
    return sp.Eq(alpha_ici, flops / ici_bw)

"""Writes the small formulas a command evaluates as plain NumPy code, from their derivations:
the serving rules, the estimate's step, the price of a token, the FLOPs of a forward pass, the
latency of a speculative step and a customer's preference along a frontier.

    python -m inference_math.codegen.formulas_codegen    (rewrites fullmodel/formulas_numpy.py)

Deriving them and compiling them with ``sympy.lambdify`` costs half a second on every command
that serves a frontier (a seventh of a second for the FLOPs of a search's MFU); so, as the full
model's terms are (:mod:`.full_model_codegen`), they are printed once, here, as NumPy functions
with their arguments in a fixed order (:data:`FORMULAS`). The output is committed, and a test
regenerates it and compares the text, so it cannot drift from the derivations.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import sympy as sp

from ..analysis import sensitivity_rules as sens
from ..core import symbols as S
from ..core.printing import NAMES, RegistryNumPyPrinter
from ..derivations import queueing as qu
from ..derivations.latency_wall import (
    all_reduce_time_reference_code,
    minimum_token_latency,
    optimal_instance_size,
    token_latency_at_critical_batch,
    token_latency_multi,
)
from ..derivations.sharding import min_chips_for_weights
from ..fullmodel import full_model as fm
from ..fullmodel.search_rules import cost_per_million_tokens, user_preference
from ..fullmodel.speculative import spec_latency
from ..serving import estimate_rules as er
from ..serving import prefill
from ..serving import serving_rules as sr

#: The arguments eq-full-flops is evaluated at; its constants follow, sorted by name.
FLOP_ARGS = (S.b, S.q_len, S.ctx)


def flop_args(expr) -> tuple:
    """(b, q, ℓ) and then eq-full-flops' other symbols, sorted by their registry names."""
    return FLOP_ARGS + tuple(sorted(expr.free_symbols - set(FLOP_ARGS), key=lambda s: NAMES[s]))

TARGET = Path(__file__).parents[1] / "fullmodel" / "formulas_numpy.py"

#: The arguments of the toy model's optimum (eqs. 9, 13-14 above the memory floor) and of the
#: reference code's token latency (eq. 3 with its all-reduce), as toy_model passes them.
TOY_ARGS = (S.p, S.n_param, S.hbm_bw, S.n_layers, S.n_reduce, S.t_hop, S.hbm_cap)
TOY_CODE_ARGS = (S.n_gpu, S.b, S.p, S.n_param, S.hbm_bw, S.flops, S.n_layers, S.n_reduce,
                 S.t_hop, S.t_base)


#: The arguments of a closed-loop run's TTFT (eq-queue-run-mean, eq-queue-run-quantile after
#: its p) and of the prefill queue under arrivals at a rate (eq-queue-prefill-load,
#: eq-queue-pk-wait).
RUN_ARGS = (S.b, S.n_run, S.t_step_mean, S.n_chunks, S.t_mix, S.t_prompt, S.chunk, S.t_burst)
QUEUE_ARGS = (S.lam_req, S.t_prompt, S.chunk, S.t_burst)


def toy_optimum() -> dict[str, sp.Expr]:
    """Memory floor, optimal instance size, minimum latency and 'floor binds' (eqs. 9, 13-14).

    Eq. 9 falls until eq. 13's N* and rises after it (its slope in N_GPU changes sign once), so
    its minimum over instances at or above the floor eq-sharding-min-chips is at N*, with eq. 14's
    latency, unless the floor is larger; then it is at the floor, with eq. 9's latency there.
    """
    floor = min_chips_for_weights().rhs
    unconstrained = optimal_instance_size().rhs
    binds = sp.StrictGreaterThan(floor, unconstrained)
    at_floor = token_latency_at_critical_batch().rhs.subs(S.n_gpu, floor)
    return {"floor": floor,
            "n_star": sp.Piecewise((floor, binds), (unconstrained, True)),
            "min_latency": sp.Piecewise((at_floor, binds), (minimum_token_latency().rhs, True)),
            "floor_binds": sp.Piecewise((1, binds), (0, True))}


def toy_reference_latency() -> sp.Expr:
    """The reference code's token latency: eq. 3 with its all-reduce (a fixed base per call)."""
    return token_latency_multi().rhs.subs(S.t_reduce, all_reduce_time_reference_code().rhs)


def _formulas() -> dict:
    """Generated function name -> (its expression, its arguments in order)."""
    return {
        "chunk_share": (sr.chunk_share().rhs, (S.b, S.chunk, S.t_prompt, S.t_output)),
        "chunks_of_prompt": (sr.chunks_of_prompt(), (S.t_prompt, S.chunk)),
        "mean_step": (sr.mean_step().rhs, (S.b, S.chunk, S.t_prompt, S.t_output, S.t_dec,
                                           S.t_mix)),
        "aggregated_ttft": (sr.aggregated_ttft().rhs, (S.t_mix, S.n_chunks)),
        "open_loop_rate": (sr.open_loop_rate().rhs, (S.b, S.t_output, S.t_step_mean)),
        "open_loop_ttft": (sr.open_loop_ttft().rhs, (S.f_mix, S.t_dec, S.t_mix, S.n_chunks)),
        "mixed_split": (sr.mixed_split().rhs, (S.u_mix, S.u_dec, S.u_chunk, S.b, S.chunk)),
        "output_gpu_seconds": (sr.output_gpu_seconds(), (S.n_gpu, S.b, S.chunk, S.t_prompt,
                                                         S.t_output, S.t_dec, S.t_mix,
                                                         S.phi_in)),
        "input_gpu_seconds": (sr.input_gpu_seconds(), (S.n_gpu, S.chunk, S.t_mix, S.phi_in)),
        "disaggregated_ttft": (sr.disaggregated_ttft().rhs, (S.t_pre, S.kv_prompt, S.n_send,
                                                             S.bw_nic)),
        "disaggregated_rate": (sr.disaggregated_rate().rhs, (S.rate_dec, S.rate_pre, S.rho_io)),
        "pool_ratio": (sr.pool_ratio(), (S.rate_dec, S.rate_pre, S.rho_io)),
        "closed_ttft_mean": (qu.closed_mean().rhs, (S.t_step_mean, S.n_chunks, S.t_mix)),
        "closed_ttft_quantile": (qu.closed_quantile().rhs, (S.quant_p, S.t_step_mean,
                                                            S.n_chunks, S.t_mix)),
        "burst_ttft_prompt": (qu.burst_prompt().rhs, (S.k_wave, S.t_prompt, S.chunk,
                                                       S.t_burst)),
        "run_ttft_mean": (qu.run_mean().rhs, RUN_ARGS),
        "run_ttft_quantile": (qu.run_quantile().rhs, (S.quant_p, *RUN_ARGS)),
        "prefill_load": (qu.prefill_load().rhs, QUEUE_ARGS),
        "pk_wait": (qu.pk_wait().rhs, QUEUE_ARGS),
        "wait_quantile": (qu.wait_quantile().rhs, (S.quant_p, S.rho_pre, S.t_wait)),
        "open_ttft_mean": (qu.open_mean().rhs, (S.t_ttft, S.t_wait)),
        "open_ttft_quantile": (qu.open_quantile().rhs, (S.t_ttft, S.t_wait_q)),
        "estimate_step": (er.step_latency().rhs, er.STEP_ARGS),
        "experts_hit": (er.experts_hit().rhs, (S.n_experts, S.n_active, S.m_tokens)),
        "cost": (cost_per_million_tokens().rhs, (S.n_gpu, S.t_token, S.b, S.price)),
        "sens_one_term": (sens.one_term().rhs, (S.g1_b, S.g1_x, S.eps_price)),
        "sens_corner": (sens.corner().rhs, (S.g1_n, S.g1_b, S.g1_x, S.g2_n, S.g2_b, S.g2_x,
                                            S.eps_price)),
        "spec_latency": (spec_latency().rhs, (S.t_target, S.t_draft, S.gamma, S.accept)),
        "preference": (user_preference().rhs, (S.speed, S.usd_mtok_full, S.pref_exp)),
        "input_cost": (prefill.input_cost().rhs, (S.n_gpu, S.t_prefill, S.b, S.t_prompt, S.price)),
        "disaggregated_ratio": (prefill.disaggregated_ratio().rhs, (S.rho_io, S.usd_mtok_in,
                                                                    S.usd_mtok_full)),
        **{f"toy_{name}": (expr, TOY_ARGS) for name, expr in toy_optimum().items()},
        "toy_reference_latency": (toy_reference_latency(), TOY_CODE_ARGS),
        **{f"forward_flops_{'mla' if mla else 'gqa'}{'_shared' if shared else ''}":
           (expr, flop_args(expr))
           for mla in (False, True) for shared in (False, True)
           for expr in (fm.forward_flops(mla, shared).rhs,)},
    }


FORMULAS = ("chunk_share", "chunks_of_prompt", "mean_step", "aggregated_ttft", "open_loop_rate",
            "open_loop_ttft", "closed_ttft_mean", "closed_ttft_quantile", "burst_ttft_prompt",
            "run_ttft_mean", "run_ttft_quantile", "prefill_load", "pk_wait", "wait_quantile",
            "open_ttft_mean", "open_ttft_quantile", "mixed_split",
            "output_gpu_seconds", "input_gpu_seconds",
            "disaggregated_ttft", "disaggregated_rate", "pool_ratio", "estimate_step", "experts_hit",
            "cost",
            "sens_one_term", "sens_corner", "spec_latency", "preference",
            "forward_flops_gqa", "forward_flops_gqa_shared", "forward_flops_mla",
            "forward_flops_mla_shared", "input_cost", "disaggregated_ratio", "toy_floor",
            "toy_n_star", "toy_min_latency", "toy_floor_binds", "toy_reference_latency")

HEADER = '''"""The serving rules (eq-serve-*), the queueing of prompts (eq-queue-*), the estimate's
step (eq-est-step-latency), the price of a token (eq-search-cost), the elasticities of a cost
(eq-sens-one-term, eq-sens-corner), the latency of a speculative step (eq-spec-latency), the
preference along a frontier (eq-search-preference), the FLOPs of a forward pass (eq-full-flops),
the price of an input token and the pools' ratio (eq-prefill-input-cost, eq-prefill-disagg-ratio)
and the toy model's optimum and reference latency (eqs. 3, 9, 13-14 of eq-wall-*,
eq-sharding-min-chips) as NumPy functions.

GENERATED by inference_math.codegen.formulas_codegen from the SymPy derivations. Do not edit: run
``python -m inference_math.codegen.formulas_codegen``; a test checks that this file is current.
Arguments are registry names, in the order of the generator's table.
"""

import numpy

'''


#: Formulas a command evaluated through ``core.numeric.compile_fn`` before they were generated:
#: printed with their products in the order ``sympy.lambdify`` gives them, so that their numbers
#: stay the same to the last bit (a product's rounding depends on the order of its factors).
IN_LAMBDIFY_ORDER = ("input_cost", "disaggregated_ratio", "toy_floor", "toy_n_star",
                     "toy_min_latency", "toy_floor_binds", "toy_reference_latency")


def _in_lambdify_order(printer, expr: sp.Expr, args: tuple) -> str:
    """``expr`` printed with its factors ordered as ``sympy.lambdify(args, expr)`` orders them.

    lambdify replaces each argument whose name is not a Python identifier (the registry's LaTeX
    names) by a Dummy, ``Dummy_<k>`` in the order it creates them, and SymPy orders a product's
    factors by name; here those arguments become symbols named ``Dummy_<k>`` with k zero-padded
    (the same order whatever Dummies a process made before), printed, then named by the registry.
    """
    fn = sp.lambdify(args, expr, modules="numpy")
    params = fn.__code__.co_varnames[:len(args)]
    made = sorted((int(param.removeprefix("Dummy_")), arg)
                  for param, arg in zip(params, args, strict=True) if param.startswith("Dummy_"))
    stand_ins = {arg: sp.Symbol(f"Dummy_{k:04d}") for k, (_, arg) in enumerate(made)}
    text = printer.doprint(expr.xreplace(stand_ins))
    return re.sub(r"\bDummy_(\d{4})\b", lambda m: NAMES[made[int(m.group(1))][1]], text)


def module_source() -> str:
    printer = RegistryNumPyPrinter()
    formulas = _formulas()
    pieces = [HEADER]
    for name in FORMULAS:
        expr, args = formulas[name]
        missing = expr.free_symbols - set(args)
        if missing:
            raise ValueError(f"{name} needs {sorted(map(str, missing))}")
        text = (_in_lambdify_order(printer, expr, args) if name in IN_LAMBDIFY_ORDER
                else printer.doprint(expr))
        pieces.append(f"\ndef {name}({', '.join(NAMES[a] for a in args)}):\n"
                      f"    return {text}\n\n")
    table = "".join(f"    {name!r}: {tuple(NAMES[a] for a in formulas[name][1])!r},\n"
                    for name in FORMULAS)
    pieces.append(f"\n#: name -> argument names, in order\nARGUMENTS = {{\n{table}}}\n")
    return "".join(pieces).rstrip("\n") + "\n"


def main() -> None:
    TARGET.write_text(module_source())
    print(f"wrote {TARGET.name}", file=sys.stderr)


if __name__ == "__main__":
    main()

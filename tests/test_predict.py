"""predict: the full model at one given deployment, prefill (eq-prefill-*) and the CLI subcommand."""

from __future__ import annotations

import dataclasses
import json
import math
from importlib.resources import files

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from inference_math.cli import main
from inference_math.core import symbols as S
from inference_math.core.validation import InputError
from inference_math.derivations import dense_economics as de
from inference_math.fullmodel.search import Setting, frontier
from inference_math.fullmodel.speculative import spec_latency_fn
from inference_math.presets.hardware import get_gpu
from inference_math.presets.layered import LayeredModel
from inference_math.presets.models import CONFIG_PRESETS, MODELS, get_model
from inference_math.serving import prefill as pf
from inference_math.serving.predict import Deployment, DeploymentError, predict, prefill_terms

H100, H800 = get_gpu("h100"), get_gpu("h800")
LLAMA_70B, LLAMA_8B, DSV3 = get_model("llama-3-70b"), get_model("llama-3-8b"), get_model("deepseek-v3")


def deployment(**changes) -> Deployment:
    base = dict(model=LLAMA_70B, gpu=H100, tp=8, batch=1, input_len=1000, output_len=200,
                curve="physical")
    return Deployment(**{**base, **changes})


# --- decode -----------------------------------------------------------------------------------


def test_a_memory_bound_point_by_hand():
    """Batch 1 on 8 H100s: memory time is the weights and one sequence's KV cache read at the
    capped bandwidth; the rest of the step is 4 launches per layer and the all-reduces. The input
    embedding is a lookup of one row per token, not a read of the matrix."""
    result = predict(deployment())
    context = 1000 + 200 / 2
    # 16-bit Llama 3 70B: about 70.55 B parameters (Meta's model card), less the input embedding
    weights = 2 * (70.55e9 - 128256 * 8192)
    kv = 2 * 8 * 128 * 80 * 2 * context  # K and V, 8 KV heads of 128, 80 layers, 2 bytes
    bandwidth = 8 * H100.hbm_bandwidth * H100.bandwidth_cap
    assert result.decode_terms_ms["memory"] / 1e3 == pytest.approx((weights + kv) / bandwidth,
                                                                    rel=0.01)
    assert result.decode_terms_ms["kernel"] / 1e3 == pytest.approx(4 * 80 * H100.kernel_launch_s)
    assert result.binding_decode == "memory"
    assert result.context == context
    assert result.tpot_ms == pytest.approx(sum(result.decode_terms_ms[k] for k in (
        "kernel", "network_latency", "network_bandwidth", "memory")))
    assert result.tokens_per_s_per_user == pytest.approx(1e3 / result.tpot_ms)
    assert result.output_tokens_per_s_per_gpu == pytest.approx(1e3 / result.tpot_ms / 8)
    # $/Mtok: 8 GPUs for one token per step at the preset's price
    dollars = 8 * result.tpot_ms / 1e3 * H100.price_per_hour / 3600 * 1e6
    assert result.usd_per_mtok_output == pytest.approx(dollars)


def test_predict_reproduces_the_search_at_its_chosen_points():
    """At a frontier point's (N, b, N_PP, σ, layout) predict gives the search's latency and cost.

    Points whose whole batch's cache does not fit (the search checks one micro-batch's, the
    reference code's erratum; predict the whole) are left out."""
    setting = Setting(LLAMA_8B, H100, context=2000.0)
    kv = LLAMA_8B.kv_bytes_per_token * 2000.0
    points = [pt for pt in frontier(setting).points if pt.gamma == 1
              and LLAMA_8B.total_params * 2 + kv * pt.batch <= pt.gpus * H100.hbm_bytes]
    assert len(points) > 10
    for pt in points[:: max(1, len(points) // 12)]:
        dep = Deployment(model=LLAMA_8B, gpu=H100, tp=pt.n_tp, pp=pt.n_pp, batch=pt.batch,
                         input_len=100, output_len=100, context=2000.0, two_d=pt.two_d,
                         sigma=pt.attn_scaledown, whole_degrees=False, curve="paper")
        result = predict(dep)
        assert result.fits
        assert result.tpot_ms / 1e3 == pytest.approx(pt.target_latency_s, rel=1e-9)
        assert result.tokens_per_s_per_user == pytest.approx(pt.tokens_per_s, rel=1e-9)
        assert result.usd_per_mtok_output == pytest.approx(pt.usd_per_mtok, rel=1e-9)
        assert result.binding_decode == pt.binding


def test_largest_batch_is_the_memory_left_over_the_kv_cache_of_a_sequence():
    result = predict(deployment(tp=4, batch=16, input_len=2035, output_len=300))
    context = 2035 + 150
    kv_per_sequence = 2 * 8 * 128 * 80 * 2 * context
    # the physical rules let weights and cache fill an engine's 90% of the HBM
    by_hand = (0.9 * 4 * H100.hbm_bytes - LLAMA_70B.total_params * 2) / kv_per_sequence
    assert result.max_batch == math.floor(by_hand)
    assert predict(deployment(tp=4, batch=result.max_batch, input_len=2035, output_len=300)).fits
    over = predict(deployment(tp=4, batch=result.max_batch + 1, input_len=2035, output_len=300))
    assert not over.fits and over.tpot_ms is None and over.memory_need_gb > over.memory_gb


def test_eight_bit_kv_cache_halves_the_cache():
    full = predict(deployment(tp=4, batch=16, input_len=2035, output_len=300))
    half = predict(deployment(tp=4, batch=16, input_len=2035, output_len=300, kv_bits=8))
    assert half.memory_need_gb - half.weights_gb == pytest.approx(
        (full.memory_need_gb - full.weights_gb) / 2)
    assert half.tpot_ms < full.tpot_ms


def test_mtp_is_eq_spec_latency_without_a_drafter():
    """T = 1.5 accepted tokens is α = 0.5 at γ = 2: (1 − α²)/(1 − α) = 1.5; the target verifies 2."""
    target = predict(deployment(batch=8, mtp_accepted=2.0))  # q = 2, 2 tokens per pass
    t_p = target.tpot_ms * 2
    mtp = predict(deployment(batch=8, mtp_accepted=1.5))
    assert mtp.gamma == 2
    assert mtp.tpot_ms == pytest.approx(float(spec_latency_fn(t_p, 0.0, 2, 0.5)))


def test_a_drafter_takes_the_best_gamma_of_eq_spec_latency():
    dep = deployment(batch=8, drafter=LLAMA_8B, acceptance=0.8)
    result = predict(dep)
    plain = predict(deployment(batch=8))
    draft = predict(Deployment(model=LLAMA_8B, gpu=H100, tp=8, batch=8, input_len=1000,
                               output_len=200, curve="physical")).tpot_ms
    by_gamma = {1: plain.tpot_ms}
    for g in range(2, 6):
        t_p = predict(deployment(batch=8, mtp_accepted=float(g))).tpot_ms * g
        by_gamma[g] = float(spec_latency_fn(t_p, draft, g, 0.8))
    best = min(by_gamma, key=by_gamma.get)
    assert result.gamma == best and best > 1
    assert result.tpot_ms == pytest.approx(by_gamma[best])


def test_expert_parallel_degree_follows_the_rule():
    """DeepSeek-V3's MoE layers route each token to 8 of 256 experts (s = 32): expert
    parallelism switches on at a micro-batch of 2·s = 64."""
    dep = Deployment(model=DSV3, gpu=H800, tp=16, batch=256, input_len=4000, output_len=2000,
                     curve="physical")
    assert dep.expert_parallel == 16  # b_μ = 256 ≥ 64: min(TP, 256 experts)
    at = {batch: Deployment(model=DSV3, gpu=H800, tp=16, pp=2, batch=batch, input_len=4000,
                            output_len=2000, curve="physical").expert_parallel for batch in (126, 128)}
    assert at == {126: 1, 128: 16}  # micro-batches of 63 and 64
    Deployment(model=DSV3, gpu=H800, tp=16, ep=16, batch=256, input_len=4000, output_len=2000,
               curve="physical")
    with pytest.raises(DeploymentError, match="eq-full-expert-parallel") as info:
        Deployment(model=DSV3, gpu=H800, tp=16, ep=8, batch=256, input_len=4000, output_len=2000,
                   curve="physical")
    assert info.value.field == "ep"
    small = Deployment(model=DSV3, gpu=H800, tp=16, batch=8, input_len=4000, output_len=2000,
                       curve="physical")
    assert small.expert_parallel == 1


@pytest.mark.parametrize("changes, field", [
    (dict(tp=0), "tp"), (dict(tp=-4), "tp"), (dict(tp=3), "tp"), (dict(tp=2.5), "tp"),
    (dict(pp=0), "pp"), (dict(pp=4, batch=2), "pp"), (dict(pp=81, batch=100), "pp"),
    (dict(batch=0), "batch"), (dict(input_len=0), "input_len"), (dict(output_len=-1), "output_len"),
    (dict(kv_bits=0.5), "kv_bits"), (dict(acceptance=0.8), "acceptance"),
    (dict(mtp_accepted=0.5), "mtp_accepted"), (dict(price=0), "price"),
    (dict(context=-1), "context"), (dict(weight_bits=3), "weight_bits"),
])
def test_bad_deployments_name_the_field(changes, field):
    with pytest.raises(DeploymentError) as info:
        deployment(**changes)
    assert info.value.field == field


def test_tp_must_divide_the_query_heads_and_split_or_replicate_the_kv_heads():
    deployment(tp=16)  # 64 query heads, 8 KV heads replicated twice
    mqa = get_model("falcon-180b")  # 232 query heads, one KV head
    Deployment(model=mqa, gpu=H100, tp=8, batch=1, input_len=10, output_len=10, curve="physical")
    with pytest.raises(DeploymentError, match="query heads"):
        Deployment(model=mqa, gpu=H100, tp=16, batch=1, input_len=10, output_len=10,
                   curve="physical")


# --- prefill ------------------------------------------------------------------------------------


def test_ttft_arithmetic_is_quadratic_in_the_prompt():
    """The T_in² coefficient is causal attention: 4·d_head·n_q·L·T_in·(T_in − 1)/2 FLOPs."""
    flop = sp.expand(pf.prompt_flop_time())
    quadratic = flop.coeff(S.t_prompt, 2)
    expected = 2 * S.d_head * S.n_q * S.n_layers * S.n_pp / (S.flops * S.n_gpu)
    assert sp.simplify(quadratic - expected) == 0
    assert pf.ttft().lhs == S.t_ttft
    assert not pf.ttft().rhs.has(S.ctx) and not pf.ttft().rhs.has(S.b)


def test_input_cost_and_the_disaggregated_ratio_by_hand():
    eq = pf.input_cost().rhs
    values = {S.n_gpu: 8, S.t_prefill: 0.5, S.b: 2, S.t_prompt: 4000, S.price: 2.0}
    by_hand = 8 * 0.5 / (2 * 4000) * 2.0 / 3600 * 1e6
    assert float(eq.subs(values)) == pytest.approx(by_hand)
    ratio = pf.disaggregated_ratio().rhs.subs({S.rho_io: 10, S.usd_mtok_in: 0.2,
                                               S.usd_mtok_full: 1.0})
    assert float(ratio) == pytest.approx(2.0)


def test_prefill_numbers_of_a_deployment_by_hand():
    result = predict(deployment(tp=4, batch=16, input_len=2035, output_len=300))
    ttft = result.ttft_ms / 1e3
    assert result.usd_per_mtok_input == pytest.approx(4 * ttft / 2035 * 2.1 / 3600 * 1e6, rel=1e-6)
    # prefill GPU-seconds for 2035 input tokens per decode GPU-seconds for 300 output tokens
    prefill = 4 * ttft
    decode = 300 * 4 * result.tpot_ms / 1e3 / 16
    assert result.prefill_gpus_per_decode_gpu == pytest.approx(prefill / decode, rel=1e-6)
    assert result.binding_prefill == "arithmetic"


def test_prefill_against_tensor_economics_one_prompt_on_one_gpu():
    """Mazurek and Gabriel's 2,048-token prompt of Llama 3.3 70B: 291.49 TFLOP, 0.29 s on one H100
    at its 989 TFLOP/s. The full model's arithmetic at the same peak (no utilization cap) agrees
    within 2%: it counts causal attention (half the post's S² scores and values) and the LM head
    on every prompt token (the post: the last one), two differences of about 2% that nearly cancel.
    """
    m = de.MAZUREK2025
    gpu = dataclasses.replace(H100, flop_cap=1.0)
    dep = Deployment(model=get_model("llama-3.3-70b"), gpu=gpu, tp=1, batch=1,
                     input_len=m["prefill_tokens"], output_len=1, curve="paper")
    result = predict(dep)  # does not fit in 80 GB; its terms are still the model's
    assert not result.fits
    terms = prefill_terms(dep)
    assert terms["arithmetic"] * m["h100_flops"] == pytest.approx(m["prefill_flops_stated"],
                                                                  rel=0.02)
    assert terms["arithmetic"] == pytest.approx(m["prefill_time_stated_s"], rel=0.03)


def test_prefill_against_the_tensor_economics_script_on_four_gpus():
    """The post's script prefills one 2,035-token prompt on four H100s (peak FLOP/s, all-reduces
    at the 450 GB/s NVLink bandwidth). At the same peak the full model's arithmetic is the
    script's within 2% (the FLOP count differs as above); its total is 10-15% higher: it charges
    the all-reduces at the preset's NCCL bus bandwidth (225 GB/s) and adds the kernel launches
    and collective latencies the script leaves out."""
    m = de.MAZUREK2025
    gpu = dataclasses.replace(H100, flop_cap=1.0)
    script = de.simple_model(get_model("llama-3.3-70b"), 1, prompt=m["throughput_model"]["prompt"],
                             output=1, hardware=de.post_hardware()).prefill_s
    result = predict(Deployment(model=get_model("llama-3.3-70b"), gpu=gpu, tp=4, batch=1,
                                input_len=m["throughput_model"]["prompt"], output_len=1,
                                curve="paper"))
    prompt = m["throughput_model"]["prompt"]
    flops = de.prefill_flops_of(get_model("llama-3.3-70b"), prompt, lm_head_all_tokens=True)
    assert result.prefill_terms_ms["arithmetic"] / 1e3 == pytest.approx(
        flops / (4 * m["h100_flops"]), rel=0.02)
    assert 1.10 < result.ttft_ms / 1e3 / script < 1.15


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 30_000), st.integers(1, 30_000))
def test_ttft_grows_with_the_prompt(a, b):
    short, long = sorted((a, b))
    t = [predict(deployment(input_len=n)).ttft_ms for n in (short, long)]
    assert t[0] <= t[1]


# --- command line -------------------------------------------------------------------------------

GOOD = ["predict", "--model", "llama-3-70b", "--gpu", "h100", "--tp", "4", "--batch", "16",
        "--input-len", "2035", "--output-len", "300"]


def test_cli_predict_json_has_the_issues_fields(capsys):
    assert main([*GOOD, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    for key in ("tpot_ms", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "ttft_ms",
                "usd_per_mtok_output", "usd_per_mtok_input", "fits", "max_batch",
                "binding_decode", "binding_prefill"):
        assert key in row
    assert row["fits"] is True
    api = predict(deployment(tp=4, batch=16, input_len=2035, output_len=300, curve="estimate"))
    assert row["tpot_ms"] == pytest.approx(api.tpot_ms)


@pytest.mark.parametrize("model, gpu, tp, batch", [("llama-3.3-70b", "h100", 4, 16),
                                                     ("deepseek-v3", "h200", 8, 64)])
def test_cli_and_python_default_to_the_same_curve(model, gpu, tp, batch, capsys):
    """`inference-math predict` and `predict(Deployment(...))`, neither naming a curve, give the
    same numbers (the estimate's), and differ from the physical curve's."""
    argv = ["predict", "--model", model, "--gpu", gpu, "--tp", str(tp), "--batch", str(batch),
            "--input-len", "2035", "--output-len", "300", "--json"]
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)
    dep = Deployment(model=get_model(model), gpu=get_gpu(gpu), tp=tp, batch=batch,
                     input_len=2035, output_len=300)
    api = predict(dep)
    assert row["curve"] == api.curve == dep.curve == "estimate"
    for key in ("tpot_ms", "ttft_ms", "output_tokens_per_s_per_gpu", "max_batch", "band_low"):
        assert row[key] == pytest.approx(getattr(api, key), rel=1e-12)
    physical = predict(dataclasses.replace(dep, curve="physical"))
    assert physical.curve == "physical" and physical.band_low is None
    assert abs(physical.tpot_ms / api.tpot_ms - 1) > 0.01


def test_a_deployment_that_does_not_fit_keeps_its_curve():
    """A prediction that does not fit still names the curve it was asked on."""
    for curve in ("estimate", "physical", "limit", "paper"):
        result = predict(deployment(tp=1, batch=4096, curve=curve))  # 141 GB of weights on 80 GB
        assert not result.fits and result.curve == curve


def test_cli_predict_text(capsys):
    assert main([*GOOD, "--mtp-accepted", "1.7", "--kv-bits", "8", "--price", "2"]) == 0
    out = capsys.readouterr().out
    assert "time per output token" in out and "2 tokens verified per pass" in out


def _replace(argv, option, value):
    out = list(argv)
    if option in out:
        out[out.index(option) + 1] = value
    else:
        out += [option, value]
    return out


@pytest.mark.parametrize("option, value, flag", [
    ("--tp", "0", "--tp"), ("--tp", "-4", "--tp"), ("--tp", "3", "--tp"), ("--tp", "2.5", "--tp"),
    ("--pp", "0", "--pp"), ("--pp", "32", "--pp"), ("--ep", "4", "--ep"),
    ("--batch", "0", "--batch"), ("--batch", "nan", "--batch"), ("--input-len", "-1", "--input-len"),
    ("--output-len", "inf", "--output-len"), ("--kv-bits", "64", "--kv-bits"),
    ("--mtp-accepted", "0", "--mtp-accepted"), ("--acceptance", "0.8", "--acceptance"),
    ("--drafter", "llama-3-8b", "--acceptance"), ("--price", "-1", "--price"),
    ("--batch", "400", "--batch"), ("--tp", "1", "--tp"), ("--model", "nope", "--model"),
    ("--gpu", "tpu-v4", "--gpu"),
])
def test_cli_predict_bad_input_is_one_line_naming_the_flag(option, value, flag, capsys):
    assert main(_replace(GOOD, option, value)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in lines[0]


def test_cli_predict_batch_that_does_not_fit_reports_its_memory(capsys):
    # the physical rules and the estimate (the command line's default) let an engine fill 0.9
    # of the HBM: (288.0 − 141.1) GB over 327,680 B/token × 2,185 tokens = 205.2 sequences
    assert main(_replace(GOOD, "--batch", "400") + ["--curve", "physical"]) == 2
    err = capsys.readouterr().err
    assert "GB" in err and "largest batch that fits is 205" in err
    # the limit, a bound, fills all of it: (320.0 − 141.1) GB / 716.0 MB = 249.8
    assert main(_replace(GOOD, "--batch", "400") + ["--curve", "limit"]) == 2
    err = capsys.readouterr().err
    assert "largest batch that fits is 249" in err
    assert main(_replace(GOOD, "--batch", "400")) == 2
    err = capsys.readouterr().err
    assert "but an engine fills 90% of the 320.0 GB of 4 H100 SXM GPUs: 288.0 GB;" in err
    assert "largest batch that fits is 205" in err and err.count("\n") == 1


# --- every preset and imported config -----------------------------------------------------------

def _replica(model) -> tuple[int, int]:
    """A TP that divides the heads (8 when it can) and the fewest pipeline stages holding the
    weights in H100s with room to spare."""
    tp = max(d for d in (1, 2, 4, 8) if model.n_q_heads % d == 0)
    stages = math.ceil(1.3 * model.total_params * model.weight_bytes / (tp * H100.hbm_bytes))
    return tp, min(stages, model.layers)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_preset_predicts_finite_numbers(name, capsys):
    model = MODELS[name]
    tp, pp = _replica(model)
    argv = ["predict", "--model", name, "--gpu", "h100", "--tp", str(tp), "--pp", str(pp),
            "--batch", str(max(pp, 8)), "--input-len", "1000", "--output-len", "1000", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    row = json.loads(capsys.readouterr().out)  # strict JSON: no NaN, no infinity
    assert row["fits"] and row["tpot_ms"] > 0 and row["ttft_ms"] > 0
    assert row["n_ep"] == Deployment(model=model, gpu=H100, tp=tp, pp=pp, batch=max(pp, 8),
                                     input_len=1000, output_len=1000, curve="physical").expert_parallel


CONFIGS = files("inference_math") / "data" / "hf_configs"


@pytest.mark.parametrize("name", ["meta-llama--Meta-Llama-3.1-8B", "Qwen--Qwen3-30B-A3B",
                                  "mistralai--Mixtral-8x7B-v0.1"])
def test_imported_configs_predict(name, capsys):
    path = str(CONFIGS / f"{name}.config.json")
    argv = ["predict", "--model", path, "--gpu", "h100", "--tp", "4", "--batch", "32",
            "--input-len", "2000", "--output-len", "500", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["fits"]


def test_a_config_the_reader_cannot_map_is_one_line(capsys, tmp_path):
    """A state-space hybrid is the kind of config no model here represents."""
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "jamba", "hidden_size": 4096}')
    argv = ["predict", "--model", str(path), "--gpu", "h100", "--tp", "8", "--batch", "32",
            "--input-len", "2000", "--output-len", "500"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--model" in err[0] and "state-space" in err[0]


def test_linear_attention_predicts(capsys):
    """Qwen3.5's linear-attention layers are timed with their constant state."""
    path = str(CONFIGS / "Qwen--Qwen3.5-397B-A17B.config.json")
    argv = ["predict", "--model", path, "--gpu", "b200", "--tp", "8", "--batch", "32",
            "--input-len", "2000", "--output-len", "500", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["fits"]


def test_a_mixed_layer_config_predicts(capsys):
    """DeepSeek-V3's own config.json (3 dense layers, 58 MoE layers with a shared expert) on 16
    H800s: the 671 B parameters in FP8 fit, and the JSON is strict."""
    path = str(CONFIGS / "deepseek-ai--DeepSeek-V3.config.json")
    argv = ["predict", "--model", path, "--gpu", "h800", "--tp", "16", "--batch", "64",
            "--input-len", "4000", "--output-len", "1000", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    row = json.loads(capsys.readouterr().out)
    assert row["fits"] and row["tpot_ms"] > 0 and row["ttft_ms"] > 0 and row["n_ep"] == 16


def test_a_model_that_is_not_one_names_its_kind_not_its_repr():
    with pytest.raises(InputError) as info:
        Deployment(model=H100, gpu=H100, tp=1, batch=1, input_len=1, output_len=1, curve="physical")
    message = str(info.value)
    assert message.startswith("model must be a Model or LayeredModel") and message.endswith(
        "got a GPU") and "(" not in message.split("got")[1]


@pytest.mark.parametrize("name", [k for k in CONFIG_PRESETS
                                  if isinstance(get_model(k), LayeredModel)])
def test_every_layered_preset_predicts_finite_numbers(name, capsys):
    argv = ["predict", "--model", name, "--gpu", "h200", "--tp", "8", "--pp", "2",
            "--batch", "16", "--input-len", "1000", "--output-len", "1000", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    row = json.loads(capsys.readouterr().out)
    assert row["fits"] and row["tpot_ms"] > 0 and row["ttft_ms"] > 0 and row["max_batch"] >= 16


# --- models with layer groups -----------------------------------------------------------------

GPT_OSS = get_model("gpt-oss-120b")
# gpt-oss-120b's config: 36 layers alternating a 128-token sliding window and full attention,
# 8 KV heads of 64, a 16-bit cache: 2·8·64·2 = 2,048 bytes per layer per token
OSS_LAYER_KV, OSS_WINDOW = 2 * 8 * 64 * 2, 128


def oss(**changes) -> Deployment:
    base = dict(model=GPT_OSS, gpu=H100, tp=1, batch=32, input_len=1000, output_len=1,
                curve="physical")
    return Deployment(**{**base, **changes})


def test_a_sliding_window_groups_cache_stops_growing_at_its_window():
    short, long = (predict(oss(context=c)) for c in (1_000, 11_000))
    grown = (long.memory_need_gb - short.memory_need_gb) * 1e9
    assert grown == pytest.approx(32 * 18 * OSS_LAYER_KV * 10_000)  # the 18 full layers only
    cache = (short.memory_need_gb - short.weights_gb) * 1e9 / 32
    assert cache == pytest.approx(18 * OSS_LAYER_KV * (1_000 + OSS_WINDOW), rel=0.01)
    left = 0.9 * H100.hbm_bytes - short.weights_gb * 1e9  # an engine's 90% of the HBM
    assert short.max_batch == pytest.approx(left / (18 * OSS_LAYER_KV * 1_128), abs=1)


def test_eight_bit_kv_cache_halves_every_groups_cache():
    full, half = predict(oss(context=5_000)), predict(oss(context=5_000, kv_bits=8))
    assert (half.memory_need_gb - half.weights_gb) == pytest.approx(
        (full.memory_need_gb - full.weights_gb) / 2)
    assert half.decode_terms_ms["memory"] < full.decode_terms_ms["memory"]


def test_mixed_precision_weights_count_each_group_at_its_bytes():
    """DeepSeek-V3: 671 B parameters in FP8 with both 16-bit embedding matrices of 129,280 × 7,168
    (DeepSeek's config and report): 671 GB plus one more byte per embedding parameter."""
    result = predict(Deployment(model=DSV3, gpu=H800, tp=16, batch=1, input_len=10, output_len=1,
                                curve="physical"))
    assert result.weights_gb == pytest.approx(671 + 2 * 129_280 * 7_168 / 1e9, rel=0.005)
    sixteen = predict(Deployment(model=DSV3, gpu=H800, tp=16, batch=1, input_len=10,
                                 output_len=1, weight_bits=16, curve="physical"))
    assert sixteen.weights_gb == pytest.approx(2 * (671 + 2 * 129_280 * 7_168 / 1e9), rel=0.005)


def test_tp_must_divide_every_groups_heads():
    oss(tp=8)
    with pytest.raises(DeploymentError, match="64 query heads") as info:
        oss(tp=128)
    assert info.value.field == "tp"
    with pytest.raises(DeploymentError, match="pp"):
        oss(pp=37, batch=64)  # 36 layers


def test_mfu_is_two_flops_per_parameter_per_token_over_the_peak():
    """At an empty context a token costs 2 FLOPs per parameter it multiplies: Llama 3 70B's
    70.55 B less its input embedding (128,256 × 8,192, a lookup under the physical rules; the
    reference code counts it)."""
    result = predict(deployment(batch=64, context=0))
    by_hand = 2 * (70.55e9 - 128256 * 8192) * 64 / (8 * H100.flops(16) * result.tpot_ms / 1e3)
    assert result.mfu == pytest.approx(by_hand, rel=0.005)
    paper = predict(deployment(batch=64, context=0, curve="paper"))
    assert paper.mfu == pytest.approx(2 * 70.55e9 * 64 / (8 * H100.flops(16) * paper.tpot_ms
                                                          / 1e3), rel=0.005)


def test_the_ttft_arithmetic_evaluates_to_the_compiled_prefill_term():
    """eq-prefill-ttft's arithmetic, substituted by hand with Llama 3 70B's counts on 8 H100s,
    equals the prefill pass's arithmetic term of the generated code."""
    model, tp, prompt = LLAMA_70B, 8, 3000
    values = {S.n_attn: model.attention_params, S.n_ff: model.ff_params,
              S.n_unembed: model.embedding_params, S.s: 1, S.d_head: 128, S.n_q: 64,
              S.n_layers: 80, S.flops: H100.flops(16) * H100.flop_cap, S.n_gpu: tp, S.n_pp: 1,
              S.sigma_attn: 1, S.t_prompt: prompt}
    by_hand = float(pf.prompt_flop_time().subs(values))
    terms = prefill_terms(deployment(tp=tp, input_len=prompt, curve="paper"))
    assert terms["arithmetic"] == pytest.approx(by_hand, rel=1e-12)


def test_pipeline_stages_hold_the_whole_batchs_cache():
    """With PP 2 the batch's KV cache is spread over 2 × TP GPUs but all of it is held: the
    largest batch is the memory left over the cache of one sequence, as with PP 1 on the same
    GPUs (the reference code's check would allow twice as many)."""
    piped = predict(deployment(tp=4, pp=2, batch=16, input_len=2035, output_len=300))
    kv_per_sequence = 2 * 8 * 128 * 80 * 2 * (2035 + 150)
    by_hand = (0.9 * 8 * H100.hbm_bytes - LLAMA_70B.total_params * 2) / kv_per_sequence
    assert piped.max_batch == math.floor(by_hand)


def test_data_parallel_attention_drops_its_all_reduces_and_reads_its_weights_on_every_gpu():
    """Llama 3.1 8B on 8 H100s: with data-parallel attention a dense model's feed-forward blocks
    follow attention's layout (eq-phys-memory-time), so every GPU holds and reads every layer's
    weights (32 layers of q and o 4,096², k and v 4,096 × 1,024 and three 4,096 × 14,336
    feed-forward matrices, 16-bit) and nothing is all-reduced."""
    small = dict(model=get_model("llama-3.1-8b"), batch=64)
    tp = predict(deployment(**small))
    dp = predict(deployment(dp_attention=True, **small))
    layers = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) * 2
    bandwidth = H100.hbm_bandwidth * H100.bandwidth_cap
    assert dp.decode_terms_ms["memory"] - tp.decode_terms_ms["memory"] == pytest.approx(
        layers * (1 - 1 / 8) / bandwidth * 1e3, rel=0.02)
    network = ("network_latency", "network_bandwidth")
    assert sum(dp.decode_terms_ms[k] for k in network) == 0
    assert sum(tp.decode_terms_ms[k] for k in network) > 0


def test_data_parallel_attention_of_an_moe_leaves_only_the_all_to_alls():
    """DeepSeek-V3 on 144 H800s, experts parallel over all of them: no all-reduce is left, and
    144 need not divide the 128 heads."""
    dep = Deployment(model=DSV3, gpu=H800, tp=144, batch=144 * 64, input_len=4989,
                     output_len=1, context=4989, dp_attention=True, curve="physical")
    assert dep.expert_parallel == 144
    with_all_to_alls = predict(dep).decode_terms_ms
    assert with_all_to_alls["network_bandwidth"] > 0
    with pytest.raises(DeploymentError, match="query heads"):
        dataclasses.replace(dep, dp_attention=False)
    with pytest.raises(DeploymentError) as info:
        dataclasses.replace(dep, pp=2)
    assert info.value.field == "pp"


def test_cli_dp_attention(capsys):
    argv = ["predict", "--model", "deepseek-v3", "--gpu", "h800", "--tp", "144", "--batch",
            str(144 * 64), "--input-len", "4989", "--output-len", "1", "--dp-attention", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    row = json.loads(capsys.readouterr().out)
    assert row["fits"] and row["n_ep"] == 144
    assert main(argv[:-1] + ["--pp", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--pp" in err[0]


def test_a_model_of_mixed_precision_takes_the_flops_of_its_main_format(capsys):
    """gpt-oss-20b: 4.25-bit experts beside 16-bit attention and embeddings average more than
    4.5 bits, a precision no GPU has a FLOP/s figure for; most of its parameters are MXFP4
    experts, so the GPU's 4-bit rate is the one that counts, and --weight-bits overrides it."""
    path = str(CONFIGS / "openai--gpt-oss-20b.config.json")
    model = get_model(path)
    assert 4.5 < 8 * model.weight_bytes < 5.5 and model.weight_bits == 4
    argv = ["predict", "--model", path, "--gpu", "h200", "--tp", "8", "--batch", "16",
            "--input-len", "2000", "--output-len", "500"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv + ["--weight-bits", "8"]) == 0

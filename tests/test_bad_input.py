"""Bad input to the library: InputError naming the field, never a crash or a silent wrong number."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inference_math.core.validation import InputError, Interval, within
from inference_math.fullmodel import cache, toy_model
from inference_math.fullmodel.search import Setting
from inference_math.presets.hardware import GPUS, get_gpu
from inference_math.presets.models import MODELS, get_model

H100 = get_gpu("h100")
LLAMA_8B = get_model("llama-3-8b")

# The presets whose collective bandwidths are not given (the fuzz run's tracebacks).
NO_COLLECTIVES = ("tpu-v4", "tpu-v5e", "tpu-v5p", "rtx-4090")


# --- GPU presets and Setting ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   ", None])
def test_a_gpu_needs_a_name(name):
    with pytest.raises(InputError, match="GPU name"):
        dataclasses.replace(H100, name=name)


@pytest.mark.parametrize("key", NO_COLLECTIVES)
def test_the_full_model_refuses_gpus_without_collective_bandwidths(key):
    """Setting names the missing field and the preset instead of a TypeError in the search."""
    gpu = get_gpu(key)
    assert gpu.internode_allreduce_bandwidth is None
    assert not gpu.has_collective_model
    with pytest.raises(InputError, match=f"{gpu.name}.*internode_allreduce_bandwidth"):
        Setting(model=LLAMA_8B, gpu=gpu)


def test_every_gpu_with_an_internode_bandwidth_and_a_collective_model_is_accepted():
    """A NCCL GPU needs both bandwidths unless it is alone in its node; a torus only the inter-node."""
    for gpu in GPUS.values():
        needs_intra = gpu.collective_model == "nccl" and gpu.node_size > 1
        expected = gpu.internode_allreduce_bandwidth is not None and (
            not needs_intra or gpu.intranode_allreduce_bandwidth is not None)
        assert gpu.has_collective_model is expected, gpu.name


@pytest.mark.parametrize(("field", "kwargs"), [
    ("model", {"model": "llama-3-8b"}),
    ("gpu", {"gpu": "h100"}),
    ("drafter", {"drafter": "llama-3-8b"}),
    ("acceptance", {"acceptance": "0.5"}),
    ("acceptance", {"acceptance": math.nan}),
    ("acceptance", {"acceptance": 1.0}),
    ("context", {"context": -1.0}),
    ("price", {"price": math.inf}),
    ("weight_bytes", {"weight_bytes": 0.0}),
])
def test_setting_rejects_bad_fields_by_name(field, kwargs):
    values = {"model": LLAMA_8B, "gpu": H100} | kwargs
    with pytest.raises(InputError, match=field):
        Setting(**values)


def test_acceptance_zero_is_legal_and_means_no_speculation():
    """P = 0: no drafted token is ever accepted, so the drafter never helps (eq-spec-latency)."""
    setting = Setting(model=get_model("llama-3-70b"), gpu=H100, drafter=LLAMA_8B, acceptance=0.0)
    assert not setting.speculative


def test_a_drafter_whose_weights_the_gpu_cannot_run_is_named():
    four_bit = get_model("llama-3-70b-4bit")
    assert 4 not in get_gpu("a100").flops_by_weight_bits
    with pytest.raises(InputError, match="4-bit"):
        Setting(model=LLAMA_8B, gpu=get_gpu("a100"), drafter=four_bit)


# --- validation.within ----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "ok"), [(0.0, True), (0.5, True), (1.0, False), (-1e-300, False),
                                           (math.nan, False), (math.inf, False), ("0.5", False),
                                           (True, False)])
def test_within_a_half_open_interval(value, ok):
    interval = Interval(0.0, 1.0, open_high=True)
    assert str(interval) == "[0, 1)"
    if ok:
        assert within("p", value, interval) == value
    else:
        with pytest.raises(InputError, match="^p must be"):
            within("p", value, interval)


# --- the toy model ----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{"t_hop": -1e-6}, {"t_hop": math.nan}, {"t_base": -6e-6},
                                    {"t_hop": math.inf}])
def test_reference_code_frontier_rejects_bad_network_times(kwargs):
    (field,) = kwargs
    with pytest.raises(InputError, match=field):
        toy_model.reference_code_frontier(LLAMA_8B, H100, **kwargs)


@pytest.mark.parametrize(("field", "value"), [("model", "llama-3-8b"), ("gpu", "h100")])
def test_toy_model_functions_reject_names_where_presets_are_expected(field, value):
    args = {"model": LLAMA_8B, "gpu": H100} | {field: value}
    for function in (toy_model.max_speed, toy_model.reference_code_frontier):
        with pytest.raises(InputError, match=field):
            function(args["model"], args["gpu"])


@pytest.mark.parametrize("kwargs", [{"t_hop": 1e-320}, {"n_reduce": 1e-320}])
def test_max_speed_refuses_a_non_finite_optimum(kwargs):
    """A subnormal t_hop·n_reduce overflows p·N/(L·n_reduce·t_hop·B): no finite N* (eq. 13)."""
    with pytest.raises(InputError, match="t_hop"):
        toy_model.max_speed(get_model("gpt-4"), H100, **kwargs)


def _eq9(model, gpu, n, t_hop, n_reduce):
    """Erdil (2025) eq. 9 typed fresh: L·n_reduce·2·t_hop·(sqrt(N) − 1) + p·N_param/(B·N)."""
    return (model.layers * n_reduce * 2 * t_hop * (np.sqrt(n) - 1)
            + model.weight_bytes * model.total_params / (gpu.hbm_bandwidth * n))


def test_toy_optimum_respects_the_gpus_that_hold_the_weights():
    """Llama 3 70B (141 GB at 16 bits) needs 2 H100s of 80 GB; a 12 s hop makes that the optimum."""
    model = get_model("llama-3-70b")
    floor = math.ceil(2 * model.total_params / 80e9)
    assert floor == 2
    result = toy_model.max_speed(model, H100, t_hop=12)
    assert result.n_gpu_floor == floor
    assert result.n_gpu_star == floor and result.memory_bound
    assert result.min_latency_s == pytest.approx(_eq9(model, H100, floor, 12, 4), rel=1e-12)


@given(model=st.sampled_from(sorted(MODELS)), gpu=st.sampled_from(sorted(GPUS)),
       log_t_hop=st.floats(-12, 3), log_n_reduce=st.floats(-3, 3))
def test_toy_optimum_is_the_fastest_instance_that_holds_the_weights(model, gpu, log_t_hop,
                                                                  log_n_reduce):
    """Over N >= ceil(p·N_param/M_HBM), no instance beats eq. 9 at the reported optimum."""
    model, gpu = get_model(model), get_gpu(gpu)
    t_hop, n_reduce = 10.0**log_t_hop, 10.0**log_n_reduce
    result = toy_model.max_speed(model, gpu, t_hop=t_hop, n_reduce=n_reduce)
    floor = math.ceil(model.weight_bytes * model.total_params / gpu.hbm_bytes)
    assert result.n_gpu_floor == floor
    assert result.n_gpu_star >= floor
    assert math.isfinite(result.tokens_per_s) and result.tokens_per_s > 0
    tried = np.geomspace(floor, max(1e3, 1e3 * result.n_gpu_star), 2000)
    assert result.min_latency_s == pytest.approx(_eq9(model, gpu, result.n_gpu_star, t_hop, n_reduce),
                                                 rel=1e-9)
    assert _eq9(model, gpu, tried, t_hop, n_reduce).min() >= result.min_latency_s * (1 - 1e-9)


# --- the frontier cache -----------------------------------------------------------------------


def _never():
    raise AssertionError("computed although the cache directory is unusable")


def test_a_cache_path_below_a_file_is_named_before_computing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(cache.ENV, str(blocker / "cache"))
    with pytest.raises(InputError, match=cache.ENV):
        cache.cached("kind", "key", _never)


def test_a_damaged_cache_entry_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    assert cache.cached("kind", "key", lambda: 41) == 41
    (entry,) = tmp_path.glob("kind-*.pickle")
    entry.write_bytes(entry.read_bytes()[:3])
    assert cache.cached("kind", "key", lambda: 42) == 42
    assert cache.cached("kind", "key", _never) == 42

"""Bad input to the library: InputError naming the field, never a crash or a silent wrong number."""

from __future__ import annotations

import dataclasses
import math

import pytest

from inference_math.hardware import GPUS, get_gpu
from inference_math.models import get_model
from inference_math.search import Setting
from inference_math.validation import InputError, Interval, within

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

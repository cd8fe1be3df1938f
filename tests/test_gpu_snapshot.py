"""The paper's GPU presets, field by field, as they were before the presets moved to a data file.

The values below were printed from the Python definitions of ``presets/hardware.py`` at the commit
before the move (the reference code's own expressions, e.g. 3.15·2/3 for the H100's price, kept as
the exact floats they evaluate to). The paper's tables depend on these numbers: any change here is a
change of the book's results and must be deliberate.
"""

from __future__ import annotations

import dataclasses

import pytest

from inference_math.presets.hardware import GPUS

# Every field the GPU dataclass had before the move, in its order.
FIELDS = ("name", "flops_by_weight_bits", "hbm_bandwidth", "hbm_bytes",
          "intranode_allreduce_bandwidth", "internode_allreduce_bandwidth", "node_size",
          "price_per_hour", "flop_cap", "bandwidth_cap", "kernel_launch_s", "source", "note",
          "ici_bandwidth", "collective_model")

SNAPSHOT = {
    "h100": ("H100 SXM", {4: 2e15, 8: 2e15, 16: 1e15}, 3.3e12, 80e9, 225e9, 25e9, 8,
             2.1, 0.7, 0.75, 4e-06, "nvidia2023h100,erdil2025inference",
             "989 TFLOP/s bf16 and 1979 TFLOP/s fp8 dense, rounded as in the paper", None, "nccl"),
    "a100": ("A100 SXM", {8: 624e12, 16: 312e12}, 2e12, 80e9, 150e9, 12.5e9, 8,
             1.5066666666666666, 0.8, 0.75, 4e-06, "nvidia2020a100,erdil2025inference",
             "80 GB model; 8-bit figure is INT8 tensor-core throughput", None, "nccl"),
    "v100": ("V100 SXM", {8: 100e12, 16: 100e12}, 0.9e12, 16e9, 75e9, 6.25e9, 8,
             0.42, 0.8, 0.75, 4e-06, "nvidia2017v100,erdil2025inference",
             "no 8-bit tensor cores: 8-bit weights run at the 16-bit rate", None, "nccl"),
    "tpu-v4": ("TPU v4", {8: 275e12, 16: 275e12}, 1.2e12, 32e9, None, None, 4,
               3.22, 1.0, 1.0, 0.0, "googlecloud2024tpu,austin2025scaling",
               "int8 runs at the bf16 rate; price is the on-demand list price per chip-hour",
               45e9, "nccl"),
    "tpu-v5e": ("TPU v5e", {8: 394e12, 16: 197e12}, 820e9, 16e9, None, None, 8,
                1.2, 1.0, 1.0, 0.0, "googlecloud2024tpu,austin2025scaling",
                "the scaling book uses 8.2e11 B/s in its roofline and 8.1e11 B/s in its pop quiz",
                45e9, "nccl"),
    "tpu-v5p": ("TPU v5p", {8: 918e12, 16: 459e12}, 2.76e12, 95e9, None, None, 4,
                4.2, 1.0, 1.0, 0.0, "googlecloud2024tpu,austin2025scaling", "", 90e9, "nccl"),
    "rtx-4090": ("RTX 4090", {8: 165.2e12, 16: 165.2e12}, 1008e9, 24e9, None, None, 1,
                 0.37, 1.0, 1.0, 0.0, "nvidia2022rtx4090,mazurek2025embeddings",
                 "GDDR6X, not HBM; 8-bit weights are counted at the 16-bit rate (FP8 rates not "
                 "modelled); $0.37/h is the post's on-demand rental price", None, "nccl"),
    "h800": ("H800 SXM", {4: 2e15, 8: 2e15, 16: 1e15}, 3.3e12, 80e9, 100e9, 25e9, 8,
             2.1, 0.7, 0.75, 4e-06, "nvidia2023h100,erdil2025inference",
             "the H100 with 400 GB/s NVLink; priced as the H100", None, "nccl"),
    "h20": ("H20", {4: 296e12, 8: 296e12, 16: 148e12}, 4e12, 96e9, 225e9, 25e9, 8,
            1.1812500000000001, 1.0, 0.75, 4e-06, "erdil2025inference",
            "numbers and price (13.5/24 of the H100's) as the reference code has them", None,
            "nccl"),
    "h200": ("H200 SXM", {4: 2e15, 8: 2e15, 16: 1e15}, 4.8e12, 141e9, 225e9, 25e9, 8,
             2.94, 0.6, 0.75, 4e-06, "nvidia2024h200,erdil2025inference",
             "priced at 3.5/2.5 of the H100, as in the reference code", None, "nccl"),
    "tpu-v4-erdil": ("TPU v4 (reference code)", {8: 260e12, 16: 260e12}, 1.6e12, 32e9, None,
                     250e9, 1, 1.0, 1.0, 1.0, 4e-06, "erdil2025inference",
                     "the reference code's TPU v4; the scaling book's numbers are the 'tpu-v4' "
                     "preset", None, "torus"),
    "groq-lpu": ("Groq LPU", {8: 750e12, 16: 188e12}, 80e12, 230e6, None, 165e9, 1,
                 1.0, 1.0, 1.0, 4e-06, "abts2022groq,erdil2025inference",
                 "230 MB of on-chip SRAM at 80 TB/s stands in for HBM", None, "torus"),
}


def test_the_snapshot_has_every_field():
    assert all(len(values) == len(FIELDS) for values in SNAPSHOT.values())
    assert set(FIELDS) <= {f.name for f in dataclasses.fields(GPUS["h100"])}


@pytest.mark.parametrize("key", sorted(SNAPSHOT))
def test_paper_presets_are_unchanged_field_by_field(key):
    """Exact equality (no tolerance), types included: the book's tables must not move."""
    gpu = GPUS[key]
    for field, expected in zip(FIELDS, SNAPSHOT[key], strict=True):
        actual = getattr(gpu, field)
        assert actual == expected, (key, field, actual, expected)
        assert type(actual) is type(expected), (key, field, type(actual), type(expected))
        if isinstance(expected, dict):
            assert list(actual) == list(expected), (key, field)  # same bit widths, same order
            assert all(type(a) is type(b) for a, b in zip(actual.values(), expected.values(),
                                                          strict=True))


def test_the_paper_presets_come_first_in_their_order():
    """The listing (``inference-math gpus``) and the choices in error messages keep their order."""
    assert list(GPUS)[:len(SNAPSHOT)] == list(SNAPSHOT)

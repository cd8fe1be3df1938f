"""GPU presets with the numbers Erdil (2025) uses, each with its source.

FLOP/s are dense tensor-core peaks keyed by the *weight* bit width (8-bit weights run on the
8-bit tensor cores). Prices are the paper's effective rental rates (2/3 of the list price it
quotes; the text rounds the H100's $2.10 to "$2 per hour"). The utilization caps are the
fractions of peak the paper's full model assumes are reachable; the toy model of chapter 4 uses
the uncapped peaks unless it says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.validation import InputError, lookup, positive, positive_int


@dataclass(frozen=True)
class GPU:
    """One accelerator type. Raises InputError on construction if a field is invalid."""

    name: str
    flops_by_weight_bits: dict[int, float]
    hbm_bandwidth: float  # bytes/s
    hbm_bytes: float
    intranode_allreduce_bandwidth: float | None  # bytes/s, NVLink all-reduce bus bandwidth
    internode_allreduce_bandwidth: float | None  # bytes/s, per GPU across nodes
    node_size: int
    price_per_hour: float  # $/GPU-hour
    flop_cap: float  # reachable fraction of peak FLOP/s
    bandwidth_cap: float  # reachable fraction of peak HBM bandwidth
    kernel_launch_s: float
    source: str  # bib keys, comma separated
    note: str = field(default="")
    ici_bandwidth: float | None = None  # bytes/s, one direction of one inter-chip link (TPUs)
    collective_model: str = "nccl"  # 'nccl' (GPUs) or 'torus' (TPU, Groq): see collectives.py

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"GPU name must be a non-empty string, got {self.name!r}")
        where = f"GPU {self.name!r}"
        if not self.flops_by_weight_bits:
            raise InputError(f"{where}: flops_by_weight_bits must not be empty")
        for bits, rate in self.flops_by_weight_bits.items():
            positive_int(f"{where}: weight bit width", bits)
            positive(f"{where}: flops_by_weight_bits[{bits}]", rate)
        for name in ("hbm_bandwidth", "hbm_bytes", "price_per_hour"):
            positive(f"{where}: {name}", getattr(self, name))
        for name in ("intranode_allreduce_bandwidth", "internode_allreduce_bandwidth",
                     "ici_bandwidth"):
            if getattr(self, name) is not None:  # None: not modelled for this device
                positive(f"{where}: {name}", getattr(self, name))
        positive(f"{where}: kernel_launch_s", self.kernel_launch_s, allow_zero=True)
        if self.collective_model not in ("nccl", "torus"):
            raise InputError(f"{where}: collective_model must be 'nccl' or 'torus', "
                             f"got {self.collective_model!r}")
        positive_int(f"{where}: node_size", self.node_size)
        for name in ("flop_cap", "bandwidth_cap"):
            if not 0 < positive(f"{where}: {name}", getattr(self, name)) <= 1:
                raise InputError(f"{where}: {name} must be in (0, 1], got {getattr(self, name)!r}")
        if not self.source:
            raise InputError(f"{where}: source must name a bib key")

    def flops(self, weight_bits: int = 16, capped: bool = False) -> float:
        """Peak (or capped) FLOP/s for weights of ``weight_bits`` bits."""
        bits = int(weight_bits)
        if bits not in self.flops_by_weight_bits:
            known = ", ".join(str(k) for k in sorted(self.flops_by_weight_bits))
            raise InputError(f"{self.name} has no FLOP/s figure for {bits}-bit weights (has {known})")
        rate = self.flops_by_weight_bits[bits]
        return rate * self.flop_cap if capped else rate

    def bandwidth(self, capped: bool = False) -> float:
        """Peak (or capped) HBM bandwidth in bytes/s."""
        return self.hbm_bandwidth * self.bandwidth_cap if capped else self.hbm_bandwidth

    def missing_collective_fields(self) -> tuple[str, ...]:
        """The all-reduce bandwidths the full model's collectives (collectives.py) need but lack.

        The inter-node bandwidth is always needed; the intra-node (NVLink) one only for the NCCL
        model with several GPUs per node (a torus, or one GPU per node, never reduces inside one).
        """
        missing = []
        if self.internode_allreduce_bandwidth is None:
            missing.append("internode_allreduce_bandwidth")
        if (self.intranode_allreduce_bandwidth is None and self.collective_model == "nccl"
                and self.node_size > 1):
            missing.append("intranode_allreduce_bandwidth")
        return tuple(missing)

    @property
    def has_collective_model(self) -> bool:
        """Whether the full model (Erdil 2025, sec. 3) can time this device's collectives."""
        return not self.missing_collective_fields()

    def require_collective_model(self) -> None:
        """InputError naming the missing field if the full model cannot run on this device."""
        missing = self.missing_collective_fields()
        if missing:
            raise InputError(
                f"GPU {self.name!r} has no {' or '.join(missing)} (collectives not modelled), so "
                f"the full model cannot run on it; it runs on: {', '.join(full_model_gpus())}")


H100 = GPU(
    name="H100 SXM",
    flops_by_weight_bits={4: 2e15, 8: 2e15, 16: 1e15},
    hbm_bandwidth=3.3e12,
    hbm_bytes=80e9,
    intranode_allreduce_bandwidth=900e9 / 4,
    internode_allreduce_bandwidth=50e9 / 2,
    node_size=8,
    price_per_hour=3.15 * 2 / 3,
    flop_cap=0.70,
    bandwidth_cap=0.75,
    kernel_launch_s=4e-6,
    source="nvidia2023h100,erdil2025inference",
    note="989 TFLOP/s bf16 and 1979 TFLOP/s fp8 dense, rounded as in the paper",
)

A100 = GPU(
    name="A100 SXM",
    flops_by_weight_bits={8: 624e12, 16: 312e12},
    hbm_bandwidth=2.0e12,
    hbm_bytes=80e9,
    intranode_allreduce_bandwidth=600e9 / 4,
    internode_allreduce_bandwidth=25e9 / 2,
    node_size=8,
    price_per_hour=2.26 * 2 / 3,
    flop_cap=0.80,
    bandwidth_cap=0.75,
    kernel_launch_s=4e-6,
    source="nvidia2020a100,erdil2025inference",
    note="80 GB model; 8-bit figure is INT8 tensor-core throughput",
)

V100 = GPU(
    name="V100 SXM",
    flops_by_weight_bits={8: 100e12, 16: 100e12},
    hbm_bandwidth=0.9e12,
    hbm_bytes=16e9,
    intranode_allreduce_bandwidth=300e9 / 4,
    internode_allreduce_bandwidth=12.5e9 / 2,
    node_size=8,
    price_per_hour=0.63 * 2 / 3,
    flop_cap=0.80,
    bandwidth_cap=0.75,
    kernel_launch_s=4e-6,
    source="nvidia2017v100,erdil2025inference",
    note="no 8-bit tensor cores: 8-bit weights run at the 16-bit rate",
)

# TPUs, with the numbers "How to Scale Your Model" uses (peak rates, no utilization caps). The
# all-reduce bandwidths of the GPU model are not defined for a torus; ICI is given per link.
TPU_V4 = GPU(
    name="TPU v4",
    flops_by_weight_bits={8: 2.75e14, 16: 2.75e14},
    hbm_bandwidth=1.2e12,
    hbm_bytes=32e9,
    intranode_allreduce_bandwidth=None,
    internode_allreduce_bandwidth=None,
    node_size=4,
    price_per_hour=3.22,
    flop_cap=1.0,
    bandwidth_cap=1.0,
    kernel_launch_s=0.0,
    ici_bandwidth=4.5e10,
    source="googlecloud2024tpu,austin2025scaling",
    note="int8 runs at the bf16 rate; price is the on-demand list price per chip-hour",
)

TPU_V5E = GPU(
    name="TPU v5e",
    flops_by_weight_bits={8: 3.94e14, 16: 1.97e14},
    hbm_bandwidth=8.2e11,
    hbm_bytes=16e9,
    intranode_allreduce_bandwidth=None,
    internode_allreduce_bandwidth=None,
    node_size=8,
    price_per_hour=1.20,
    flop_cap=1.0,
    bandwidth_cap=1.0,
    kernel_launch_s=0.0,
    ici_bandwidth=4.5e10,
    source="googlecloud2024tpu,austin2025scaling",
    note="the scaling book uses 8.2e11 B/s in its roofline and 8.1e11 B/s in its pop quiz",
)

TPU_V5P = GPU(
    name="TPU v5p",
    flops_by_weight_bits={8: 9.18e14, 16: 4.59e14},
    hbm_bandwidth=2.76e12,
    hbm_bytes=95e9,
    intranode_allreduce_bandwidth=None,
    internode_allreduce_bandwidth=None,
    node_size=4,
    price_per_hour=4.20,
    flop_cap=1.0,
    bandwidth_cap=1.0,
    kernel_launch_s=0.0,
    ici_bandwidth=9.0e10,
    source="googlecloud2024tpu,austin2025scaling",
)

# A consumer GPU, with the numbers of "Why are embeddings so cheap?" (Mazurek 2025): 165 TFLOP/s
# (the datasheet's 165.2 dense FP16/BF16 tensor rate with FP32 accumulate), GDDR6X memory, and the
# post's rental price. No NVLink: the collective fields are not modelled.
RTX_4090 = GPU(
    name="RTX 4090",
    flops_by_weight_bits={8: 165.2e12, 16: 165.2e12},
    hbm_bandwidth=1008e9,
    hbm_bytes=24e9,
    intranode_allreduce_bandwidth=None,
    internode_allreduce_bandwidth=None,
    node_size=1,
    price_per_hour=0.37,
    flop_cap=1.0,
    bandwidth_cap=1.0,
    kernel_launch_s=0.0,
    source="nvidia2022rtx4090,mazurek2025embeddings",
    note="GDDR6X, not HBM; 8-bit weights are counted at the 16-bit rate (FP8 rates not modelled); "
         "$0.37/h is the post's on-demand rental price",
)

# The reference code's other accelerators (Erdil 2025). H800 and H20 are the export versions of
# the H100 (less NVLink bandwidth; far fewer FLOP/s); prices are 2/3 of list, as for the others.
H800 = GPU(
    name="H800 SXM",
    flops_by_weight_bits={4: 2e15, 8: 2e15, 16: 1e15},
    hbm_bandwidth=3.3e12,
    hbm_bytes=80e9,
    intranode_allreduce_bandwidth=400e9 / 4,
    internode_allreduce_bandwidth=25e9,
    node_size=8,
    price_per_hour=3.15 * 2 / 3,
    flop_cap=0.70,
    bandwidth_cap=0.75,
    kernel_launch_s=4e-6,
    source="nvidia2023h100,erdil2025inference",
    note="the H100 with 400 GB/s NVLink; priced as the H100",
)

H20 = GPU(
    name="H20",
    flops_by_weight_bits={4: 2.96e14, 8: 2.96e14, 16: 1.48e14},
    hbm_bandwidth=4.0e12,
    hbm_bytes=96e9,
    intranode_allreduce_bandwidth=900e9 / 4,
    internode_allreduce_bandwidth=25e9,
    node_size=8,
    price_per_hour=13.5 / 24 * 2.1,
    flop_cap=1.0,
    bandwidth_cap=0.75,
    kernel_launch_s=4e-6,
    source="erdil2025inference",
    note="numbers and price (13.5/24 of the H100's) as the reference code has them",
)

H200 = GPU(
    name="H200 SXM",
    flops_by_weight_bits={4: 2e15, 8: 2e15, 16: 1e15},
    hbm_bandwidth=4.8e12,
    hbm_bytes=141e9,
    intranode_allreduce_bandwidth=900e9 / 4,
    internode_allreduce_bandwidth=50e9 / 2,
    node_size=8,
    price_per_hour=3.5 / 2.5 * 2.1,
    flop_cap=0.60,
    bandwidth_cap=0.75,
    kernel_launch_s=4e-6,
    source="nvidia2024h200,erdil2025inference",
    note="priced at 3.5/2.5 of the H100, as in the reference code",
)

# Torus-connected accelerators of the reference code: one chip per "node", no NVLink, and the
# torus collective model (1 µs per rank hop). Prices are the code's placeholder $1/h.
TPU_V4_ERDIL = GPU(
    name="TPU v4 (reference code)",
    flops_by_weight_bits={8: 2.6e14, 16: 2.6e14},
    hbm_bandwidth=1.6e12,
    hbm_bytes=32e9,
    intranode_allreduce_bandwidth=None,
    internode_allreduce_bandwidth=2.5e11,
    node_size=1,
    price_per_hour=1.0,
    flop_cap=1.0,
    bandwidth_cap=1.0,
    kernel_launch_s=4e-6,
    collective_model="torus",
    source="erdil2025inference",
    note="the reference code's TPU v4; the scaling book's numbers are the 'tpu-v4' preset",
)

GROQ_LPU = GPU(
    name="Groq LPU",
    flops_by_weight_bits={8: 7.5e14, 16: 1.88e14},
    hbm_bandwidth=8e13,
    hbm_bytes=2.3e8,
    intranode_allreduce_bandwidth=None,
    internode_allreduce_bandwidth=1.65e11,
    node_size=1,
    price_per_hour=1.0,
    flop_cap=1.0,
    bandwidth_cap=1.0,
    kernel_launch_s=4e-6,
    collective_model="torus",
    source="abts2022groq,erdil2025inference",
    note="230 MB of on-chip SRAM at 80 TB/s stands in for HBM",
)

GPUS: dict[str, GPU] = {"h100": H100, "a100": A100, "v100": V100,
                        "tpu-v4": TPU_V4, "tpu-v5e": TPU_V5E, "tpu-v5p": TPU_V5P,
                        "rtx-4090": RTX_4090, "h800": H800, "h20": H20, "h200": H200,
                        "tpu-v4-erdil": TPU_V4_ERDIL, "groq-lpu": GROQ_LPU}


def full_model_gpus() -> list[str]:
    """Names of the presets the full model can run on (those with a collective model)."""
    return [key for key, gpu in GPUS.items() if gpu.has_collective_model]


def get_gpu(name: str) -> GPU:
    """The GPU preset called ``name`` (e.g. 'h100'); InputError listing the choices otherwise."""
    return lookup("GPU", name, GPUS)

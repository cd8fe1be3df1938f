"""The presets after Hopper against the hardware note of 2026-11 and its sources.

Values typed from the note's table (dense peaks per GPU; scale-up bandwidth per GPU, one
direction): [A] NVIDIA AIConfigurator (commit 095f58a51c4c), [B] SemiAnalysis InferenceX (commit
77ca49a; [B2] its docs/gpu-specs.md), [C] Google Cloud TPU v6e documentation, [D] TPU7x
documentation. Where [A] and [B] differ the presets take [B]. Prices: [B]'s hyperscaler column,
2026-03/04. Corrected after an independent hand check (issue 20) from the vendors' own pages: the
GB200/GB300 NVL72 HBM per GPU (rack HBM / 72), their scale-out NICs (one per GPU) and the AMD
Infinity Fabric bandwidth (links x per-link rate, both directions, / 2 for one direction), each
written below as the datasheet arithmetic.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import inference_math.presets.hardware as hardware
from inference_math.cli import _fits, main
from inference_math.fullmodel.search import Setting
from inference_math.presets.hardware import GPUS, NUMBER_FIELDS
from inference_math.presets.models import get_model

ROOT = Path(__file__).resolve().parents[1]
T = 1e12
G = 1e9

# key: (BF16, 8-bit, FP4 or None, HBM bytes, HBM B/s, scale-up B/s one direction, domain, $/h)
# NVL72 HBM: the rack's HBM over its 72 GPUs (NVIDIA's GB200 / GB300 NVL72 pages). AMD scale-up:
# 7 Infinity Fabric links per GPU (an 8-GPU full mesh) x AMD's peak link bandwidth, which counts
# both directions, / 2 for one direction.
NOTE = {
    "b200": (2250 * T, 4500 * T, 9000 * T, 180 * G, 8.0 * T, 900 * G, 8, 1.95),
    "b300": (2250 * T, 4500 * T, 13500 * T, 268 * G, 8.0 * T, 900 * G, 8, 1.2 * 1.95),
    "gb200-nvl72": (2500 * T, 5000 * T, 10000 * T, 13.4e12 / 72, 8.0 * T, 900 * G, 72, 2.21),
    "gb300-nvl72": (2500 * T, 5000 * T, 15000 * T, 20e12 / 72, 8.0 * T, 900 * G, 72, 1.2 * 2.21),
    "mi300x": (1307 * T, 2615 * T, None, 192 * G, 5.3 * T, 7 * 128 * G / 2, 8, 1.12),
    "mi325x": (1307 * T, 2615 * T, None, 256 * G, 6.0 * T, 7 * 128 * G / 2, 8, 1.28),
    "mi355x": (2516 * T, 5033 * T, 10066 * T, 288 * G, 8.0 * T, 7 * 153.6 * G / 2, 8, 1.48),
    # TPU v6e: 8-bit weights at the INT8 rate (1,836; FP8 runs at the BF16 rate), as the v5e preset
    "tpu-v6e": (918 * T, 1836 * T, None, 32 * G, 1.64 * T, 800 * G / 2, 256, None),
    "tpu7x": (2307 * T, 4614 * T, None, 192 * 2**30, 7.37 * T, 1200 * G / 2, 9216, None),
}
RTOL = 1e-9
FP4 = {"b200", "b300", "gb200-nvl72", "gb300-nvl72", "mi355x"}
TPUS = {"tpu-v6e", "tpu7x"}
CARRIED_OVER = ("flop_cap", "bandwidth_cap", "kernel_launch_s")  # from the H100 preset


def bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,]+),", (ROOT / "references.bib").read_text(), re.M))


def test_the_new_presets_are_listed():
    assert set(NOTE) <= set(GPUS)


@pytest.mark.parametrize("key", sorted(NOTE))
def test_flops_match_the_note(key):
    bf16, fp8, fp4, *_ = NOTE[key]
    gpu = GPUS[key]
    assert gpu.flops(16) == pytest.approx(bf16, rel=RTOL)
    assert gpu.flops(8) == pytest.approx(fp8, rel=RTOL)
    # FP4 tensor cores where the chip has them, else the 8-bit rate (the reference code's H100 rule)
    assert gpu.flops(4) == pytest.approx(fp4 if fp4 is not None else fp8, rel=RTOL)
    assert (key in FP4) is (fp4 is not None)


@pytest.mark.parametrize("key", sorted(NOTE))
def test_memory_network_and_price_match_the_note(key):
    _, _, _, hbm, hbm_bw, scale_up, domain, price = NOTE[key]
    gpu = GPUS[key]
    assert gpu.hbm_bytes == pytest.approx(hbm, rel=RTOL)
    assert gpu.hbm_bandwidth == pytest.approx(hbm_bw, rel=RTOL)
    assert gpu.node_size == domain
    if key in TPUS:  # a torus: the ICI is the one bandwidth of the torus model
        assert gpu.collective_model == "torus"
        assert gpu.internode_allreduce_bandwidth == pytest.approx(scale_up / 2, rel=RTOL)
        assert "price_per_hour" in gpu.assumed
    else:  # all-reduce bus bandwidth = one-direction link bandwidth / 2 (H100: 9e11/4)
        assert gpu.collective_model == "nccl"
        assert gpu.intranode_allreduce_bandwidth == pytest.approx(scale_up / 2, rel=RTOL)
        assert gpu.price_per_hour == pytest.approx(price, rel=RTOL)


def test_the_reference_codes_bandwidth_rule_reproduces_the_h100():
    """Erdil (2025) code: 9e11/4 and 5e10/2, i.e. NVLink 450 GB/s one way and a 400 Gb/s NIC, / 2."""
    h100 = GPUS["h100"]
    assert h100.intranode_allreduce_bandwidth == 450 * G / 2
    assert h100.internode_allreduce_bandwidth == 400e9 / 8 / 2


# key: (NICs per compute tray, line rate per NIC in bit/s, GPUs per tray), from NVIDIA's documentation
NICS = {
    "gb200-nvl72": (4, 400e9, 4),  # DGX GB user guide: 4 x 400G ConnectX-7 per 2 Grace + 4 Blackwell
    "gb300-nvl72": (4, 800e9, 4),  # NVL72 enterprise RA: 4 ConnectX-8 per tray; ConnectX-8: 800 Gb/s
}


def test_scale_out_bandwidths():
    """NVL72 racks: one NIC per GPU, its one-direction bytes/s / 2 (the H100's rule); the rest assumed."""
    for key, (nics, bits_per_s, gpus) in NICS.items():
        gpu = GPUS[key]
        assert gpu.internode_allreduce_bandwidth == pytest.approx(nics * bits_per_s / gpus / 8 / 2,
                                                                  rel=RTOL), key
        assert "internode_allreduce_bandwidth" not in gpu.assumed, key
    assert GPUS["gb200-nvl72"].internode_allreduce_bandwidth == GPUS["h100"].internode_allreduce_bandwidth
    for key in ("b200", "b300", "mi300x", "mi325x", "mi355x"):
        gpu = GPUS[key]
        assert "internode_allreduce_bandwidth" in gpu.assumed, key
        # [B]: 400-800 Gb/s NICs per GPU
        assert 400e9 / 8 / 2 <= gpu.internode_allreduce_bandwidth <= 800e9 / 8 / 2, key


def test_the_corrected_numbers_cite_the_vendors_own_pages():
    """Issue 20: each corrected number names NVIDIA's or AMD's page, and the arithmetic in its note."""
    cited = {
        ("gb200-nvl72", "hbm_bytes"): ("nvidia2024gb200nvl72", "13.4 TB"),
        ("gb300-nvl72", "hbm_bytes"): ("nvidia2025gb300nvl72", "20 TB"),
        ("gb200-nvl72", "internode_allreduce_bandwidth"): ("nvidia2025dgxgbuserguide", "400 Gb/s"),
        ("gb300-nvl72", "internode_allreduce_bandwidth"): ("nvidia2025connectx8fw", "800 Gb/s"),
        ("mi300x", "intranode_allreduce_bandwidth"): ("amd2023mi300x", "7 Infinity Fabric links"),
        ("mi325x", "intranode_allreduce_bandwidth"): ("amd2024mi325x", "7 Infinity Fabric links"),
        ("mi355x", "intranode_allreduce_bandwidth"): ("amd2025mi355x", "153.6 GB/s"),
    }
    keys = bib_keys()
    for (gpu, field), (bib_key, arithmetic) in cited.items():
        head, note = GPUS[gpu].sources[field].split(":", 1)
        assert bib_key in head.split(",") and bib_key in keys, (gpu, field)
        assert arithmetic in note, (gpu, field)
    # the GB200 superchip's 372 GB over its 2 GPUs agrees with the rack's 13.4 TB / 72 to rounding
    assert GPUS["gb200-nvl72"].hbm_bytes == pytest.approx(372 * G / 2, rel=1e-3)


@pytest.mark.parametrize("key", sorted(NOTE))
def test_caps_and_launch_time_are_the_h100s_and_marked_assumed(key):
    gpu, h100 = GPUS[key], GPUS["h100"]
    for name in CARRIED_OVER:
        assert getattr(gpu, name) == getattr(h100, name)
        assert name in gpu.assumed


def test_placeholder_prices_are_marked_assumed():
    """[B] prices B300 and GB300 at 1.2x B200 and GB200; the sources give no TPU price."""
    for key in ("b300", "gb300-nvl72", "tpu-v6e", "tpu7x"):
        assert "price_per_hour" in GPUS[key].assumed
    for key in ("b200", "gb200-nvl72", "mi300x", "mi325x", "mi355x"):
        assert "price_per_hour" not in GPUS[key].assumed


def test_tpu7x_secondary_numbers_are_provisional():
    assert set(GPUS["tpu7x"].provisional) == {"hbm_bandwidth", "internode_allreduce_bandwidth"}
    assert all(not GPUS[key].provisional for key in NOTE if key != "tpu7x")


def test_fp4_rule_over_every_preset():
    """4-bit FLOP/s above the 8-bit rate exactly on the chips with FP4 tensor cores."""
    faster = {key for key, gpu in GPUS.items()
              if 4 in gpu.flops_by_weight_bits and gpu.flops(4) > gpu.flops(8)}
    assert faster == FP4
    for key, gpu in GPUS.items():
        if 4 in gpu.flops_by_weight_bits and key not in FP4:
            assert gpu.flops(4) == gpu.flops(8), key
    assert "FP4" in hardware.__doc__ and "8-bit rate" in hardware.__doc__


@pytest.mark.parametrize("key", sorted(NOTE))
def test_every_number_of_a_new_preset_has_a_source_in_the_bibliography(key):
    gpu, keys = GPUS[key], bib_keys()
    present = [name for name in NUMBER_FIELDS if getattr(gpu, name) is not None]
    assert set(present) <= set(gpu.sources), sorted(set(present) - set(gpu.sources))
    for name, text in gpu.sources.items():
        cited = {k.strip() for k in text.split(":", 1)[0].split(",")} if ":" in text else set()
        if name not in gpu.assumed:
            assert cited and cited <= keys, (key, name, text)


def test_every_cited_source_of_every_preset_is_in_the_bibliography():
    keys = bib_keys()
    for key, gpu in GPUS.items():
        for name, text in gpu.sources.items():
            head = text.split(":", 1)[0]
            if ":" in text and re.fullmatch(r"[a-z0-9,]+", head):
                assert set(head.split(",")) <= keys, (key, name, head)


def test_the_notes_sources_are_in_the_bibliography():
    """[A]-[F] of the note (the scaling book's GPU chapter and DeepSeek's report too)."""
    assert {"nvidia2026aiconfigurator", "semianalysis2026inferencex", "googlecloud2026tpuv6e",
            "googlecloud2026tpu7x", "google2025ironwood", "austin2025gpus",
            "deepseekai2025inferencesystem"} <= bib_keys()


@pytest.mark.parametrize("key", sorted(NOTE))
def test_the_full_model_accepts_the_new_presets(key):
    """Library-level: a Setting builds (collectives timed, FLOP/s for the weights) at every width,
    and the largest instance searched holds Llama 3 70B (the search itself is not run here)."""
    model = get_model("llama-3-70b")
    gpu = GPUS[key]
    assert gpu.has_collective_model
    for bits in (4, 8, 16):
        setting = Setting(model=model, gpu=gpu, weight_bytes=bits / 8)
        assert setting.gpu.flops(bits) > 0
    assert _fits(Setting(model=model, gpu=gpu), 0.0)


def test_the_gpus_command_lists_the_new_presets_and_their_assumptions(capsys):
    assert main(["gpus"]) == 0
    out, _ = capsys.readouterr()
    for key in NOTE:
        assert re.search(rf"^{re.escape(key)}\s", out, re.M), key
    assert "Assumed" in out and "Provisional" in out
    assert re.search(r"^  tpu7x: hbm_bandwidth, internode_allreduce_bandwidth$", out, re.M)
    assert main(["gpus", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr()[0])}
    assert rows["b200"]["flops_4bit"] == 9e15 and rows["a100"]["flops_4bit"] is None
    assert rows["gb200-nvl72"]["node_size"] == 72
    assert "kernel_launch_s" in rows["mi355x"]["assumed"] and rows["h100"]["assumed"] == []

"""The 2026 rent table against the prices the GPU presets and examples state with their sources."""

from __future__ import annotations

import re
import tomllib
from importlib import resources

import pytest

from inference_math.core.validation import InputError
from inference_math.presets import rents
from inference_math.presets.hardware import get_gpu


def _preset_sources() -> dict:
    text = resources.files("inference_math.presets").joinpath("gpus.toml").read_text("utf-8")
    return tomllib.loads(text)


@pytest.mark.parametrize("gpu", ["b200", "gb200-nvl72", "mi300x", "mi325x", "mi355x"])
def test_the_presets_past_hopper_carry_the_hyperscaler_column_and_state_the_others(gpu):
    """Their preset price is the hyperscaler column; the note of its source gives all three."""
    assert get_gpu(gpu).price_per_hour == rents.rent_2026(gpu)
    note = _preset_sources()[gpu]["sources"]["price_per_hour"]
    found = re.search(r"\$([\d.]+)/GPU-hour, hyperscaler column.*neocloud ([\d.]+), 3-year ([\d.]+)",
                      note)
    assert found, note
    stated = [float(v) for v in found.groups()]
    assert stated == [rents.rent_2026(gpu, c) for c in ("hyperscaler", "neocloud", "three_year")]


def test_the_h100_and_h200_presets_keep_the_paper_rent():
    """The paper's code prices an H100 at $2.10 an hour; the 2026 hyperscaler rate is $1.30."""
    assert get_gpu("h100").price_per_hour == 2.10
    assert rents.rent_2026("h100") == 1.30
    assert rents.rent_2026("h200") == 1.41
    example = resources.files("inference_math.data").joinpath("examples/my_gpu.toml")
    assert tomllib.loads(example.read_text("utf-8"))["price_per_hour"] == rents.rent_2026(
        "h100", "neocloud")


def test_every_row_has_every_column_and_the_hyperscaler_is_the_cheapest_or_equal():
    for gpu in rents.priced_gpus():
        values = [rents.rent_2026(gpu, c) for c in rents.columns()]
        assert all(v > 0 for v in values)
        assert values[0] <= min(values[1:]), gpu
        # the glossary says a neocloud's rent is above a hyperscaler's for every GPU
        assert rents.rent_2026(gpu, "neocloud") > rents.rent_2026(gpu, "hyperscaler"), gpu


@pytest.mark.parametrize("gpu, column, message", [
    ("v100", "hyperscaler", "gpu: 'v100' has no 2026 rent"),
    ("h100", "spot", "price column: 'spot'"),
])
def test_unknown_gpu_or_column_names_the_field(gpu, column, message):
    with pytest.raises(InputError, match=message):
        rents.rent_2026(gpu, column)

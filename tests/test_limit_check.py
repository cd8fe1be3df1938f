"""The limit holds: no public measurement serves more output tokens/s per GPU than the limit at
its model, GPU, precision, context and speed per user (inference_math.reality.limit_check)."""

from __future__ import annotations

import pytest

from inference_math.fullmodel import full_model as fm
from inference_math.fullmodel.search import Setting, frontier
from inference_math.presets.hardware import get_gpu
from inference_math.presets.models import get_model
from inference_math.reality import limit_check as lc
from inference_math.reality.measurements import frontier_conditions


@pytest.fixture(scope="module")
def comparisons():
    return lc.compare_all()


def test_every_public_measurement_lies_at_or_below_the_limit(comparisons):
    rated = [c for c in comparisons if c.efficiency is not None]
    assert len(rated) == sum(1 for cond in frontier_conditions()
                             if cond.output_tok_s_per_gpu is not None)
    above = [(c.conditions.row, round(c.efficiency, 3)) for c in rated if c.efficiency > 1.0]
    assert not above, f"measurements above the limit (row, measured/limit): {above}"


def test_unstated_conditions_are_taken_at_their_most_favourable(comparisons):
    """No stated KV width: 8 bits; no stated speculation on DeepSeek (one MTP layer): up to two
    tokens per step; no stated weights on a B200: its 4-bit rate."""
    by_row = {c.conditions.row: c for c in comparisons}
    production = by_row[1]  # DeepSeek's production decode: neither KV width nor MTP stated
    assert production.kv_bits == lc.UNSTATED_KV_BITS
    assert production.conditions.speculative is None and production.tokens_per_step == 2.0
    setting, _ = lc.limit_setting(by_row[73].conditions)  # MLPerf B200, weights not stated
    assert setting.w == 0.5


def test_the_limit_throughput_by_hand():
    """Llama 3.1 8B on one H100 at batch one, 16-bit weights, no context: the limit reads the
    weights once per token at the preset's full 3.3 TB/s (the paper's rounding of 3.35): 2
    bytes for each of its 8.03e9 parameters less the input embedding's 128,256 × 4,096 rows,
    which are looked up, not read: about 220 tokens/s. Its throughput per GPU falls with the
    speed asked."""
    model, gpu = get_model("llama-3.1-8b"), get_gpu("h100")
    latency = fm.compile_branch(model, gpu, False, curve="limit")["latency"](1.0, 1.0, 1.0, 1.0)
    assert 1 / float(latency) == pytest.approx(3.3e12 / (2 * (8.03e9 - 128256 * 4096)), rel=0.01)
    front = frontier(Setting(model, gpu, curve="limit", kv_bits=16))
    rates = [lc.throughput_at(front, v) for v in (10.0, 100.0, 1000.0)]
    assert rates[0] >= rates[1] >= rates[2] > 0

"""The measurement files shipped with the package, and the comparison of the model with them."""

from __future__ import annotations

import math
import re
from collections import Counter

from inference_math.engine import measurements as me


def test_the_serving_file_has_the_rows_its_readme_lists():
    """79 rows; the README's coverage line counts the rows by GPU."""
    rows = me.load("serving")
    assert [row["row_id"] for row in rows] == list(range(1, 80))
    readme = (me.resources.files("inference_math") / "data" / "measurements"
              / "README_serving_measurements_public.md").read_text()
    coverage = re.search(r"Coverage: (.*?)\. Dense", readme, re.S).group(1)
    stated = {name: int(count) for name, count in re.findall(r"(\w+) (\d+)", coverage)}
    counted = Counter(str(row["gpu"]).split()[0] for row in rows)
    assert counted == stated


def test_deepseeks_production_row_reads_as_the_report_states_it():
    row = me.load("serving")[0]
    assert row["source_id"] == "DS-D6" and row["gpu"] == "H800"
    assert row["output_tok_s_per_gpu"] == 1850 and row["avg_kv_len"] == 4989
    assert row["tok_s_per_user"] == "20-22"  # a range stays text
    assert row["tpot_ms_mean"] is None  # not stated


def test_the_other_files_and_their_sources():
    assert len(me.load("fastertransformer")) == 2
    assert len(me.load("tensorrt_llm_7b")) == 4
    assert any("kipply" in line for line in me.comments("fastertransformer"))
    assert any("16.1 ms" in line for line in me.comments("tensorrt_llm_7b"))
    assert me.TRT_7B_FIRST_TOKEN_MS == {128: 16.1, 2048: 120.5}


def test_every_serving_row_is_compared_or_listed_with_a_reason():
    compared = {int(c.row) for c in me.comparisons() if c.source.startswith(("TRTLLM-H", "TRTLLM-F"))}
    listed = {row["row"] for row in me.pending()}
    assert not compared & listed
    assert compared | listed == set(range(1, 80))
    assert all(row["why"] for row in me.pending())


def test_comparisons_are_finite_and_the_batch_one_decode_is_close():
    rows = me.comparisons()
    for row in rows:
        assert row.measured > 0
        assert row.predicted is None or (math.isfinite(row.predicted) and row.predicted > 0)
    # kipply's FasterTransformer decode steps at batch 1 (memory bound): within 10%
    decode = [row for row in rows if row.source == "FT-KIPPLY" and row.quantity == "tpot_ms"]
    assert len(decode) == 2 and all(row.error < 0.10 for row in decode)
    summary = me.error_summary(rows)
    assert set(summary) >= {"FT-KIPPLY", "TRTLLM-7B-A100", "TE-VLLM"}

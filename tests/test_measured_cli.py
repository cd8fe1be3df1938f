"""``inference-math measured`` on a user's file: rows that state only a time, the arrival model of
each row, the errors of a misspelled column or an unknown model or GPU, and the plot; and the
title of ``serve --plot``."""

import json

import pytest

from inference_math.cli import main

# Llama 3.3 70B (its config: 80 layers, d_model 8,192, 64 query heads of 128, 8 KV heads, a
# vocabulary of 128,256) and the H100 preset's datasheet numbers: 3.3e12 B/s of HBM, 2e15 FP8
# FLOP/s
PARAMS = 70_552_387_584
EMBEDDING = 128_256 * 8_192
KV_8BIT = 80 * 2 * 8 * 128 * 1  # keys and values of 8 heads of 128, one byte each, per token
HBM, FP8 = 3.3e12, 2e15

COLUMNS = ("point_id,model,gpu,gpus,weight_bits,kv_bits,tp,scenario,concurrency,input_len,"
           "output_len,output_tok_s_per_gpu,tok_s_per_user,tpot_ms,ttft_ms,engine\n")


def _rows(tmp_path, capsys, body, *extra):
    path = tmp_path / "mine.csv"
    path.write_text(COLUMNS + body)
    assert main(["measured", str(path), "--json", *extra]) == 0
    return {row["point_id"]: row for row in json.loads(capsys.readouterr().out)}


def test_a_tpot_only_row_is_compared_against_the_limits_memory_time(tmp_path, capsys):
    """8 sequences decoding on 8 H100s, 8-bit weights and cache, at the mean context of 1,500:
    every weight but the input embedding (read a row a token) and the cache cross HBM once per
    step: (70.55e9 − 1.05e9 + 8·1,500·163,840) B / (8 · 3.3e12 B/s) = 2.71 ms (within 2%: the
    limit adds the activations' traffic)."""
    rows = _rows(tmp_path, capsys, "dec,llama-3.3-70b,h100,8,8,8,8,decode-only,8,1000,1000,,,5,,\n")
    row = rows["dec"]
    assert row["quantity"] == "tpot_ms" and row["unit"] == "ms per output token"
    assert row["reason"] is None and row["measured"] == 5
    by_hand = (PARAMS - EMBEDDING + 8 * 1500 * KV_8BIT) / (8 * HBM) * 1e3
    assert row["limit"] == pytest.approx(by_hand, rel=0.02)
    assert row["efficiency"] == pytest.approx(row["limit"] / 5)  # a time: the curve's over ours
    assert row["limit"] < row["estimate"] and row["band_low"] < row["estimate"] < row["band_high"]
    assert row["arrivals"] == "steady decode"


def test_a_ttft_only_row_is_compared_against_the_limits_arithmetic(tmp_path, capsys):
    """One 2,000-token prompt on 8 H100s at FP8: the matmuls 2·(70.55e9 − 2·1.05e9) FLOPs a
    token (no input embedding; the LM head of the last token only, 2.1e9 more) and causal
    attention 80·4·8,192·999.5 FLOPs a token: 2.790e14 FLOPs / (8 · 2e15) = 17.44 ms."""
    rows = _rows(tmp_path, capsys,
                 "pre,llama-3.3-70b,h100,8,8,8,8,prefill-only,1,2000,1,,,,30,\n")
    row = rows["pre"]
    assert row["quantity"] == "ttft_ms" and row["reason"] is None
    flops = (2 * (PARAMS - 2 * EMBEDDING) * 2000 + 2 * EMBEDDING
             + 80 * 4 * 8192 * 999.5 * 2000)
    assert row["limit"] == pytest.approx(flops / (8 * FP8) * 1e3, rel=0.01)
    assert row["efficiency"] == pytest.approx(row["limit"] / 30)
    assert row["arrivals"] == "prefill only"


def test_concurrency_and_rate_rows_name_their_arrival_model(tmp_path, capsys):
    body = ("c,llama-3.3-70b,h100,8,8,8,8,concurrency,64,1000,1000,,,,400,\n"
            "r,llama-3.3-70b,h100,8,8,8,8,rate,,1000,1000,,,25,200,\n")
    rows = _rows(tmp_path, capsys, body)
    assert rows["c"]["arrivals"] == "closed loop" and rows["c"]["reason"] is None
    assert "each replaced as it ends" in rows["c"]["arrivals_meaning"]
    assert rows["c"]["quantity"] == "ttft_ms" and rows["c"]["limit"] < rows["c"]["estimate"]
    assert rows["r"]["arrivals"] == "open loop" and rows["r"]["reason"] == \
        "request rate not stated"
    path = tmp_path / "mine.csv"
    assert main(["measured", str(path)]) == 0
    out = capsys.readouterr().out
    assert "closed loop: the stated requests always in flight" in out
    assert "open loop: requests arriving at a stated rate: the decode batch Little's law" in out
    assert "ttft_ms in ms to the first token" in out


@pytest.mark.parametrize("header, body, needle", [
    (COLUMNS.replace("tok_s_per_user", "tok_s_per_usr"),
     "a,llama-3.3-70b,h100,8,8,8,8,concurrency,64,1000,1000,500,30,,,\n",
     "unknown column 'tok_s_per_usr'; did you mean 'tok_s_per_user'?"),
    (COLUMNS, "a,llama-9000,h100,8,8,8,8,concurrency,64,1000,1000,500,30,,,\n",
     "mine.csv row 2: unknown model 'llama-9000'"),
    (COLUMNS, "a,llama-3.3-70b,h100,8,8,8,8,concurrency,64,1000,1000,500,30,,,\n"
              "b,llama-3.3-70b,h900,8,8,8,8,concurrency,64,1000,1000,500,30,,,\n",
     "mine.csv row 3: unknown GPU 'h900'"),
])
def test_a_misspelled_column_or_unknown_name_is_one_line(tmp_path, capsys, header, body, needle):
    path = tmp_path / "mine.csv"
    path.write_text(header + body)
    assert main(["measured", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_the_plot_draws_every_group_with_its_curves(tmp_path, capsys):
    body = "".join(f"a{c},llama-3.3-70b,h100,8,8,8,8,concurrency,{c},1000,1000,{r},{u},,,vLLM\n"
                   for c, r, u in ((16, 300, 60), (64, 800, 40)))
    body += "".join(f"b{c},gpt-oss-120b,h200,1,4,,1,concurrency,{c},1024,1024,{r},{u},,,SGLang\n"
                    for c, r, u in ((32, 2000, 70), (128, 5000, 40)))
    body += "t,llama-3.3-70b,h100,8,8,8,8,concurrency,64,1000,1000,,,,400,\n"
    figure = tmp_path / "points.svg"
    _rows(tmp_path, capsys, body, "--plot", str(figure))
    text = figure.read_text()
    assert "Llama 3.3 70B on H100 SXM: 1000 in / 1000 out, weights 8-bit, cache 8-bit" in text
    assert "gpt-oss-120b on H200 SXM: 1024 in / 1024 out, weights 4-bit, cache unstated" in text
    assert text.count("limit (peaks)") == 2 and text.count("paper's curve") == 2
    assert "measured: vLLM" in text and "measured: SGLang" in text
    assert text.count("tokens/s per user") >= 2 and "output tokens/s per GPU" in text
    assert "t (ttft_ms)" in text and "measured speed over each curve's" in text


def test_serve_plot_titles_its_mode_and_limits(tmp_path, capsys):
    figure = tmp_path / "serve.svg"
    argv = ["serve", "--model", "llama-3.1-8b", "--gpu", "h100", "--input-len", "1000",
            "--output-len", "1000", "--ttft-ms", "2000", "--tpot-ms", "50", "--plot", str(figure)]
    assert main(argv) == 0
    capsys.readouterr()
    text = figure.read_text()
    assert "aggregated (chunked prefill), curve estimate, TTFT ≤ 2000 ms, TPOT ≤ 50 ms" in text
    assert main([*argv[:-6], "--disaggregated", "--curve", "limit", "--plot", str(figure)]) == 0
    capsys.readouterr()
    assert "disaggregated, curve limit, no TTFT or TPOT limit" in figure.read_text()

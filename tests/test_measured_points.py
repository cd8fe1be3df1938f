"""Measured points (reality/measured_points.py), the estimate's fit (estimate_fit.py) and the
commands serve and measured."""

import json
import math

import numpy as np
import pytest

from inference_math.cli import main
from inference_math.reality import estimate_fit as ef
from inference_math.reality import measured_points as mp
from inference_math.serving import step_time as st

HEADER = ("point_id,model,gpu,gpus,weight_bits,tp,scenario,concurrency,input_len,output_len,"
          "output_tok_s_per_gpu,tok_s_per_user\n")


def test_public_points_are_many_and_cite_a_source():
    points = mp.public_points()
    assert len(points) >= 200 + 79
    assert all(str(p["source"]).startswith(("github:", "http")) for p in points)


def test_every_comparable_public_point_is_at_or_below_the_limit():
    """The limit holds: no measured rate above it (a width the source leaves open at its most
    favourable: the cache at 8 bits, the weights at the narrowest the GPU computes with)."""
    above, compared = [], 0
    for point in mp.public_points():
        resolved = mp.resolve(point)
        if resolved.reason:
            continue
        compared += 1
        limit = mp.probe(resolved).predict("limit")[point.primary]
        measured = point.measured(point.primary)
        if limit is None or measured > limit * (1 + 1e-9):
            above.append((point.point_id, measured, limit))
    assert not above
    assert compared >= 400 and len(ef.samples()) >= 200


def test_a_fit_is_the_same_with_one_thread_or_two():
    """The fit's linear algebra gives the same result with one BLAS thread and with two: a fit
    of one source's points from one start (a few seconds; the whole refit below takes minutes
    and runs once)."""
    from threadpoolctl import threadpool_limits
    train = ef.training()
    source = ef.source_of(train[0])
    items = [s for s in train if ef.source_of(s) == source][:40]
    start = (ef._start(ef.START),)
    fits = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            fits.append(ef.fit(items, starts=start))
    assert len(items) >= 10
    for stack in fits[0]:
        for one, two in zip(fits[0][stack].vector, fits[1][stack].vector, strict=True):
            assert math.isclose(one, two, rel_tol=1e-9, abs_tol=1e-12), stack
    # it moved from its start (a fit that did nothing would pass trivially)
    assert fits[0] != ef.to_efficiencies(start[0])


def test_the_stored_fit_is_what_the_method_gives():
    """Refitting on the public points, from every start, reproduces
    data/estimate_parameters.json: each parameter within 2% (or 1e-3 absolute, for one at its
    bound), the held-out error within 0.01 in ln."""
    stored = st.fitted_record()
    effs = ef.fit()
    assert set(effs) == set(stored["parameters"]) == set(st.FITTED_STACKS)
    for stack, eff in effs.items():
        assert eff.rho_route == ef.RHO_ROUTE == stored["parameters"][stack]["rho_route"]
        for k, (name, value) in enumerate(zip(st.PARAMETER_NAMES[:ef.K], eff.vector[:ef.K],
                                              strict=True)):
            low, high = ef.BOUNDS[k]
            assert low <= value <= high, (stack, name)
            assert math.isclose(value, stored["parameters"][stack][name], rel_tol=0.02,
                                abs_tol=1e-3 if name != "beta_half_bytes" else 10.0), \
                (stack, name)
            if name not in st.PER_STACK:  # shared by every stack
                assert value == getattr(effs[st.FITTED_STACKS[0]], name), (stack, name)
    band = (stored["band"]["low"], stored["band"]["high"])
    again = ef.report(effs, band=band)
    assert math.isclose(again["test"]["median_abs_log"], stored["test"]["median_abs_log"],
                        abs_tol=0.01)
    assert stored["band"]["low"] < 0 < stored["band"]["high"]
    assert stored["test"]["points"] >= 50 and stored["train"]["points"] >= 150


def test_the_stored_band_is_the_out_of_fold_errors():
    """The band: the 10th and 90th percentiles of the training split's out-of-fold errors,
    refitted fold by fold from the stored parameters."""
    stored = st.fitted_record()
    again = ef.report(ef.stored())
    for side in ("low", "high"):
        assert math.isclose(again["band"][side], stored["band"][side], abs_tol=0.02)
    assert math.isclose(again["cross_validation"]["median_abs_log"],
                        stored["cross_validation"]["median_abs_log"], abs_tol=0.01)


def test_the_fit_stays_inside_its_bounds():
    """No coordinate, however far a trial step goes, gives a value outside the physical range
    or overflows (the fit's coordinates are bounded; to_vector clips)."""
    for z in (np.full(6, -1e6), np.full(6, 1e6), np.zeros(6)):
        values = ef.to_vector(z)
        assert all(low <= v <= high for v, (low, high) in zip(values, ef.BOUNDS, strict=True))
    low, high = ef.coordinate_bounds()
    assert len(low) == 6 + len(st.PER_STACK) * (len(st.FITTED_STACKS) - 1)
    assert np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and np.all(low < high)
    one = ef.stored("one_set")
    assert len({eff.vector for eff in one.values()}) == 1


def test_held_out_split_is_by_setup():
    by_setup = {}
    for sample in ef.samples():
        by_setup.setdefault(sample.setup, set()).add(sample.held_out)
    assert all(len(sides) == 1 for sides in by_setup.values())


def test_a_users_file_against_the_curves(tmp_path, capsys):
    path = tmp_path / "mine.csv"
    path.write_text(HEADER + "a,meta-llama/Llama-3.3-70B-Instruct,h100,8,8,8,concurrency,64,"
                             "1000,1000,500,30\n")
    assert main(["measured", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["quantity"] == "output_tok_s_per_gpu" and row["reason"] is None
    assert row["efficiency"] == pytest.approx(500 / row["limit"])
    assert row["band_low"] < row["estimate"] < row["band_high"]


@pytest.mark.parametrize("body, field", [
    ("a,llama-3.3-70b,h100,8,8,8,concurrency,64,1000,1000,-5,\n", "output_tok_s_per_gpu"),
    ("a,llama-3.3-70b,h100,8,8,8,queue,64,1000,1000,500,\n", "scenario"),
    ("a,llama-3.3-70b,h100,8,8,8,concurrency,64,,1000,500,\n", "input_len"),
    ("a,llama-3.3-70b,h100,8,8,8,concurrency,64,1000,1000,nan,\n", "output_tok_s_per_gpu"),
])
def test_bad_points_are_one_line_naming_the_field(tmp_path, capsys, body, field):
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + body)
    assert main(["measured", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err and "Traceback" not in err


def test_serve_json_is_strict_and_complete(capsys):
    assert main(["serve", "--model", "llama-3.3-70b", "--gpu", "h100", "--input-len", "1000",
                 "--output-len", "1000", "--weight-bits", "8", "--ttft-ms", "2000",
                 "--json"]) == 0
    points = json.loads(capsys.readouterr().out)
    needed = {"tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "ttft_ms", "tpot_ms",
              "usd_per_mtok_output", "usd_per_mtok_input", "band_low", "band_high"}
    assert points and all(needed <= set(p) for p in points)
    speeds = [p["tokens_per_s_per_user"] for p in points]
    assert speeds == sorted(speeds, reverse=True)


@pytest.mark.parametrize("args, option", [
    (["--input-len", "-1", "--output-len", "10"], "--input-len"),
    (["--input-len", "10", "--output-len", "10", "--ttft-ms", "inf"], "--ttft-ms"),
    (["--input-len", "10", "--output-len", "10", "--tpot-ms", "0.001"], "--model"),
    (["--input-len", "10", "--output-len", "10", "--curve", "best"], "--curve"),
])
def test_serve_refuses_bad_input_in_one_line(capsys, args, option):
    assert main(["serve", "--model", "llama-3.3-70b", "--gpu", "h100", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and option in err


def test_measured_plot_draws_the_points_over_the_frontiers(tmp_path, capsys):
    path = tmp_path / "mine.csv"
    path.write_text(HEADER + "".join(
        f"p{c},llama-3.3-70b,h100,8,8,8,concurrency,{c},1000,1000,{r},{u}\n"
        for c, r, u in ((16, 300, 60), (64, 800, 40), (256, 1600, 20))))
    figure = tmp_path / "points.svg"
    assert main(["measured", str(path), "--plot", str(figure)]) == 0
    text = figure.read_text()
    assert "<svg" in text and "estimate" in text and "limit" in text


def test_each_gpu_takes_the_efficiencies_of_its_software_stack():
    from inference_math.presets.hardware import get_gpu
    stored = st.fitted_record()["parameters"]
    assert get_gpu("mi355x").software_stack == "rocm" and get_gpu("b200").software_stack == "cuda"
    assert st.fitted(get_gpu("mi355x")).eta_mem == stored["rocm"]["eta_mem"]
    assert st.fitted(get_gpu("h100")).eta_mem == stored["cuda"]["eta_mem"]
    # no public point runs on a TPU: its stack takes CUDA's numbers
    assert st.fitted(get_gpu("tpu-v6e")).t_fixed_s == stored["cuda"]["t_fixed_s"]


def test_the_estimate_fills_the_engines_share_of_hbm():
    """8 H100s hold 8 x 80 GB; the estimate lets an engine fill 0.9 of it (vLLM's default
    gpu_memory_utilization): 576 GB, and fewer sequences than the limit."""
    from inference_math.presets.hardware import get_gpu
    from inference_math.presets.models import get_model
    from inference_math.serving.predict import Deployment, predict
    kw = dict(tp=8, batch=1, input_len=2048, output_len=2048, weight_bits=8)
    est = predict(Deployment(get_model("llama-3.3-70b"), get_gpu("h100"), curve="estimate", **kw))
    lim = predict(Deployment(get_model("llama-3.3-70b"), get_gpu("h100"), curve="limit", **kw))
    assert est.memory_gb == pytest.approx(576.0) and lim.memory_gb == pytest.approx(640.0)
    assert 0 < est.max_batch < lim.max_batch


def test_the_training_cost_is_what_least_squares_reports():
    """training_cost is the cost scipy's soft-L1 least squares reports at the same point (a
    single evaluation, no step taken)."""
    from scipy.optimize import least_squares
    effs = ef.stored()
    train = ef.training()
    weights = ef._weights(train)
    result = least_squares(lambda z: weights * ef.log_ratios(train, ef.to_efficiencies(z)),
                           ef.coordinates_of(effs), bounds=ef.coordinate_bounds(), method="trf",
                           max_nfev=1, loss="soft_l1", f_scale=ef.LOSS_SCALE)
    assert result.nfev == 1
    assert math.isclose(ef.training_cost(effs), result.cost, rel_tol=1e-12)

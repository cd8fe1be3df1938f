"""The gathered benchmark points (data/measurements/points_benchmarks.csv): the file parses
strictly, its ids and sources are well formed, and no row repeats a row of the public files."""

import re
from importlib import resources

from inference_math.reality import measured_points as mp

NAME = "points_benchmarks.csv"
KEY = ("model", "gpu", "gpus", "engine", "scenario", "concurrency", "input_len", "output_len",
       "output_tok_s_per_gpu", "tok_s_per_user", "tpot_ms", "ttft_ms", "input_tok_s_per_gpu")


def _path():
    return resources.files("inference_math") / "data" / "measurements" / NAME


def _points():
    return mp.read_points(_path())


def test_the_file_parses_strictly_and_has_many_rows():
    assert len(_points()) >= 150


def test_the_file_starts_with_one_comment_line_then_the_header():
    lines = _path().read_text().splitlines()
    assert lines[0].startswith("#") and not lines[1].startswith("#")
    assert tuple(lines[1].split(",")) == mp.COLUMNS


def test_ids_are_unique_and_numbered():
    ids = [p["point_id"] for p in _points()]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"bench-[1-9][0-9]*", i) for i in ids)
    assert ids == [f"bench-{k}" for k in range(1, len(ids) + 1)]


def test_every_row_cites_a_source_and_where_in_it():
    for p in _points():
        assert str(p["source"]).startswith(("github:", "http")), p.point_id
        assert str(p["source_detail"]).strip(), p.point_id
        assert str(p["source_id"]).strip(), p.point_id


def test_no_row_repeats_a_public_row():
    def key(p):
        return tuple(str(p[name]).lower() if isinstance(p[name], str) else p[name] for name in KEY)

    public = {key(p) for p in mp.public_points() if not p.point_id.startswith("bench-")}
    repeated = [p.point_id for p in _points() if key(p) in public]
    assert not repeated
    mine = [key(p) for p in _points()]
    assert len(set(mine)) == len(mine)  # nor one of its own

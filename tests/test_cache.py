"""The opt-in frontier cache: off by default, keyed by inputs and by the library's own files."""

import pickle

from inference_math.fullmodel import cache


def test_without_the_variable_nothing_is_stored(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.ENV, raising=False)
    calls = []
    for _ in range(2):
        assert cache.cached("demo", 1, lambda: calls.append(1) or len(calls)) == len(calls)
    assert calls == [1, 1]


def test_a_stored_result_is_read_back_for_the_same_key_only(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"n": len(calls)}

    assert cache.cached("demo", ("a", 1.0), compute) == {"n": 1}
    assert cache.cached("demo", ("a", 1.0), compute) == {"n": 1}
    assert cache.cached("demo", ("a", 2.0), compute) == {"n": 2}
    assert len(calls) == 2
    stored = sorted(tmp_path.glob("demo-*.pickle"))
    assert len(stored) == 2
    assert {pickle.loads(p.read_bytes())["n"] for p in stored} == {1, 2}


def test_a_change_of_the_library_is_a_different_key(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    assert cache.cached("demo", 0, lambda: "old") == "old"
    monkeypatch.setattr(cache, "library_digest", lambda: "another version of the code")
    assert cache.cached("demo", 0, lambda: "new") == "new"


def test_the_digest_covers_sources_and_data(monkeypatch, tmp_path):
    """Editing a source or a data file changes the digest; compiled bytecode does not."""
    (tmp_path / "data").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "search.py").write_text("x = 1\n")
    (tmp_path / "data" / "table.csv").write_text("a,b\n1,2\n")
    monkeypatch.setattr(cache, "PACKAGE", tmp_path)
    digest = cache.library_digest.__wrapped__

    first = digest()
    (tmp_path / "__pycache__" / "search.cpython-311.pyc").write_bytes(b"\0")
    assert digest() == first
    (tmp_path / "data" / "table.csv").write_text("a,b\n1,3\n")
    second = digest()
    assert second != first
    (tmp_path / "search.py").write_text("x = 2\n")
    third = digest()
    assert third not in {first, second}
    (tmp_path / "presets").mkdir()
    (tmp_path / "presets" / "gpus.toml").write_text("[h100]\nprice_per_hour = 2.1\n")
    fourth = digest()
    assert fourth != third  # the GPU presets' data file
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "display.py").write_text("y = 1\n")
    assert digest() == fourth  # the book machinery computes nothing

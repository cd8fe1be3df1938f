"""The thread pool of the search's blocks: results in the tasks' order, however long each takes."""

from __future__ import annotations

import threading
import time

import pytest

from inference_math.core import in_order as I
from inference_math.core.allocation import reuse_freed_pages


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_results_come_in_the_order_of_the_tasks(threads, monkeypatch):
    monkeypatch.setenv(I.ENV, threads)
    delays = [0.02, 0.0, 0.01, 0.0, 0.03, 0.0]
    names = set()

    def work(k):
        time.sleep(delays[k])
        names.add(threading.current_thread().name)
        return k * k
    assert list(I.in_order(work, range(len(delays)))) == [0, 1, 4, 9, 16, 25]
    # one thread runs in the caller; more run in the pool
    assert (names == {threading.current_thread().name}) == (threads == "1")


def test_at_most_workers_results_wait(monkeypatch):
    monkeypatch.setenv(I.ENV, "2")
    started = []

    def work(k):
        started.append(k)
        return k
    results = I.in_order(work, range(10))
    assert next(results) == 0
    time.sleep(0.05)
    assert len(started) <= 3  # the one yielded and two submitted ahead
    assert list(results) == list(range(1, 10))


@pytest.mark.parametrize(("value", "expected"), [("1", 1), ("4", 4), ("0", None), ("x", None)])
def test_the_variable_sets_the_threads(value, expected, monkeypatch):
    monkeypatch.setenv(I.ENV, value)
    default = max(1, min(I.MAX_WORKERS, len(I.os.sched_getaffinity(0))))
    assert I.workers() == (expected if expected is not None else default)


def test_the_allocator_thresholds_are_set_where_the_c_library_is_glibc():
    import platform

    # mallopt returns 1 on success; a C library without it leaves the thresholds alone
    assert reuse_freed_pages() is (platform.libc_ver()[0] == "glibc")
    assert reuse_freed_pages() is reuse_freed_pages()  # set once, then remembered


@pytest.mark.skipif(not hasattr(I.os, "fork"), reason="no fork on this system")
def test_a_forked_child_runs_its_own_pool(monkeypatch):
    import multiprocessing

    monkeypatch.setenv(I.ENV, "2")
    # the parent's pool, with both threads started (each task outlasts a submission)
    assert list(I.in_order(_slow_negation, range(4))) == [0, -1, -2, -3]
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        result = pool.apply_async(_squares_in_a_pool, (4,))
        assert result.get(timeout=30) == [0, 1, 4, 9]


def _squares_in_a_pool(count):
    return list(I.in_order(lambda k: k * k, range(count)))


def _slow_negation(k):
    time.sleep(0.05)
    return -k

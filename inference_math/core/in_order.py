"""Evaluate independent NumPy blocks on the machine's cores, consuming results in order.

The search's grid is evaluated block by block; each block is a pure function of its inputs (a
generated NumPy expression), and NumPy releases the interpreter's lock inside its loops, so two
blocks run at once on two cores. Results come back in the order of the tasks, and whatever
depends on earlier blocks (the best latency found so far) is updated by the caller, in that
order: the result is the same as evaluating the blocks one after another.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Threads at most (the two cores of a small machine cover most of the gain; more threads
#: hold more blocks in memory at once).
MAX_WORKERS = 2
#: The variable that sets the number of threads (1: evaluate in the calling thread).
ENV = "INFERENCE_MATH_THREADS"


def workers() -> int:
    """Threads to use: ``INFERENCE_MATH_THREADS`` if set to a positive integer, else the cores
    this process may run on, at most :data:`MAX_WORKERS`."""
    value = os.environ.get(ENV, "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


@cache
def _pool(size: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=size, thread_name_prefix="inference-math")


# A child forked from a process that has a pool inherits it without its threads, and work
# submitted to it would wait forever: the child starts a pool of its own.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.cache_clear)


def in_order(fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
    """``map(fn, tasks)``, with up to :func:`workers` calls running at once and at most that
    many results waiting: the results are yielded in the order of ``tasks``."""
    size = workers()
    if size == 1:
        yield from map(fn, tasks)
        return
    pool, pending = _pool(size), deque()
    for task in tasks:
        pending.append(pool.submit(fn, task))
        if len(pending) > size:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()

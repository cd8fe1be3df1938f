"""Keep the pages of large NumPy temporaries for reuse instead of returning them to the kernel.

The search evaluates its generated expressions block by block; each block allocates temporaries
of a few hundred kilobytes. glibc's allocator serves allocations that large with fresh ``mmap``
pages and unmaps them when freed, or trims the top of its heap, so every block pays the kernel's
page faults again: on a two-core machine a cold ``max-speed`` spent about 0.2 s of its 0.5 s
search in them (the same search, run again in one process, is that much faster). Raising the
two thresholds, as the ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_`` environment
variables would, keeps those pages in the heap, where the next block reuses them. Elsewhere
(another C library, another system) nothing changes.
"""

from __future__ import annotations

import ctypes
from functools import cache

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
#: Allocations below this come from the heap and are reused once freed (glibc's own dynamic
#: threshold rises no higher).
MMAP_THRESHOLD = 32 * 2**20
#: Free memory at the top of the heap up to this is kept rather than returned at once.
TRIM_THRESHOLD = 128 * 2**20


@cache
def reuse_freed_pages() -> bool:
    """Set glibc's thresholds once for this process; False where there is no glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))

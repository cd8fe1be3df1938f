"""What the command line says of the fields of the configs read below it: ``--assume`` and
``--ignore``, handed several calls down to the config reader, and the readings collected so
their notes can be reported.

A context variable, so the reader takes the options without every function between the command
line and the reader passing them on. Imports nothing of the package: the command line sets it
up before it knows whether a config will be read, without loading the reader.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

#: (assume, ignore, the readings so far) inside :func:`reading_options`, else None.
OPTIONS: ContextVar[tuple[dict, frozenset, list] | None] = ContextVar("OPTIONS", default=None)


@contextmanager
def reading_options(assume: dict | None = None, ignore=None):
    """Within the block, a config read without its own ``assume`` or ``ignore`` applies these;
    yields the list of the readings so made (to report their notes)."""
    read: list = []
    token = OPTIONS.set((dict(assume or {}), frozenset(ignore or ()), read))
    try:
        yield read
    finally:
        OPTIONS.reset(token)

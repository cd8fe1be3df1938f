"""The latency of a speculative step on arrays of latencies, without SymPy (eq-spec-latency).

:func:`spec_latency_fn` evaluates eq-spec-latency (derived in :mod:`.speculative`) through the
NumPy code generated from it (:mod:`.formulas_numpy`), for the search and the serving frontier.
"""

from __future__ import annotations

import numpy as np


def spec_latency_fn(target: np.ndarray, draft: np.ndarray, n_draft: int, acceptance: float):
    """eq-spec-latency evaluated on arrays of target and drafter latencies.

    A scalar γ and α stay scalars (only the latencies are broadcast), so α^γ is computed once
    per call, not once per element: the search calls this on millions of branch bounds. Arrays
    of γ or α are broadcast with the latencies. The formula is generated from its derivation
    into :mod:`.formulas_numpy` (no SymPy at run time).
    """
    from .formulas_numpy import spec_latency as generated
    scalar = np.ndim(n_draft) == 0 and np.ndim(acceptance) == 0
    n_draft, acceptance = ((float(n_draft), float(acceptance)) if scalar else
                           (np.asarray(n_draft, dtype=float), np.asarray(acceptance, dtype=float)))
    shape = np.broadcast_shapes(np.shape(target), np.shape(draft), np.shape(n_draft),
                                np.shape(acceptance))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = generated(np.asarray(target, dtype=float), np.asarray(draft, dtype=float), n_draft,
                        acceptance)
    return np.broadcast_to(np.asarray(out, dtype=float), shape)

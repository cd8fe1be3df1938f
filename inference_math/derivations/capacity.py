"""Memory capacity against speed: why inference has little use for pipelines (Erdil 2025, 3.5).

Pipeline parallelism in inference slices the batch like data parallelism does; its only remaining
advantage is that it spreads the weights over more GPUs' memory. Erdil's argument that this rarely
matters on NVIDIA hardware: a GPU that generates a token every 1/v seconds can read at most B/v
bytes per token, so above the speed at which that is its whole memory, capacity cannot bind.
(The argument assumes no speculative decoding: every weight is read once per generated token.)
"""

from __future__ import annotations

import sympy as sp

from ..core.registry import derivation
from ..core.symbols import eta_bw, hbm_bw, hbm_cap, speed, t_sweep, v_cap


@derivation("eq-capacity-sweep-time", "Erdil (2025), sec. 3.5")
def memory_sweep_time() -> sp.Eq:
    """Time to read the whole HBM once: M_HBM/(eta_B·B) (eq-capacity-sweep-time).

    The paper's '80 GB takes 24 ms' is eta_B = 1 (the theoretical peak).
    """
    return sp.Eq(t_sweep, hbm_cap / (eta_bw * hbm_bw))


@derivation("eq-capacity-speed", "Erdil (2025), sec. 3.5")
def capacity_speed_limit() -> sp.Eq:
    """Speed above which HBM capacity cannot bind: eta_B·B/M_HBM (eq-capacity-speed).

    At speed v each token step lasts 1/v, in which a GPU reads at most eta_B·B/v bytes; every byte
    it must read per token has to be in its memory, and no byte it holds beyond those is read. The
    bytes read per step fill the memory exactly at the root of eta_B·B/v = M_HBM, which is
    1/t_sweep.
    """
    (root,) = sp.solve(sp.Eq(eta_bw * hbm_bw / speed, hbm_cap), speed)
    return sp.Eq(v_cap, root)

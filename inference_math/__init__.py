"""inference_math: the economics of serving language models, derived in SymPy.

Derivations (functions returning ``sympy.Eq``, each registered under a book equation label in
:data:`DERIVATIONS`) live in modules named after what they compute: :mod:`roofline`,
:mod:`latency_wall`, :mod:`scaling`, :mod:`moe` and :mod:`architecture` (Erdil 2025, section 2);
:mod:`intensity`, :mod:`kv_cache`, :mod:`sharding` and :mod:`serving` (the scaling book and Pope et
al.); :mod:`dense_economics`, :mod:`deepseek_serving`, :mod:`embeddings` and :mod:`rollouts` (the
Tensor Economics posts); :mod:`collectives`, :mod:`full_model`, :mod:`speculative` and
:mod:`search` (the full model of Erdil 2025, section 3; the paper's comparisons in
:mod:`comparisons`). :mod:`numeric` evaluates them over NumPy arrays; :mod:`hardware` and
:mod:`models` hold the presets.
"""

from . import (
    architecture,
    collectives,
    comparisons,
    deepseek_serving,
    dense_economics,
    embeddings,
    full_model,
    intensity,
    kv_cache,
    latency_wall,
    long_context,
    moe,
    rollouts,
    roofline,
    scaling,
    search,
    serving,
    sharding,
    speculative,
    symbols,
)
from .hardware import GPUS, get_gpu
from .models import MODELS, get_model
from .numeric import compile_fn, evaluate
from .registry import DERIVATIONS
from .validation import InputError

__version__ = "0.1.0"

__all__ = [
    "DERIVATIONS",
    "GPUS",
    "MODELS",
    "InputError",
    "architecture",
    "collectives",
    "comparisons",
    "compile_fn",
    "deepseek_serving",
    "dense_economics",
    "embeddings",
    "evaluate",
    "full_model",
    "get_gpu",
    "get_model",
    "intensity",
    "kv_cache",
    "latency_wall",
    "long_context",
    "moe",
    "roofline",
    "rollouts",
    "scaling",
    "search",
    "serving",
    "sharding",
    "speculative",
    "symbols",
]

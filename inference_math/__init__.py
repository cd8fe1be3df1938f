"""inference_math: the economics of serving language models, derived in SymPy.

The package is layered; a layer imports only the layers above it in this list:

- ``core``: the one symbol registry, the equation registry (labels ``eq-<topic>-<slug>``),
  lambdify, units and input validation.
- ``derivations``: the closed forms of the book's first three parts (Erdil 2025 section 2; the
  scaling book and Pope et al.; the Tensor Economics posts), each a function returning a SymPy
  ``Eq`` registered under its equation label.
- ``presets``: the model and GPU presets, whose counts are evaluated from the derivations.
- ``fullmodel``: the full model of Erdil (2025), sections 3-4 (latency terms under the paper's
  and the physical rules, collectives, speculative decoding, long context), the search over
  parallel layouts, the Pareto frontier, the paper's comparisons and the toy model's frontier.
- ``serving``: a workload of prompts and generated tokens on one deployment (prefill, step time
  under each curve, the estimate's step, prediction at a given deployment, the serving frontier).
- ``reality``: the curves against public measurements (the limit check, the estimate's fit).
- ``analysis``: questions asked of many frontiers (bands, sensitivity, what would make a cost
  cheaper, sweeps, the benchmark).
- ``codegen``: derivations written out as NumPy modules at build time (no command imports it).
- ``book``: what only the book needs (glue and display helpers, figures, citation, the derivation
  index, the frontier explorer, Sphinx extensions). ``cli`` is the command line.

The public API, loaded on first use so that ``import inference_math`` is cheap::

    from inference_math import get_model, get_gpu, frontier, Setting, DERIVATIONS, InputError

``get_model``/``get_gpu`` (and ``MODELS``/``GPUS``, ``Model``/``GPU``) return presets, or read a
user's file (``get_gpu("my_gpu.toml")``, in the schema of ``presets/gpus.toml``; ``get_model`` of
a Hugging Face ``config.json`` gives a ``Model``, or a ``LayeredModel`` when its layers differ);
``frontier(Setting(model, gpu, ...))`` searches the full model and returns a ``Frontier`` of
``FrontierPoint``; ``DERIVATIONS`` maps every equation label to the function deriving it;
``compile_fn``/``evaluate`` turn a derivation into NumPy; ``InputError`` is raised for bad input.
"""

from __future__ import annotations

import importlib
import pkgutil

__version__ = "0.1.0"

_API = {
    "InputError": "core.validation",
    "compile_fn": "core.numeric",
    "evaluate": "core.numeric",
    "GPU": "presets.hardware",
    "GPUS": "presets.hardware",
    "get_gpu": "presets.hardware",
    "Model": "presets.models",
    "MODELS": "presets.models",
    "get_model": "presets.models",
    "LayeredModel": "presets.layered",
    "Setting": "fullmodel.search",
    "Frontier": "fullmodel.search",
    "FrontierPoint": "fullmodel.search",
    "frontier": "fullmodel.search",
}

__all__ = ["DERIVATIONS", *_API]


def _all_derivations() -> dict:
    """The registry after importing every module that registers derivations."""
    for subpackage in ("derivations", "fullmodel", "serving", "reality", "analysis"):
        package = importlib.import_module(f"{__name__}.{subpackage}")
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    from .core.registry import DERIVATIONS

    return DERIVATIONS


def __getattr__(name: str):
    if name == "DERIVATIONS":
        value = _all_derivations()
    elif name in _API:
        value = getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

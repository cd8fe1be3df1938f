"""Serving engines: the ``engine`` column of the measured points named as a small set of
families.

Sources spell an engine many ways (``vLLM (ROCm)``, ``TensorRT-LLM (PyTorch backend)``,
``SGLang + ATOM plugin (ROCm)``); :data:`FAMILY_TABLE` maps each spelling, by the pattern its
name starts with, to one family. A family is the software whose kernels and scheduler set the
efficiencies: a port of an engine to another vendor's GPUs stays in its family (the software
stack, CUDA or ROCm, is the GPU's and is kept apart by the fit), while AMD's own stacks keep the
names AMD's pages give them (ATOM, and SGLang running ATOM's kernels as a plugin). Dynamo, an
orchestrator, names the engine behind it when the row says which. An empty or unmatched name is
:data:`UNKNOWN`.

Light on purpose (the standard library only): the command line checks ``--engine`` with it.
"""

from __future__ import annotations

import re

UNKNOWN = "unknown"

#: (family, pattern matched at the start of the engine column, case-insensitive), first match
#: wins. ``{backend}`` in a family takes the pattern's group of that name.
FAMILY_TABLE = (
    ("Dynamo + {backend}", r"(NVIDIA )?Dynamo\b.*?\b(?P<backend>TensorRT-LLM|vLLM|SGLang)\b"),
    ("Dynamo", r"(NVIDIA )?Dynamo\b"),
    ("TensorRT-LLM", r"TensorRT-LLM\b"),
    ("vLLM-Ascend", r"vLLM-Ascend\b"),
    ("vLLM", r"vLLM\b"),
    ("SGLang + ATOM", r"SGLang \+ ATOM\b"),
    ("SGLang", r"SGLang\b"),
    ("ATOM", r"ATOM\b"),
    ("DeepSeek in-house", r"DeepSeek\b"),
    ("LMDeploy TurboMind", r"LMDeploy \(TurboMind\)"),
    ("LMDeploy PyTorch", r"LMDeploy \(PyTorch"),
    ("LMDeploy", r"LMDeploy\b"),  # a source that names no backend
    ("NVIDIA NIM", r"(NVIDIA )?NIM\b"),
    ("MindIE", r"MindIE\b"),
    ("LLMBoost", r"LLMBoost\b"),
    ("Ollama", r"Ollama\b"),
    ("TGI", r"(Hugging Face )?(TGI|text-generation-inference)\b"),
    ("MLC LLM", r"MLC[- ]LLM\b"),
    ("llm-awq", r"llm-awq\b"),
)
#: Backends a Dynamo row may name (the families ``Dynamo + {backend}`` takes).
DYNAMO_BACKENDS = ("TensorRT-LLM", "vLLM", "SGLang")


def families() -> tuple[str, ...]:
    """Every family the table names, Dynamo's with each backend, in the table's order."""
    out = []
    for name, _ in FAMILY_TABLE:
        out += [name.format(backend=b) for b in DYNAMO_BACKENDS] if "{backend}" in name else [name]
    return tuple(out)


def family(engine: object) -> str:
    """The family of an ``engine`` column's value (:data:`UNKNOWN` if none matches)."""
    text = "" if engine is None else str(engine).strip()
    for name, pattern in FAMILY_TABLE:
        match = re.match(pattern, text, flags=re.IGNORECASE)
        if text and match:
            backend = match.groupdict().get("backend")
            if backend:
                backend = next(b for b in DYNAMO_BACKENDS if b.lower() == backend.lower())
            return name.format(backend=backend) if backend else name
    return UNKNOWN


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def lookup(name: str) -> str | None:
    """The family a user's ``name`` means (case, spaces and punctuation ignored: ``vllm``,
    ``tensorrt-llm``, ``trtllm``), or None."""
    aliases = {"trtllm": "TensorRT-LLM", "nim": "NVIDIA NIM", "deepseek": "DeepSeek in-house",
               "turbomind": "LMDeploy TurboMind"}
    key = _key(name)
    if not key:
        return None
    for fam in families():
        if _key(fam) == key:
            return fam
    return aliases.get(key)


def check_engine(engine, curve: str, error) -> None:
    """Raise ``error("engine", ...)`` unless ``engine`` is None or a known family on the
    estimate curve (the only one with efficiencies)."""
    if engine is None:
        return
    if engine not in families():
        raise error("engine", f"must be one of {', '.join(families())}, got {engine!r}")
    if curve != "estimate":
        raise error("engine", f"applies to the estimate curve only, got curve {curve!r}")

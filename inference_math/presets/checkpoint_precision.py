"""The precision of each weight of a checkpoint, as its quantization description states it.

A checkpoint says how its weights are stored in ``quantization_config`` (inside ``config.json``)
or, for NVIDIA's ModelOpt checkpoints, in ``hf_quant_config.json`` beside it. :func:`read_precision`
reads either into a :class:`Precision`: the format of every linear layer it quantizes (FP8 per
tensor or in blocks, MXFP4, NVFP4, integer groups of compressed-tensors), the modules it leaves
out (``ignore``, ``modules_to_not_convert``, ``exclude_modules``), the modules it names one by one
(``quantized_layers``) and the precision of the KV cache (``kv_cache_quant_algo``,
``kv_cache_scheme``). :meth:`Precision.format_of` answers for one module by its name.

Bits per weight of a block format are eq-layers-block-bits: element bits plus the block's scale
shared among its weights. What is not stated is not guessed: a method or algorithm this module
does not know is an InputError of one line naming it.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..core import names as N
from ..core.validation import InputError
from .counts import count


def block_bits(elem: float, scale: float, block: float) -> float:
    """eq-layers-block-bits: bits per weight of ``elem``-bit elements sharing a ``scale``-bit
    scale per ``block`` weights."""
    return count("block_quantized_bits", {N.bits_elem: elem, N.bits_scale: scale,
                                          N.block_elems: block})


@dataclass(frozen=True)
class Format:
    """A stored weight format: its name and bits per weight, scales included."""

    name: str
    bits: float


def mxfp4() -> Format:
    """OCP MX v1.0 MXFP4: 4-bit E2M1 elements, one 8-bit E8M0 scale per block of 32."""
    return Format("MXFP4", block_bits(4, 8, 32))


def nvfp4(group: int = 16) -> Format:
    """NVIDIA NVFP4: 4-bit E2M1 elements, one 8-bit E4M3 scale per block of 16 (the per-tensor
    float32 scale is below 1e-6 bit per weight and left out)."""
    return Format("NVFP4", block_bits(4, 8, group))


def fp8_blocks(rows: int, columns: int) -> Format:
    """FP8 (E4M3) with one float32 scale per rows x columns block (DeepSeek-V3's format)."""
    return Format(f"FP8 blocks {rows}x{columns}", block_bits(8, 32, rows * columns))


#: FP8 with one scale per tensor or per output channel: 8 bits a weight (the scales are below
#: 0.01 bit per weight of any matrix counted here).
FP8 = Format("FP8", 8.0)

#: ModelOpt's quant_algo names and the weight format each stores.
_MODELOPT = {"FP8": lambda group: FP8, "FP8_PER_CHANNEL_PER_TOKEN": lambda group: FP8,
             "NVFP4": nvfp4, "W4A16_NVFP4": nvfp4, "W4A8_NVFP4_FP8": nvfp4,
             "MXFP4": lambda group: mxfp4(), "W4A8_MXFP4_FP8": lambda group: mxfp4()}

#: ModelOpt leaves these out of every default configuration (its ``_default_disabled_quantizer_cfg``:
#: ``*lm_head*``, ``*router*``, ``*mlp.gate.*``, ``*output_layer*``): the output head and the
#: routers stay at the checkpoint's dtype unless ``quantized_layers`` names them.
_MODELOPT_DEFAULT_OUT = ("*lm_head*", "*router*", "*.gate", "*output_layer*", "head")


@dataclass(frozen=True)
class Precision:
    """What a checkpoint states about the storage of its weights and its KV cache.

    ``default``: the format of every linear layer not excluded (None: only ``per_module`` ones are
    quantized). ``exclude``: name patterns left at the checkpoint's dtype (globs, ``re:`` regular
    expressions, or names whose sub-modules they cover). ``per_module``: names with their own
    format. ``head``: whether the default reaches the output head. Routers are never reached by
    the default: most model codes (DeepSeek's MoEGate, Nemotron-H's router, gpt-oss's) hold them
    as plain parameters rather than linear layers, which quantizers leave alone, and ModelOpt's
    defaults disable them (below 0.1% of any model's weights either way).
    """

    method: str
    default: Format | None
    exclude: tuple[str, ...] = ()
    per_module: tuple[tuple[str, Format], ...] = ()
    kv_cache_bits: float | None = None
    head: bool = False
    source: str = "quantization_config"
    names: tuple[str, ...] = field(default=(), repr=False)  # every module name it mentions

    def format_of(self, names: tuple[str, ...], linear: bool = True,
                  router: bool = False, head: bool = False) -> Format | None:
        """The format of a module known by any of ``names`` (None: the checkpoint's dtype).

        ``linear``: whether it is a linear layer (embeddings and convolutions are not);
        ``router``, ``head``: a router or the output head, which the default format reaches only
        for a method that quantizes the head.
        """
        exact, patterns = self._per_module_index
        for name in names:
            parts = name.split(".")
            for end in range(len(parts), 0, -1):  # the module, then each of its parents
                fmt = exact.get(".".join(parts[:end]))
                if fmt is not None:
                    return fmt
        for pattern, fmt in patterns:
            if any(_matches(pattern, name) for name in names):
                return fmt
        if self.default is None or not linear or router or (head and not self.head):
            return None
        if any(_matches(pattern, name) for pattern in self.exclude for name in names):
            return None
        return self.default

    @cached_property
    def _per_module_index(self) -> tuple[dict[str, Format], tuple[tuple[str, Format], ...]]:
        """per_module split into plain names (a dict) and patterns (globs, regular expressions),
        so that a checkpoint naming thousands of modules is looked up, not scanned."""
        exact: dict[str, Format] = {}
        patterns = []
        for key, fmt in self.per_module:
            if key.startswith("re:") or any(c in key for c in "*?["):
                patterns.append((key, fmt))
            else:
                exact.setdefault(key, fmt)
        return exact, tuple(patterns)

    @cached_property
    def prefix(self) -> str | None:
        """The path of the decoder layers in this checkpoint's module names ('model.',
        'model.language_model.', 'backbone.', ...), read from the names it mentions."""
        counts: dict[str, int] = {}
        for name in self.names:
            found = re.match(r"^([A-Za-z0-9_.]*?)layers\.\d+", name)
            if found:
                counts[found.group(1)] = counts.get(found.group(1), 0) + 1
        return max(counts, key=counts.get) if counts else None


def _matches(pattern: str, name: str) -> bool:
    if pattern.startswith("re:"):
        try:
            return re.match(pattern[3:], name) is not None
        except re.error:
            return False
    return (name == pattern or name.startswith(pattern + ".")
            or fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, pattern + ".*"))


# --- reading -------------------------------------------------------------------------------------

def quant_file_beside(config_file: Path) -> Path | None:
    """The hf_quant_config.json of a config: ``NAME.hf_quant_config.json`` beside
    ``NAME.config.json``, or ``hf_quant_config.json`` in the config's folder."""
    name = config_file.name
    candidates = [config_file.with_name(name.removesuffix("config.json") + "hf_quant_config.json")
                  if name.endswith(".config.json") else None,
                  config_file.with_name("hf_quant_config.json")]
    if name.endswith(".config.json"):  # a named copy: only its own hf_quant file belongs to it
        candidates = candidates[:1]
    return next((c for c in candidates if c is not None and c.is_file()), None)


def load_quant_file(path: Path | None) -> dict | None:
    """The JSON object of an hf_quant_config.json (None without one); one-line InputError if it
    is malformed."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"{path.name} cannot be read as JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("quantization"), dict):
        raise InputError(f"{path.name} has no 'quantization' object")
    return data


def _names(value, what: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: {what} must be a list of module names")
    return tuple(value)


def _kv_bits(value, where: str) -> float | None:
    """The bits of a stated KV-cache format: 'FP8', {'num_bits': 8, ...}, or null."""
    if value is None:
        return None
    if isinstance(value, str):
        known = {"FP8": 8.0, "INT8": 8.0, "NVFP4": 4.0, "FP4": 4.0}
        if value.upper() not in known:
            raise InputError(f"{where}: kv cache format {value!r} is not one the reader maps "
                             f"({', '.join(known)})")
        return known[value.upper()]
    if isinstance(value, dict):
        bits = value.get("num_bits")
        if isinstance(bits, int) and not isinstance(bits, bool) and 1 <= bits <= 32:
            return float(bits)
    raise InputError(f"{where}: kv cache scheme {str(value)[:40]!r} states no num_bits")


def _modelopt(algo, group, exclude, layers, kv, where: str, source: str) -> Precision:
    """A ModelOpt description (hf_quant_config.json's 'quantization', or quant_method
    'modelopt'): one algorithm for every linear layer, or MIXED_PRECISION named layer by layer."""
    group = group if isinstance(group, int) and not isinstance(group, bool) and group > 0 else 16

    def fmt(name, size):
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise InputError(f"{where}: group_size must be a whole number >= 1, got {str(size)[:40]}")
        if not isinstance(name, str) or name not in _MODELOPT:
            raise InputError(f"{where}: quant_algo {str(name)[:40]!r} is not one the reader maps "
                             f"({', '.join(_MODELOPT)}, MIXED_PRECISION)")
        return _MODELOPT[name](size)

    per_module = []
    if layers is not None:
        if not isinstance(layers, dict):
            raise InputError(f"{where}: quantized_layers must map module names to formats")
        for name, spec in layers.items():
            if not isinstance(spec, dict):
                raise InputError(f"{where}: quantized_layers[{name!r}] must be an object")
            size = spec.get("group_size", group)
            per_module.append((name, fmt(spec.get("quant_algo"), size)))
    if algo == "MIXED_PRECISION":
        default = None
    elif algo is None and per_module:
        default = None
    else:
        default = fmt(algo, group)
    exclude = _names(exclude, "exclude_modules", where) + _MODELOPT_DEFAULT_OUT
    mentioned = exclude + tuple(name for name, _ in per_module)
    method = algo if isinstance(algo, str) else "ModelOpt"
    return Precision(method=f"{method} (ModelOpt)", default=default, exclude=exclude,
                     per_module=tuple(per_module), kv_cache_bits=_kv_bits(kv, where),
                     source=source, names=mentioned)


def _compressed_tensors(quant: dict, where: str) -> Precision:
    """compressed-tensors: config groups of weights (num_bits, group_size, type) on targets."""
    groups = quant.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise InputError(f"{where}: compressed-tensors needs config_groups")
    default, per_module = None, []
    for key, group in groups.items():
        weights = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(weights, dict):
            raise InputError(f"{where}: config_groups[{key!r}] has no weights")
        bits, size, kind = weights.get("num_bits"), weights.get("group_size"), weights.get("type")
        if not isinstance(bits, int) or isinstance(bits, bool) or not 1 <= bits <= 16:
            raise InputError(f"{where}: config_groups[{key!r}].weights.num_bits must be a whole "
                             "number of bits")
        if kind == "float" and bits == 4:
            fmt = nvfp4(size if isinstance(size, int) and size > 0 else 16)
        elif isinstance(size, int) and size > 0:
            # an integer (or float) element per weight and one 16-bit scale per group of `size`
            # (compressed-tensors stores group scales in the model's dtype)
            fmt = Format(f"{kind or 'int'}{bits} groups of {size}", block_bits(bits, 16, size))
        else:  # per channel or per tensor: the scales are negligible
            fmt = Format(f"{kind or 'int'}{bits}", float(bits))
        targets = group.get("targets") or ["Linear"]
        if not isinstance(targets, list):
            raise InputError(f"{where}: config_groups[{key!r}].targets must be a list")
        for target in targets:
            if target == "Linear":
                default = fmt
            elif isinstance(target, str):
                per_module.append((target, fmt))
    exclude = _names(quant.get("ignore"), "ignore", where)
    return Precision(method=f"compressed-tensors {(default or per_module[0][1]).name}",
                     default=default, exclude=exclude, per_module=tuple(per_module),
                     kv_cache_bits=_kv_bits(quant.get("kv_cache_scheme"), where),
                     head=True, names=exclude + tuple(n for n, _ in per_module))


def read_precision(quant: dict | None, hf_quant: dict | None, where: str) -> Precision | None:
    """The Precision a checkpoint states: its hf_quant_config.json if it has one (ModelOpt's own
    description), else its quantization_config; None when it states none (every weight at the
    checkpoint's dtype). ``where`` prefixes every error (the model_type)."""
    if hf_quant is not None:
        q = hf_quant["quantization"]
        return _modelopt(q.get("quant_algo"), q.get("group_size"), q.get("exclude_modules"),
                         q.get("quantized_layers"), q.get("kv_cache_quant_algo"), where,
                         "hf_quant_config.json")
    if quant is None:
        return None
    if not isinstance(quant, dict):
        raise InputError(f"{where}: quantization_config must be an object")
    method = quant.get("quant_method")
    if method == "mxfp4":
        exclude = _names(quant.get("modules_to_not_convert"), "modules_to_not_convert", where)
        return Precision("mxfp4", mxfp4(), exclude, names=exclude)
    if method == "fp8" and quant.get("quant_algo") == "MIXED_PRECISION":
        # ModelOpt's own fields copied into a quantization_config (DeepSeek-V4 NVFP4)
        return _modelopt("MIXED_PRECISION", quant.get("group_size"), quant.get("ignore"),
                         quant.get("quantized_layers"), quant.get("kv_cache_quant_algo"), where,
                         "quantization_config")
    if method == "fp8":
        block = quant.get("weight_block_size")
        exclude = _names(quant.get("modules_to_not_convert"), "modules_to_not_convert", where)
        if block is None:
            fmt = FP8
        elif (isinstance(block, list) and len(block) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in block)):
            fmt = fp8_blocks(*block)
        else:
            raise InputError(f"{where}: quantization_config: fp8 needs weight_block_size "
                             f"[rows, columns], got {str(block)[:40]}")
        # transformers' fine-grained FP8 leaves the output head out, and the routers of these
        # model codes are plain parameters rather than linear layers
        return Precision("fp8", fmt, exclude, names=exclude)
    if method == "modelopt" or (method is None and "quant_algo" in quant):
        return _modelopt(quant.get("quant_algo"), None, quant.get("ignore"),
                         quant.get("quantized_layers"), quant.get("kv_cache_scheme")
                         or quant.get("kv_cache_quant_algo"), where, "quantization_config")
    if method == "compressed-tensors":
        return _compressed_tensors(quant, where)
    raise InputError(f"{where}: quantization_config quant_method {str(method)[:40]!r} is not read "
                     "(fp8, mxfp4, modelopt and compressed-tensors are); pass --weight-bits")

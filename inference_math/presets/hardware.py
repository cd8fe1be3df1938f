"""GPU presets, read from the data file ``gpus.toml`` next to this module, each number with its source.

The numbers live in ``gpus.toml`` (one table per preset, the fields of :class:`GPU`); this module
keeps the dataclass, its validation, and the reader that turns a table into a GPU with one-line
errors naming the file and the field. ``get_gpu`` also reads a user's file in the same schema
(one GPU per file, its fields at the top level): see :func:`read_gpu_file`.

FLOP/s are dense tensor-core peaks keyed by the *weight* bit width. 8-bit weights run on the
8-bit tensor cores: FP8, or INT8 where the chip has no FP8 (A100, TPU v5e, v5p, v6e); the V100,
the RTX 4090 preset and the TPU v4 count them at the 16-bit rate.

The FP4 rule: 4-bit weights run on the FP4 tensor cores where the chip has them (B200, B300,
GB200, GB300, MI355X: their 4-bit figure is the dense FP4 peak). Elsewhere they keep the reference
code's rule for the H100: the 8-bit rate (the weights are widened to 8 bits for the matrix
multiply; MI300X, MI325X, TPU v6e and TPU7x follow it too). A preset without a 4-bit figure (A100,
V100, RTX 4090, the TPUs v4-v5p, the reference code's TPU v4 and Groq LPU) refuses 4-bit weights.

Prices: the paper's presets use its effective rental rates (2/3 of the list price it quotes; the
text rounds the H100's $2.10 to "$2 per hour"); the presets added after it say in ``gpus.toml``
which price they use and its date. The utilization caps are the fractions of peak the paper's full
model assumes are reachable; the toy model of chapter 4 uses the uncapped peaks unless it says
otherwise. Values no source gives (caps and launch latency of the newer chips, carried over from
the H100) are listed in each preset's ``assumed``; values seen only in secondary sources in its
``provisional``.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..core.validation import InputError, lookup, positive, positive_int


@dataclass(frozen=True)
class GPU:
    """One accelerator type. Raises InputError on construction if a field is invalid.

    ``sources``, ``assumed`` and ``provisional`` document the numbers; they take no part in
    equality or in the repr (so a frontier's cache key depends on the numbers only).
    """

    name: str
    flops_by_weight_bits: dict[int, float]
    hbm_bandwidth: float  # bytes/s
    hbm_bytes: float
    intranode_allreduce_bandwidth: float | None  # bytes/s, NVLink all-reduce bus bandwidth
    internode_allreduce_bandwidth: float | None  # bytes/s, per GPU across nodes
    node_size: int
    price_per_hour: float  # $/GPU-hour
    flop_cap: float  # reachable fraction of peak FLOP/s
    bandwidth_cap: float  # reachable fraction of peak HBM bandwidth
    kernel_launch_s: float
    source: str  # bib keys, comma separated
    note: str = field(default="")
    ici_bandwidth: float | None = None  # bytes/s, one direction of one inter-chip link (TPUs)
    collective_model: str = "nccl"  # 'nccl' (GPUs) or 'torus' (TPU, Groq): see collectives.py
    #: The vendor's serving software ('cuda', 'rocm', 'xla' or 'other'): the estimate's
    #: efficiencies are fitted per stack (reality/estimate_fit.py).
    software_stack: str = "cuda"
    # field -> "bibkey[,bibkey]: note", where a number's source is not simply ``source``
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    assumed: tuple[str, ...] = field(default=(), compare=False, repr=False)  # no source gives these
    provisional: tuple[str, ...] = field(default=(), compare=False, repr=False)  # secondary sources

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"GPU name must be a non-empty string, got {self.name!r}")
        where = f"GPU {self.name!r}"
        if not self.flops_by_weight_bits:
            raise InputError(f"{where}: flops_by_weight_bits must not be empty")
        for bits, rate in self.flops_by_weight_bits.items():
            positive_int(f"{where}: weight bit width", bits)
            positive(f"{where}: flops_by_weight_bits[{bits}]", rate)
        for name in ("hbm_bandwidth", "hbm_bytes", "price_per_hour"):
            positive(f"{where}: {name}", getattr(self, name))
        for name in ("intranode_allreduce_bandwidth", "internode_allreduce_bandwidth",
                     "ici_bandwidth"):
            if getattr(self, name) is not None:  # None: not modelled for this device
                positive(f"{where}: {name}", getattr(self, name))
        positive(f"{where}: kernel_launch_s", self.kernel_launch_s, allow_zero=True)
        if self.collective_model not in ("nccl", "torus"):
            raise InputError(f"{where}: collective_model must be 'nccl' or 'torus', "
                             f"got {self.collective_model!r}")
        if self.software_stack not in SOFTWARE_STACKS:
            raise InputError(f"{where}: software_stack must be one of "
                             f"{', '.join(map(repr, SOFTWARE_STACKS))}, got {self.software_stack!r}")
        positive_int(f"{where}: node_size", self.node_size)
        for name in ("flop_cap", "bandwidth_cap"):
            if not 0 < positive(f"{where}: {name}", getattr(self, name)) <= 1:
                raise InputError(f"{where}: {name} must be in (0, 1], got {getattr(self, name)!r}")
        if not self.source:
            raise InputError(f"{where}: source must name a bib key")
        for name in ("assumed", "provisional"):
            for entry in getattr(self, name):
                if entry not in NUMBER_FIELDS:
                    raise InputError(f"{where}: {name} must list number fields "
                                     f"({', '.join(NUMBER_FIELDS)}), got {entry!r}")
        for entry in self.sources:
            if entry not in NUMBER_FIELDS:
                raise InputError(f"{where}: sources must be keyed by number fields "
                                 f"({', '.join(NUMBER_FIELDS)}), got {entry!r}")

    def flops(self, weight_bits: int = 16, capped: bool = False) -> float:
        """Peak (or capped) FLOP/s for weights of ``weight_bits`` bits."""
        bits = int(weight_bits)
        if bits not in self.flops_by_weight_bits:
            known = ", ".join(str(k) for k in sorted(self.flops_by_weight_bits))
            raise InputError(f"{self.name} has no FLOP/s figure for {bits}-bit weights (has {known})")
        rate = self.flops_by_weight_bits[bits]
        return rate * self.flop_cap if capped else rate

    def bandwidth(self, capped: bool = False) -> float:
        """Peak (or capped) HBM bandwidth in bytes/s."""
        return self.hbm_bandwidth * self.bandwidth_cap if capped else self.hbm_bandwidth

    def missing_collective_fields(self) -> tuple[str, ...]:
        """The all-reduce bandwidths the full model's collectives (collectives.py) need but lack.

        The inter-node bandwidth is always needed; the intra-node (NVLink) one only for the NCCL
        model with several GPUs per node (a torus, or one GPU per node, never reduces inside one).
        """
        missing = []
        if self.internode_allreduce_bandwidth is None:
            missing.append("internode_allreduce_bandwidth")
        if (self.intranode_allreduce_bandwidth is None and self.collective_model == "nccl"
                and self.node_size > 1):
            missing.append("intranode_allreduce_bandwidth")
        return tuple(missing)

    @property
    def has_collective_model(self) -> bool:
        """Whether the full model (Erdil 2025, sec. 3) can time this device's collectives."""
        return not self.missing_collective_fields()

    def require_collective_model(self) -> None:
        """InputError naming the missing field if the full model cannot run on this device."""
        missing = self.missing_collective_fields()
        if missing:
            raise InputError(
                f"GPU {self.name!r} has no {' or '.join(missing)} (collectives not modelled), so "
                f"the full model cannot run on it; it runs on: {', '.join(full_model_gpus())}")


# --- the file schema ----------------------------------------------------------------------------

#: Number fields of a GPU table: required ones, then optional ones (absent: not modelled).
REQUIRED_NUMBERS = ("hbm_bandwidth", "hbm_bytes", "node_size", "price_per_hour", "flop_cap",
                    "bandwidth_cap", "kernel_launch_s")
OPTIONAL_NUMBERS = ("intranode_allreduce_bandwidth", "internode_allreduce_bandwidth",
                    "ici_bandwidth")
NUMBER_FIELDS = ("flops_by_weight_bits", *REQUIRED_NUMBERS, *OPTIONAL_NUMBERS)
REQUIRED_TEXT = ("name", "source")
OPTIONAL_TEXT = ("note", "collective_model", "software_stack")
SOFTWARE_STACKS = ("cuda", "rocm", "xla", "other")
LISTS = ("assumed", "provisional")
#: Every field a GPU table may have, in the order the README documents them.
SCHEMA = (*REQUIRED_TEXT, *NUMBER_FIELDS, *OPTIONAL_TEXT, *LISTS, "sources")
REQUIRED = (*REQUIRED_TEXT, "flops_by_weight_bits", *REQUIRED_NUMBERS)

DATA_FILE = "gpus.toml"
MAX_FILE_BYTES = 1_000_000  # a GPU file is a few hundred bytes


def _number(where: str, name: str, value) -> float:
    """A finite number >= 0 (> 0 unless it is a latency) from a TOML value, as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{where}: {name} must be a number, got {_toml_type(value)} {value!r}")
    return positive(f"{where}: {name}", value, allow_zero=name == "kernel_launch_s")


def _toml_type(value) -> str:
    kinds = {bool: "boolean", str: "string", dict: "table", list: "array", int: "integer",
             float: "float"}
    return next((text for kind, text in kinds.items() if isinstance(value, kind)), "value")


def _text(where: str, name: str, value) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: {name} must be a string, got {_toml_type(value)} {value!r}")
    return value


def _flops(where: str, table) -> dict[int, float]:
    name = "flops_by_weight_bits"
    if not isinstance(table, dict):
        raise InputError(f"{where}: {name} must be a table of bit width = FLOP/s "
                         f"(e.g. 16 = 1e15), got {_toml_type(table)} {table!r}")
    if not table:
        raise InputError(f"{where}: {name} must not be empty")
    rates = {}
    for key, rate in table.items():
        if not (key.isascii() and key.isdigit() and int(key) > 0):
            raise InputError(f"{where}: {name} key {key!r} must be a bit width (a whole number "
                             "> 0, e.g. 16)")
        rates[int(key)] = _number(where, f"{name}.{key}", rate)
    return rates


def _field_list(where: str, name: str, value) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: {name} must be an array of field names, got {value!r}")
    for entry in value:
        if entry not in NUMBER_FIELDS:
            raise InputError(f"{where}: {name} names {entry!r}, which is not a number field "
                             f"(one of: {', '.join(NUMBER_FIELDS)})")
    return tuple(value)


def _sources(where: str, value) -> dict[str, str]:
    if not isinstance(value, dict):
        raise InputError(f"{where}: sources must be a table of field = \"bibkey: note\", "
                         f"got {_toml_type(value)} {value!r}")
    for key, text in value.items():
        if key not in NUMBER_FIELDS:
            raise InputError(f"{where}: sources.{key} is not a number field "
                             f"(one of: {', '.join(NUMBER_FIELDS)})")
        _text(where, f"sources.{key}", text)
    return dict(value)


def gpu_from_table(table: dict, where: str) -> GPU:
    """A GPU from one parsed TOML table; InputError naming ``where`` and the field otherwise."""
    unknown = [key for key in table if key not in SCHEMA]
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(key, SCHEMA, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (fields: {', '.join(SCHEMA)})"
        raise InputError(f"{where}: unknown field {key!r}{hint}")
    missing = [key for key in REQUIRED if key not in table]
    if missing:
        raise InputError(f"{where}: missing field {missing[0]!r} (required: {', '.join(REQUIRED)})")
    values = {name: _text(where, name, table[name]) for name in (*REQUIRED_TEXT, *OPTIONAL_TEXT)
              if name in table}
    values["flops_by_weight_bits"] = _flops(where, table["flops_by_weight_bits"])
    for name in (*REQUIRED_NUMBERS, *OPTIONAL_NUMBERS):
        if name in table:
            values[name] = _number(where, name, table[name])
    if "node_size" in values:
        values["node_size"] = positive_int(f"{where}: node_size", values["node_size"])
    for name in LISTS:
        if name in table:
            values[name] = _field_list(where, name, table[name])
    if "sources" in table:
        values["sources"] = _sources(where, table["sources"])
    values.setdefault("intranode_allreduce_bandwidth", None)
    values.setdefault("internode_allreduce_bandwidth", None)
    try:
        return GPU(**values)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _parse(text: bytes, where: str) -> dict:
    try:
        return tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: malformed TOML: {exc}") from None


def read_gpu_file(path: str | os.PathLike) -> GPU:
    """The one GPU of a user's TOML file: the fields of a ``gpus.toml`` table, at the top level.

    Every problem (unreadable file, malformed TOML, unknown or missing field, wrong type, a number
    that is negative, zero or not finite) is an InputError of one line naming the file and field.
    """
    where = f"GPU file {str(path)!r}"
    try:
        with Path(path).open("rb") as handle:
            text = handle.read(MAX_FILE_BYTES + 1)  # bounded: /dev/zero is a path too
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{where}: cannot be read: {reason}") from None
    if len(text) > MAX_FILE_BYTES:
        raise InputError(f"{where}: larger than {MAX_FILE_BYTES:,} bytes; a GPU file is a few lines")
    table = _parse(text, where)
    presets = [key for key, value in table.items() if isinstance(value, dict) and "name" in value]
    if presets and "name" not in table:
        raise InputError(f"{where}: holds tables of GPUs ([{presets[0]}], ...); a GPU file holds "
                         "one GPU, its fields at the top level")
    return gpu_from_table(table, where)


def _load_presets() -> dict[str, GPU]:
    data = resources.files(__package__).joinpath(DATA_FILE).read_bytes()
    tables = _parse(data, DATA_FILE)
    return {key: gpu_from_table(table, f"{DATA_FILE} [{key}]") for key, table in tables.items()}


GPUS: dict[str, GPU] = _load_presets()


def full_model_gpus() -> list[str]:
    """Names of the presets the full model can run on (those with a collective model)."""
    return [key for key, gpu in GPUS.items() if gpu.has_collective_model]


def is_gpu_path(name: str) -> bool:
    """Whether ``name`` is read as a file path: it contains a path separator or ends in .toml."""
    text = str(name)
    separators = {os.sep, "/", *((os.altsep,) if os.altsep else ())}
    return any(sep in text for sep in separators) or text.lower().endswith(".toml")


def get_gpu(name: str | os.PathLike) -> GPU:
    """The GPU preset called ``name`` (e.g. 'h100'), or the GPU of a file in the presets' schema.

    A name is a preset if it matches one (case and separators ignored); otherwise, if it contains
    a path separator or ends in ``.toml``, or is a path object, it is a file (:func:`read_gpu_file`).
    InputError listing the choices otherwise.
    """
    if isinstance(name, os.PathLike):
        return read_gpu_file(name)
    try:
        return lookup("GPU", name, GPUS)
    except InputError as exc:
        if isinstance(name, str) and is_gpu_path(name):
            return read_gpu_file(name)
        raise InputError(f"{exc}; or a path to a GPU file (ending in .toml)") from None

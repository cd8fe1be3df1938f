"""Reading a model: a ``config.json`` (a file or a folder holding one) loaded, checked and
dispatched to its family's reader (:func:`parse`), the checkpoint's precision applied, and the
layers grouped into an :class:`.architecture.Architecture` (:func:`read_architecture`).

Imports :mod:`.fields`, :mod:`.layer_kinds`, :mod:`.architecture`, :mod:`.layer_patterns`,
:mod:`.policy`, :mod:`.renames`, :mod:`.quantization` and :mod:`.families` of this package.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...core.config_reading import OPTIONS as _OPTIONS
from ...core.config_reading import reading_options  # noqa: F401  (re-exported)
from ...core.validation import InputError
from .. import checkpoint_precision as cp
from .architecture import Architecture
from .families import (
    _block_configs,
    _deepseek_v4,
    _gemma4,
    _generic,
    _gpt_oss,
    _llama4,
    _mla,
    _nemotron_h,
    _qwen_hybrid,
)
from .fields import (
    _V4_FIELDS,
    DTYPE_BITS,
    KNOWN_TYPES,
    NON_GATED_TYPES,
    SLIDING_FIELDS,
    SSM_FIELDS,
    SSM_TYPES,
    TIED_BY_DEFAULT,
    UNREAD,
    V4_TYPES,
    _Fields,
    _present,
    _short,
)
from .layer_patterns import _group
from .policy import apply_overrides, check_unknown
from .quantization import _naming, _quantization_summary, _storage, _v4_storage
from .renames import canonical, text_defaults


def config_path(path) -> Path:
    """The config.json a path names: the file itself, or ``config.json`` in a folder."""
    where = Path(path)
    if where.is_dir():
        where = where / "config.json"
    if not where.is_file():
        raise InputError(f"no config.json at {str(path)!r}")
    return where


def load_config(path) -> dict:
    """The JSON object of a config.json; InputError (one line) if it is missing or malformed."""
    where = config_path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {where.name}: {exc}") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where.name} is not valid JSON ({exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{where.name} is nested too deeply to read") from None
    if not isinstance(config, dict):
        raise InputError(f"{where.name} must hold a JSON object, got {type(config).__name__}")
    return config


def model_name(path) -> str:
    """A name for a config: its folder's name, or the file's name before '.config.json'."""
    where = Path(path)
    if where.is_dir() or where.name == "config.json":
        return (where if where.is_dir() else where.parent).resolve().name or "config.json"
    return where.name.removesuffix(".json").removesuffix(".config").replace("--", "/")


def read_architecture(path, assume: dict | None = None,
                      ignore: set | frozenset | list | tuple | None = None) -> Architecture:
    """The Architecture of the config.json at ``path`` (a file, or a folder holding one), with
    the hf_quant_config.json beside it if there is one. ``assume``: {field: value} read as if
    the config held them; ``ignore``: fields read as if absent (see :func:`parse`); both None:
    those of an enclosing :func:`reading_options`, if any."""
    options = _OPTIONS.get() if assume is None and ignore is None else None
    if options is not None:
        assume, ignore = options[0], options[1]
    config = load_config(path)
    hf_quant = cp.load_quant_file(cp.quant_file_beside(config_path(path)))
    arch = parse(config, model_name(path), hf_quant, assume=assume, ignore=ignore)
    if options is not None:
        options[2].append(arch)
    return arch


def _dtype_bits(f: _Fields, top: dict) -> float:
    dtype = f.config.get("torch_dtype") or f.config.get("dtype") or top.get("torch_dtype") \
        or top.get("dtype") or "bfloat16"
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise f.error(f"torch_dtype {_short(dtype)} is not one the reader maps "
                      f"({', '.join(DTYPE_BITS)})")
    return float(DTYPE_BITS[dtype])


def parse(config: dict, name: str = "config.json", hf_quant: dict | None = None, *,
          assume: dict | None = None, ignore: set | frozenset | list | tuple | None = None
          ) -> Architecture:
    """The Architecture of a parsed config.json (``name`` labels it; ``hf_quant``: the JSON of
    an hf_quant_config.json beside it).

    ``assume`` ({field: value}) reads the config as if it held each value, ``ignore`` (field
    names) as if it had none of them; a field outside the table of fields is ignored when it is
    harmless and refused in one line naming it when it may change a count
    (:mod:`.policy`). What was assumed and ignored is recorded on the Architecture
    (``assumed``, ``ignored``, ``notes``)."""
    if not isinstance(config, dict):
        raise InputError(f"config.json must hold a JSON object, got {type(config).__name__}")
    config, assumed, asked_ignored, notes = apply_overrides(config, assume, ignore)
    model_type = config.get("model_type")
    if model_type is None:
        raise InputError("config.json has no 'model_type'")
    if not isinstance(model_type, str):
        raise InputError(f"model_type must be a string, got {_short(model_type)}")
    text = config.get("text_config")
    if text is not None and not isinstance(text, dict):
        raise InputError(f"{model_type}: text_config must be an object, got {_short(text)}")
    inner = text if text else config
    inner_type = inner.get("model_type", model_type) if text else model_type
    if not isinstance(inner_type, str):
        inner_type = model_type
    for source in (config, inner):
        mt = source.get("model_type", model_type)
        mt = mt if isinstance(mt, str) else model_type
        if mt in SSM_TYPES:
            raise InputError(f"{mt}: state-space (Mamba) layers are not represented (model_type "
                             f"{mt!r}); only attention, linear attention, Mamba-2 of nemotron_h "
                             "and feed-forward blocks")
        for key, (kind, why) in UNREAD.items():
            if _present(source.get(key)) and not (mt in V4_TYPES and key in _V4_FIELDS):
                raise InputError(f"{mt}: {key} ({kind}) is not read: {why}")
        if mt != "nemotron_h" and model_type != "nemotron_h":
            for key in SSM_FIELDS:
                if key in source:
                    raise InputError(f"{mt}: state-space (Mamba) layers ({key}) are not "
                                     "represented outside nemotron_h; only attention, linear "
                                     "attention and feed-forward blocks")
    read_by_fields = model_type not in KNOWN_TYPES and inner_type not in KNOWN_TYPES
    unknown_ignored, more = check_unknown([inner, config] if text else [inner], model_type,
                                          {field for field, _ in assumed})
    notes += more
    tower = next((key for key in ("vision_config", "img_processor", "audio_config")
                  for source in (config, inner) if _present(source.get(key))), None)
    if tower:
        notes.append(f"the encoder {tower} describes is not counted: the language model alone")
    if text:
        inner, filled = text_defaults(inner, inner_type)
        notes += filled
    inner, renamed = canonical(inner, inner_type)
    notes += renamed
    family = inner_type if inner_type in KNOWN_TYPES else model_type
    f = _Fields(inner, model_type)
    if family in V4_TYPES:
        reader = _deepseek_v4
    elif f.has("block_configs"):
        reader = _block_configs
    elif f.has("kv_lora_rank"):
        reader = _mla
    elif family == "nemotron_h":
        reader = _nemotron_h
    elif f.has("linear_num_value_heads"):
        reader = _qwen_hybrid
    elif family.startswith("gpt_oss"):
        reader = _gpt_oss
    elif family.startswith("llama4"):
        reader = _llama4
    elif family.startswith("gemma4"):
        reader = _gemma4
    else:
        reader = _generic
    if reader not in (_generic, _mla, _deepseek_v4):
        # a value width of its own, and sliding layers' own heads, are read by _generic only
        held = [k for k in (*SLIDING_FIELDS, "v_head_dim") if f.has(k)]
        if held and (held != ["v_head_dim"] or
                     f.int("v_head_dim") != f.int("head_dim", f.int("v_head_dim"))):
            raise f.error(f"{held[0]} is not read for {family} (read for plain attention "
                          "layers only)")
    layers, extra = reader(f)
    for _, ffn in set(layers):
        if ffn.kind == "moe" and ffn.top_k > ffn.n_experts:
            raise f.error(f"{ffn.top_k} experts per token exceed the {ffn.n_experts} experts "
                          "of a layer")
    outer = _Fields(config, model_type)
    tied = f.flag("tie_word_embeddings", outer.flag("tie_word_embeddings",
                                                    family in TIED_BY_DEFAULT))
    if not f.has("tie_word_embeddings") and not outer.has("tie_word_embeddings") and \
            family in TIED_BY_DEFAULT:
        notes.append(f"tie_word_embeddings absent: tied, as {TIED_BY_DEFAULT[family]} defaults")
    if read_by_fields and reader is _generic:
        notes.append("read by its fields: the feed-forward block assumed "
                     + ("two matrices (" + NON_GATED_TYPES[model_type] + ")"
                        if model_type in NON_GATED_TYPES else "gated (SwiGLU, three matrices)")
                     + "; the fields do not say")
    dtype_bits = _dtype_bits(f, config)
    d_model, vocab = f.int("hidden_size"), f.int("vocab_size")
    quant = config.get("quantization_config") or inner.get("quantization_config")
    precision = cp.read_precision(quant, hf_quant, model_type)
    if reader is _deepseek_v4:
        storage, embeddings = _v4_storage(layers, precision, f, d_model), ()
    else:
        storage, embeddings = _storage(layers, precision, _naming(family), d_model, vocab, tied)
    groups = _group(layers, storage)
    features = list(extra.pop("features", []))
    if len(groups) > 1 and not features:
        features.append("layers of different kinds")
    untimed = list(extra.pop("untimed", []))
    return Architecture(name=name, model_type=model_type, d_model=d_model, vocab=vocab, tied=tied,
                        groups=groups, dtype_bits=dtype_bits, activation_bytes=dtype_bits / 8,
                        quantization=_quantization_summary(precision, groups, embeddings),
                        features=tuple(features), untimed=tuple(untimed),
                        read_by_fields=read_by_fields,
                        kv_cache_bits=precision.kv_cache_bits if precision else None,
                        embedding_quantized=embeddings, assumed=assumed,
                        ignored=(*asked_ignored, *unknown_ignored), notes=tuple(notes), **extra)

"""What the reader does with a field it does not know, and with what the user says of fields.

A field outside the table of fields (:data:`.fields.FIELDS`) is classified by what it could
change (:func:`classify`):

* **structural**: a whole number, a list, a pattern string or an object of them whose name names
  layers, heads, dimensions, widths, experts, ranks, groups, windows, blocks or patterns
  (``*_layers``, ``num_*_heads``, ``*_dim``, ``*_size``, ``*experts*``, ``*rank*``,
  ``*group*``, ``*window*``, ``*pattern*``, ``*_types``, ...), or a whole number named
  ``num_*`` / ``n_*``: it may change a count, so the config is refused in one line naming it,
  unless the user ignores it or assumes its value;
* **harmless**: true/false flags, fractional numbers (RoPE, norms, initialization), strings
  (activations, dtypes), null, and numbers whose names name none of the above: reported and
  ignored.

:func:`apply_overrides` applies what the user says (``assume``: read as if the config held
FIELD=VALUE; ``ignore``: read as if it had no FIELD) and :func:`check_unknown` applies the rule;
both return the notes the reader records on the Architecture.

Imports :mod:`.fields` of this package.
"""

from __future__ import annotations

import json
import re

from ...core.validation import InputError
from .fields import FIELDS, SLIDING_FIELDS, _short, declares_sliding

#: Words of a field's name that name a count's ingredient: layers, heads, widths, experts,
#: ranks, groups, windows, blocks, patterns.
STRUCTURAL_WORDS = frozenset("""
    layer layers head heads dim dims size sizes width widths expert experts rank ranks group groups
    window windows pattern patterns types layout block blocks interval freq step stride topk
    intermediate ffn mlp moe mtp nextn kv lora latent channels chunk stack stacks depth
    """.split())
#: Words that make a string a per-layer pattern.
PATTERN_WORDS = frozenset("pattern patterns types layout".split())
#: Prefixes of a whole number that counts something.
COUNT_PREFIXES = ("num", "n")


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z]+", name.lower()) if w]


def _names_structure(name: str) -> bool:
    words = _words(name)
    return any(w in STRUCTURAL_WORDS for w in words) or bool(words and words[0] in COUNT_PREFIXES)


def _is_whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def classify(name: str, value) -> str:
    """``"structural"`` or ``"harmless"``: what an unknown field ``name`` holding ``value`` can
    change (module docstring)."""
    if isinstance(value, dict):
        named = _names_structure(name)
        for key, inner in value.items():
            if classify(str(key), inner) == "structural" or \
                    named and (_is_whole(inner) or isinstance(inner, list)):
                return "structural"
        return "harmless"
    if isinstance(value, list):
        return "structural" if _names_structure(name) and value else "harmless"
    if isinstance(value, str):
        return "structural" if any(w in PATTERN_WORDS for w in _words(name)) else "harmless"
    if isinstance(value, bool) or value is None:
        return "harmless"
    if isinstance(value, int):
        return "structural" if _names_structure(name) else "harmless"
    return "harmless"  # a number with a fraction: RoPE, norms, initialization, scalings


def _kind(value) -> str:
    if isinstance(value, bool):
        return "a flag"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, int):
        return "a whole number"
    return "a list" if isinstance(value, list) else "an object"


def apply_overrides(config: dict, assume: dict | None, ignore: set | frozenset | None
                    ) -> tuple[dict, tuple[tuple[str, str], ...], tuple[str, ...], list[str]]:
    """(config, assumed, ignored, notes): a copy of ``config`` read as if it held each
    ``assume`` FIELD=VALUE (in the language model's fields: ``text_config`` when there is one,
    unless only the wrapper holds FIELD) and had no ``ignore`` FIELD (in either). ``assumed``
    holds (field, value as JSON)."""
    assume, ignore = dict(assume or {}), set(ignore or ())
    for name in (*assume, *ignore):
        if not isinstance(name, str) or not name:
            raise InputError(f"a field to assume or ignore must be a name, got {_short(name)}")
    both = sorted(set(assume) & ignore)
    if both:
        raise InputError(f"field {both[0]!r} is both assumed and ignored")
    out = dict(config)
    text = out.get("text_config")
    inner = dict(text) if isinstance(text, dict) and text else None
    if inner is not None:
        out["text_config"] = inner
    notes, ignored = [], []
    for name in sorted(ignore):
        held = [where for where in (out, inner) if where is not None and name in where]
        for where in held:
            del where[name]
        ignored.append(name)
        notes.append(f"ignored {name!r} as asked" if held else
                     f"ignore {name!r}: config.json has no such field")
    assumed = []
    for name, value in assume.items():
        target = inner if inner is not None and not (name in out and name not in inner) else out
        before = target.get(name, ...)
        target[name] = value
        try:
            text_value = json.dumps(value)
        except (TypeError, ValueError):
            raise InputError(f"assume {name}: the value must be JSON, got {_short(value)}") from None
        assumed.append((name, text_value))
        was = "absent" if before is ... else f"{_short(before)} in config.json"
        notes.append(f"assumed {name}={text_value} as asked (was {was})")
    return out, tuple(assumed), tuple(ignored), notes


def unknown_fields(source: dict, skip: frozenset | set = frozenset()) -> list[str]:
    """The fields of ``source`` outside the table of fields (and ``skip``), in order; a sliding
    layer's own heads and widths (SLIDING_FIELDS) are unknown where no layer slides."""
    sliding = declares_sliding(source)
    return [key for key in source if key not in skip and (
        key not in FIELDS or key in SLIDING_FIELDS and not sliding)]


def check_unknown(sources: list[dict], model_type: str, assumed: set[str]
                  ) -> tuple[tuple[str, ...], list[str]]:
    """(ignored, notes) for the unknown fields of ``sources`` (the language model's fields, and
    the wrapper's): harmless ones ignored with a note; the first structural one refused in one
    line naming it (InputError), unless the user assumed its value (noted)."""
    ignored, notes, seen = [], [], set()
    for source in sources:
        for key in unknown_fields(source, seen):
            seen.add(key)
            value = source[key]
            if key in assumed:
                notes.append(f"{key!r} is not a field the reader knows: its assumed value is "
                             "taken as checked and changes no count")
                continue
            if classify(key, value) == "structural":
                raise InputError(
                    f"{model_type}: field {key!r} is not understood and may change the counts "
                    f"({_kind(value)} {_short(value)} naming layers, heads, widths, experts, "
                    f"groups, windows or patterns); ignore it or assume its value to read on "
                    f"(--ignore {key}, or --assume {key}=VALUE)")
            ignored.append(key)
            notes.append(f"ignored unknown field {key!r} ({_kind(value)} {_short(value)}: "
                         "changes no count)")
    return tuple(ignored), notes

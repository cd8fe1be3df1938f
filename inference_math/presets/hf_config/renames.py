"""Other families' names for the same quantities, read as the names the family readers ask for.

GPT-2 and its descendants (GPT-J, GPT-BigCode, phi-1.5/phi-2), Qwen (1), ChatGLM and MLC LLM's
copies name the widths, layers and heads their own way; :func:`canonical` returns a copy of the
language model's fields with each quantity under the name of :data:`.fields.FIELD_GROUPS`
(``n_embd`` as ``hidden_size``, ...), the rules their model code applies where the fields are
silent (GPT-2's feed-forward width 4·n_embd, Qwen (1)'s halved width, multi-query attention),
and one note per rename. Two names of one quantity that disagree are refused in one line.

Imports :mod:`.fields` of this package.
"""

from __future__ import annotations

from .fields import _Fields, _short

#: alias -> (the name the readers ask for, whose name it is). The alias is read when the name
#: is absent; both present must agree.
RENAMED = {
    "n_embd": ("hidden_size", "transformers GPT2Config/GPTJConfig/GPTBigCodeConfig; phi-msft"),
    "n_layer": ("num_hidden_layers", "transformers GPT2Config/GPTJConfig/GPTBigCodeConfig"),
    "num_layers": ("num_hidden_layers", "THUDM ChatGLMConfig"),
    "n_head": ("num_attention_heads", "transformers GPT2Config/GPTJConfig/GPTBigCodeConfig"),
    "n_head_kv": ("num_key_value_heads", "microsoft phi-msft PhiConfig"),
    "n_inner": ("intermediate_size", "transformers GPT2Config/GPTJConfig/GPTBigCodeConfig"),
    "ffn_hidden_size": ("intermediate_size", "THUDM ChatGLMConfig (dense_h_to_4h: two halves "
                        "of this width, SwiGLU)"),
    "kv_channels": ("head_dim", "Qwen QWenConfig; THUDM ChatGLMConfig"),
    "padded_vocab_size": ("vocab_size", "THUDM ChatGLMConfig (the tables' rows)"),
    "sliding_window_size": ("sliding_window", "MLC LLM's copies (model_preset.py)"),
}
#: Model types whose feed-forward width, when config.json gives none (n_inner null), is four
#: times the model's width (GPT2MLP, GPTJMLP, GPTBigCodeMLP: inner_dim = n_inner or 4·n_embd).
FOUR_TIMES_WIDTH = {
    "gpt2": "transformers GPT2Block", "gptj": "transformers GPTJBlock",
    "gpt_bigcode": "transformers GPTBigCodeBlock", "phi-msft": "microsoft phi-msft ParallelBlock",
}
#: Model types whose intermediate_size is the sum of the gated pair's widths: each of the three
#: matrices is half as wide (QWenMLP: w1, w2 of intermediate_size // 2, c_proj back).
HALVED_WIDTH = {"qwen": "Qwen modeling_qwen.py QWenMLP (ff_dim_in = intermediate_size // 2)"}
#: Model types with a learned position table (wpe: n_positions x n_embd), a matrix the counts
#: leave out as the book's eq-layers-total-params has no term for it (0.6% of GPT-2 small).
LEARNED_POSITIONS = {"gpt2": "transformers GPT2Model.wpe",
                     "gpt_bigcode": "transformers GPTBigCodeModel.wpe"}


#: The defaults of a language model's configuration class, which a multimodal wrapper's
#: text_config may rely on (LLaVA-1.5's holds only what differs from Llama 2 7B's):
#: model_type -> ({field: default}, source).
TEXT_DEFAULTS = {
    "llama": ({"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
               "num_attention_heads": 32}, "transformers LlamaConfig's defaults"),
}


def text_defaults(text: dict, model_type: str) -> tuple[dict, list[str]]:
    """(fields, notes): a wrapper's ``text_config`` with the defaults of its configuration
    class (:data:`TEXT_DEFAULTS`) where it holds none, one note per field."""
    if model_type not in TEXT_DEFAULTS:
        return text, []
    defaults, source = TEXT_DEFAULTS[model_type]
    out, notes = dict(text), []
    for name, value in defaults.items():
        if out.get(name) is None:
            out[name] = value
            notes.append(f"text_config has no {name}: {value}, {source}")
    return out, notes


def canonical(source: dict, model_type: str) -> tuple[dict, list[str]]:
    """(fields, notes): ``source`` with each quantity under the readers' name (module
    docstring); InputError naming both fields when two names of one quantity disagree."""
    out, notes = dict(source), []
    f = _Fields(source, model_type)
    for alias, (name, whose) in RENAMED.items():
        if source.get(alias) is None:
            continue
        if source.get(name) is not None and source[name] != source[alias]:
            raise f.error(f"{alias}={_short(source[alias])} and {name}={_short(source[name])} "
                          "name one quantity and disagree")
        if source.get(name) is None:
            out[name] = source[alias]
            notes.append(f"{alias} read as {name} ({whose})")
    if f.flag("multi_query"):
        # GPTBigCodeAttention: one key and one value head shared by every query head
        _set_heads(out, 1, "multi_query=true: one key/value head (transformers "
                   "GPTBigCodeAttention)", notes, f)
    if f.flag("multi_query_attention"):
        groups = f.int("multi_query_group_num")
        _set_heads(out, groups, f"multi_query_attention=true: multi_query_group_num={groups} "
                   "key/value heads (THUDM ChatGLM SelfAttention)", notes, f)
    if model_type in FOUR_TIMES_WIDTH and out.get("intermediate_size") is None:
        width = f.int("n_embd") if out.get("hidden_size") is None else \
            _Fields(out, model_type).int("hidden_size")
        out["intermediate_size"] = 4 * width
        notes.append(f"n_inner absent: the feed-forward width is 4·n_embd = {4 * width} "
                     f"({FOUR_TIMES_WIDTH[model_type]})")
    if model_type in HALVED_WIDTH:
        width = _Fields(out, model_type).int("intermediate_size")
        if width % 2:
            raise f.error(f"intermediate_size={width} is not the sum of two equal halves")
        out["intermediate_size"] = width // 2
        notes.append(f"intermediate_size={width} is the gated pair's: each matrix {width // 2} "
                     f"wide ({HALVED_WIDTH[model_type]})")
    if model_type in LEARNED_POSITIONS:
        rows = source.get("n_positions") or source.get("max_position_embeddings")
        notes.append(f"the learned position table ({_short(rows)} rows of the model's width, "
                     f"{LEARNED_POSITIONS[model_type]}) is not counted")
    return out, notes


def _set_heads(out: dict, heads: int, why: str, notes: list[str], f: _Fields) -> None:
    given = out.get("num_key_value_heads")
    if given is not None and given != heads:
        raise f.error(f"num_key_value_heads={_short(given)} disagrees with {why}")
    out["num_key_value_heads"] = heads
    notes.append(why)

"""The reproduction record: every number the book reproduces from a source, next to ours.

Each group below recomputes one comparison of a chapter with the functions that chapter uses, and
reads the source's value from the data files that chapter reads, so the record cannot drift from
the chapters. A row holds within its tolerance, or, where the source is wrong (an erratum), is
checked against the corrected value instead and links to the erratum box.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

import numpy as np

ERDIL = "erdil2025inference"
DATA = resources.files("inference_math") / "data"


@dataclass(frozen=True)
class Row:
    quantity: str  # short: what the row compares
    source: float  # the source's value, read from the data files
    ours: float  # the book's value, computed by the model
    rel: float  # tolerance relative to the reference value
    abs: float = 0.0  # or absolute (half a unit of the last printed digit); the larger counts
    erratum: str | None = None  # the erratum box's name, when the source is wrong here
    corrected: float | None = None  # what ``ours`` is checked against when it is an erratum

    @property
    def reference(self) -> float:
        """The value the row is checked against: the source's, or the corrected one if given."""
        return self.source if self.corrected is None else self.corrected

    @property
    def difference(self) -> float:
        """Ours relative to the source's value."""
        return self.ours / self.source - 1

    @property
    def allowed(self) -> float:
        """The largest accepted |ours - reference|."""
        return max(self.rel * abs(self.reference), self.abs)

    def holds(self) -> bool:
        """Ours within the tolerance of the reference; for an erratum with no corrected value
        given, ours still outside the tolerance of the source's (wrong) value."""
        close = abs(self.ours - self.reference) <= self.allowed
        return not close if self.erratum and self.corrected is None else close


@dataclass(frozen=True)
class Group:
    work: str  # bibliography key of the source
    title: str  # the source's table or figure, as the reader looks it up
    section: str  # the label of the chapter section that derives it
    rows: tuple[Row, ...]
    note: str = ""  # MyST: what the source's value is (printed, the author's code's output, ...)
    erratum: str | None = None  # an erratum on the group as a whole (e.g. its caption)


def _reference() -> dict:
    return json.loads((DATA / "erdil2025_reference.json").read_text())


def _paper_row(quantity, paper, ours, rel, decimals=0, **extra) -> Row:
    """A printed value: within rel of it, or within half a unit of its last printed digit."""
    return Row(quantity, float(paper), float(ours), rel, 0.5 * 10.0**-decimals, **extra)


# ---- Erdil (2025), section 2: the toy model (chapter "Many GPUs: the latency wall") ----------

def table1() -> Group:
    from ..fullmodel.toy_model import max_speed
    from ..presets.hardware import get_gpu
    from ..presets.models import get_model

    ref = _reference()["table1"]
    h100 = get_gpu("h100")
    rows = []
    for row in ref["rows"]:
        ours = max_speed(get_model(row["model"]), h100, t_hop=ref["t_hop_s"], n_reduce=ref["n_reduce"])
        rows.append(Row(f"{row['label']} tok/s", row["tokens_per_s"], ours.tokens_per_s, 0, 0.5))
        rows.append(Row(f"{row['label']} GPUs", row["gpus"], ours.n_gpu_star, 0, 1))
    return Group(ERDIL, "Table 1", "latency-wall-table-1", tuple(rows),
                 "printed to whole tokens/s and GPUs")


def figure1() -> Group:
    from ..fullmodel.toy_model import reference_code_frontier
    from ..presets.hardware import get_gpu
    from ..presets.models import get_model

    ref = _reference()["figure1"]
    code = ref["reference_code"]
    h100, cap = get_gpu("h100"), ref["demand_caps_tokens_per_s"][0]
    f70 = reference_code_frontier(get_model("llama-3-70b"), h100, demand_cap=cap)
    f8 = reference_code_frontier(get_model("llama-3-8b"), h100, demand_cap=cap)
    probe = ref["probe_fraction_of_max_speed"] * f70.tokens_per_s[0]
    rows = (
        Row("70B top tok/s", code["llama-3-70b"]["max_tokens_per_s"], f70.tokens_per_s[0], 0.01),
        Row("70B GPUs at top", code["llama-3-70b"]["gpus_at_max"], f70.n_gpu[0], 0.01),
        Row("8B top tok/s", code["llama-3-8b"]["max_tokens_per_s"], f8.tokens_per_s[0], 0.01),
        Row("70B $/Mtok at 90% of top",
            code["llama-3-70b_usd_per_mtok_at_90pct_of_max_speed_10k_demand"],
            f70.cost_at_speed(probe), 0.05),
        Row(f"8B $/Mtok at {ref['probe_tokens_per_s']} tok/s",
            code["llama-3-8b_usd_per_mtok_at_400_tok_s_10k_demand"],
            f8.cost_at_speed(ref["probe_tokens_per_s"]), 0.05),
    )
    return Group(ERDIL, "Figure 1", "latency-wall-figure-1", rows,
                 "the author's code's output, demand capped at 10,000 tokens/s")


def square_root_law() -> Group:
    from ..derivations import scaling
    from ..presets.models import get_model

    sq = _reference()["square_root_law"]
    keys = ["palm-8b", "palm-62b", "palm-540b"]
    params = np.array([get_model(k).total_params for k in keys])
    ms = np.array([sq["palm_best_latency_ms"][k] for k in keys])
    slope = float(np.polyfit(np.log(params), np.log(ms), 1)[0])
    nominal, base = sq["nominal_params"], sq["baseline_tokens_per_s"]
    # The source's measured latencies give the exponent; ours is the derived one (1/2).
    rows = [Row("exponent, PaLM fit", slope, float(scaling.square_root_exponent()), 0, 0.05)]
    for key, label in (("llama-3-70b", "70B"), ("llama-3.1-405b", "405B")):
        ours = scaling.square_root_law_speed(base, nominal["llama-3-8b"], nominal[key])
        rows.append(Row(f"{label} predicted tok/s", sq["predicted_tokens_per_s"][key], ours, 0, 0.5))
    return Group(ERDIL, "Section 2.2.3", "latency-wall-square-root-law", tuple(rows),
                 "the exponent of PaLM's measured latencies, and the speeds the law predicts")


def takeaways() -> Group:
    from ..derivations import scaling

    ref = _reference()["takeaways"]
    rows = (
        Row("latency cut, 2× bandwidth", ref["doubling_bandwidth_latency_reduction"],
            -float(scaling.doubling_bandwidth_latency_change()), 0, 0.01),
        Row("speed-up, half precision", ref["halving_precision_speedup"],
            float(scaling.halving_precision_speedup()), 0, 0.005),
    )
    return Group(ERDIL, "Takeaway 3", "latency-wall-speed-ups", rows, "printed as percentages")


# ---- Erdil (2025), sections 4-5: the full model (Part III) -----------------------------------

_FRONTIERS: dict = {}
# (name, our attribute, the code's key, the paper's key, tolerance, printed decimals)
_SPEED = ("tok/s", "tokens_per_s", "tokens_per_s_per_request", "tokens_per_s", 0.01, 0)
_COST = ("$/Mtok", "usd_per_mtok", "usd_per_mtok", "usd_per_mtok", 0.02, 2)
_GPUS = ("GPUs", "gpus", "gpus", "gpus", 0.05, 0)
_BATCH = ("batch", "batch", "batch_size", "batch_size", 0.05, 0)
_SHORT = {"Mixtral 8x22B 16-bit": "Mixtral", "Llama 3 70B 8-bit": "70B",
          "Llama 3.1 405B 8-bit": "405B", "GPT-4 16-bit (speculative)": "GPT-4",
          "DeepSeek-V3 8-bit": "DeepSeek", "Llama 3 70B (no spec dec)": "70B",
          "Llama 3 70B (8B acceptance=0.8)": "70B spec.",
          "Llama 3.1 405B (no spec dec)": "405B",
          "Llama 3.1 405B (8B acceptance=0.8)": "405B spec."}
SPEC_COMPARISON = "all_models_comparison_with_spec_dec"  # Tables 2 and 3


def _frontier(comparison: str, label: str):
    """One frontier of the paper's comparisons, computed once per process (and cached on disk
    when the chapters' cache is on)."""
    from ..fullmodel import comparisons as C
    from ..fullmodel.search import frontier

    if (comparison, label) not in _FRONTIERS:
        _FRONTIERS[comparison, label] = frontier(C.settings(comparison)[label])
    return _FRONTIERS[comparison, label]


def _table(number: int, comparison: str, point: str, quantities, section: str, note: str,
           erratum: str | None = None, rows_erratum: str | None = None,
           short: dict | None = None) -> Group:
    """One of the paper's Tables 2-6: each printed cell against our frontier's point.

    ``rows_erratum``: every cell is wrong in the paper (the box says why); each is then checked
    against the author's final code instead."""
    from ..fullmodel import comparisons as C

    printed = C.reference_json("tables_code_vs_paper")[f"table{number}"]["rows"]
    rows = []
    for label, entry in printed.items():
        front = _frontier(comparison, label)
        ours = front.max_speed() if point == "max_speed" else front.preferred(3.0)
        code = C.reference_point(comparison, label, point)
        for name, attr, code_key, paper_key, tol, decimals in quantities:
            value = getattr(ours, attr)
            extra = {}
            if rows_erratum:
                extra = {"erratum": rows_erratum, "corrected": float(code[code_key])}
            rows.append(_paper_row(f"{(short or _SHORT).get(label, label)} {name}", entry["paper"][paper_key],
                                   value, tol, decimals, **extra))
    return Group(ERDIL, f"Table {number}", section, tuple(rows), note, erratum)


def table2() -> Group:
    return _table(2, SPEC_COMPARISON, "max_speed", (_SPEED, _GPUS), "todays-models-table-2",
                  "the fastest each model can go")


def table3() -> Group:
    return _table(3, SPEC_COMPARISON, "pref_alpha3", (_SPEED, _COST, _GPUS, _BATCH),
                  "todays-models-table-3", "the setups customers would choose",
                  erratum="erratum-todays-models-table-3-uses-not")


def table4() -> Group:
    return _table(4, "gpus_comparison", "max_speed", (_SPEED, _GPUS), "gpu-generations-table-4",
                  "Llama 3 70B's top speed on each GPU")


def table5() -> Group:
    return _table(5, "spec_dec_comparison", "pref_alpha3", (_SPEED, _COST, _GPUS, _BATCH),
                  "speculative-decoding-table-5", "with and without speculative decoding",
                  rows_erratum="erratum-speculative-decoding-table-5-comes-from-an-earlier")


def table6() -> Group:
    return _table(6, "quantization_comparison", "pref_alpha3", (_SPEED, _COST, _GPUS, _BATCH),
                  "quantization-table-6", "Llama 3 70B with 4-, 8- and 16-bit weights",
                  erratum="erratum-quantization-table-6-uses-not",
                  short={f"Llama 3 70B {bits}-bit": f"{bits}-bit" for bits in (4, 8, 16)})


# ---- Mazurek and Gabriel (2025), the cost of Llama 3.3 70B on H100s (chapter "Pricing") -----

def pricing_table1() -> Group:
    from ..core import symbols as S
    from ..core.numeric import compile_fn
    from ..derivations import dense_economics as de

    post = de.MAZUREK2025
    pr, t1, elapsed = post["pricing"], post["table1"], post["fig18_elapsed_s"]
    price_fn = compile_fn(de.output_price(), (S.n_gpu, S.price, S.t_batch, S.b, S.t_prompt,
                                               S.t_output, S.gamma_in))
    rows = []
    for i, batch in enumerate(t1["batch"]):
        beta = 1e6 * float(price_fn(pr["n_gpu"], pr["gpu_price_per_hour"], elapsed[batch], batch,
                                    pr["prompt"], pr["output"], pr["gamma"]))
        tok_s = batch * (pr["prompt"] + pr["output"]) / elapsed[batch]
        rows.append(Row(f"b={batch} input $/M", t1["input_per_m"][i], pr["gamma"] * beta, 0, 0.005))
        rows.append(Row(f"b={batch} output $/M", t1["output_per_m"][i], beta, 0, 0.005))
        wrong = "erratum-pricing-one-tokens-per-second-cell-of" if batch == 64 else None
        rows.append(Row(f"b={batch} tok/s", t1["tokens_per_s"][i], tok_s, 0, 0.01, wrong))
    return Group("mazurek2025llm", "Table 1", "pricing-cost-table", tuple(rows),
                 "prices per million tokens and tokens per second by batch size")


GROUPS = (table1, figure1, square_root_law, takeaways, table2, table3, table4, table5, table6,
          pricing_table1)


def groups() -> list[Group]:
    """Every group of the record, in the order of the book."""
    return [make() for make in GROUPS]


# ---- the page ----------------------------------------------------------------------------------

def chapter_of(label: str, root=None) -> str:
    """The chapter (file stem) whose source sets the link target ``label``."""
    from pathlib import Path

    from .errata import ROOT

    book = Path(root or ROOT) / "book"
    homes = [p.stem for p in sorted(book.glob("*.md")) if f"\n({label})=\n" in p.read_text()]
    if len(homes) != 1:
        raise ValueError(f"link target {label!r} is set in {homes or 'no chapter'}")
    return homes[0]


def _number(x: float, source: float) -> str:
    """Ours, to one digit more than the source prints (as many past a thousand)."""
    printed = f"{source:.6g}"
    decimals = len(printed.split(".")[1]) if "." in printed and "e" not in printed else 0
    return f"{x:,.{decimals + (abs(source) < 1000)}f}"


def _tolerance(row: Row) -> str:
    if row.erratum:
        return f"{{ref}}`erratum <{row.erratum}>`"
    if row.rel * abs(row.reference) >= row.abs:
        return f"±{100 * row.rel:g}%"
    return f"±{row.abs:g}"


def markdown(group: Group, box_titles: dict[str, str]) -> str:
    """One group as MyST: where it is derived, then a table of five short columns."""
    from .display import markdown_table, signed

    lines = [f"**{group.title}**: {group.note}; derived in {{ref}}`{group.section}`."]
    if group.erratum:
        lines.append(f"The source errs here: {{ref}}`{box_titles[group.erratum]} <{group.erratum}>`.")
    rows = [[row.quantity, f"{row.source:,.6g}", _number(row.ours, row.source),
             signed(100 * row.difference, 2, "%"), _tolerance(row)] for row in group.rows]
    table = markdown_table(["quantity", "source", "ours", "diff.", "tol."], rows)
    return "\n".join(lines) + "\n\n" + table + "\n"

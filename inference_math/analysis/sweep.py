"""Sweeps: frontier summaries over models × GPUs × weight precisions × contexts (× prices).

Each cell of the grid is one frontier (:func:`~inference_math.fullmodel.search.frontier`, unchanged),
summarized in one row: its top speed and cost there, and at each asked speed per user the cost
(eq-search-cost, read along the frontier as ``compare`` reads it), the binding term and the size
of the configuration that serves it, and the cost's elasticity in each input with the constraints
that bind at the optimum (:mod:`.sensitivity`). A cell that cannot run is a row too, ``feasible`` false
with the reason, never dropped.

The cells run in parallel on an existing engine: joblib's process pool (loky) over the local
cores, or a Dask cluster (joblib's ``dask`` backend) when given a scheduler's address. The rows
are written as they come (Parquet or CSV), so a sweep that stops keeps what it computed, and a
sweep run again on the same file computes only the cells it does not hold.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from ..core import in_order
from ..core.validation import InputError, positive
from ..fullmodel.search import Setting, default_curve, frontier
from ..presets.hardware import get_gpu
from ..presets.models import get_model

#: The columns that name a cell: a row with the same values is the same cell.
KEY = ("model", "gpu", "weight_bits", "context", "curve", "usd_per_gpu_hour")
#: What a sweep writes, in this order, per asked speed S after the first ones.
COLUMNS = (*KEY, "feasible", "infeasible", "max_tokens_per_s", "usd_per_mtok_at_max",
           "binding_at_max")
#: The inputs whose elasticity a row holds at each speed (eq-sens-one-term, eq-sens-corner), by
#: their names in ``sensitivity --json``; the FLOP/s are those of the frontier's weights.
ELASTICITIES = ("hbm_bandwidth", "hbm_bytes", "flops", "intranode_allreduce_bandwidth",
                "internode_allreduce_bandwidth", "kernel_launch_s", "collective_latency",
                "price_per_hour", "weight_bytes", "kv_bytes_per_token", "context")
AT_SPEED = ("usd_per_mtok", "binding", "gpus", "batch", "binds",
            *(f"eps_{name}" for name in ELASTICITIES))
_TEXT = ("model", "gpu", "curve", "infeasible")  # and every binding_* and binds_* column
FORMATS = (".parquet", ".csv")


def speed_columns(speeds: Iterable[float]) -> list[str]:
    """The columns of the asked speeds: ``usd_per_mtok_at_20`` and so on (speeds as %g)."""
    return [f"{name}_at_{speed:g}" for speed in speeds for name in AT_SPEED]


@dataclass(frozen=True)
class Cell:
    """One frontier of a sweep, named by what the command line takes (a preset or a path)."""

    model: str
    gpu: str
    weight_bits: int  # the bits the frontier stores each weight in (the model's own, or asked)
    own_bits: bool  # True: the model's own storage (its mixed formats), not every weight at bits
    context: float
    curve: str
    usd_per_gpu_hour: float
    price: float | None  # None: the GPU's own (usd_per_gpu_hour holds it)

    def key(self) -> tuple:
        return (self.model, self.gpu, self.weight_bits, self.context, self.curve,
                self.usd_per_gpu_hour)


def grid(models: list[str], gpus: list[str], weight_bits: list[int | None],
         contexts: list[float], prices: list[float | None], curve: str | None) -> list[Cell]:
    """Every cell of the grid, each model and GPU read once here (InputError, one line, for an
    unknown preset, a malformed config or a GPU the full model cannot time)."""
    if not all((models, gpus, weight_bits, contexts, prices)):
        raise InputError("a sweep needs at least one model, GPU, weight precision, context and "
                         "price")
    read_models = {name: get_model(name) for name in models}
    read_gpus = {}
    for name in gpus:
        gpu = get_gpu(name)
        gpu.require_collective_model()
        read_gpus[name] = gpu
    for context in contexts:
        positive("context", context, allow_zero=True)
    cells = []
    for (m, model), (g, gpu), bits, context, price in product(
            read_models.items(), read_gpus.items(), weight_bits, contexts, prices):
        if price is not None:
            positive("price", price)
        chosen = curve or default_curve(model)
        cells.append(Cell(m, g, int(bits or model.weight_bits), bits is None, float(context),
                          chosen, float(price if price is not None else gpu.price_per_hour),
                          price))
    return cells


def summarize(cell: Cell, speeds: tuple[float, ...]) -> dict:
    """One cell's row: its frontier's top speed and, at each speed, the cost, binding term,
    GPUs and batch of the point that serves it; or ``feasible`` false and the reason."""
    row = dict(zip(KEY, cell.key(), strict=True))
    row.update(feasible=False, infeasible=None, max_tokens_per_s=None, usd_per_mtok_at_max=None,
               binding_at_max=None, **dict.fromkeys(speed_columns(speeds)))
    model, gpu = get_model(cell.model), get_gpu(cell.gpu)
    try:
        gpu.flops(cell.weight_bits)
        setting = Setting(model=model, gpu=gpu,
                          weight_bytes=None if cell.own_bits else cell.weight_bits / 8,
                          context=cell.context, price=cell.price, label=model.name,
                          curve=cell.curve)
        front = frontier(setting)
    except InputError as exc:
        row["infeasible"] = str(exc)
        return row
    top = front.max_speed()
    row.update(feasible=True, max_tokens_per_s=top.tokens_per_s,
               usd_per_mtok_at_max=top.usd_per_mtok, binding_at_max=top.binding)
    for speed in speeds:
        point = front.cheapest_at(speed)
        if point is None:
            continue  # beyond the top speed: the cells stay empty
        cost = float(front.cost_at_speed(speed))
        row.update({f"usd_per_mtok_at_{speed:g}": cost if math.isfinite(cost)
                    else point.usd_per_mtok, f"binding_at_{speed:g}": point.binding,
                    f"gpus_at_{speed:g}": point.gpus, f"batch_at_{speed:g}": point.batch})
        row.update(_elasticities(front, speed))
    return row


def _elasticities(front, speed: float) -> dict:
    """The elasticity columns at one speed (empty below the frontier's slowest point)."""
    try:
        from .sensitivity import elasticities
        report = elasticities(front, speed)
    except InputError:
        return {}
    values = {("flops" if name.startswith("flops_") else name): value
              for name, value in report["elasticities"].items()}
    out = {f"eps_{name}_at_{speed:g}": values.get(name) for name in ELASTICITIES}
    out[f"binds_at_{speed:g}"] = "+".join(report["binds"])
    return out


# --- the output file ------------------------------------------------------------------------------

def _format(path: Path) -> str:
    if path.suffix not in FORMATS:
        raise InputError(f"--out must end in {' or '.join(FORMATS)}, got {path.name!r}")
    return path.suffix


def read_rows(path: Path) -> list[dict]:
    """The rows a sweep wrote to ``path`` (none if it does not exist); InputError if it is not
    a sweep's output."""
    if not path.exists():
        return []
    try:
        if _format(path) == ".parquet":
            import pyarrow.parquet as pq
            rows = pq.read_table(path).to_pylist()
        else:
            with path.open(newline="", encoding="utf-8") as handle:
                rows = [_typed(row) for row in csv.DictReader(handle)]
    except InputError:
        raise
    except Exception as exc:  # a damaged or foreign file: one line, not a traceback
        raise InputError(f"--out {path.name!r} cannot be read as a sweep's output: {exc}") from None
    if rows and not set(COLUMNS) <= set(rows[0]):
        raise InputError(f"--out {path.name!r} is not a sweep's output (it lacks "
                         f"{', '.join(sorted(set(COLUMNS) - set(rows[0])))})")
    return rows


def _typed(row: dict) -> dict:
    """A CSV row with the types a sweep wrote (empty cells are None)."""
    out = {}
    for key, text in row.items():
        if text == "":
            out[key] = None
        elif key in ("feasible",):
            out[key] = text == "True"
        elif key == "weight_bits":
            out[key] = int(text)
        elif key in _TEXT or key.startswith(("binding", "binds")):
            out[key] = text
        else:
            out[key] = float(text)
    return out


class Writer:
    """Appends rows to a sweep's file: CSV a row at a time, Parquet rewritten with every row so
    far each ``every`` rows and at the end (the file is always a complete table)."""

    def __init__(self, path: Path, columns: list[str], kept: list[dict], every: int = 16):
        self.path, self.columns, self.rows, self.every = path, columns, list(kept), every
        self.csv = _format(path) == ".csv"
        self._pending = 0
        if self.csv and not kept:
            with self.path.open("w", newline="", encoding="utf-8") as handle:
                csv.DictWriter(handle, columns).writeheader()

    def add(self, row: dict) -> None:
        self.rows.append(row)
        if self.csv:
            with self.path.open("a", newline="", encoding="utf-8") as handle:
                csv.DictWriter(handle, self.columns).writerow(row)
            return
        self._pending += 1
        if self._pending >= self.every:
            self.flush()

    def flush(self) -> None:
        if self.csv or not self._pending and self.path.exists():
            return
        import pyarrow as pa
        import pyarrow.parquet as pq
        table = pa.Table.from_pylist(self.rows, schema=_schema(self.columns))
        partial = self.path.with_suffix(".parquet.partial")
        pq.write_table(table, partial)
        partial.replace(self.path)  # never a half-written file under the name
        self._pending = 0


def _schema(columns: list[str]):
    import pyarrow as pa
    kinds = {"weight_bits": pa.int64(), "feasible": pa.bool_()}
    return pa.schema([(c, kinds.get(c, pa.string() if c in _TEXT
                                    or c.startswith(("binding", "binds")) else pa.float64()))
                      for c in columns])


# --- running --------------------------------------------------------------------------------------

def _summarize_on_one_thread(cell: Cell, speeds: tuple[float, ...]) -> dict:
    """:func:`summarize` in a worker process that shares the cores with others: its search's
    blocks on one thread (the same result; two threads each would only contend)."""
    os.environ[in_order.ENV] = "1"
    return summarize(cell, speeds)


def _results(cells: list[Cell], speeds: tuple[float, ...], jobs: int,
             scheduler: str | None) -> Iterator[dict]:
    """Rows in the order they finish: on ``jobs`` local processes (loky), or on the Dask
    cluster at ``scheduler``."""
    from joblib import Parallel, delayed, parallel_config
    one = summarize if scheduler is None and jobs == 1 else _summarize_on_one_thread
    tasks = (delayed(one)(cell, speeds) for cell in cells)
    if scheduler is None:
        yield from Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered")(tasks)
        return
    from distributed import Client
    try:
        client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"--scheduler {scheduler!r}: cannot reach a Dask scheduler ({exc})") \
            from None
    try:
        with parallel_config(backend="dask"):
            yield from Parallel(n_jobs=-1, return_as="generator_unordered")(tasks)
    finally:
        client.close()


def run(cells: list[Cell], speeds: list[float], out: Path, jobs: int = 2,
        scheduler: str | None = None,
        progress: Callable[[int, int], None] | None = None) -> tuple[list[dict], int]:
    """Sweep ``cells`` into ``out``: the rows of every cell (those the file held and the new
    ones) and how many were computed now. ``progress(done, total)`` after each new row."""
    speeds = tuple(positive("speed", float(s)) for s in speeds)
    columns = [*COLUMNS, *speed_columns(speeds)]
    kept = read_rows(out)
    if kept and set(kept[0]) != set(columns):
        raise InputError(f"--out {out.name!r} holds another sweep's columns (other speeds?); "
                         "ask for the same --speeds or write to another file")
    done = {tuple(row[k] for k in KEY) for row in kept}
    todo = [cell for cell in dict.fromkeys(cells) if cell.key() not in done]
    writer = Writer(out, columns, kept)
    for count, row in enumerate(_results(todo, speeds, jobs, scheduler) if todo else (), 1):
        writer.add(row)
        if progress is not None:
            progress(count, len(todo))
    writer.flush()
    wanted = {cell.key() for cell in cells}
    return [row for row in writer.rows if tuple(row[k] for k in KEY) in wanted], len(todo)

"""The ``inference-math`` command line.

    inference-math models                      list model presets with key numbers
    inference-math gpus                        list GPU presets with key numbers
    inference-math toy-max-speed --model M --gpu G [--t-hop S] [--n-reduce N] [--capped] [--json]
    inference-math frontier  --model M --gpu G [options] [--json | --csv]   the Pareto frontier
    inference-math max-speed --model M --gpu G [options] [--json | --csv]   its fastest point
    inference-math preferred --model M --gpu G [options] [--alpha A] [--json | --csv]
                                                the point maximizing tok/s^alpha / price
    inference-math compare --models A,B --gpus X,Y [--speed S] [options] [--json | --csv]
                                                top speed and cost at S tok/s per user, per pair
    inference-math predict --model M --gpu G --tp N --batch B --input-len I --output-len O [options]
                                                the full model at one given deployment
    inference-math describe-model MODEL_OR_PATH [--weight-bits B] [--json]
                                                parameters, layer mix, KV cache and weight bytes
                                                of a preset or a Hugging Face config.json
    inference-math serve --model M --gpu G --input-len I --output-len O [options]
                                                the serving frontier: output tok/s per GPU
                                                (prefill counted) against tok/s per user
    inference-math measured FILE.csv [--plot F] [--json | --csv]
                                                measured points against the limit and estimate
    inference-math engines [--json | --csv]     engine families: measured points, setups and
                                                fitted efficiencies (serve and predict take
                                                --engine NAME with the estimate curve)
    inference-math sweep --models A,B --gpus X,Y --out FILE.parquet|csv [--weight-bits own,8,4]
                         [--contexts 0,131072] [--prices P,Q] [--speeds 20,100] [--jobs N]
                         [--scheduler ADDRESS] [--json]
                                                frontier summaries over the grid, in parallel
                                                (local processes or a Dask cluster), resumable
    inference-math sensitivity --model M --gpu G --speed S [--cut F] [options] [--json | --csv]
                                                elasticities of the cost at S tok/s per user in
                                                each hardware and model number; with --cut, the
                                                factor each needs alone to divide the cost by F

--model and --drafter take a preset or a path to a config.json (or its folder); the full model
reads only architectures of uniform layers from a config (describe-model reads the others).
describe-model's --weight-bits B stores every weight at B bits, B in [1, 32].
Every command that reads a model takes --assume FIELD=VALUE (read a config.json as if it held
FIELD=VALUE) and --ignore FIELD (as if it had no FIELD), both repeatable; what a reading assumed
and ignored is noted on standard error (--quiet: not) and in describe-model's --json
(cli/config_options.py).

Options of the full model (Erdil 2025, section 3): --weight-bits {4,8,16}, --context TOKENS,
--drafter MODEL, --acceptance P (default 0.8 with a drafter), --no-pipeline, --price $/GPU-h,
--exact (every frontier point instead of the paper's 1,000 latency thresholds). The full model
runs on the GPU presets with a collective model (``inference-math gpus`` marks them).
``frontier --plot FILE.svg|png`` also draws the frontier into FILE (matplotlib is imported only
then). ``compare`` takes comma-separated lists of models and GPUs (presets or paths) and, for every
pair, reports the top speed and the cost at ``--speed`` tokens/s per user (default 50); a pair
that cannot reach that speed, or cannot hold the model, is a row marked infeasible.

``--gpu`` takes a preset name or the path of a GPU file: a TOML file with one GPU's fields at the
top level, the schema of ``presets/gpus.toml`` (a name containing ``/`` or ending in ``.toml`` is
read as a path). A bad file (unreadable, malformed TOML, an unknown or missing field, a wrong
type, a negative or non-finite number) is reported in one line naming the file and the field.

Numbers must lie in these ranges (wide around any real deployment, narrow enough that no result
overflows or underflows a float): --t-hop [1e-12, 1000] s, --n-reduce [0.001, 1000],
--context [0, 1e+09] tokens, --acceptance [0, 1), --price [0.0001, 10000] $/GPU-hour,
--alpha [0, 20], --speed [0.01, 100000] tokens/s per user.

``--band`` on ``frontier``, ``max-speed``, ``preferred``, ``compare`` and ``serve`` (with
``--draws N``, ``--seed S``) adds the
10th and 90th percentiles of each row over draws of the GPU's assumed and provisional values
(analysis/bands.py; on serve's estimate, times the estimate's band): see the README's "Bands".

Bad input (unknown preset, a number out of range, a malformed option, a GPU the full model cannot
time, a context whose KV cache fits no instance) prints one line naming the flag and exits with
status 2; an output that cannot be written (a full disk) prints one line and exits with status 1;
a reader that closes the pipe early (``| head``) ends the command quietly with status 141.
"""

from __future__ import annotations

import sys
from importlib import import_module

from ..core.validation import InputError
from .common import (  # noqa: F401  (names the tests and the book import from here)
    DEFAULT_SPEED,
    EXIT_INTERRUPT,
    EXIT_OUTPUT,
    EXIT_PIPE,
    EXIT_USAGE,
    GPU_FILE_HELP,
    RANGES,
    _error,
    _Parser,
    _write,
)

#: Every subcommand, in the order --help lists them: (name, help, module of cli/ that adds its
#: arguments and runs it, the function that runs it). A command's module, and the library it
#: needs, load only when that command runs (or prints its help).
COMMANDS = (
    ("models", "list model presets", "describe", "cmd_models"),
    ("gpus", "list GPU presets", "describe", "cmd_gpus"),
    ("toy-max-speed", "maximum tokens/s and optimal instance size (Erdil 2025 eq. 13-14)", "toy",
     "cmd_toy_max_speed"),
    ("frontier", "Pareto frontier of tokens/s per user vs $/Mtok (full model)", "frontier",
     "cmd_frontier"),
    ("max-speed", "the fastest point of the frontier (full model)", "frontier", "cmd_frontier"),
    ("preferred", "the frontier point maximizing tok/s^alpha / price (full model)", "frontier",
     "cmd_frontier"),
    ("compare", "top speed and cost at a per-user speed for every model x GPU pair (full model)",
     "compare", "cmd_compare"),
    ("describe-model", "parameters, layer mix, KV cache and weights of a model", "describe",
     "cmd_describe"),
    ("predict", "the full model at one given deployment (no search)", "predict", "cmd_predict"),
    ("serve", "serving frontier: output tok/s per GPU (prefill counted) vs tok/s per user, under "
              "TTFT/TPOT limits", "serving", "cmd_serve"),
    ("measured", "your measured serving points against the limit and the estimate",
     "measured", "cmd_measured"),
    ("engines", "serving-engine families: their measured points and fitted efficiencies",
     "engines", "cmd_engines"),
    ("sweep", "frontier summaries over models x GPUs x weights x contexts x prices, in parallel, "
              "into Parquet or CSV", "sweep", "cmd_sweep"),
    ("sensitivity", "elasticities of the cost at a speed per user in each hardware and model "
                    "number (full model)", "sensitivity", "cmd_sensitivity"),
)
_RUNNERS = {name: (module, function) for name, _, module, function in COMMANDS}

#: Names once defined here, now in the module of their command family: imported on first use.
_MOVED = {"_fits": "setting", "_progress": "setting", "_setting": "setting",
          "CURVE_MEANING": "setting", "_money": "compare", "DESCRIBE_BITS": "describe",
          "PREDICT_RANGES": "predict"}


def __getattr__(name: str):
    if name in _MOVED:
        return getattr(_family(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _family(module: str):
    return import_module(f"{__name__}.{module}")


def _filler(name: str, module: str):
    def fill(cmd) -> None:
        _family(module).add_arguments(cmd, name)
        dests = {action.dest for action in cmd._actions}
        if dests & {"model", "models"}:  # every command that reads a model (config_options)
            from .config_options import add_config_options
            add_config_options(cmd, quiet="quiet" not in dests)
    return fill


def build_parser() -> _Parser:
    """The whole command line; each subcommand's arguments are added when it parses."""
    parser = _Parser(prog="inference-math",
                     description="Economics of serving language models, from first principles.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, helptext, module, _ in COMMANDS:
        sub.add_parser(name, help=helptext, fill=_filler(name, module))
    return parser


def main(argv: list[str] | None = None) -> int:
    from .config_options import reading, with_readings
    argv = sys.argv[1:] if argv is None else argv
    try:
        # --assume/--ignore reach every config.json read, while parsing (--model PATH) or
        # running (describe-model PATH); the notes go to standard error (config_options)
        with reading(argv) as read:
            args = build_parser().parse_args(argv)
            module, function = _RUNNERS[args.command]
            text = getattr(_family(module), function)(args)
            if getattr(args, "json", False) and text is not None:
                text = with_readings(text, read)
    except InputError as exc:
        return _error(str(exc), EXIT_USAGE)
    except SystemExit as exc:  # --help, already printed
        return _write() or (exc.code if isinstance(exc.code, int) else EXIT_USAGE)
    except KeyboardInterrupt:
        return EXIT_INTERRUPT
    return _write(text)


if __name__ == "__main__":
    sys.exit(main())

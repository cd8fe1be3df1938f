"""The package's layers import one way: core <- derivations <- presets <- fullmodel <- serving <-
reality <- analysis <- codegen, book, cli.

Every module is parsed (not imported) and each import that runs is resolved to the layer it
reaches; imports under ``if TYPE_CHECKING:`` only name types and never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import inference_math

PACKAGE = Path(inference_math.__file__).parent
#: What each layer may import of the package (besides itself).
ALLOWED = {
    "core": set(),
    "derivations": {"core"},
    "presets": {"core", "derivations"},
    "fullmodel": {"core", "derivations", "presets"},
    "serving": {"core", "derivations", "presets", "fullmodel"},
    "reality": {"core", "derivations", "presets", "fullmodel", "serving"},
    "analysis": {"core", "derivations", "presets", "fullmodel", "serving", "reality"},
    "codegen": {"core", "derivations", "presets", "fullmodel", "serving", "reality", "analysis"},
    "book": {"core", "derivations", "presets", "fullmodel", "serving", "reality", "analysis", "top"},
    "cli": {"core", "derivations", "presets", "fullmodel", "serving", "reality", "analysis", "top"},
    "top": {"core", "derivations", "presets", "fullmodel", "serving", "reality", "analysis"},
}
LAYERS = set(ALLOWED) - {"top", "cli"}
#: What a layer may import only inside a function, so that starting it never loads it: the command
#: line draws figures (``frontier --plot``) with the book's style, loaded only when asked.
LAZY = {"cli": {"book"}}


def layer_of(parts: tuple[str, ...]) -> str:
    """Layer of a module given its dotted name below ``inference_math`` (``()`` is the top)."""
    if not parts or parts == ("__init__",):
        return "top"
    if parts[0] == "cli":
        return "cli"
    if parts[0] in LAYERS:
        return parts[0]
    if not (PACKAGE / parts[0]).is_dir() and not (PACKAGE / f"{parts[0]}.py").exists():
        return "top"  # a name of the public API, defined in __init__
    raise AssertionError(f"inference_math.{'.'.join(parts)} is in no layer")


def module_parts(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def runtime_imports(tree: ast.AST, eager_only: bool = False):
    """Import nodes that execute (anywhere, functions included unless ``eager_only``: then only
    those that run when the module loads), skipping TYPE_CHECKING blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if eager_only and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imported_targets(path: Path, eager_only: bool = False) -> list[tuple[str, ...]]:
    """Every package module (or subpackage) an import in ``path`` names, as dotted parts (with
    ``eager_only``, only those imported when the module loads)."""
    here = module_parts(path)
    package = here if path.name == "__init__.py" else here[:-1]
    targets = []
    for node in runtime_imports(ast.parse(path.read_text(), str(path)), eager_only):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
            targets += [tuple(n[1:]) for n in names if n[0] == "inference_math"]
            continue
        if node.level == 0:
            if not (node.module or "").startswith("inference_math"):
                continue
            base = tuple(node.module.split(".")[1:])
        else:
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                base += tuple(node.module.split("."))
        # `from . import roofline` names modules; `from ..core.numeric import compile_fn` one module
        targets += [base + (alias.name,) for alias in node.names] if node.module is None else [base]
    return targets


def test_every_import_points_the_way_the_layers_allow():
    wrong = []
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 40
    for path in files:
        source = layer_of(module_parts(path))
        eager = set(imported_targets(path, eager_only=True))
        for target in imported_targets(path):
            if target and target[0] == "__init__":
                continue
            reached = layer_of(target) if target else "top"
            lazy_ok = reached in LAZY.get(source, set()) and target not in eager
            if reached != source and reached not in ALLOWED[source] and not lazy_ok:
                wrong.append(f"{path.relative_to(PACKAGE)} ({source}) imports "
                             f"inference_math.{'.'.join(target)} ({reached})")
    assert wrong == []


@pytest.mark.parametrize("source, target, ok", [
    ("derivations", "fullmodel", False), ("derivations", "presets", False),
    ("core", "derivations", False), ("fullmodel", "book", False), ("presets", "fullmodel", False),
    ("book", "fullmodel", True), ("fullmodel", "presets", True), ("cli", "book", False),
    ("fullmodel", "serving", False), ("serving", "fullmodel", True), ("reality", "analysis", False),
    ("analysis", "reality", True), ("fullmodel", "codegen", False), ("cli", "codegen", False),
])
def test_the_rule_itself(source, target, ok):
    assert (target in ALLOWED[source]) is ok


def test_the_checker_sees_an_import_that_runs_and_skips_a_type_only_one(tmp_path, monkeypatch):
    """The parser is checked on a module written here, so a checker that sees nothing fails."""
    fake = tmp_path / "inference_math"
    (fake / "derivations").mkdir(parents=True)
    module = fake / "derivations" / "x.py"
    module.write_text("from typing import TYPE_CHECKING\nfrom ..fullmodel.search import frontier\n"
                      "from . import roofline\n"
                      "if TYPE_CHECKING:\n    from ..presets.hardware import GPU\n"
                      "def f():\n    from ..book import display\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert sorted(imported_targets(module)) == [("book",), ("derivations", "roofline"),
                                                ("fullmodel", "search")]
    assert sorted(imported_targets(module, eager_only=True)) == [("derivations", "roofline"),
                                                                 ("fullmodel", "search")]


def test_the_command_line_starts_without_the_book_or_matplotlib():
    """The command line (cli/) reaches the book layer (and matplotlib) only inside the
    functions that draw."""
    import subprocess
    import sys

    code = ("import sys, inference_math.cli; "
            "print(sorted(m for m in sys.modules if m.startswith('inference_math.book') "
            "or m == 'matplotlib' or m.startswith('matplotlib.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    for cli in sorted((PACKAGE / "cli").glob("*.py")):
        assert not [t for t in imported_targets(cli, eager_only=True) if t and t[0] == "book"]
    drawing = PACKAGE / "cli" / "frontier.py"  # frontier --plot
    assert [t for t in imported_targets(drawing) if t and t[0] == "book"]  # the lazy one is seen


def test_importing_the_package_loads_no_book_machinery_and_no_engine():
    import subprocess
    import sys

    code = ("import sys, inference_math; "
            "print(sorted(m for m in sys.modules if m.startswith('inference_math')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['inference_math']"

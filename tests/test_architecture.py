"""The layer rule of docs/architecture.md, as code: each module imports only its own layer or a
lower one (imports inside functions count, `TYPE_CHECKING` imports do not), pygit2 only in
store/, click only in cli/, the MCP SDK only in mcp/, the two JSON front ends never import each
other or the CLI, nothing above store/ asks which kind of store it has, and no import loop."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gitckpt"

#: Bottom to top; a layer may import its own and every lower one. mcp and hooks share a rank
#: but may not import each other.
LAYERS = ["core", "safety", "store", "engine", "transfer", "service", "mcp|hooks", "cli",
          "entry"]
#: Third-party packages only one layer may import.
OWNED = {"pygit2": "store", "click": "cli", "mcp": "mcp", "mcp_types": "mcp",
         "pydantic": "mcp", "typing_extensions": "mcp"}


def layer_of(module: str) -> str:
    """The layer of a gitckpt module name (`gitckpt.store.git.scan` -> `store`)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__init__",):
        return "core"  # gitckpt itself holds only the version
    if parts[1] in ("entry", "__main__"):
        return "entry"
    return parts[1]


def rank(layer: str) -> int:
    return next(i for i, name in enumerate(LAYERS) if layer in name.split("|"))


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # a gitckpt module, or a third-party top-level package
    line: int


def _in_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(name: str, modules: set[str]) -> str | None:
    """The gitckpt module `name` names (a module, or a name inside one)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(package: Path = PACKAGE) -> tuple[set[str], list[Import]]:
    """Every module of the package, and every import each makes (lazy("...") included)."""
    files = sorted(package.rglob("*.py"))
    modules = {_module_name(p, package) for p in files}
    found: list[Import] = []
    for path in files:
        source = _module_name(path, package)
        for name, line in _named(path.read_text(encoding="utf-8")):
            if name.split(".")[0] == "gitckpt":
                target = _resolve(name, modules)
                if target is not None and target != source:
                    found.append(Import(source, target, line))
            else:
                found.append(Import(source, name.split(".")[0], line))
    return modules, found


@functools.cache
def _named(text: str) -> tuple[tuple[str, int], ...]:
    """(module named, line) of every import in a module's text, but those made for the type
    checker only (parsed once a text: the tests below check copies of the package)."""
    tree = ast.parse(text)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names] or [node.module]
            names.append(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy" \
                and node.args and isinstance(node.args[0], ast.Constant):
            names = [str(node.args[0].value)]
        if names and not _in_type_checking(node, parents):
            out += [(name, node.lineno) for name in names]
    return tuple(out)


def violations(package: Path = PACKAGE) -> list[str]:
    """Every breach of the layer rule, as `module:line: why`."""
    modules, found = imports(package)
    out = []
    for imp in found:
        where = f"{imp.source}:{imp.line}"
        here = layer_of(imp.source)
        if imp.target.startswith("gitckpt"):
            there = layer_of(imp.target)
            if rank(there) > rank(here):
                out.append(f"{where}: {here} imports {imp.target} ({there} is above it)")
            elif rank(there) == rank(here) and there != here:
                out.append(f"{where}: {here} imports {imp.target} (front ends stay apart)")
        elif imp.target in OWNED and OWNED[imp.target] != here:
            out.append(f"{where}: {imp.target} is imported only in {OWNED[imp.target]}/")
    out += [f"import loop: {' -> '.join(loop)}" for loop in loops(modules, found)]
    return sorted(set(out))


def loops(modules: set[str], found: list[Import]) -> list[list[str]]:
    """The import cycles among gitckpt modules (each strongly connected set, as a path)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for imp in found:
        if imp.target in graph:
            # importing a package runs its __init__ only; a submodule's parent is not its user
            graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm, iterative enough for a few hundred
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_import_points_down_and_no_loop():
    assert violations() == []


def test_every_module_is_in_a_layer_folder():
    """No top-level module but the entry point, and no family prefix (`cli_*`, `mcp_*`)."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "entry.py"], top
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert {f for layer in LAYERS for f in layer.split("|")} - {"entry"} == set(folders)


def test_nothing_above_store_asks_which_store_it_has():
    sniff = re.compile(r"getattr\(\s*(self\.)?store\b|\bstore\.kind\s*[!=]="
                       r"|isinstance\([^)]*Store\)")
    found = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
             if "store" not in p.relative_to(PACKAGE).parts[:1]
             for n, line in enumerate(p.read_text().splitlines(), 1) if sniff.search(line)]
    assert found == []


def test_no_module_over_500_lines_but_the_secret_rule_table():
    big = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 500 and p.name != "secret_rules.py"}
    assert big == {}


@pytest.mark.parametrize(("planted", "why"), [
    ("from gitckpt.cli import main\n", "core imports gitckpt.cli.main"),
    ("def f():\n    import pygit2\n", "pygit2 is imported only in store/"),
    ("from gitckpt.hooks import run\n", "front ends stay apart"),
])
def test_a_forbidden_import_is_caught(tmp_path, planted, why):
    """The rule is not vacuous: a copy of the package with one forbidden import fails it."""
    import shutil

    copy = tmp_path / "gitckpt"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    where = copy / ("mcp/text.py" if "hooks" in planted else "core/ids.py")
    where.write_text(where.read_text() + "\n" + planted)
    found = violations(copy)
    assert any(why in v for v in found), found


def test_an_import_loop_is_caught(tmp_path):
    import shutil

    copy = tmp_path / "gitckpt"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "core" / "ids.py").write_text((copy / "core" / "ids.py").read_text()
                                          + "\ndef f():\n    from gitckpt.core import paths\n")
    paths = copy / "core" / "paths.py"
    paths.write_text(paths.read_text() + "\nfrom gitckpt.core import ids  # noqa\n")
    assert any(v.startswith("import loop:") and "gitckpt.core.ids" in v
               for v in violations(copy))


PAGE = PACKAGE.parent / "docs" / "architecture.md"


def test_the_architecture_page_draws_the_layers_in_order():
    """The diagram of docs/architecture.md, top to bottom, is LAYERS reversed."""
    block = PAGE.read_text().split("## Layers", 1)[1].split("```")[1]
    drawn = [re.split(r"\s{2,}", line.strip())[0].replace(" | ", "|")
             for line in block.strip().splitlines()]
    assert drawn == LAYERS[::-1]


def test_the_architecture_page_names_every_module():
    """Each module has a line in the page's tables, and the page names no module that is gone."""
    tables = PAGE.read_text().split("## Modules", 1)[1]
    named = set(re.findall(r"`((?:[a-z_]+/)+[a-z_0-9]+\.py)`", tables))
    modules = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
               if p.name != "__init__.py" and len(p.relative_to(PACKAGE).parts) > 1}
    assert named == modules, (sorted(modules - named), sorted(named - modules))


def test_each_hook_event_is_one_service_call():
    """A hook's action for each event calls one function of service/events and nothing else
    of the service: the "is a task active?" question is the service's, asked once."""
    tree = ast.parse((PACKAGE / "hooks" / "run.py").read_text())
    actions = next(n for n in tree.body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "_ACTIONS" for t in n.targets))
    names = [v.id for v in actions.value.values]  # type: ignore[attr-defined]
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert len(names) == 5
    for name in names:
        calls = [c.func for c in ast.walk(funcs[name]) if isinstance(c, ast.Call)
                 and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
                 and c.func.value.id in ("events", "service", "api")]
        assert len(calls) == 1, (name, [ast.unparse(c) for c in calls])
        assert ast.unparse(calls[0]).startswith("events."), (name, ast.unparse(calls[0]))


def test_the_tests_mirror_the_packages():
    """Each test module sits in the folder of the layer it tests (tests/store/, tests/cli/,
    ...); only the checks of the project as a whole sit in tests/ itself, and the real hosts'
    sessions, which test every layer at once, in tests/hosts/."""
    tests = Path(__file__).resolve().parent
    layers = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert folders <= layers | {"hosts"}, sorted(folders - layers)
    whole = {p.name for p in tests.glob("test_*.py")}
    assert whole == {"test_architecture.py", "test_docs.py", "test_packaging.py",
                     "test_types.py"}, sorted(whole)
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), "two test modules of one name (pytest's prepend mode)"


def test_no_test_asserts_a_wall_clock_limit():
    """A limit in seconds fails on a loaded machine and proves nothing on a fast one: tests
    count work; speed is bench/'s, as ratios in one interleaved run."""
    import re

    tests = Path(__file__).resolve().parent
    limit = re.compile(r"assert .*(\b(took|elapsed|worst)\b|(monotonic|perf_counter)\(\) - "
                       r"\w+) *<")
    found = [f"{p.relative_to(tests)}:{n}" for p in tests.rglob("*.py")
             for n, line in enumerate(p.read_text().splitlines(), 1) if limit.search(line)]
    assert not found, found

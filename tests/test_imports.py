"""The package's layering: no import cycle among its subpackages, and no module importing the
private module of another subpackage (subpackages meet only through their `__init__`)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "backchannel"
PACKAGE = "backchannel"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[str]:
    """Every backchannel module a file imports, at any depth (lazy imports count too)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")]


def _subpackage(module: str) -> str:
    """The top-level unit a module belongs to: `backchannel.judges`, or a top-level module."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _modules() -> dict[str, list[str]]:
    return {_module_name(p): _imports(p) for p in sorted(SOURCE.rglob("*.py"))}


def _is_private(module: str) -> bool:
    return any(part.startswith("_") and part != "__init__" for part in module.split(".")[1:])


def _owner(module: str) -> str:
    """The package whose private module `module` is: everything before its first private part."""
    parts = module.split(".")
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_"):
            return ".".join(parts[:index])
    return module


def private_imports(modules: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where a module reaches into a private module of a package it
    does not belong to."""
    known = set(modules)
    found = []
    for importer, imported in ((m, i) for m, names in modules.items() for i in names):
        if imported not in known or not _is_private(imported):
            continue
        owner = _owner(imported)
        if owner == PACKAGE:
            continue  # top-level private modules (backchannel._sqlite) are the package's own
        if importer != owner and not importer.startswith(owner + "."):
            found.append((importer, imported))
    return found


def subpackage_graph(modules: dict[str, list[str]]) -> nx.DiGraph:
    graph = nx.DiGraph()
    known = set(modules)
    for importer, names in modules.items():
        for imported in names:
            if imported not in known:
                continue
            a, b = _subpackage(importer), _subpackage(imported)
            if a != b and PACKAGE not in (a, b):
                graph.add_edge(a, b)
    return graph


def test_no_module_imports_another_packages_private_module() -> None:
    assert private_imports(_modules()) == []


def test_no_import_cycle_among_subpackages() -> None:
    graph = subpackage_graph(_modules())
    assert graph.number_of_nodes() > 5  # the check sees the package
    assert list(nx.simple_cycles(graph)) == []


def test_the_checks_catch_a_cycle_and_a_private_import() -> None:
    modules = {
        "backchannel.a": [],
        "backchannel.a._x": ["backchannel.b._y"],
        "backchannel.b": [],
        "backchannel.b._y": ["backchannel.a"],
    }
    assert private_imports(modules) == [("backchannel.a._x", "backchannel.b._y")]
    assert list(nx.simple_cycles(subpackage_graph(modules))) != []


def test_nothing_below_the_front_door_imports_it() -> None:
    """Modules read the version from `backchannel._version`; taking a name from the front door
    (`import backchannel`, `from backchannel import X` for a non-module X) would tie every
    layer to it."""
    taking = {m: _front_door_names(m) for m in _modules() if m != PACKAGE}
    assert {m: names for m, names in taking.items() if names} == {}


def _front_door_names(module: str) -> list[str]:
    """The names a module takes from the front door itself (not its submodules)."""
    path = SOURCE.parent / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = SOURCE.parent / module.replace(".", "/") / "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name == PACKAGE]
        elif isinstance(node, ast.ImportFrom) and node.module == PACKAGE and node.level == 0:
            found += [
                a.name
                for a in node.names
                if not (SOURCE / f"{a.name}.py").exists() and not (SOURCE / a.name).is_dir()
            ]
    return found


def test_the_package_ships_its_type_information() -> None:
    assert (SOURCE / "py.typed").is_file()


# Module-level cycles ---------------------------------------------------------------------------
# A lazy import inside a function hides a cycle rather than removing it, so imports at any depth
# count; only imports under `if TYPE_CHECKING:` (never executed) are left out.


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _executed_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run (at module level or in a function), not the ones
    under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack += node.orelse
            continue
        stack += list(ast.iter_child_nodes(node))
    return found


def _exports(path: Path, package: str) -> dict[str, str]:
    """What a package's `__init__` takes each name from: its imports (TYPE_CHECKING ones too)
    and its `lazy_exports` table."""
    names: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {alias.asname or alias.name: node.module for alias in node.names}
        is_table = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "lazy_exports"
            and len(node.args) == 2
            and isinstance(node.args[1], ast.Dict)
        )
        if is_table:
            assert isinstance(node, ast.Call) and isinstance(node.args[1], ast.Dict)
            for key, value in zip(node.args[1].keys, node.args[1].values, strict=True):
                assert isinstance(key, ast.Constant) and isinstance(value, ast.Tuple)
                target = package + key.value if key.value.startswith(".") else key.value
                names |= {str(e.value): target for e in value.elts if isinstance(e, ast.Constant)}
    return names


def module_graph(source: Path = SOURCE) -> nx.DiGraph:
    """Module -> module it imports when it runs. `from P import N` is an edge to the submodule
    P.N, else to P and to the module P's `__init__` takes N from (a lazy export is imported on
    first use, which is an import all the same)."""
    files = {_module_name_in(p, source): p for p in sorted(source.rglob("*.py"))}
    exports = {m: _exports(p, m) for m, p in files.items() if p.name == "__init__.py"}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for module, path in files.items():
        for node in _executed_imports(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif node.module and node.level == 0:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    if submodule in files:
                        targets.append(submodule)
                    else:
                        targets.append(node.module)
                        targets.append(exports.get(node.module, {}).get(alias.name, node.module))
            graph.add_edges_from((module, t) for t in targets if t in files and t != module)
    return graph


def _module_name_in(path: Path, source: Path) -> str:
    parts = path.relative_to(source.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _cycles(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(cycle) for cycle in nx.simple_cycles(graph))


def test_no_import_cycle_among_modules() -> None:
    graph = module_graph()
    assert graph.number_of_edges() > 200  # the check sees the package's imports
    assert _cycles(graph) == []


def test_the_cycle_check_sees_lazy_and_exported_imports_but_not_type_checking(
    tmp_path: Path,
) -> None:
    package = tmp_path / "backchannel"
    (package / "engine").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "engine" / "__init__.py").write_text(
        "from backchannel._lazy import lazy_exports\n"
        "__getattr__, __dir__ = lazy_exports(globals(), {'._room': ('Room',)})\n"
    )
    (package / "engine" / "_room.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from backchannel.engine._talk import Talk\n"
    )
    (package / "engine" / "_talk.py").write_text(
        "def room():\n    from backchannel.engine import Room\n"
    )
    graph = module_graph(package)
    assert _cycles(graph) == []  # _room -> _talk is for the type checker only
    (package / "engine" / "_room.py").write_text("from backchannel.engine import _talk\n")
    assert _cycles(module_graph(package)) == [
        ["backchannel.engine._room", "backchannel.engine._talk"]
    ]


# Generic layers know no particular paradigm -----------------------------------------------------

GENERIC = (
    "view",
    "backends",
    "cli",
    "judges",
    "report",
    "analysis",
    "engine",
    "store",
    "experiment",
    "planning",
)
BUILT_IN_PARADIGMS = ("peer_pressure", "testimony", "dyad", "council", "discussion")


def _generic_modules() -> list[Path]:
    return sorted(p for layer in GENERIC for p in (SOURCE / layer).rglob("*.py"))


def paradigms_named(path: Path) -> set[str]:
    """The built-in paradigms a module imports (at any depth, type-only imports too) or names
    by module path in a string (an `importlib` target)."""
    found: set[str] = set()
    prefixes = {f"{PACKAGE}.paradigms.{name}": name for name in BUILT_IN_PARADIGMS}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        for name in names:
            found |= {p for prefix, p in prefixes.items() if name.startswith(prefix)}
    return found


@pytest.mark.parametrize("path", _generic_modules(), ids=lambda path: str(path.relative_to(SOURCE)))
def test_a_generic_layer_imports_no_particular_paradigm(path: Path) -> None:
    assert paradigms_named(path) == set()


def test_the_generic_layers_are_all_there() -> None:
    assert all((SOURCE / layer / "__init__.py").is_file() for layer in GENERIC)
    assert len(_generic_modules()) > 100


def test_the_paradigm_check_sees_imports_and_module_paths(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from backchannel.paradigms.dyad import Dyad\n"
        "def f():\n    import backchannel.paradigms.council._view\n"
        "TARGET = 'backchannel.paradigms.testimony:Testimony'\n"
        "from backchannel.paradigms import Paradigm\n"
    )
    assert paradigms_named(module) == {"dyad", "council", "testimony"}


LAYERS = (
    ("cli", "testing"),
    ("orchestration",),
    ("view", "interop", "experiment"),
    ("paradigms",),
    ("judges", "report", "store", "planning"),
    ("analysis", "datasets"),
    ("engine",),
    ("backends",),
)
"""docs/architecture.md's layers, top first: a subpackage imports only the lines below its own
(the top-level modules, errors and seeding are below them all)."""


def test_each_layer_imports_only_the_layers_below_it() -> None:
    rank = {f"{PACKAGE}.{name}": index for index, line in enumerate(LAYERS) for name in line}
    graph = subpackage_graph(_modules())
    assert set(rank) <= set(graph)
    upward = [(a, b) for a, b in graph.edges if a in rank and b in rank and rank[b] <= rank[a]]
    assert upward == []

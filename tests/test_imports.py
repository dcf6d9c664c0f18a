"""The package's layering: no import cycle among its subpackages, and no module importing the
private module of another subpackage (subpackages meet only through their `__init__`)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

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
            continue  # top-level private modules (backchannel._runner) are the package's own
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

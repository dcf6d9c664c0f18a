"""The backends know no paradigm: no module imports one or names a built-in one, so what
`sim/population` answers comes from the paradigms' own rules."""

from __future__ import annotations

import ast
from pathlib import Path

BACKENDS = Path(__file__).resolve().parents[2] / "src" / "backchannel" / "backends"
PARADIGMS = ("peer_pressure", "dyad", "council", "discussion", "testimony")
UPPER = (
    "backchannel.paradigms",
    "backchannel.datasets",
    "backchannel.judges",
    "backchannel.engine",
)


def test_no_backend_module_imports_a_layer_above_it() -> None:
    for path in sorted(BACKENDS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(UPPER), (path.name, node.module)
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith(UPPER) for a in node.names), path.name


def test_no_backend_module_names_a_paradigm() -> None:
    for path in sorted(BACKENDS.glob("*.py")):
        text = path.read_text(encoding="utf-8").lower()
        named = {name for name in PARADIGMS if name in text}
        assert not named, (path.name, named)

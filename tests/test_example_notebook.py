"""The example notebook runs top to bottom in a real kernel (nbclient) on `sim/population`: the
run shows its summary, the headline and the sections come back as DataFrames, the report is
written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "notebook.ipynb"
pytestmark = pytest.mark.slow


def test_the_example_notebook_executes(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    parameters = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    parameters.source = parameters.source.replace(
        'Path("peer_pressure.yaml")',
        f"Path({json.dumps(str(NOTEBOOK.parent / 'peer_pressure.yaml'))})",
    ).replace('Path("runs/notebook-peer-pressure")', f"Path({json.dumps(str(tmp_path / 'run'))})")
    assert str(tmp_path) in parameters.source
    NotebookClient(notebook, timeout=600, kernel_name="python3").execute(cwd=str(tmp_path))
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o.data["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("backchannel run peer-pressure" in h and "12 done" in h for h in html)
    assert any("FPI k=1" in h for h in html)  # the headline's layout
    assert any("fpi_low" in h for h in html)  # a section as a DataFrame
    assert any("inside" in h for h in html)  # the study comparison
    assert (tmp_path / "run" / "report" / "report.html").exists()

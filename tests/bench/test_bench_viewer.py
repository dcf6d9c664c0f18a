"""The viewer benchmark's --quick workload runs end to end and measures what it says."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.slow
def test_viewer_bench_quick_measures_both_sizes() -> None:
    spec = importlib.util.spec_from_file_location("bench_viewer", BENCH / "viewer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    result = module.main(10, 30, 3)
    small, large = result["rounds"]
    assert (small.conversations, large.conversations) == (10, 30)
    assert len(small.conversation_api_ms) == len(large.conversation_api_ms) == 3
    for value in (small.first_page_api_s, large.search_api_s, large.rss_mib, result["size_mib"]):
        assert math.isfinite(value) and value > 0
    testimony = result["testimony"]  # conversations opened with their citation graph
    assert testimony.conversations == 10 and len(testimony.conversation_api_ms) == 3
    assert testimony.edges > 0

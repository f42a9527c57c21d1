"""The CI-sized benchmark suite runs end to end and records every engine."""

from __future__ import annotations

import json

import pytest

from toposolve.analysis.bench import SUITES, run_suite
from toposolve.core.errors import InputError
from toposolve.report.bench_table import bench_table


def test_small_suite_writes_a_record(tmp_path, capsys):
    out = tmp_path / "small.json"
    assert run_suite("small", output=str(out), show=lambda r: print(bench_table(r))) == 0
    record = json.loads(out.read_text())
    assert record["suite"] == "small"
    assert len(record["records"]) == len(SUITES["small"].cases)
    for rec in record["records"]:
        h, c = rec["engines"]["volcano"], rec["engines"]["cpsat"]
        assert c["status"] in {"OPTIMAL", "FEASIBLE", "FALLBACK"}
        # CP-SAT is warm-started from the heuristic and never returns less on the first stage
        assert c["objective_stages"]["placed"] >= h["objective_stages"]["placed"]
    assert "superpod-64-s0" in capsys.readouterr().out


def test_unknown_suite_is_an_input_error():
    with pytest.raises(InputError, match="unknown suite"):
        run_suite("huge")

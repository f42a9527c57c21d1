"""SolveStatus: every status a solve, a stage or a plan has, as the strings plans carry."""

from __future__ import annotations

import json

from toposolve.core.status import SolveStatus


def test_the_values_are_the_names_plans_carry():
    assert [s.value for s in SolveStatus] == [
        "OPTIMAL", "FEASIBLE", "INFEASIBLE", "UNKNOWN", "MODEL_INVALID", "FALLBACK",
    ]
    assert all(s == s.name and str(s) == s.name and f"{s}" == s.name for s in SolveStatus)
    assert json.dumps({"status": SolveStatus.FALLBACK}) == '{"status": "FALLBACK"}'
    assert SolveStatus("OPTIMAL") is SolveStatus.OPTIMAL


def test_found_and_usable():
    assert {s for s in SolveStatus if s.found} == {SolveStatus.OPTIMAL, SolveStatus.FEASIBLE}
    assert {s for s in SolveStatus if s.usable} == {
        SolveStatus.OPTIMAL, SolveStatus.FEASIBLE, SolveStatus.FALLBACK,
    }


def test_yaml_writes_a_status_as_its_name():
    import yaml

    assert yaml.safe_dump({"status": SolveStatus.OPTIMAL}) == "status: OPTIMAL\n"

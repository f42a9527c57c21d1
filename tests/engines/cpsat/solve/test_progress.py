"""Progress a person can follow (issue 13): user units, heartbeats, the final line."""

from __future__ import annotations

import time

from toposolve.core.problem import compile_problem
from toposolve.engines.contract import ProgressEvent
from toposolve.engines.cpsat.solve.progress import Reporter, StageReader
from toposolve.generate import generate
from toposolve.policy.objective import dominance_weights
from toposolve.report.progress import stages_line
from toposolve.solve import solve


def _problem():
    return compile_problem(generate("superpod", nodes=32, load=1.3, seed=1))


def test_placed_reads_as_accelerators_per_priority_with_the_gap_where_they_differ():
    reader = StageReader(_problem())
    levels = reader.units
    weights = dominance_weights(levels)
    top, *rest = sorted(levels, reverse=True)
    low = rest[-1]
    # everything at the top level, 8 GPUs at the lowest; the bound allows 16 there
    value = weights[top] * levels[top] + weights[low] * 8
    text, gap = reader.read("placed", value, value + 8 * weights[low])
    assert f"priority {top}: {levels[top]:,}" in text
    assert f"priority {low}: 8" in text
    assert f"priority {low} bound 16, gap 100.0 %" in text
    assert gap == 1.0
    # a loose bound is every level full down to where it falls short
    text, _ = reader.read("placed", value, 10.0**30)
    assert f"priority {rest[0]} bound {levels[rest[0]]:,}" in text
    assert reader.read("placed", value, float(value)) == (text.split(";")[0] + "; proven", 0.0)


def test_other_stages_read_in_their_units():
    reader = StageReader(_problem())
    assert reader.read("spread", 12, 9.0) == ("12 tiers of spread, bound 9, gap 25.0 %", 0.25)
    assert reader.read("fragmentation", 3, None) == ("3 leaf domains broken", None)
    assert reader.read("spread", None, None)[0] == "tiers of spread: no solution yet"


def test_the_heartbeat_speaks_when_nothing_else_does():
    events: list[ProgressEvent] = []
    reporter = Reporter(events.append, StageReader(_problem()), time.perf_counter(), interval=0.05)
    with reporter:
        reporter.set_phase("building the model")
        time.sleep(0.4)
    beats = [e for e in events if e.kind == "status"]
    assert beats and all("building the model" in e.text for e in beats)


def test_a_solve_reports_every_stage_and_the_final_line_has_each_gap():
    events: list[ProgressEvent] = []
    plan = solve(
        generate("superpod", nodes=32, load=1.3, seed=1),
        "cpsat",
        time_limit=10,
        progress=events.append,
    )
    ended = [e for e in events if e.kind == "stage"]
    assert [e.stage for e in ended] == [s["stage"] for s in plan.stats["stages"]]
    assert all(e.text.startswith("[") and e.stage in e.text for e in ended)
    assert all("gap" in s for s in plan.stats["stages"])
    line = stages_line(f"cpsat {plan.status}", plan.stats["stages"])
    assert line.startswith("cpsat OPTIMAL: placed OPTIMAL, spread OPTIMAL")


def test_a_count_never_reads_a_negative_bound():
    """Issue 21 §4: "693 tiers of spread, bound -4,527, gap 753.2 %"."""
    reader = StageReader(_problem())
    assert reader.read("spread", 693, -4527.0) == ("693 tiers of spread, bound 0, gap 100.0 %",
                                                   1.0)


def test_the_first_line_comes_at_once_and_stages_start_from_the_warm_starts_value():
    """Issue 21 §4: the first line before the mirror runs; each phase said when it starts; a
    stage shows the value it starts from instead of "no solution yet"."""
    events: list[ProgressEvent] = []
    solve(generate("superpod", nodes=32, load=1.3, seed=1), "cpsat", time_limit=10,
          progress=events.append)
    assert events[0].kind == "status" and "warm start: the volcano mirror's plan" in events[0].text
    assert events[0].elapsed < 2.0
    phases = [e.text.split("] ", 1)[1] for e in events if e.kind == "status" and not e.stage]
    assert "building the model" in phases and "checking the warm start" in phases
    assert not any("no solution yet" in e.text for e in events)

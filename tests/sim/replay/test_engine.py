"""How a replay calls an engine: the wall-clock deadline per cycle, and what was cut short."""

from __future__ import annotations

import time

import pytest

from toposolve.core.errors import InputError
from toposolve.sim.replay import engine as replay_engine
from toposolve.sim.replay.engine import cycle_solver
from toposolve.sim.replay.summary import summarise


def test_wall_factor_moves_the_deadline_out(monkeypatch):
    seen = []
    monkeypatch.setattr(
        replay_engine,
        "solve_problem",
        lambda problem, engine, profile, options: seen.append(options),
    )
    before = time.perf_counter()
    cycle_solver("cpsat", None, time_limit=2.0, seed=0, evict=None, wall_factor=30)("problem")
    cycle_solver("cpsat", None, time_limit=2.0, seed=0, evict=None)("problem")
    moved, plain = seen
    # the time limit counts from 58 s later: the wall-clock deadline is 30 × 2 s away
    assert before + 58 <= moved.started <= time.perf_counter() + 58
    assert plain.started is None  # solve_problem sets it to its own start
    assert moved.time_limit == plain.time_limit == 2.0  # the deterministic budget is unchanged


def test_wall_factor_below_one_is_refused():
    with pytest.raises(InputError, match="at least 1"):
        cycle_solver("cpsat", None, time_limit=2.0, seed=0, evict=None, wall_factor=0.5)


def test_summary_counts_cycles_cut_short_and_by_the_wall_clock():
    cycles = [
        {"status": "OPTIMAL", "seconds": 0.1, "cut_short": []},
        {"status": "FEASIBLE", "seconds": 2.0, "cut_short": ["spread not searched"]},
        {
            "status": "FEASIBLE",
            "seconds": 2.0,
            "cut_short": [
                "placed stopped by the wall clock before its deterministic budget (may differ between runs)"
            ],
        },
        {"status": "FALLBACK", "seconds": 2.0, "cut_short": ["building the model (at 2.1 s)"]},
        {"status": "FEASIBLE", "seconds": 0.1},  # a record written before cut_short was recorded
    ]
    summary = summarise([], [], cycles, end=0.0)
    assert summary["cycles_cut_short"] == 3
    assert summary["cycles_wall_clock"] == 2

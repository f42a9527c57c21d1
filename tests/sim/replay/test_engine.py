"""How a replay calls an engine: the wall-clock deadline per cycle, and what was cut short."""

from __future__ import annotations

import time

import pytest

from toposolve.core.errors import InputError
from toposolve.sim.replay import engine as replay_engine
from toposolve.sim.replay.engine import cycle_solver
from toposolve.sim.replay.summary import summarise


def test_wall_factor_moves_the_wall_clock_cap_out(monkeypatch):
    seen = []
    monkeypatch.setattr(
        replay_engine,
        "solve_problem",
        lambda problem, engine, profile, options: seen.append(options),
    )
    before = time.perf_counter()
    cycle_solver("cpsat", None, time_limit=2.0, seed=0, evict=None, wall_factor=30)("problem")
    cycle_solver("cpsat", None, time_limit=2.0, seed=0, evict=None)("problem")
    moved, plain = (options.deadline for options in seen)
    # the limit counts from now; only the wall clock is 30 × 2 s away
    assert before <= moved.started <= plain.started <= time.perf_counter()
    assert moved.wall_cap == 60.0 and plain.wall_cap == 2.0
    assert moved.limit == plain.limit == 2.0  # the deterministic budget is unchanged
    assert moved.deterministic and plain.deterministic
    assert moved.remaining(used=0.5) == 1.5 and not moved.expired()


def test_each_cycle_gets_a_fresh_deadline(monkeypatch):
    seen = []
    monkeypatch.setattr(
        replay_engine,
        "solve_problem",
        lambda problem, engine, profile, options: seen.append(options.deadline),
    )
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None, deterministic=False)
    solve("first")
    solve("second")
    first, second = seen
    assert first.started <= second.started and first is not second
    assert first.limit == 30.0  # the profile's limit
    assert not first.deterministic  # as asked, whatever the engine


def test_wall_factor_below_one_is_refused():
    with pytest.raises(InputError, match="at least 1"):
        cycle_solver("cpsat", None, time_limit=2.0, seed=0, evict=None, wall_factor=0.5)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"wall_factor": float("inf")}, "wall_factor"),
        ({"wall_factor": float("nan")}, "wall_factor"),
        ({"time_limit": float("nan")}, "time_limit"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**40}, "seed"),
    ],
)
def test_bad_numbers_are_refused_before_any_cycle(kwargs, field):
    options = {"time_limit": 2.0, "seed": 0, "evict": None, **kwargs}
    with pytest.raises(InputError) as info:
        cycle_solver("volcano", None, **options)
    assert info.value.field == field


def test_summary_counts_cycles_cut_short_and_by_the_wall_clock():
    cycles = [
        {"status": "OPTIMAL", "seconds": 0.1, "cut_short": []},
        {"status": "FEASIBLE", "seconds": 2.0, "cut_short": ["spread not searched"]},
        {
            "status": "FEASIBLE",
            "seconds": 2.0,
            "cut_short": [
                "placed stopped by the wall clock before its deterministic budget"
                " (may differ between runs)"
            ],
        },
        {"status": "FALLBACK", "seconds": 2.0, "cut_short": ["building the model (at 2.1 s)"]},
        {"status": "FEASIBLE", "seconds": 0.1},  # a record written before cut_short was recorded
    ]
    summary = summarise([], [], cycles, end=0.0)
    assert summary["cycles_cut_short"] == 3
    assert summary["cycles_wall_clock"] == 2

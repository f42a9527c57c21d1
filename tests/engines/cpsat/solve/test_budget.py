"""Time limits that hold and runs that repeat (issue 13): the deadline, what was cut short,
deterministic search by default."""

from __future__ import annotations

import time

from cpsat_support import solve_checked

from toposolve.core.deadline import Deadline
from toposolve.generate import generate
from toposolve.policy.profiles import load_profile
from toposolve.report.progress import cut_short_line
from toposolve.solve import solve


def overloaded():
    """superpod, 32 nodes, load 1.3, seed 1: CP-SAT places more GPUs than the heuristic."""
    return generate("superpod", nodes=32, load=1.3, seed=1)


def test_the_default_is_deterministic_and_repeats_plan_and_reasons():
    assert load_profile(None).solver.deterministic
    first = solve(overloaded(), "cpsat", time_limit=10)
    again = solve(overloaded(), "cpsat", time_limit=10)
    assert first.to_dict()["bindings"] == again.to_dict()["bindings"]
    assert [(j.job, j.reason) for j in first.jobs] == [(j.job, j.reason) for j in again.jobs]
    assert [
        (s["status"], s["objective"], s["deterministic_time"]) for s in first.stats["stages"]
    ] == [(s["status"], s["objective"], s["deterministic_time"]) for s in again.stats["stages"]]


def test_a_deadline_passed_before_the_build_returns_the_warm_start_and_says_so():
    # the limit counts from the deadline's start: here it ran out before the model was built
    ran_out = Deadline(1, time.perf_counter() - 2, deterministic=True)
    solved = solve_checked(overloaded(), time_limit=1, deadline=ran_out)
    assert solved.result.status == "FALLBACK"
    cut = solved.result.stats["cut_short"]
    assert cut and cut[0].startswith("model build")
    assert cut_short_line(cut).startswith("time limit: cut short: model build")


def test_the_warm_start_counts_inside_the_limit():
    # toposolve.solve passes its own start: a solve with no time left after the heuristic
    # builds nothing and still returns a checked plan
    plan = solve(overloaded(), "cpsat", time_limit=1e-6)
    assert plan.status == "FALLBACK"
    assert any(c.startswith("model build") for c in plan.stats["cut_short"])


def test_nothing_is_cut_short_when_the_search_finishes():
    solved = solve_checked(overloaded(), time_limit=10)
    assert solved.result.status == "OPTIMAL"
    assert solved.result.stats["cut_short"] == []
    assert cut_short_line([]) is None

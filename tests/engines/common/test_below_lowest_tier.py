"""A hard limit below the lowest HyperNode tier (``highestTierAllowed: 0``) holds on no node:
the compiled problem refuses the job (``Problem.refused_jobs``), so every engine leaves it
pending with one reason and no engine emits a plan the checker rejects."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, instance, nodes

import toposolve
from toposolve.core.instance import NetworkTopology
from toposolve.core.problem import compile_problem
from toposolve.core.refusal import NEVER_PLACED
from toposolve.engines.common.missing_level import never_placed_reason
from toposolve.engines.registry import engine_names


def two_jobs():
    below = NetworkTopology(mode="hard", highest_tier_allowed=0)
    return instance(nodes(8), example1_tree(), [gang("low", 2, topology=below),
                                                gang("fine", 2)])


def test_the_job_is_refused_with_the_lowest_tier_named():
    problem = compile_problem(two_jobs())
    refusal = problem.refused_jobs[0]
    assert refusal.kind == NEVER_PLACED
    lowest = problem.topology.min_tier
    assert lowest >= 1
    assert refusal.why == f"no HyperNode has tier ≤ 0 (the lowest tier is {lowest})"
    assert 1 not in problem.refused_jobs


def test_a_soft_limit_below_the_lowest_tier_refuses_nothing():
    soft = NetworkTopology(mode="soft", highest_tier_allowed=0)
    problem = compile_problem(instance(nodes(8), example1_tree(), [gang("s", 2, topology=soft)]))
    assert problem.refused_jobs == {}


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_every_engine_leaves_it_pending_and_places_the_other(engine):
    plan = toposolve.solve(two_jobs(), engine)  # checked inside
    by_job = {j.job: j for j in plan.jobs}
    assert not by_job["default/low"].placed and by_job["default/fine"].placed
    why = compile_problem(two_jobs()).refused_jobs[0].why
    assert by_job["default/low"].reason == never_placed_reason(why)

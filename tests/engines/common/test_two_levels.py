"""The stricter two-level stand-in for deeper gang trees (the Volcano mirror's way to honour
them)."""

from __future__ import annotations

from builders import example1_tree, gang, hard, instance, nested, nodes, partitioned

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.common.two_levels import within_two_levels


def test_depth_2_problems_are_returned_as_they_are():
    job = partitioned(
        "pj",
        partitions=2,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
    )
    p = compile_problem(instance(nodes(8), example1_tree(), [job, gang("g", 2)]))
    assert within_two_levels(p) is p


def test_the_job_takes_the_lowest_hard_tier_and_every_subjob_below_a_gang_node():
    job = nested(
        "t",
        {"A": ["a0", "a1"], "B": ["b0"]},
        group_topology=hard(2),
        job_topology=hard(3),
        min_members={"A": 1},
    )
    p = compile_problem(instance(nodes(8), example1_tree(), [job]))
    two = within_two_levels(p)
    cj = two.jobs[0]
    assert (cj.limit.hard, cj.limit.tier, cj.min_available) == (True, 2, 3)
    assert cj.min_subjobs == {0: 1, 1: 1, 2: 1} and two.gang_nodes == [] and two.max_gang_depth == 2
    assert p.jobs[0].limit.tier == 3 and p.gang_nodes  # the original is untouched


def test_volcano_places_a_depth_3_job_with_a_checked_plan():
    job = nested(
        "t", {"A": ["a0", "a1"], "B": ["b0", "b1"]}, group_topology=hard(2), min_members={"A": 1}
    )
    plan = toposolve.solve(
        instance(nodes(8), example1_tree(), [job]), "volcano"
    )  # raises if invalid
    assert len(plan.bindings) == 4


def test_volcano_leaves_pending_what_the_stand_in_cannot_fit():
    """Conservative: A and B each fit a tier-1 pair, but the stand-in wants all four pods in one."""
    job = nested("t", {"A": ["a0", "a1"], "B": ["b0", "b1"]}, group_topology=hard(1))
    inst = instance(nodes(8), example1_tree(), [job])
    assert toposolve.solve(inst, "volcano").bindings == []
    assert len(toposolve.solve(inst, "kai").bindings) == 4

"""The comm stage's warm start (:mod:`toposolve.engines.cpsat.solve.comm_start`): same pods,
layout jobs on the fewest leaves, a valid plan."""

from __future__ import annotations

from builders import gang, hard, inner, instance, leaf, nodes, on

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.solve.comm_start import fewest_leaves_start
from toposolve.policy.comm_stage import comm_value

LEAVES = ["L0", "L1", "L2"]


def busy_spine(layout_a: str | None = "tp=8,pp=2,dp=2", topology=None):
    """Three 4-node leaves under one spine, two nodes of L0 and L1 running; ``a`` pending."""
    tree = [leaf(name, [f"node{4 * k + i}" for i in range(4)]) for k, name in enumerate(LEAVES)]
    tree.append(inner("S", LEAVES, 2))
    a = gang("a", 4, topology=topology)
    a.parallelism = layout_a
    return instance(nodes(12), tree, [gang("bg", 4, running=on(0, 1, 4, 5)), a])


def spread_plan(problem) -> Assignment:
    """``a`` on the four fragment nodes (what filling fragments first gives)."""
    plan = Assignment()
    for n in (2, 3, 6, 7):
        plan.add(problem.jobs[1].groups[0], n, 1)
    return plan


def test_the_layout_job_moves_to_the_free_leaf_and_the_plan_is_valid():
    inst = busy_spine()
    problem = compile_problem(inst)
    start = fewest_leaves_start(problem, spread_plan(problem))
    assert start is not None
    assert start.counts[problem.jobs[1].groups[0]] == {8: 1, 9: 1, 10: 1, 11: 1}
    assert comm_value(problem, start) == 0 < comm_value(problem, spread_plan(problem))
    assert check_plan(inst, to_plan(problem, start, engine="test", status="FEASIBLE")) == []


def test_nothing_to_move_without_a_plain_layout_job():
    for inst in (busy_spine(None), busy_spine(topology=hard(1))):
        problem = compile_problem(inst)
        assert fewest_leaves_start(problem, spread_plan(problem)) is None

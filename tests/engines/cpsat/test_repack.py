"""Re-placing a plan's pods tier-first, best fit (engines/cpsat/repack.py) on seed 000's
Example 1: racks s0 = node0, node1; s1; s2; s3 of 8-GPU nodes."""

from __future__ import annotations

from builders import example1_tree, gang, instance, nodes

from toposolve.engines.assignment import Assignment
from toposolve.engines.cpsat.repack import repack
from toposolve.problem import compile_problem


def per_node(assignment: Assignment, group: int) -> dict[int, int]:
    return {n: c for n, c in assignment.counts.get(group, {}).items() if c}


def test_a_spread_gang_is_packed_into_one_rack_with_the_same_pod_count():
    problem = compile_problem(instance(nodes(8), example1_tree(), [gang("a", 2)]))
    spread = Assignment()
    spread.add(0, 0, 1)
    spread.add(0, 7, 1)
    packed = repack(problem, spread)
    assert sum(per_node(packed, 0).values()) == 2
    assert len({int(problem.topology.node_home[n]) for n in per_node(packed, 0)}) == 1  # one rack


def test_a_job_with_running_pods_stays_beside_them():
    """`a` runs one pod on node5 (rack s2); its new pod goes to node4, the rest of that rack."""
    problem = compile_problem(instance(nodes(8), example1_tree(), [gang("a", 2, running={0: "node5"})]))
    elsewhere = Assignment()
    elsewhere.add(0, 0, 1)
    assert per_node(repack(problem, elsewhere), 0) == {4: 1}


def test_pods_that_no_longer_fit_give_none():
    problem = compile_problem(instance(nodes(2), [], [gang("a", 3)]))
    too_many = Assignment()
    too_many.add(0, 0, 3)  # three 8-GPU pods on two 8-GPU nodes
    assert repack(problem, too_many) is None

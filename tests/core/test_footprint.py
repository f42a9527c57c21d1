"""The domain a job or SubJob occupies after a plan (:mod:`toposolve.core.footprint`).

Cluster: the Example-1 tree (s0..s3 tier 1 with two nodes each, s4 = {s0, s1},
s5 = {s2, s3} tier 2, s6 tier 3).
"""

from __future__ import annotations

from builders import example1_tree, gang, hard, instance, nodes, partitioned

from toposolve.core.assignment import Assignment
from toposolve.core.footprint import Footprint, occupied_domain
from toposolve.core.problem import compile_problem


def problem_with_running_and_pending():
    jobs = [
        gang(
            "r", 4, topology=hard(3), running={0: "node0", 1: "node0", 2: "node1"}
        ),  # 3 of 4 running
        partitioned(
            "p",
            partitions=2,
            size=2,
            job_topology=hard(3),
            partition_topology=hard(1),
            min_available=4,
        ),
    ]
    return compile_problem(instance(nodes(8), example1_tree(), jobs))


def name(problem, h):
    return None if h is None else problem.topology.names[h]


def test_domain_counts_running_pods_and_new_ones():
    problem = problem_with_running_and_pending()
    (g,) = problem.jobs[0].groups
    alone = Footprint.of_jobs(problem, Assignment(), [0])
    assert name(problem, alone.domain([g])) == "s0"
    assert alone.node_counts([g]) == {0: 2, 1: 1}
    new = Assignment(counts={g: {2: 1}})
    after = Footprint.of_jobs(problem, new, [0])
    assert name(problem, after.domain([g])) == "s4"
    assert after.node_counts([g]) == {0: 2, 1: 1, 2: 1}


def test_evicted_pods_leave_the_domain():
    problem = problem_with_running_and_pending()
    (g,) = problem.jobs[0].groups
    moved = Assignment(counts={g: {6: 1}}, evicted=["default/r-worker-0", "default/r-worker-1"])
    footprint = Footprint.of_jobs(problem, moved, [0])
    assert footprint.node_counts([g]) == {1: 1, 6: 1}
    assert name(problem, footprint.domain([g])) == "s6"
    gone = Footprint.of_jobs(
        problem, Assignment(evicted=[f"default/r-worker-{i}" for i in range(3)]), [0]
    )
    assert footprint.domain([g]) is not None and gone.domain([g]) is None


def test_subjob_domain_is_that_of_its_own_pods():
    problem = problem_with_running_and_pending()
    first, second = (problem.subjobs[s].groups for s in problem.jobs[1].subjobs)
    counts = {g: {4: 1} for g in first} | {g: {6: 1} for g in second}
    footprint = Footprint.of_jobs(problem, Assignment(counts=counts), [1])
    assert name(problem, footprint.domain(first)) == "s2"
    assert name(problem, footprint.domain(second)) == "s3"
    assert name(problem, footprint.domain(problem.jobs[1].groups)) == "s5"


def test_occupied_domain_is_the_lowest_hypernode_holding_the_nodes():
    problem = problem_with_running_and_pending()
    assert name(problem, occupied_domain(problem, [4, 4, 5])) == "s2"
    assert name(problem, occupied_domain(problem, [1, 6])) == "s6"
    assert occupied_domain(problem, []) is None

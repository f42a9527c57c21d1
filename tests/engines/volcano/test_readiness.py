"""Gang readiness and SubJob order over the live state (engines/volcano/readiness.py)."""

from __future__ import annotations

from builders import example1_tree, gang, instance, nodes, partitioned

from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.policy.profiles import Profile


def engine_for(jobs):
    problem = compile_problem(instance(nodes(8), example1_tree(), jobs))
    return problem, HeuristicEngine(problem, Profile())


def test_a_gang_is_ready_once_min_available_pods_hold_a_node():
    problem, engine = engine_for([gang("a", 3, min_available=2, running={0: "node0"})])
    gang_ = engine.gang
    assert gang_.job_count(0) == 1 and not gang_.job_ready(0)
    assert gang_.pending_of_group(0) == 2
    engine.state.place(0, 1, 1)
    assert gang_.job_count(0) == 2 and gang_.job_ready(0)
    assert gang_.pending_of_group(0) == 1
    assert gang_.task_counts(0) == {"worker": 2}


def test_a_gang_that_can_never_be_ready_says_why():
    job = partitioned(
        "pj", partitions=2, size=2, job_topology=None, partition_topology=None, min_available=4
    )
    job.subgroup_policies[0].min_sub_groups = 3  # two partitions exist
    problem, engine = engine_for([job])
    assert engine.gang.job_valid(0) == "gang invalid: 2 SubJobs exist but minSubGroups is 3"
    problem, engine = engine_for([gang("a", 2)])
    assert engine.gang.job_valid(0) is None


def test_subjobs_still_required_for_min_partitions_come_first():
    """Three partitions of two pods, minPartitions 2; partition 1 is already full. One more
    partition is required: partition 0 (smaller MatchIndex) goes first, then the rest."""
    job = partitioned(
        "pj",
        partitions=3,
        size=2,
        job_topology=None,
        partition_topology=None,
        min_available=4,
        min_partitions=2,
    )
    problem, engine = engine_for([job])
    part1 = [s for s in problem.jobs[0].subjobs if problem.subjobs[s].id.endswith("-1")][0]
    engine.state.place(problem.subjobs[part1].groups[0], [0], [2])
    order = [problem.subjobs[s].id for s in engine.gang.subjob_order(0)]
    assert order == ["default/pj/t0-0", "default/pj/t0-2"]  # partition 1 has nothing pending
    assert engine.gang.subjob_ready(part1)

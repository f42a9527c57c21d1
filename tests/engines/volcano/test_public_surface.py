"""The heuristic's public surface for the eviction pass: queue order, job order, the job's
minimum request against the live state, and allocation confined to one HyperNode.

Seed 000 Example-1 tree: s0..s3 tier 1 (two nodes of 8 GPUs each), s4 = {s0, s1}, s5 = {s2, s3}
tier 2, s6 tier 3 over both.
"""

from __future__ import annotations

import numpy as np
from builders import GPU, example1_tree, gang, hard, in_queue, nodes

from toposolve.core.instance import Instance, Job, PriorityClass, Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.policy.profiles import Profile
from toposolve.policy.rules import job_minimum_request

CLASSES = [PriorityClass(name="high", value=100), PriorityClass(name="low", value=1)]


def engine_for(jobs, queues=()):
    inst = Instance(
        nodes=nodes(8),
        hypernodes=example1_tree(),
        jobs=jobs,
        queues=list(queues),
        priority_classes=CLASSES,
    )
    return HeuristicEngine(compile_problem(inst), Profile())


def gpus(engine, vector):
    return vector[engine.problem.resource_index[GPU]] / 1000


def test_queue_order_puts_higher_priority_then_smaller_share_then_name_first():
    """Queue b runs 4 of the 64 GPUs against a deserved 16 (share 2); c runs none (share 0)."""
    b_running = in_queue(gang("b-run", 4, running={0: "node0", 1: "node1"}), "b")
    engine = engine_for(
        [
            b_running,
            in_queue(gang("c", 1), "c"),
            in_queue(gang("a", 1), "a"),
            in_queue(gang("z", 1), "z"),
        ],
        queues=[
            Queue(name="a", priority=5),
            Queue(name="b", deserved={GPU: 8}),
            Queue(name="c", deserved={GPU: 8}),
        ],
    )
    assert sorted(["z", "c", "b", "a"], key=engine.queue_order_key) == ["a", "c", "z", "b"]
    assert engine.queue_order_key("b") == (0, 2.0, "b")
    assert engine.queue_order_key("unlisted") == (0, 0.0, "unlisted")


def test_job_order_puts_higher_priority_then_not_ready_then_older_first():
    jobs = [
        gang("young-low", 1, priority_class="low", creation_index=3),
        gang(
            "ready-high",
            2,
            priority_class="high",
            creation_index=0,
            running={0: "node0", 1: "node1"},
        ),
        gang("old-low", 1, priority_class="low", creation_index=1),
        gang("pending-high", 1, priority_class="high", creation_index=2),
    ]
    engine = engine_for(jobs)
    order = sorted(range(len(jobs)), key=engine.job_order_key)
    assert [engine.problem.jobs[j].key for j in order] == [
        "default/pending-high",
        "default/ready-high",
        "default/old-low",
        "default/young-low",
    ]


def test_minimum_request_counts_live_pods_and_min_resources_until_a_hypernode_is_allocated():
    """3 of 4 pods needed, one runs: two pods' GPUs. With PodGroup minResources, those count
    until the job has an allocated HyperNode; then the pods' requests do."""
    running = gang("p", 4, min_available=3, topology=hard(2), running={0: "node0"})
    engine = engine_for([running])
    assert gpus(engine, engine.minimum_request(0)) == 16
    np.testing.assert_array_equal(engine.minimum_request(0), job_minimum_request(engine.problem, 0))

    plain = gang("q", 4, min_available=3, topology=hard(2))
    engine = engine_for([Job(**{**plain.model_dump(), "min_resources": {GPU: 4}})])
    assert gpus(engine, engine.minimum_request(0)) == 4
    engine.job_alloc[0] = engine.problem.topology.index["s4"]
    assert gpus(engine, engine.minimum_request(0)) == 24


def test_allocate_within_places_the_job_inside_the_hypernode_only():
    """Unconfined, the gang would take s0 (first in the tie order); inside s5 it takes s2."""
    engine = engine_for([gang("p", 2, topology=hard(2))])
    topo = engine.problem.topology
    assert engine.allocate_within(0, topo.index["s5"])
    placed = {
        int(n)
        for _, where, counts in engine.state.log
        for n, c in zip(where, counts, strict=True)
        if c
    }
    assert placed == {4, 5}
    assert topo.names[engine.job_alloc[0]] == "s2"
    unconfined = engine_for([gang("p", 2, topology=hard(2))]).run()
    assert unconfined.counts == {0: {0: 1, 1: 1}}


def test_allocate_within_that_fails_rolls_back_its_own_work_only():
    """3 pods of a tier-2 gang cannot fit in tier-1 s0 (two nodes): nothing it tried stays,
    but an eviction made before the call does."""
    busy = gang("busy", 2, running={0: "node2", 1: "node3"})
    engine = engine_for([busy, gang("p", 3, topology=hard(2))])
    engine.state.evict(["default/busy-worker-0"])
    mark, alloc = engine.state.mark(), (dict(engine.job_alloc), dict(engine.subjob_alloc))
    assert not engine.allocate_within(1, engine.problem.topology.index["s0"])
    assert engine.state.mark() == mark and engine.state.evicted_pods() == ["default/busy-worker-0"]
    assert (engine.job_alloc, engine.subjob_alloc) == alloc

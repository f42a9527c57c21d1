"""Bundle order (seed 002 Phase 2): SAFE first, victim priority or queue order, ROI with the 5%
threshold, then the youngest victim job."""

from __future__ import annotations

import numpy as np
from builders import example1_tree, gang, nodes

from toposolve.core.instance import Instance, PriorityClass, Queue
from toposolve.core.problem import RunningPod, compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.engines.volcano.evict.bundles import Bundle, BundleKind
from toposolve.engines.volcano.evict.preempt import EvictionAction, EvictionOutcome
from toposolve.policy.profiles import Profile
from toposolve.policy.rules import RunningPods

PRIORITIES = [
    PriorityClass(name="high", value=100),
    PriorityClass(name="low", value=1),
    PriorityClass(name="lowest", value=0),
]


def action(jobs, mode, queues=()):
    inst = Instance(
        nodes=nodes(8),
        hypernodes=example1_tree(),
        jobs=jobs,
        queues=list(queues),
        priority_classes=PRIORITIES,
    )
    problem = compile_problem(inst)
    engine = HeuristicEngine(problem, Profile())
    return EvictionAction(engine, mode, RunningPods(problem), EvictionOutcome())


def bundle(kind, job, local, global_):
    pod = RunningPod(f"default/j{job}-{kind.name}", job, 0, 0, "worker", 0, 0, 0)
    return Bundle(kind, job, [pod], np.array([0.0, local]), np.array([0.0, global_]))


def order(act, bundles):
    need = np.array([0.0, 100.0])  # (cpu, gpu)
    return [(b.kind.name, b.job) for b in act.sort_bundles(bundles, need, need > 0)]


PREEMPT_JOBS = [
    gang("old", 1, priority_class="low", creation_index=0),
    gang("young", 1, priority_class="low", creation_index=1),
    gang("lowest", 1, priority_class="lowest", creation_index=0),
    gang("urgent", 1, priority_class="high"),
]


def test_preempt_order_priority_before_roi_and_threshold_defers_to_youth():
    act = action(PREEMPT_JOBS, "preempt")
    bundles = [
        bundle(BundleKind.WHOLE, 0, 100, 100),  # old: ROI 1.0
        bundle(BundleKind.WHOLE, 1, 97, 100),  # young: ROI 0.97, within 5% of old
        bundle(BundleKind.WHOLE, 2, 10, 100),  # lowest priority: ROI 0.1
        bundle(BundleKind.SAFE, 0, 10, 0),  # SAFE: first whatever it frees
    ]
    assert order(act, bundles) == [("SAFE", 0), ("WHOLE", 2), ("WHOLE", 1), ("WHOLE", 0)]
    bundles[1] = bundle(BundleKind.WHOLE, 1, 90, 100)  # ROI 0.9: now 10% behind old
    assert order(act, bundles) == [("SAFE", 0), ("WHOLE", 2), ("WHOLE", 0), ("WHOLE", 1)]


def test_reclaim_order_puts_the_most_over_quota_queue_first():
    """Queue `far` holds 4 × 8 GPUs against an explicit deserved 8 (share 4); `near` holds
    2 × 8 against 8 (share 2). far's bundle goes first although its ROI is lower."""
    jobs = [
        gang("far", 4, running={i: f"node{i}" for i in range(4)}).model_copy(
            update={"queue": "far"}
        ),
        gang("near", 2, running={0: "node4", 1: "node5"}).model_copy(update={"queue": "near"}),
        gang("claim", 1).model_copy(update={"queue": "mine"}),
    ]
    queues = [
        Queue(name="far", deserved={"nvidia.com/gpu": 8}),
        Queue(name="near", deserved={"nvidia.com/gpu": 8}),
        Queue(name="mine"),
    ]
    act = action(jobs, "reclaim", queues)
    bundles = [bundle(BundleKind.WHOLE, 1, 100, 100), bundle(BundleKind.WHOLE, 0, 50, 100)]
    assert order(act, bundles) == [("WHOLE", 0), ("WHOLE", 1)]

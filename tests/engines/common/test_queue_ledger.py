"""A queue capability for engines whose scheduler has no Volcano queue (KAI, kube): the ledger
counts running pods, refuses pods past the capability and counts what an engine binds."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, instance, nodes, nodes_of

import toposolve
from toposolve.core.instance import Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.common.queues import QueueLedger


def capped(jobs, gpus=20):
    inst = instance(nodes(8), example1_tree(), jobs)
    return inst.model_copy(update={"queues": [Queue(name="default",
                                                    capability={"nvidia.com/gpu": gpus})]})


def test_running_pods_count_and_pods_past_the_capability_are_refused():
    problem = compile_problem(capped([gang("a", 3, running={0: "node0"})]))
    ledger = QueueLedger(problem)
    g = problem.jobs[0].groups[0]
    assert ledger.overrun(0, [g]) is None  # 8 running + 8
    assert ledger.overrun(0, [g, g]) == ("queue 'default' capability: its pods would request "
                                         "24000m of nvidia.com/gpu, capability is 20000m")
    ledger.take(0, [g])
    assert ledger.overrun(0, [g]) is not None


def test_an_uncapped_queue_refuses_nothing():
    problem = compile_problem(instance(nodes(8), example1_tree(), [gang("a", 30)]))
    ledger = QueueLedger(problem)
    assert ledger.overrun(0, problem.jobs[0].groups * 30) is None


@pytest.mark.parametrize("engine", ["kai", "kube"])
def test_the_job_past_the_capability_stays_pending(engine):
    plan = toposolve.solve(capped([gang("a", 2), gang("b", 2, gpus=4, creation_index=1)]),
                           engine)  # checked inside
    by_job = {j.job: j for j in plan.jobs}
    assert len(nodes_of(plan, "a")) == 2 and not by_job["default/b"].placed
    assert by_job["default/b"].reason.startswith("queue 'default' capability")


def test_kai_grows_an_elastic_job_up_to_the_capability():
    plan = toposolve.solve(capped([gang("e", 4, min_available=1)]), "kai")
    assert len(nodes_of(plan, "e")) == 2  # 16 of 20 GPUs: a third pod would overrun

"""Assignment ↔ Plan: ``from_plan`` inverts ``to_plan`` on every engine's plans, with and
without evictions, and refuses a plan naming what the instance does not have.

Cluster: the Example-1 tree (s0..s3 tier 1 with two nodes of 8 GPUs each, s4 = {s0, s1},
s5 = {s2, s3} tier 2, s6 tier 3).
"""

from __future__ import annotations

import dataclasses

import pytest
from builders import example1_tree, gang, hard, nodes, partitioned

from toposolve.core.assignment import Assignment, from_plan, to_plan
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, PriorityClass
from toposolve.core.plan import Binding, JobPlacement, Plan, SubJobPlacement
from toposolve.core.problem import compile_problem
from toposolve.engines.registry import ENGINES
from toposolve.solve import solve

PRIORITIES = [PriorityClass(name="high", value=100), PriorityClass(name="low", value=1)]


def busy_cluster() -> Instance:
    """A running gang, a tier-1 gang, a partitioned job (policy SubJobs), a job without
    topology and one too large to place."""
    jobs = [
        gang("old", 2, topology=hard(1), running={0: "node0", 1: "node1"}),
        gang("a", 2, topology=hard(1)),
        partitioned(
            "p",
            partitions=2,
            size=2,
            job_topology=hard(2),
            partition_topology=hard(1),
            min_available=4,
        ),
        gang("free", 1, gpus=4),
        gang("huge", 12),
    ]
    return Instance(
        nodes=nodes(8), hypernodes=example1_tree(), jobs=jobs, priority_classes=PRIORITIES
    )


def full_cluster() -> Instance:
    """Every node busy; a high-priority tier-1 gang can run only by preempting a low one."""
    on = lambda *ns: {i: f"node{n}" for i, n in enumerate(ns)}  # noqa: E731
    jobs = [
        gang("peer", 2, priority_class="high", running=on(0, 1)),
        gang("low", 2, priority_class="low", running=on(2, 3)),
        gang("mid", 4, priority_class="low", running=on(4, 5, 6, 7)),
        gang("urgent", 2, priority_class="high", topology=hard(1)),
    ]
    return Instance(
        nodes=nodes(8), hypernodes=example1_tree(), jobs=jobs, priority_classes=PRIORITIES
    )


def round_trip(inst: Instance, plan: Plan) -> Plan:
    problem = compile_problem(inst)
    return to_plan(
        problem,
        from_plan(problem, plan),
        engine=plan.engine,
        status=plan.status,
        objective=plan.objective,
        bound=plan.bound,
        wall_time_s=plan.wall_time_s,
    )


@pytest.mark.parametrize("engine", [e.name for e in ENGINES])
def test_to_plan_of_from_plan_gives_every_engines_plan_back(engine):
    plan = solve(busy_cluster(), engine, time_limit=10)
    if engine == "kube":  # partitions are not expressible in the Workload API: left pending
        assert "sub-gangs" in plan.job("default/p").reason
    else:
        assert plan.job("default/p").placed and plan.job("default/p").subjobs  # SubJob domains
    assert not plan.job("default/huge").placed
    assert round_trip(busy_cluster(), plan) == dataclasses.replace(plan, metrics={})


@pytest.mark.parametrize("engine", ["volcano", "cpsat"])
def test_to_plan_of_from_plan_gives_plans_with_evictions_back(engine):
    plan = solve(full_cluster(), engine, time_limit=10, evict="preempt")
    assert plan.evictions and any(b.nominated for b in plan.bindings)
    assert plan.stats["victims"]
    assert round_trip(full_cluster(), plan) == dataclasses.replace(plan, metrics={})


def test_from_plan_keeps_counts_domains_reasons_evictions_and_nominations():
    inst = full_cluster()
    problem = compile_problem(inst)
    plan = solve(inst, "volcano", evict="preempt")
    assignment = from_plan(problem, plan)
    urgent = next(cj.index for cj in problem.jobs if cj.key == "default/urgent")
    (group,) = problem.jobs[urgent].groups
    assert assignment.counts == {group: {2: 1, 3: 1}}
    assert assignment.nominated_jobs == {urgent}
    assert sorted(assignment.evicted) == ["default/low-worker-0", "default/low-worker-1"]
    assert problem.topology.names[assignment.job_domain[urgent]] == "s1"
    assert "victims" not in assignment.stats


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"bindings": [Binding(pod="default/ghost-worker-0", node="node0")]}, "bindings.pod"),
        ({"bindings": [Binding(pod="default/a-worker-0", node="node99")]}, "bindings.node"),
        ({"evictions": [Binding(pod="default/a-worker-0", node="node0")]}, "evictions.pod"),
        ({"jobs": [JobPlacement(job="default/ghost", placed=False)]}, "jobs.job"),
        ({"jobs": [JobPlacement(job="default/a", placed=True, hypernode="s9")]}, "jobs.hypernode"),
        (
            {
                "jobs": [
                    JobPlacement(
                        job="default/p",
                        placed=True,
                        subjobs=[SubJobPlacement(id="nope", hypernode="s0")],
                    )
                ]
            },
            "jobs.subjobs.id",
        ),
    ],
)
def test_from_plan_refuses_names_the_instance_does_not_have(change, field):
    problem = compile_problem(busy_cluster())
    with pytest.raises(InputError) as error:
        from_plan(problem, Plan(engine="x", status="FEASIBLE", **change))
    assert error.value.field == field


def test_a_reported_domain_above_the_occupied_one_survives_the_round_trip():
    """The mirror may report its AllocatedHyperNode (here s4) above the domain the pods occupy
    (s1); to_plan reports the occupied one when the engine gives none."""
    inst = busy_cluster()
    problem = compile_problem(inst)
    topo = problem.topology
    (group,) = problem.jobs[1].groups  # default/a
    assignment = Assignment(counts={group: {2: 1, 3: 1}}, job_domain={1: topo.index["s4"]})
    plan = to_plan(problem, assignment, engine="hand", status="FEASIBLE")
    assert plan.job("default/a").hypernode == "s4"
    assert from_plan(problem, plan).job_domain == {1: topo.index["s4"]}
    assert round_trip(inst, plan) == plan
    assert (
        to_plan(problem, Assignment(counts=assignment.counts), engine="hand", status="FEASIBLE")
        .job("default/a")
        .hypernode
        == "s1"
    )

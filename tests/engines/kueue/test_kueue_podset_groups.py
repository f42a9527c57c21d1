"""Leader/worker podset groups (``podSetGroupName``) through the reader, the kueue engine, the
checker and CP-SAT: the group shares one domain at its required level."""

from __future__ import annotations

import dataclasses
import re

import pytest
import yaml
from fidelity.kueue.cases import documents

import toposolve
from toposolve.core.instance import Job, Task
from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance

RACK = "cloud.com/topology-rack"
LEVELS = ["cloud.com/topology-block", RACK, "kubernetes.io/hostname"]


def _node(block: str, rack: str, host: str, cpu: str) -> dict:
    labels = dict(zip(LEVELS, (block, rack, host), strict=True))
    return {
        "name": f"{block}-{rack}-{host}",
        "labels": labels,
        "allocatable": {"cpu": cpu, "pods": "10"},
    }


def _case(leader_count: int = 1, workers_count: int = 4, group: str | None = "lws") -> dict:
    """Two blocks of two racks of two hosts; only rack b1/r2 holds the leader beside 4 workers."""
    nodes = [
        _node(b, r, h, "5" if (b, r) == ("b1", "r2") else "4")
        for b in ("b1", "b2")
        for r in ("r1", "r2")
        for h in ("h1", "h2")
    ]
    request = {"required": RACK, **({"podSetGroupName": group} if group else {})}
    podsets = [
        {
            "name": "leader",
            "count": leader_count,
            "requests": {"cpu": "1000m"},
            "topologyRequest": request,
        },
        {
            "name": "workers",
            "count": workers_count,
            "requests": {"cpu": "2000m"},
            "topologyRequest": request,
        },
    ]
    return {"name": "lws", "nodes": nodes, "levels": LEVELS, "podSets": podsets}


def _load(case: dict, tmp_path):
    path = tmp_path / "lws.yaml"
    path.write_text(yaml.safe_dump_all(documents(case)))
    return load_instance(path, warn=lambda _: None)


def _racks(inst, plan) -> set[str]:
    labels = {n.name: n.labels for n in inst.nodes}
    return {"/".join(labels[b.node][k] for k in LEVELS[:2]) for b in plan.bindings}


@pytest.mark.parametrize("engine", ["kueue", "cpsat"])
def test_group_shares_one_rack_with_its_leader(engine, tmp_path):
    inst = _load(_case(), tmp_path)
    plan = toposolve.solve(inst, engine, time_limit=5, workers=1)  # checked inside solve()
    assert len(plan.bindings) == 5
    assert _racks(inst, plan) == {"b1/r2"}  # the only rack holding leader (1 cpu) + 4 × 2 cpu


def test_without_the_group_kueue_places_each_podset_alone(tmp_path):
    inst = _load(_case(group=None), tmp_path)
    plan = toposolve.solve(inst, "kueue")
    assert len(_racks(inst, plan)) == 2  # workers fill a 8-cpu rack, the leader goes elsewhere


def test_checker_refuses_a_leader_outside_the_group_domain(tmp_path):
    inst = _load(_case(), tmp_path)
    plan = toposolve.solve(inst, "kueue")
    leader = next(b for b in plan.bindings if "leader" in b.pod)
    moved = dataclasses.replace(leader, node="b2-r1-h1")
    bad = dataclasses.replace(plan, bindings=[moved if b is leader else b for b in plan.bindings])
    assert {v.kind for v in toposolve.check_plan(inst, bad)} == {"tier"}  # span and reported domain


def test_reader_takes_the_workers_request_and_marks_the_group(tmp_path):
    case = _case()
    case["podSets"][0]["topologyRequest"] = {
        "preferred": "cloud.com/topology-block",
        "podSetGroupName": "lws",
    }
    inst = _load(case, tmp_path)
    job = inst.jobs[0]
    assert job.network_topology.mode == "hard"  # the workers' required rack, as Kueue reads it
    assert {t.labels["toposolve.io/podset-group"] for t in job.tasks} == {"lws"}


@pytest.mark.parametrize(
    "leader_count, extra, message",
    [
        (
            2,
            0,
            "groups where at least one pod set has only 1 replica, got: 2 replica(s) and 4 "
            "replica(s)",
        ),
        (1, 1, "groups of exactly 2 pod sets, got: 3 pod set(s)"),
    ],
)
def test_reader_refuses_groups_kueue_cannot_place(leader_count, extra, message, tmp_path):
    case = _case(leader_count=leader_count)
    case["podSets"] += [dict(case["podSets"][1], name=f"more{i}") for i in range(extra)]
    with pytest.raises(
        toposolve.InputError,
        match=re.escape(f"podSetGroupName: podset group 'lws': can only define {message}"),
    ):
        _load(case, tmp_path)


def test_a_job_of_three_tasks_under_one_topology_is_no_kueue_group(tmp_path):
    inst = _load(_case(), tmp_path)
    job = inst.jobs[0]
    three = job.model_copy(
        update={"tasks": [*job.tasks, Task(name="extra", replicas=1, requests={"cpu": 1})]}
    )
    assert isinstance(three, Job)
    problem = compile_problem(inst.model_copy(update={"jobs": [three]}))
    from toposolve.engines.kueue import run_kueue

    assert "cannot be a Kueue podset group" in run_kueue(problem).reasons[0]


@pytest.mark.parametrize("engine", ["kueue", "cpsat"])
def test_group_beside_another_podset_is_its_own_subjob(engine, tmp_path):
    case = _case()
    case["podSets"].append(
        {
            "name": "eval",
            "count": 2,
            "requests": {"cpu": "1000m"},
            "topologyRequest": {"required": "cloud.com/topology-block"},
        }
    )
    inst = _load(case, tmp_path)
    assert [p.name for p in inst.jobs[0].subgroup_policies] == [
        "podset",
        "podset",
    ]  # the group, eval
    plan = toposolve.solve(inst, engine, time_limit=5, workers=1)  # checked inside solve()
    group = next(s for j in plan.jobs for s in j.subjobs if "leader-workers" in s.id)
    assert len(plan.bindings) == 7 and group.hypernode == "b1/r2"

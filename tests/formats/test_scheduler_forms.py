"""Kueue and KAI readers and writers: round trips of generated instances, v1beta1/v1beta2,
errors."""

from __future__ import annotations

import pytest
import yaml
from scheduler_docs import kai_docs, kueue_docs, podset, workload

from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance
from toposolve.formats.write import write_scheduler_form
from toposolve.generate import generate


@pytest.fixture(scope="module")
def superpod():
    return generate("superpod", nodes=64, seed=3, jobs=8, occupancy=0.3)


@pytest.mark.parametrize("form", ["kueue", "kai"])
def test_round_trip_keeps_jobs_pods_and_levels(tmp_path, superpod, form):
    path = tmp_path / f"{form}.yaml"
    write_scheduler_form(superpod, form, str(path), warn=lambda _: None)
    back = load_instance(path, warn=lambda _: None)
    assert back.scheduler == form
    assert len(back.nodes) == len(superpod.nodes)
    original = {j.key: j for j in superpod.jobs}
    for job in back.jobs:
        src = original[job.key]
        running = sum(len(t.running) for t in src.tasks)
        pending = sum(t.replicas for t in src.tasks) - running
        got_running = sum(len(t.running) for t in job.tasks)
        assert got_running == running
        if (
            form == "kai" or not running
        ):  # Kueue admits all or nothing: a running workload's pending pods go
            assert sum(t.replicas for t in job.tasks) - got_running == pending
        assert (job.network_topology is None) == (src.network_topology is None)
    problem = compile_problem(back)
    names = set(problem.topology.tier_name_to_tier)
    assert "kubernetes.io/hostname" in names


def _load(tmp_path, docs):
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return load_instance(path, warn=lambda _: None)


def test_v1beta1_admitted_domains_hold_capacity(tmp_path):
    status = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {
                    "name": "main",
                    "count": 2,
                    "topologyAssignment": {
                        "levels": ["kubernetes.io/hostname"],
                        "domains": [{"values": ["n1"], "count": 2}],
                    },
                }
            ],
        }
    }
    inst = _load(
        tmp_path,
        kueue_docs(
            ["block", "kubernetes.io/hostname"],
            workload([podset("main", 2, {"required": "block"})], status),
        ),
    )
    (job,) = inst.jobs
    assert job.tasks[0].running == {0: "n1", 1: "n1"}
    assert job.queue == "cq"
    assert inst.queues[0].capability == {"cpu": 12000}


def test_required_level_is_a_hard_tier_and_slices_are_partitions(tmp_path):
    req = {
        "required": "block",
        "podSetSliceRequiredTopology": "kubernetes.io/hostname",
        "podSetSliceSize": 2,
    }
    inst = _load(
        tmp_path,
        kueue_docs(["block", "kubernetes.io/hostname"], workload([podset("main", 4, req)])),
    )
    (job,) = inst.jobs
    assert job.network_topology.mode == "hard" and job.network_topology.highest_tier_allowed == 2
    assert job.tasks[0].partition.partition_size == 2
    assert job.tasks[0].partition.network_topology.highest_tier_allowed == 1


def test_slices_inside_a_podset_with_its_own_level_are_its_gang_groups_members(tmp_path):
    req = {
        "required": "block",
        "podSetSliceRequiredTopology": "kubernetes.io/hostname",
        "podSetSliceSize": 1,
    }
    wl = workload([podset("a", 2, req), podset("b", 2, {"required": "block"})])
    (job,) = _load(tmp_path, kueue_docs(["block", "kubernetes.io/hostname"], wl)).jobs
    assert [g.name for g in job.gang_groups] == ["podset-a"]
    assert [(p.name, p.parent) for p in job.subgroup_policies] == [("a", "podset-a"),
                                                                   ("podset", None)]


def test_an_unknown_level_loads_pending_with_a_warning_naming_it(tmp_path):
    """Kueue leaves the workload pending (no flavor has the level): docs/kueue-fidelity.md."""
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(kueue_docs(
        ["block", "kubernetes.io/hostname"], workload([podset("main", 2, {"required": "rack"})]))))
    lines: list[str] = []
    (job,) = load_instance(path, warn=lines.append).jobs
    assert job.network_topology.missing_level == "rack"
    assert [x for x in lines if "Workload/default/w: podset 'main' level 'rack'" in x]


def test_hostname_must_be_the_lowest_level(tmp_path):
    with pytest.raises(InputError, match="only be the lowest level"):
        _load(
            tmp_path,
            kueue_docs(["kubernetes.io/hostname", "block"], workload([podset("main", 2)])),
        )


def test_kai_leaf_subgroups_become_subjobs(tmp_path):
    subgroups = [
        {
            "name": "a",
            "minMember": 2,
            "topologyConstraint": {
                "topology": "t",
                "requiredTopologyLevel": "kubernetes.io/hostname",
            },
        },
        {"name": "b", "minMember": 1},
    ]
    inst = _load(tmp_path, kai_docs(subgroups, ["a", "a", "b"]))
    problem = compile_problem(inst)
    ids = sorted(problem.subjobs[s].id for s in problem.jobs[0].subjobs)
    assert ids == ["default/pg/subgroup-a", "default/pg/subgroup-b"]
    assert problem.jobs[0].limit.hard and problem.jobs[0].limit.tier == 2
    assert inst.jobs[0].min_available == 3


def test_kai_constrained_parent_subgroup_is_a_gang_group_of_depth_3(tmp_path):
    subgroups = [
        {
            "name": "top",
            "topologyConstraint": {
                "topology": "t",
                "requiredTopologyLevel": "kubernetes.io/hostname",
            },
        },
        {"name": "a", "parent": "top", "minMember": 1},
        {"name": "b", "parent": "top", "minMember": 1},
    ]
    problem = compile_problem(_load(tmp_path, kai_docs(subgroups, ["a", "b"])))
    (top,) = problem.gang_nodes
    assert (top.id, top.min_members, top.limit.hard, top.limit.tier) == (
        "default/pg/top",
        2,
        True,
        1,
    )
    assert problem.max_gang_depth == 3 and problem.jobs[0].min_available == 2


def test_kai_minsubgroup_below_its_members_is_k_of_n_at_every_level(tmp_path):
    subgroups = [
        {"name": "x"},
        {"name": "y", "minSubGroup": 1},
        {"name": "x1", "parent": "x", "minMember": 2},
        {"name": "y1", "parent": "y", "minMember": 1},
        {"name": "y2", "parent": "y", "minMember": 3},
    ]
    docs = kai_docs(subgroups, ["x1", "x1", "y1", "y2", "y2", "y2"])
    docs[-7]["spec"]["minSubGroup"] = 1  # the PodGroup: one of x, y
    inst = _load(tmp_path, docs)
    by_name = {g.name: g for g in inst.jobs[0].gang_groups}
    assert sorted(by_name) == ["x", "y", "~root"]
    assert (by_name["~root"].min_members, by_name["y"].min_members, by_name["x"].parent) == (
        1,
        1,
        "~root",
    )
    assert inst.jobs[0].min_available == 1  # y through y1 alone


def test_kai_subgroup_cycle_is_refused(tmp_path):
    subgroups = [
        {"name": "a", "parent": "b"},
        {"name": "b", "parent": "a"},
        {"name": "c", "parent": "a"},
    ]
    with pytest.raises(InputError, match="cycle"):
        _load(tmp_path, kai_docs(subgroups, ["c"]))


def test_kai_plain_parent_subgroup_is_exactly_its_leaves(tmp_path):
    subgroups = [
        {"name": "top"},
        {"name": "a", "parent": "top", "minMember": 1},
        {"name": "b", "parent": "top", "minMember": 1},
    ]
    inst = _load(tmp_path, kai_docs(subgroups, ["a", "b"]))
    selected = [
        p.label_selector.match_labels["kai.scheduler/subgroup-name"]
        for p in inst.jobs[0].subgroup_policies
    ]
    assert selected == ["a", "b"]


def test_queued_batch_job_and_jobset_become_workloads_from_their_annotations(tmp_path):
    template = {
        "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "block"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "train",
            "namespace": "default",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {"parallelism": 2, "template": template},
    }
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": "js",
            "namespace": "default",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 2,
                    "template": {"spec": {"parallelism": 1, "template": template}},
                }
            ]
        },
    }
    other = {**job, "metadata": {"name": "plain", "namespace": "default"}}
    docs = kueue_docs(["block", "kubernetes.io/hostname"], job)[:-1] + [job, jobset, other]
    warnings: list[str] = []
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    inst = load_instance(path, warn=warnings.append)
    by_name = {j.name: j for j in inst.jobs}
    assert by_name["job-train"].tasks[0].replicas == 2
    assert by_name["job-train"].network_topology.highest_tier_allowed == 2
    assert (
        by_name["jobset-js"].tasks[0].name == "workers"
        and by_name["jobset-js"].tasks[0].replicas == 2
    )
    assert any("Job/default/plain: skipped" in w for w in warnings)

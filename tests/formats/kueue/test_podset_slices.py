"""Slices inside a podset that has its own level in a workload of several podsets (issue 23):
Kueue places each podset (group) with its own request, level and slices together
(``findTopologyAssignment``, kueue@ff69552). The reader makes the podset's level a GangGroup
``podset-<podset>`` with its slices below it (one layer: a policy of slice SubJobs; more: the
layers' GangGroups), the whole outer slices its needed members."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.core.instance import PARTITION_ID_LABEL, NetworkTopology
from toposolve.formats.load import load_instance
from toposolve.formats.write import write_scheduler_form

LEVELS = ["block", "rack", "kubernetes.io/hostname"]


def instance(tmp_path, podsets, warn=lambda _: None):
    """kueue_docs' four nodes with one rack per node (``b0-r0`` … ``b1-r1``)."""
    docs = kueue_docs(LEVELS, workload(podsets))
    for doc in docs:
        if doc["kind"] == "Node":
            labels = doc["metadata"]["labels"]
            labels["rack"] = f"{labels['block']}-r{int(doc['metadata']['name'][-1]) % 2}"
    return load_instance(write_docs(tmp_path, docs), warn=warn)


def load(tmp_path, podsets):
    (job,) = instance(tmp_path, podsets).jobs
    return job


def sliced(level: str, count: int, size: int = 2, kind: str = "required") -> dict:
    return podset("a", count, {kind: level, "podSetSliceRequiredTopology": "rack",
                               "podSetSliceSize": size})


OTHER = podset("b", 2, {"required": "rack"})


def test_one_slice_layer_is_a_policy_below_the_podsets_gang_group(tmp_path):
    job = load(tmp_path, [sliced("block", 4), OTHER])
    (group,) = job.gang_groups
    assert (group.name, group.parent, group.min_members, group.network_topology) == (
        "podset-a", None, None, NetworkTopology(mode="hard", highest_tier_allowed=3))
    policy, other = job.subgroup_policies
    assert (policy.parent, policy.sub_group_size, policy.match_label_keys,
            policy.network_topology.highest_tier_allowed) == ("podset-a", 2,
                                                              [PARTITION_ID_LABEL], 2)
    assert [job.tasks[0].labels_of(i)[PARTITION_ID_LABEL] for i in range(4)] == list("0011")
    assert other.parent is None and other.name == "podset"  # podset b: a SubJob as before
    assert job.min_available == 6 and job.tasks[0].partition is None


def test_a_preferred_level_is_a_soft_gang_group(tmp_path):
    job = load(tmp_path, [sliced("block", 4, kind="preferred"), OTHER])
    assert job.gang_groups[0].network_topology == NetworkTopology(
        mode="soft", highest_tier_allowed=3, preferred_tier=3)


def test_an_incomplete_last_slice_is_left_out_of_what_the_gang_group_needs(tmp_path):
    """5 pods in slices of 2: Kueue places 2 slices; the gang group needs those 2 members."""
    job = load(tmp_path, [sliced("block", 5), OTHER])
    assert job.gang_groups[0].min_members == 2
    assert job.min_available == 4 + 2


def test_multi_layer_slices_nest_below_the_podsets_gang_group(tmp_path):
    request = {"required": "block", "podsetSliceRequiredTopologyConstraints": [
        {"topology": "block", "size": 4}, {"topology": "kubernetes.io/hostname", "size": 2}]}
    job = load(tmp_path, [podset("a", 6, request), OTHER])
    assert [(g.name, g.parent, g.min_members) for g in job.gang_groups] == [
        ("podset-a", None, 1), ("a-layer0-0", "podset-a", None)]
    assert [(p.name, p.parent) for p in job.subgroup_policies] == [
        ("a-layer0-incomplete", "podset-a"), ("a-layer1", "a-layer0-0"), ("podset", None)]


def test_a_podset_groups_leader_is_a_subjob_beside_the_workers_slices(tmp_path):
    """A leader and its workers (podSetGroupName) with the workers' slices: one GangGroup
    ``podset-leader-workers`` at the group's level, the leader one SubJob below it (unconstrained
    there), the workers' slices beside it; the leader's own slice request is not read (Kueue
    places the group by the workers' request)."""
    group = {"required": "block", "podSetGroupName": "g"}
    workers = {**group, "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 2}
    job = load(tmp_path, [podset("leader", 1, group), podset("workers", 5, workers), OTHER])
    (own,) = job.gang_groups
    assert (own.name, own.min_members, own.network_topology.highest_tier_allowed) == (
        "podset-leader-workers", 1 + 2, 3)
    leader, slices, other = job.subgroup_policies
    assert (leader.name, leader.parent, leader.sub_group_size, leader.network_topology) == (
        "podset", own.name, 1, None)  # SubJob <workload>/podset-leader
    assert (slices.name, slices.parent, slices.sub_group_size) == ("workers", own.name, 2)
    assert other.name == "podset" and job.min_available == 1 + 4 + 2


@pytest.mark.parametrize("request_", [
    {"required": "block", "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 2},
    {"preferred": "block", "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 2},
    {"required": "block", "podsetSliceRequiredTopologyConstraints": [
        {"topology": "block", "size": 4}, {"topology": "kubernetes.io/hostname", "size": 2}]},
])
def test_the_kueue_writer_writes_the_podsets_level_and_slices_back(tmp_path, request_):
    """Podset b has no level of its own here (the writer leaves a podset SubJob out)."""
    read = instance(tmp_path, [podset("a", 6, request_), podset("b", 2)])
    (original,) = read.jobs
    path = tmp_path / "out.yaml"
    warnings: list[str] = []
    write_scheduler_form(read, "kueue", str(path), warn=warnings.append)
    assert warnings == []
    (back,) = load_instance(path, warn=lambda _: None).jobs
    assert back.gang_groups == original.gang_groups
    assert back.subgroup_policies == original.subgroup_policies
    assert back.min_available == original.min_available


def test_a_leaders_own_slices_in_such_a_group_are_dropped_with_one_line(tmp_path):
    group = {"required": "block", "podSetGroupName": "g"}
    leader = {**group, "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 1}
    workers = {**group, "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 2}
    docs = [podset("leader", 1, leader), podset("workers", 4, workers), OTHER]
    warnings: list[str] = []
    (job,) = instance(tmp_path, docs, warnings.append).jobs
    assert warnings == [f"{tmp_path / 'in.yaml'}: Workload/default/w: podset 'leader': its "
                        "slices are not read "
                        "(Kueue places a podset group with its own level by the workers' "
                        "request)"]
    assert [p.name for p in job.subgroup_policies] == ["podset", "workers", "podset"]

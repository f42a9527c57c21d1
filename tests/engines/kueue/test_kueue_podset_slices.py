"""A podset with its own level and slices in a workload of several podsets (issue 23): the
kueue engine places it as Kueue's ``findTopologyAssignment`` does — the podset's level and its
slices in one request, as a single-podset workload with the same request —, then the next
podset; every engine's plan passes the checker."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.check.checker import check_plan
from toposolve.core.plan import Binding
from toposolve.engines.registry import engine_names
from toposolve.formats.load import load_instance

LEVELS = ["block", "rack", "kubernetes.io/hostname"]
REQUESTS = {
    "one layer": {"required": "block", "podSetSliceRequiredTopology": "rack",
                  "podSetSliceSize": 2},
    "preferred": {"preferred": "block", "podSetSliceRequiredTopology": "rack",
                  "podSetSliceSize": 2},
    "two layers": {"required": "block", "podsetSliceRequiredTopologyConstraints": [
        {"topology": "rack", "size": 2}, {"topology": "kubernetes.io/hostname", "size": 1}]},
}


def _load(tmp_path, podsets, name="in.yaml"):
    """Four 4-CPU nodes, one rack each, two racks per block; one-CPU pods."""
    docs = kueue_docs(LEVELS, workload(podsets))
    for doc in docs:
        if doc["kind"] == "Node":
            labels = doc["metadata"]["labels"]
            labels["rack"] = f"{labels['block']}-r{int(doc['metadata']['name'][-1]) % 2}"
    return load_instance(write_docs(tmp_path, docs, name), warn=lambda _: None)


def _nodes(plan, task):
    return sorted((b.pod, b.node) for b in plan.bindings if b.pod.startswith(f"default/w-{task}-"))


@pytest.mark.parametrize("count", [4, 5])
@pytest.mark.parametrize("kind", list(REQUESTS))
def test_kueue_places_the_podset_as_alone_then_the_next_one(tmp_path, kind, count):
    """Podset a first, as a workload of a alone places it (5 pods: the last slice incomplete,
    gated); then b, 2 pods required in one rack, beside it."""
    both = toposolve.solve(_load(tmp_path, [podset("a", count, REQUESTS[kind]),
                                            podset("b", 2, {"required": "rack"})]), "kueue")
    alone = toposolve.solve(_load(tmp_path, [podset("a", count, REQUESTS[kind])], "alone.yaml"),
                            "kueue")
    assert both.jobs[0].placed and _nodes(both, "a") == _nodes(alone, "a")
    assert len(_nodes(both, "a")) == 4  # 5 pods: 2 whole slices of 2
    (rack,) = {node for _, node in _nodes(both, "b")}  # one node per rack here
    assert rack not in {node for _, node in _nodes(both, "a")}  # a's node is full


@pytest.mark.parametrize("engine", engine_names(aliases=False))
@pytest.mark.parametrize("count", [4, 5])
def test_every_engine_places_it_validly_or_leaves_it_pending(tmp_path, engine, count):
    inst = _load(tmp_path, [podset("a", count, REQUESTS["one layer"]),
                            podset("b", 2, {"required": "rack"})])
    plan = toposolve.solve(inst, engine)  # checked
    placed = _nodes(plan, "a")
    assert len(placed) in (0, 4) and "default/w-a-4" not in dict(placed)
    if placed:
        blocks = {int(node[1:]) // 2 for _, node in placed}
        assert len(blocks) == 1  # required at block


def test_a_slice_level_above_the_podsets_level_is_kueues_error(tmp_path):
    request = {"required": "rack", "podSetSliceRequiredTopology": "block", "podSetSliceSize": 2}
    plan = toposolve.solve(_load(tmp_path, [podset("a", 4, request),
                                            podset("b", 2, {"required": "rack"})]), "kueue")
    assert not plan.bindings
    assert plan.jobs[0].scheduler_reason == ("couldn't assign flavors to pod set a: podset slice "
                                             "topology block is above the podset topology rack")


def test_the_checker_refuses_a_slice_split_over_two_racks(tmp_path):
    inst = _load(tmp_path, [podset("a", 4, REQUESTS["one layer"]),
                            podset("b", 2, {"required": "rack"})])
    plan = toposolve.solve(inst, "kueue")
    assert ("default/w-a-1", "n0") in _nodes(plan, "a")
    plan.bindings = [Binding(pod=b.pod, node="n1" if b.pod == "default/w-a-1" else b.node)
                     for b in plan.bindings]
    found = [str(v) for v in check_plan(inst, plan)]
    assert "tier: SubJob/default/w/a-0: pods span HyperNode 'b0' of tier 3, above the limit 2" in (
        found)


GROUP = {"required": "block", "podSetGroupName": "g"}
WORKERS = {**GROUP, "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 2}


@pytest.mark.parametrize("count", [4, 5])
def test_kueue_places_a_podset_groups_leader_with_its_workers_slices(tmp_path, count):
    """The group placed as a workload of the group alone places it (the leader carried along
    in the workers' block), then podset b."""
    group = [podset("leader", 1, GROUP), podset("workers", count, WORKERS)]
    both = toposolve.solve(_load(tmp_path, [*group, podset("b", 2, {"required": "rack"})]),
                           "kueue")
    alone = toposolve.solve(_load(tmp_path, group, "alone.yaml"), "kueue")
    assert both.jobs[0].placed
    assert _nodes(both, "leader") + _nodes(both, "workers") == (
        _nodes(alone, "leader") + _nodes(alone, "workers"))
    placed = _nodes(both, "leader") + _nodes(both, "workers")
    assert len(placed) == 5 and len({int(node[1:]) // 2 for _, node in placed}) == 1
    assert len(_nodes(both, "b")) == 2


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_every_engine_places_the_group_validly_or_leaves_it_pending(tmp_path, engine):
    inst = _load(tmp_path, [podset("leader", 1, GROUP), podset("workers", 5, WORKERS),
                            podset("b", 2, {"required": "rack"})])
    plan = toposolve.solve(inst, engine)  # checked
    placed = _nodes(plan, "leader") + _nodes(plan, "workers")
    assert len(placed) in (0, 5) and "default/w-workers-4" not in dict(placed)

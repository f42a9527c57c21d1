"""The KAI writer: constraint trees written as Topologies of their own, SubGroups written back, so
the bundled KAI dumps round-trip (write → read gives the same jobs and trees)."""

from __future__ import annotations

from pathlib import Path

from builders import example1_tree, gang, instance, nodes

from toposolve.core.instance import Instance, NetworkTopology
from toposolve.formats.kai.writer import kai_documents
from toposolve.formats.load import instance_from_bodies, load_instance

INSTANCES = Path(__file__).resolve().parents[3] / "instances"


def round_trip(inst: Instance) -> tuple[list[dict], Instance, list[str]]:
    warnings: list[str] = []
    docs = kai_documents(inst, warnings.append)
    back = instance_from_bodies([(d, "w.yaml") for d in docs], "w", warnings.append)
    return docs, back, warnings


def test_a_crossing_dump_round_trips():
    inst = load_instance(INSTANCES / "kai-crossing-topologies.yaml", warn=lambda _: None)
    assert inst.constraint_trees  # the zone Topology crosses the rack one
    docs, back, warnings = round_trip(inst)
    assert not warnings
    assert [j.model_dump() for j in back.jobs] == [j.model_dump() for j in inst.jobs]
    assert back.hypernodes == inst.hypernodes
    assert back.constraint_trees == inst.constraint_trees


def test_each_tree_is_its_own_topology_and_constraints_name_theirs():
    inst = load_instance(INSTANCES / "kai-crossing-topologies.yaml", warn=lambda _: None)
    docs, _, _ = round_trip(inst)
    topologies = {d["metadata"]["name"]: [lv["nodeLabel"] for lv in d["spec"]["levels"]]
                  for d in docs if d["kind"] == "Topology"}
    (tree,) = inst.constraint_trees
    assert set(topologies) == {inst.hypernodes[-1].name, tree.name}
    assert topologies[tree.name][-1] == "kubernetes.io/hostname"
    groups = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "PodGroup"}
    for job in inst.jobs:
        if job.network_topology is not None:
            named = groups[job.name]["topologyConstraint"]["topology"]
            assert named == (job.network_topology.tree or inst.hypernodes[-1].name)


def test_a_tree_whose_levels_no_node_carries_is_left_out_with_a_warning():
    inst = load_instance(INSTANCES / "kai-crossing-topologies.yaml", warn=lambda _: None)
    (tree,) = inst.constraint_trees
    nodes = [n.model_copy(update={"labels": {k: v for k, v in n.labels.items()
                                             if k != "topology.kubernetes.io/zone"}})
             for n in inst.nodes]
    warnings: list[str] = []
    docs = kai_documents(inst.model_copy(update={"nodes": nodes}), warnings.append)
    assert warnings[0].startswith(f"constraint tree {tree.name!r} is left out")
    assert tree.name not in {d["metadata"]["name"] for d in docs if d["kind"] == "Topology"}


def test_subgroups_round_trip():
    inst = load_instance(INSTANCES / "kai-eks.yaml", warn=lambda _: None)
    with_subgroups = [j for j in inst.jobs if j.subgroup_policies]
    assert with_subgroups
    _, back, warnings = round_trip(inst)
    assert not warnings
    assert [j.model_dump() for j in back.jobs] == [j.model_dump() for j in inst.jobs]


def _nested_podgroup() -> list[dict]:
    """A PodGroup whose top needs 1 of its 2 SubGroups (PodGroup ``minSubGroup``), one of them
    a parent needing 1 of its 2 children in one rack."""
    node = {"apiVersion": "v1", "kind": "Node", "status": {"allocatable": {"cpu": "8"}}}
    nodes = [{**node, "metadata": {"name": f"n{i}", "labels": {"rack": f"r{i // 2}",
                                                          "kubernetes.io/hostname": f"n{i}"}}}
             for i in range(4)]
    topology = {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
                "metadata": {"name": "t"},
                "spec": {"levels": [{"nodeLabel": "rack"},
                                    {"nodeLabel": "kubernetes.io/hostname"}]}}
    rack = {"topology": "t", "requiredTopologyLevel": "rack"}
    subgroups = [{"name": "decode", "minSubGroup": 1, "topologyConstraint": rack},
                 {"name": "d0", "parent": "decode", "minMember": 2},
                 {"name": "d1", "parent": "decode", "minMember": 2},
                 {"name": "prefill", "minMember": 1}]
    group = {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": "default"},
             "spec": {"queue": "default", "minMember": 1, "minSubGroup": 1,
                      "subGroups": subgroups}}
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"{sg}-{i}", "namespace": "default",
                          "annotations": {"pod-group-name": "pg"},
                          "labels": {"kai.scheduler/subgroup-name": sg}},
             "spec": {"schedulerName": "kai-scheduler", "containers": [
                 {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
            for sg, count in (("d0", 2), ("d1", 2), ("prefill", 1)) for i in range(count)]
    return [*nodes, topology, group, *pods]


def test_a_nested_subgroup_tree_round_trips():
    warnings: list[str] = []
    inst = instance_from_bodies([(d, "k.yaml") for d in _nested_podgroup()], "k", warnings.append)
    assert not warnings
    (job,) = inst.jobs
    assert len(job.gang_groups) == 2 and len(job.subgroup_policies) == 3
    docs, back, warnings = round_trip(inst)
    assert not warnings
    assert [j.model_dump() for j in back.jobs] == [j.model_dump() for j in inst.jobs]
    spec = next(d for d in docs if d["kind"] == "PodGroup")["spec"]
    assert spec["minSubGroup"] == 1
    assert {g["name"]: g.get("parent") for g in spec["subGroups"]} == {
        "decode": None, "d0": "decode", "d1": "decode", "prefill": None}


def test_a_constraint_no_node_satisfies_is_left_out_in_one_line_each():
    # KAI's reader refuses a level its Topology lacks, and KAI has no never-placed request: the
    # PodGroup cannot hold either (issue 23)
    jobs = [gang(name, 2, topology=NetworkTopology(mode="hard", **{field: value}))
            for name, field, value in (("lost", "missing_level", "rack"),
                                       ("never", "never_placed", "ClusterQueue q is inactive"))]
    docs, back, warnings = round_trip(instance(nodes(8), example1_tree(), jobs))
    assert warnings == [
        "Job/default/lost: the constraint naming level 'rack', which its topology lacks, is left "
        "out (the written objects cannot hold it): the written job is unconstrained",
        "Job/default/never: the request its scheduler never places (ClusterQueue q is inactive) "
        "is left out (the written objects cannot hold it): the written job is unconstrained"]
    assert all("topologyConstraint" not in d["spec"] for d in docs if d["kind"] == "PodGroup")
    assert [j.network_topology for j in back.jobs] == [None, None]

"""The Kueue writer on an input whose Topologies cross (issue 23 §1): each Topology written with
its own levels and a ResourceFlavor per node pool and Topology, so the bundled crossing dump
round-trips (write → read gives the same jobs, main tree and constraint trees)."""

from __future__ import annotations

from pathlib import Path

from toposolve.core.instance import Instance
from toposolve.formats.kueue.writer import kueue_documents
from toposolve.formats.load import instance_from_bodies, load_instance

INSTANCES = Path(__file__).resolve().parents[3] / "instances"
DUMP = INSTANCES / "kueue-crossing-topologies.yaml"


def round_trip(inst: Instance) -> tuple[list[dict], Instance, list[str]]:
    warnings: list[str] = []
    docs = kueue_documents(inst, warnings.append)
    back = instance_from_bodies([(d, "w.yaml") for d in docs], "w", warnings.append)
    return docs, back, warnings


def test_the_crossing_dump_round_trips():
    inst = load_instance(DUMP, warn=lambda _: None)
    docs, back, warnings = round_trip(inst)
    assert not warnings
    assert [j.model_dump() for j in back.jobs] == [j.model_dump() for j in inst.jobs]
    assert back.hypernodes == inst.hypernodes
    assert back.constraint_trees == inst.constraint_trees


def test_each_topology_has_a_flavor_and_each_queue_its_workloads_flavor():
    inst = load_instance(DUMP, warn=lambda _: None)
    docs, _, _ = round_trip(inst)
    by_kind: dict[str, dict[str, dict]] = {}
    for d in docs:
        by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    assert set(by_kind["Topology"]) == {"rack-topology", "zone-topology"}
    flavor_topology = {name: d["spec"]["topologyName"]
                       for name, d in by_kind["ResourceFlavor"].items()}
    assert set(flavor_topology.values()) == {"rack-topology", "zone-topology"}
    for name, cq in by_kind["ClusterQueue"].items():
        flavor = cq["spec"]["resourceGroups"][0]["flavors"][0]["name"]
        jobs = [j for j in inst.jobs if j.queue == name]
        assert {j.topology_name for j in jobs} == {flavor_topology[flavor]}

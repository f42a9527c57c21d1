"""The kueue engine on flavors over the same nodes whose Topologies cross (issue 23 §1): each
workload placed in its flavor's Topology (its TAS snapshot), node usage shared by every
flavor's snapshot (``TASHandleOverlappingFlavors``, beta, on at the pinned Kueue commit)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from scheduler_docs import write_docs

import toposolve
from toposolve.formats.load import load_instance

INSTANCES = Path(__file__).resolve().parents[3] / "instances"
DUMP = INSTANCES / "kueue-crossing-topologies.yaml"
ZONE_JOBS = ("eval", "loader", "zone-batch")


def docs() -> list[dict]:
    return list(yaml.safe_load_all(DUMP.read_text(encoding="utf-8")))


def nodes_by_job(plan) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for b in plan.bindings:
        job = b.pod.split("/", 1)[1].removesuffix(b.pod[b.pod.rindex("-"):])
        job = job.removesuffix("-worker")  # pods are <workload>-<podset>-<index>
        out.setdefault(job, {})
        out[job][b.node] = out[job].get(b.node, 0) + 1
    return out


def zone_of(node: str) -> str:
    return "zone-" + "ab"[int(node.split("-")[1]) % 2]


def test_every_workload_is_placed_in_its_flavors_tree_and_the_plan_checks():
    plan = toposolve.solve(load_instance(DUMP, warn=lambda _: None), "kueue")  # checked inside
    by_job = {j.job.split("/")[1]: j for j in plan.jobs}
    assert all(j.placed for j in by_job.values())
    assert by_job["train"].hypernode.startswith("rack-topology:")
    assert by_job["eval"].hypernode.startswith("zone-topology:zone-")
    pods = nodes_by_job(plan)
    assert len({zone_of(n) for n in pods["eval"]}) == 1  # required zone of zone-topology
    racks = {int(n.split("-")[1]) // 2 for n in pods["train"]}
    assert len(racks) == 1  # required rack of rack-topology


def test_a_flavors_snapshot_sees_the_pods_of_the_other_flavor_on_shared_nodes():
    full = nodes_by_job(toposolve.solve(load_instance(DUMP, warn=lambda _: None), "kueue"))
    taken = set(full["train"]) | {"gpu-0", "gpu-1"}  # the rack flavor's pods fill these nodes
    assert all(not set(full[j]) & taken for j in ZONE_JOBS)


def test_the_zone_flavors_workloads_place_as_with_its_topology_alone(tmp_path):
    """Without the rack flavor's workloads, the zone flavor's place exactly as in an input whose
    only Topology is the zone one: the constraint tree is the flavor's snapshot."""
    no_rack_work = [d for d in docs() if not (d["kind"] == "Workload"
                                              and d["spec"]["queueName"] == "rack")]
    crossing = toposolve.solve(load_instance(write_docs(tmp_path, no_rack_work, "a.yaml"),
                                             warn=lambda _: None), "kueue")
    rack_objects = {("Topology", "rack-topology"), ("ResourceFlavor", "rack-flavor"),
                    ("ClusterQueue", "rack-cq"), ("LocalQueue", "rack")}
    zone_only = [d for d in no_rack_work
                 if (d["kind"], d["metadata"]["name"]) not in rack_objects]
    alone = toposolve.solve(load_instance(write_docs(tmp_path, zone_only, "b.yaml"),
                                          warn=lambda _: None), "kueue")
    assert nodes_by_job(crossing) == nodes_by_job(alone)
    assert set(nodes_by_job(crossing)) == set(ZONE_JOBS)
    # constrained jobs report their domain in their tree (an unconstrained one in the main tree)
    domains = {j.job: j.hypernode.split(":")[-1] for j in crossing.jobs if "batch" not in j.job}
    assert domains == {j.job: j.hypernode.split(":")[-1] for j in alone.jobs
                       if "batch" not in j.job}
    assert len(domains) == 2


def scheduler_case(required: str, hostname: bool = False) -> list[dict]:
    """Kueue's ``scheduler_tas_test.go`` (kueue@ff69552, line 2056) "workload requests topology
    level which is only present in second flavor": one node, two flavors selecting it, naming a
    hostname Topology and a ``cloud.com/custom-level`` one; one 1-CPU pod requiring
    ``required``. With ``hostname`` the node carries ``kubernetes.io/hostname`` (Kueue's test node
    does not), so both Topologies hold it: the custom one is then a constraint tree."""
    api = "kueue.x-k8s.io/v1beta2"

    def obj(kind: str, name: str, spec: dict, namespace: str | None = None) -> dict:
        meta = {"name": name} | ({"namespace": namespace} if namespace else {})
        return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}

    labels = {"tas-node": "true", "cloud.com/custom-level": "x1"}
    if hostname:
        labels["kubernetes.io/hostname"] = "x1"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x1", "labels": labels},
            "status": {"allocatable": {"cpu": "1", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    quota = [{"name": "cpu", "nominalQuota": "50"}]
    podset = {"name": "one", "count": 1, "topologyRequest": {"required": required},
              "template": {"spec": {"containers": [
                  {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}
    return [
        node,
        obj("Topology", "tas-single-level",
            {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}),
        obj("Topology", "tas-custom-topology",
            {"levels": [{"nodeLabel": "cloud.com/custom-level"}]}),
        obj("ResourceFlavor", "tas-default", {"nodeLabels": {"tas-node": "true"},
                                              "topologyName": "tas-single-level"}),
        obj("ResourceFlavor", "tas-custom-flavor", {"nodeLabels": {"tas-node": "true"},
                                                    "topologyName": "tas-custom-topology"}),
        obj("ClusterQueue", "tas-main", {"resourceGroups": [{
            "coveredResources": ["cpu"],
            "flavors": [{"name": "tas-default", "resources": quota},
                        {"name": "tas-custom-flavor", "resources": quota}]}]}),
        obj("LocalQueue", "tas-main", {"clusterQueue": "tas-main"}, "default"),
        obj("Workload", "foo", {"queueName": "tas-main", "podSets": [podset]}, "default"),
    ]


@pytest.mark.parametrize("hostname", [False, True])
def test_kueue_picks_the_flavor_whose_topology_has_the_level_kueue_scheduler_case(tmp_path,
                                                                                  hostname):
    docs = scheduler_case("cloud.com/custom-level", hostname)
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    (job,) = inst.jobs
    assert job.topology_name == "tas-custom-topology"  # tas-default lacks the level: skipped
    assert [t.name for t in inst.constraint_trees] == (["tas-custom-topology"] if hostname
                                                        else [])
    plan = toposolve.solve(inst, "kueue")
    assert [(b.pod, b.node) for b in plan.bindings] == [("default/foo-one-0", "x1")]
    assert plan.jobs[0].hypernode == "tas-custom-topology:x1"  # Kueue: domain [x1] at the level

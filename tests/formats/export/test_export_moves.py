"""``export --as moves`` steers the replacements: per moved job its owner's pod-template patch
(required nodeAffinity to where its pods are after the plan) comes before the Evictions, which
follow in plan order; an owner that cannot be patched is named in a note."""

from __future__ import annotations

import pytest
from export_schemas import errors

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.core.instance import Instance, Job, Task
from toposolve.defrag import defrag
from toposolve.formats.export.forms import export_plan
from toposolve.formats.export.source import ExportSource
from toposolve.formats.k8s.fields import Document

TREE = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
        inner("spine", ["r0", "r1"], 2)]
AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"


def _instance() -> Instance:
    """Free GPUs 2, 4 | 2, 2 (4-GPU nodes): a 4-pod 2-GPU gang hard-limited to one rack gets in
    once x (2 GPUs on node0) moves to r1."""
    def one(name: str, node: str) -> Job:
        return Job(name=name, min_available=1, tasks=[Task(
            name="w", replicas=1, requests={GPU: 2000}, running={0: node})])
    target = Job(name="big", min_available=4, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=4, requests={GPU: 2000})])
    return Instance(nodes=nodes(4, gpus=4000), hypernodes=TREE,
                    jobs=[one("x", "node0"), one("y", "node2"), one("z", "node3"), target])


def _pod(name: str, node: str, owner: dict | None) -> dict:
    meta: dict = {"name": name, "namespace": "default"}
    if owner is not None:
        meta["ownerReferences"] = [{**owner, "controller": True, "uid": "u"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": node}}


def _source(instance: Instance, owner_kind: str | None) -> ExportSource:
    """The instance and a dump: x's pod, made by a ``owner_kind`` object (None: no owner)."""
    api = {"Job": "batch/v1", "VolcanoJob": "batch.volcano.sh/v1alpha1"}
    bodies = []
    owner = None
    if owner_kind is not None:
        kind = "Job"
        owner = {"apiVersion": api[owner_kind], "kind": kind, "name": "x"}
        template = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
        spec = {"template": template} if owner_kind == "Job" else {"tasks": []}
        bodies.append({"apiVersion": api[owner_kind], "kind": kind,
                       "metadata": {"name": "x", "namespace": "default"}, "spec": spec})
    bodies.append(_pod("x-w-0", "node0", owner))
    return ExportSource(instance, [Document(b, "dump.yaml", i) for i, b in enumerate(bodies)])


def test_the_owner_patch_comes_first_and_confines_the_replacement_to_its_planned_node():
    inst = _instance()
    plan = defrag(inst, ["default/big"])
    assert [m.pod for m in plan.moves] == ["default/x-w-0"]
    exported = export_plan(plan, "moves", _source(inst, "Job"))
    patch, eviction = exported.objects
    assert (patch["apiVersion"], patch["kind"], patch["metadata"]["name"]) == ("batch/v1", "Job",
                                                                               "x")
    assert errors(patch) == [] and errors(eviction) == []
    terms = patch["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][AFFINITY]
    (term,) = terms["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": "kubernetes.io/hostname", "operator": "In",
                                         "values": [plan.moves[0].to]}]
    assert eviction["kind"] == "Eviction" and eviction["metadata"]["name"] == "x-w-0"
    assert exported.items[0][0][0].startswith("steer the replacements of the moved Job")
    # the header gives the order: patch (a batch Job suspended around it), then evict
    assert any("suspend the owner, apply, resume" in line for line in exported.header)


@pytest.mark.parametrize("owner_kind, why", [(None, "no owner object to patch"),
                                              ("VolcanoJob", "cannot be patched")])
def test_an_owner_that_cannot_be_patched_is_named_and_the_evictions_stay(owner_kind, why):
    inst = _instance()
    plan = defrag(inst, ["default/big"])
    exported = export_plan(plan, "moves", _source(inst, owner_kind))
    assert [o["kind"] for o in exported.objects] == ["Eviction"]
    assert any(n.startswith("job default/x: its replacements are not steered") and why in n
               for n in exported.notes)


def test_without_the_instance_the_export_says_the_patches_are_left_out():
    plan = defrag(_instance(), ["default/big"])
    exported = export_plan(plan, "moves", None)
    assert [o["kind"] for o in exported.objects] == ["Eviction"]
    assert any("owner patches" in n for n in exported.notes)


def test_the_moves_export_writes_the_waves_in_order():
    from tests.engines.defrag.test_waves import TARGET as WAVE_TARGET
    from tests.engines.defrag.test_waves import TEAM, cluster

    plan = defrag(cluster(TEAM), [WAVE_TARGET], max_waves=2)
    plan.moves.reverse()  # wave 2 first in the plan: the export still starts with wave 1
    items = export_plan(plan, "moves", None).items
    assert [item[0][0].split(";")[0] for item in items] == ["wave 1 of 2", "wave 2 of 2"]
    assert "start it only once every replacement of the previous wave is Ready" in items[1][0][0]

"""Rule ``tier`` for several Topologies in one input: a pod placed outside the subtree of the
Topology its constraint (job, SubGroup or parent SubGroup) names is a violation."""

from __future__ import annotations

from pathlib import Path

from toposolve.check.checker import check_plan
from toposolve.core.plan import Binding, JobPlacement, Plan
from toposolve.formats.load import load_instance

DUMP = Path(__file__).resolve().parents[2] / "instances" / "kai-two-topologies.yaml"


def plan(bindings: dict[str, str], jobs: list[str]) -> Plan:
    return Plan(engine="test", status="FEASIBLE",
                bindings=[Binding(pod=f"default/{p}", node=n) for p, n in bindings.items()],
                jobs=[JobPlacement(job=f"default/{j}", placed=True) for j in jobs])


def test_pods_inside_their_topologys_subtree_pass():
    inst = load_instance(DUMP, warn=lambda _: None)
    ok = plan({"etl-0": "cpu-0", "etl-1": "cpu-1", "etl-2": "cpu-1",
               "serve-0": "gpu-2", "serve-1": "gpu-3", "serve-2": "cpu-2", "serve-3": "cpu-3"},
              ["etl", "serve"])
    assert check_plan(inst, ok) == []


def test_a_pod_outside_its_topologys_subtree_is_named():
    inst = load_instance(DUMP, warn=lambda _: None)
    # the frontend SubGroup names cpu-topology: GPU nodes are outside it, though gpu-2 and
    # gpu-3 share a tier-2 rack of the other tree, which the span rule alone would accept
    bad = plan({"serve-0": "gpu-2", "serve-1": "gpu-3", "serve-2": "gpu-2", "serve-3": "gpu-3"},
               ["serve"])
    found = [str(v) for v in check_plan(inst, bad) if "outside HyperNode" in v.message]
    assert found == [
        "tier: Pod/default/serve-2: on 'gpu-2', outside HyperNode 'cpu-topology' of its topology",
        "tier: Pod/default/serve-3: on 'gpu-3', outside HyperNode 'cpu-topology' of its topology",
    ]

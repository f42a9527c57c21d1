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


CROSSING = DUMP.parent / "kai-crossing-topologies.yaml"


def placed(bindings: dict[str, str], job: str, hypernode: str | None = None) -> Plan:
    return Plan(engine="test", status="FEASIBLE",
                bindings=[Binding(pod=f"default/{p}", node=n) for p, n in bindings.items()],
                jobs=[JobPlacement(job=f"default/{job}", placed=True, hypernode=hypernode)])


def test_a_constraint_in_a_crossing_topology_is_measured_in_its_own_tree():
    inst = load_instance(CROSSING, warn=lambda _: None)
    # eval needs one zone of zone-topology; gpu-2 (zone-a) and gpu-3 (zone-b) share rack-1 of
    # the main tree, which a span measured there would accept
    bad = placed({"eval-0": "gpu-2", "eval-1": "gpu-3", "eval-2": "gpu-3"}, "eval")
    assert [str(v) for v in check_plan(inst, bad)] == [
        "tier: Job/default/eval: pods span HyperNode 'zone-topology' of tier 4, above the "
        "limit 3"]
    good = placed({"eval-0": "gpu-2", "eval-1": "gpu-4", "eval-2": "gpu-6"}, "eval",
                  "zone-topology:zone-a")
    assert check_plan(inst, good) == []


def test_a_reported_domain_of_a_crossing_topology_must_hold_the_pods():
    inst = load_instance(CROSSING, warn=lambda _: None)
    wrong = placed({"eval-0": "gpu-2", "eval-1": "gpu-4", "eval-2": "gpu-6"}, "eval",
                   "zone-topology:zone-b")
    found = [v.message for v in check_plan(inst, wrong)]
    assert found == ["reported HyperNode 'zone-topology:zone-b' does not hold node(s) gpu-2, "
                     "gpu-4, gpu-6"]


def test_a_pod_placed_under_a_constraint_naming_a_missing_level_is_named():
    from builders import example1_tree, gang, hand_plan, instance, nodes

    from toposolve.core.instance import NetworkTopology

    spec = NetworkTopology(mode="hard", missing_level="rack")
    inst = instance(nodes(8), example1_tree(), [gang("a", 1, topology=spec)])
    found = [str(v) for v in check_plan(inst, hand_plan([("a", 0, "node0")]))]
    assert ("tier: Pod/default/a-worker-0: its constraint names level 'rack', which its "
            "topology lacks: no node satisfies it") in found
    assert check_plan(inst, hand_plan()) == []  # left pending: nothing to refuse


def test_a_pod_placed_under_a_request_its_scheduler_never_places_is_named():
    from builders import example1_tree, gang, hand_plan, instance, nodes

    from toposolve.core.instance import NetworkTopology

    spec = NetworkTopology(mode="hard", never_placed="additional slice layer topology rack must "
                                                     "be at a lower level than rack")
    inst = instance(nodes(8), example1_tree(), [gang("a", 1, topology=spec)])
    found = [str(v) for v in check_plan(inst, hand_plan([("a", 0, "node0")]))]
    assert ("tier: Pod/default/a-worker-0: its constraint is never placed: additional slice "
            "layer topology rack must be at a lower level than rack") in found
    assert check_plan(inst, hand_plan()) == []

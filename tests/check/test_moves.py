"""Checker rule for defragmentation moves: each bad move is reported, a good one passes."""

from __future__ import annotations

from tests.builders import GPU, gang, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, Task
from toposolve.core.plan import Binding, Move, Plan


def _instance() -> Instance:
    """Racks r0 = node0, node1 and r1 = node2, node3 (8 GPUs each); ``pair`` (hard tier 1)
    runs on node0 and node1; ``solo`` fills node2; ``wait`` is pending."""
    tree = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
            inner("spine", ["r0", "r1"], 2)]
    pair = gang("pair", 2, gpus=8000, topology=hard(1), running={0: "node0", 1: "node1"})
    solo = gang("solo", 1, gpus=8000, running={0: "node2"})
    wait = gang("wait", 1, gpus=8000)
    return Instance(nodes=nodes(4, gpus=8000), hypernodes=tree, jobs=[pair, solo, wait])


def _kinds(plan: Plan) -> list[str]:
    return [v.kind for v in check_plan(_instance(), plan, eviction_mode="none")]


def test_a_valid_move_and_binding_pass():
    plan = Plan("t", "OK", moves=[Move("default/solo-worker-0", "node2", "node3")],
                bindings=[Binding("default/wait-worker-0", "node2")])
    assert _kinds(plan) == []


def test_moving_a_pod_that_is_not_running_is_reported():
    assert _kinds(Plan("t", "OK", moves=[Move("default/wait-worker-0", "node2", "node3")])) == [
        "move"]
    assert _kinds(Plan("t", "OK", moves=[Move("default/solo-worker-0", "node1", "node3")])) == [
        "move"]


def test_a_move_onto_a_full_node_is_reported():
    plan = Plan("t", "OK", moves=[Move("default/solo-worker-0", "node2", "node1")])
    assert "capacity" in _kinds(plan)


def test_a_hard_gang_split_across_racks_is_reported():
    plan = Plan("t", "OK", moves=[Move("default/pair-worker-1", "node1", "node3")])
    violations = check_plan(_instance(), plan, eviction_mode="none")
    assert {v.kind for v in violations} == {"tier"}
    assert any("above the limit 1" in v.message for v in violations)


def test_a_tier_made_worse_is_reported_for_a_job_without_limits():
    loose = Job(name="loose", min_available=2, tasks=[Task(
        name="w", replicas=2, requests={GPU: 4000}, running={0: "node0", 1: "node1"})])
    instance = Instance(nodes=nodes(4, gpus=8000), hypernodes=_instance().hypernodes,
                        jobs=[loose])
    plan = Plan("t", "OK", moves=[Move("default/loose-w-1", "node1", "node3")])
    violations = check_plan(instance, plan, eviction_mode="none")
    assert [v.kind for v in violations] == ["tier"]
    assert "worse than 'r0'" in violations[0].message


def test_moved_and_evicted_and_moved_twice_are_reported():
    pod = "default/solo-worker-0"
    plan = Plan("t", "OK", evictions=[Binding(pod, "node2")], moves=[Move(pod, "node2", "node3")])
    assert "move" in _kinds(plan)
    twice = Plan("t", "OK", moves=[Move(pod, "node2", "node3"), Move(pod, "node2", "node3")])
    assert _kinds(twice) == ["move"]


def test_unknown_nodes_in_moves_are_reported():
    plan = Plan("t", "OK", moves=[Move("default/solo-worker-0", "node2", "nowhere")])
    assert _kinds(plan) == ["unknown-node"]

"""Applying a plan to the cluster (check/context.py): evictions first, then bindings; a wrong
binding or eviction is reported once and left out of the final state."""

from __future__ import annotations

from builders import example1, gang, hand_plan, on

from toposolve.check.context import build_context
from toposolve.core.plan import Binding, Plan


def test_an_evicted_pod_may_be_bound_again_elsewhere():
    inst = example1([gang("v", 1, priority_class="low", running=on(0))])
    ctx, violations = build_context(inst, hand_plan([("v", 0, "node1")], [("v", 0, "node0")]))
    assert violations == []
    assert ctx.evicted == {"default/v-worker-0": "node0"}
    assert ctx.placement == {"default/v-worker-0": "node1"}
    assert ctx.jobs_with_bindings == ["default/v"]


def test_wrong_bindings_and_evictions_are_reported_and_left_out():
    inst = example1([gang("r", 2, running=on(0, 1)), gang("p", 2)])
    plan = Plan(
        engine="hand",
        status="FEASIBLE",
        bindings=[
            Binding(pod="default/r-worker-0", node="node2"),  # still running: not a move
            Binding(pod="default/p-worker-0", node="node9"),  # no such node
            Binding(pod="default/p-worker-1", node="node3"),
            Binding(pod="default/p-worker-1", node="node4"),  # bound twice
        ],
        evictions=[
            Binding(pod="default/r-worker-1", node="node5"),
            Binding(pod="default/p-worker-0", node="node0"),
        ],
    )
    ctx, violations = build_context(inst, plan)
    assert [(v.kind, v.obj) for v in violations] == [
        ("not-running", "Pod/default/r-worker-1"),  # runs on node1, not node5
        ("not-running", "Pod/default/p-worker-0"),  # pending
        ("duplicate-binding", "Pod/default/r-worker-0"),
        ("unknown-node", "Pod/default/p-worker-0"),
        ("duplicate-binding", "Pod/default/p-worker-1"),
    ]
    assert ctx.bound == {"default/p-worker-1": "node3"} and ctx.evicted == {}
    assert ctx.placement == {
        "default/r-worker-0": "node0",
        "default/r-worker-1": "node1",
        "default/p-worker-1": "node3",
    }

"""toposolve.diff, the human metrics a plan carries, and the pandas frames."""

from __future__ import annotations

import json

from builders import example1_tree, gang, hard, instance, nodes

import toposolve
from toposolve.core.instance import PriorityClass
from toposolve.core.plan import Binding, JobPlacement, Plan
from toposolve.core.problem import compile_problem
from toposolve.policy.metrics import plan_metrics, to_frame

CLASSES = [PriorityClass(name="high", value=1000), PriorityClass(name="low", value=1)]


def two_priorities():
    jobs = [
        gang("big", 4, topology=hard(2), priority_class="high"),
        gang("small", 2, topology=hard(1), priority_class="low"),
        gang("late", 4, topology=hard(1), priority_class="low"),  # no tier-1 room left for it
    ]
    return instance(nodes(8), example1_tree(), jobs, CLASSES)


def test_plan_carries_human_metrics_per_priority_in_the_json():
    inst = two_priorities()
    plan = toposolve.solve(inst, "volcano")
    m = plan.metrics
    assert m["jobs_placed"] == 2 and m["jobs_pending"] == 1
    assert m["jobs_placed_by_priority"] == {"1000": 1, "1": 1}
    assert (
        m["accelerators_placed_by_priority"] == {"1000": 32, "1": 16}
        and m["accelerators_placed"] == 48
    )
    assert m["utilisation"] == 48 / 64 and m["mean_domain_tier"] == (2 + 1) / 2
    assert m["free_leaves"] == 1 and m["evictions"] == 0 and m["broken_gangs"] == 0
    assert Plan.from_dict(json.loads(plan.to_json())).metrics == m  # round trip
    assert m == plan_metrics(compile_problem(inst), plan).summary()


def test_diff_of_a_plan_with_itself_is_empty():
    plan = toposolve.solve(two_priorities(), "volcano")
    same = toposolve.diff(plan, plan)
    assert same.same and str(same) == "same placements and evictions"
    assert all(
        v == 0 or v == 0.0 or (isinstance(v, dict) and not any(v.values()))
        for v in same.metrics.values()
    )


def test_diff_names_jobs_pods_evictions_and_metric_changes():
    a = Plan(
        engine="a",
        status="FEASIBLE",
        bindings=[Binding("ns/x-0", "n1"), Binding("ns/x-1", "n2"), Binding("ns/y-0", "n3")],
        jobs=[
            JobPlacement("ns/x", True, "rack-1"),
            JobPlacement("ns/y", True, "rack-2"),
            JobPlacement("ns/z", False, reason="no room"),
        ],
        metrics={"jobs_placed": 2, "utilisation": 0.5, "jobs_placed_by_priority": {"10": 2}},
    )
    b = Plan(
        engine="b",
        status="OPTIMAL",
        bindings=[Binding("ns/x-0", "n4"), Binding("ns/x-1", "n2"), Binding("ns/z-0", "n5")],
        evictions=[Binding("ns/old-0", "n5")],
        jobs=[
            JobPlacement("ns/x", True, "rack-3"),
            JobPlacement("ns/y", False, reason="taken"),
            JobPlacement("ns/z", True, "rack-2"),
        ],
        metrics={
            "jobs_placed": 2,
            "utilisation": 0.75,
            "jobs_placed_by_priority": {"10": 1, "100": 1},
        },
    )
    d = toposolve.diff(a, b)
    assert [(c.job, c.a, c.reason_b) for c in d.placed_only_in_a] == [("ns/y", "rack-2", "taken")]
    assert [(c.job, c.b, c.reason_a) for c in d.placed_only_in_b] == [("ns/z", "rack-2", "no room")]
    assert [(c.job, c.a, c.b) for c in d.moved] == [("ns/x", "rack-1", "rack-3")]
    assert (d.pods_moved, d.pods_only_in_a, d.pods_only_in_b) == (1, 1, 1)
    assert d.evictions_only_in_b == ["ns/old-0"] and d.evictions_only_in_a == []
    assert d.metrics == {
        "jobs_placed": 0,
        "utilisation": 0.25,
        "jobs_placed_by_priority": {"100": 1, "10": -1},
    }
    text = str(d)
    assert (
        "ns/x rack-1 → rack-3" in text
        and "utilisation +0.25" in text
        and "evictions: 0 only in a, 1 only in b" in text
    )


def test_frames_have_a_row_per_job_and_per_plan():
    inst = two_priorities()
    plans = [
        toposolve.solve(inst, "volcano"),
        toposolve.solve(inst, "cpsat", time_limit=5, deterministic=True),
    ]
    jobs = plans[0].to_frame()
    assert list(jobs.columns) == ["job", "placed", "hypernode", "subjobs", "reason"]
    assert jobs.set_index("job")["placed"].to_dict() == {
        "default/big": True,
        "default/small": True,
        "default/late": False,
    }
    per_job = plan_metrics(compile_problem(inst), plans[0]).to_frame()
    assert per_job.set_index("job")["pods"].to_dict() == {
        "default/big": 4,
        "default/small": 2,
        "default/late": 0,
    }
    table = to_frame(plans, labels=["greedy", "optimal"])
    assert list(table.index) == ["greedy", "optimal"]
    assert table.loc["greedy", "accelerators@1000"] == 32 and table.loc["greedy", "jobs@1"] == 1
    assert list(table["engine"]) == ["volcano", "cpsat"]

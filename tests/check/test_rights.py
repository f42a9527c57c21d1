"""The checker's who-may-evict rules (:mod:`toposolve.check.rights`), tested directly."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, instance, nodes

from toposolve.check.context import build_context
from toposolve.check.rights import may_evict, preempt_allows, queue_reclaimable, reclaim_allows
from toposolve.core.instance import PriorityClass, Queue
from toposolve.core.plan import Plan


def context():
    """Queue a: jobs hi (priority 100), lo and lo2 (priority 1); queue b (not reclaimable): job
    b; queue c: job c; queue x (not listed): job x."""
    jobs = [
        gang("hi", 1, priority_class="high").model_copy(update={"queue": "a"}),
        gang("lo", 1, priority_class="low").model_copy(update={"queue": "a"}),
        gang("lo2", 1, priority_class="low").model_copy(update={"queue": "a"}),
        gang("b", 1, priority_class="high").model_copy(update={"queue": "b"}),
        gang("c", 1, priority_class="low").model_copy(update={"queue": "c"}),
        gang("x", 1).model_copy(update={"queue": "x"}),
    ]
    inst = instance(
        nodes(8),
        example1_tree(),
        jobs,
        [PriorityClass(name="high", value=100), PriorityClass(name="low", value=1)],
    )
    inst = inst.model_copy(
        update={"queues": [Queue(name="a"), Queue(name="b", reclaimable=False), Queue(name="c")]}
    )
    ctx, violations = build_context(inst, Plan(engine="test", status="FEASIBLE"))
    assert violations == []
    return ctx


def test_preempt_allows_only_strictly_higher_priority_in_the_same_queue():
    ctx = context()
    job = ctx.jobs
    assert preempt_allows(ctx, job["default/hi"], job["default/lo"])
    assert not preempt_allows(ctx, job["default/lo"], job["default/hi"])
    assert not preempt_allows(ctx, job["default/lo2"], job["default/lo"])  # equal priority
    assert not preempt_allows(ctx, job["default/b"], job["default/c"])  # another queue


def test_reclaim_allows_another_queue_when_the_victim_queue_is_reclaimable():
    ctx = context()
    job = ctx.jobs
    assert reclaim_allows(ctx, job["default/c"], job["default/hi"])
    assert not reclaim_allows(ctx, job["default/c"], job["default/b"])  # b is not reclaimable
    assert not reclaim_allows(ctx, job["default/hi"], job["default/lo"])  # same queue
    assert queue_reclaimable(ctx, "x") and reclaim_allows(ctx, job["default/c"], job["default/x"])


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("none", set()),
        ("preempt", {("hi", "lo"), ("hi", "lo2")}),
        (
            "reclaim",
            {
                (p, v)
                for p in ("hi", "lo", "lo2", "b", "c", "x")
                for v in ("hi", "lo", "lo2", "c", "x")
                if p != v and not ({p, v} <= {"hi", "lo", "lo2"})
            },
        ),
    ],
)
def test_may_evict_is_the_union_of_the_rules_the_mode_allows(mode, expected):
    ctx = context()
    names = ("hi", "lo", "lo2", "b", "c", "x")
    allowed = {
        (p, v) for p in names for v in names if may_evict(ctx, mode, f"default/{p}", f"default/{v}")
    }
    assert allowed == expected
    if mode == "reclaim":
        both = {
            (p, v)
            for p in names
            for v in names
            if may_evict(ctx, "both", f"default/{p}", f"default/{v}")
        }
        assert both == expected | {("hi", "lo"), ("hi", "lo2")}

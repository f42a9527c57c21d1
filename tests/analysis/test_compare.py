"""How compare tells plans apart: each kind of difference is shown under its own name."""

from __future__ import annotations

import pytest
from builders import chain, example1_tree, gang, hard, instance, nodes

from toposolve.analysis.compare import Comparison, compare, job_diffs
from toposolve.core.errors import InputError
from toposolve.core.plan import JobPlacement, Plan
from toposolve.core.problem import compile_problem
from toposolve.policy.metrics import plan_metrics
from toposolve.report.comparison import format_comparison

PROBLEM = compile_problem(
    instance(nodes(8), example1_tree(), [gang(n, 1, topology=hard(3)) for n in "abcd"])
)


def plan(engine: str, **jobs: JobPlacement) -> Plan:
    return Plan(engine=engine, status="FEASIBLE", jobs=[jobs[k] for k in sorted(jobs)])


def placed(job: str, where: str) -> JobPlacement:
    return JobPlacement(job=f"default/{job}", placed=True, hypernode=where)


def pending(job: str, reason: str) -> JobPlacement:
    return JobPlacement(job=f"default/{job}", placed=False, reason=reason)


PLANS = {
    "one": plan(
        "one",
        a=placed("a", "s0"),
        b=placed("b", "s0"),
        c=pending("c", "queue full"),
        d=placed("d", "s1"),
    ),
    "two": plan(
        "two",
        a=placed("a", "s1"),
        b=placed("b", "s4"),
        c=pending("c", "no room"),
        d=pending("d", "no room"),
    ),
}


def test_each_difference_gets_its_kind():
    kinds = {d.job: d.kind for d in job_diffs(PROBLEM, PLANS)}
    assert kinds == {
        "default/a": "domain",
        "default/b": "tier",
        "default/c": "reason",
        "default/d": "placement",
    }


def test_two_pending_reasons_are_listed_not_summarised_as_another_hypernode():
    metrics = [plan_metrics(PROBLEM, p) for p in PLANS.values()]
    text = format_comparison(Comparison("x.yaml", metrics, PLANS, job_diffs(PROBLEM, PLANS)))
    assert "jobs placed differently (2):\n  default/b\n" in text
    assert "\n  default/d\n" in text
    assert (
        "jobs pending in every engine, for different reasons (1):\n  default/c\n"
        "           one: pending: queue full\n           two: pending: no room"
    ) in text
    assert text.endswith(
        "1 more job sits in another HyperNode of the same tier (--json lists them)"
    )


def test_a_fallback_plan_shows_no_gap():
    fallback = Plan(engine="cpsat", status="FALLBACK", objective=10.0, bound=None)
    row = next(
        line
        for line in format_comparison(
            Comparison("x.yaml", [plan_metrics(PROBLEM, fallback)], {"cpsat": fallback})
        ).splitlines()
        if line.startswith("gap")
    )
    assert row.split() == ["gap", "-"]


def test_an_engine_refusing_a_deeper_gang_tree_is_listed_and_the_others_compared():
    inst = instance(nodes(8), example1_tree(), [chain("t", 6)])  # kueue honours depth 5
    result = compare(inst, ("kueue", "kai"))
    assert list(result.plans) == ["kai"] and "gang hierarchy of depth 6" in result.refused["kueue"]
    assert "kueue: refused: " in format_comparison(result) and "refused" in result.to_dict()
    with pytest.raises(InputError, match="depth 6"):
        compare(inst, ("kueue",))


def test_communication_rows_read_index_then_volcano_then_ranked():
    """A job with a layout gets comm totals per engine: index order, Volcano's rank rule and
    toposolve's ranks, the ranks never worse than the rule (docs/ranks.md)."""
    job = gang("a", 4)
    job.parallelism = "tp=8,pp=2,dp=2"
    result = compare(instance(nodes(8), example1_tree(), [job]), ("volcano",))
    totals = result.comm["volcano"]
    assert list(totals) == ["index", "volcano", "ranked"]
    assert totals["ranked"]["comm_cost"] <= totals["volcano"]["comm_cost"]
    cells = " → ".join(str(totals[s]["cross_leaf_ring_edges"]) for s in totals)
    assert "cross-leaf ring edges (index → Volcano → ranked)" in format_comparison(result)
    assert cells in format_comparison(result)
    assert result.to_dict()["comm"]["volcano"]["volcano"] == totals["volcano"]

"""Plan metrics and the comparison table, on hand-checked cases."""

from __future__ import annotations

import numpy as np
import pytest
from builders import example1_tree, gang, hard, instance, nodes

from toposolve.analysis.compare import compare
from toposolve.core.plan import Binding, Plan
from toposolve.core.problem import compile_problem
from toposolve.policy.metrics import pair_lca_stats, plan_metrics
from toposolve.report.comparison import format_comparison


def test_pair_lca_tier_by_hand():
    """2 pods on node0, one on node1, one on node2: pair tiers 0, 1, 1, 2, 2, 2 → mean 8/6."""
    problem = compile_problem(instance(nodes(8), example1_tree(), []))
    counts = np.zeros(8, dtype=np.int64)
    counts[[0, 1, 2]] = [2, 1, 1]
    mean, pairs = pair_lca_stats(problem, counts)
    assert pairs == 6
    assert mean == pytest.approx(8 / 6)


def test_plan_metrics_from_bindings():
    inst = instance(
        nodes(8), example1_tree(), [gang("a", 2, topology=hard(1)), gang("b", 4, topology=hard(1))]
    )
    problem = compile_problem(inst)
    plan = Plan(
        engine="hand",
        status="FEASIBLE",
        bindings=[Binding("default/a-worker-0", "node2"), Binding("default/a-worker-1", "node3")],
    )
    m = plan_metrics(problem, plan)
    assert (m.jobs_placed, m.jobs_pending, m.pods_bound, m.accelerators_placed) == (1, 1, 2, 16)
    assert m.utilisation == pytest.approx(16 / 64)
    assert m.free_leaves == 3 and m.free_tier2 == 1  # s1 used; s5 whole
    assert m.largest_free_domain_nodes == 4
    (a, b) = m.jobs
    assert (a.domain, a.domain_tier, a.pair_lca_tier, a.leaves) == ("s1", 1, 1.0, 1)
    assert not b.placed and b.domain is None


def test_compare_heuristic_table_lists_every_metric():
    inst = instance(
        nodes(8), example1_tree(), [gang("a", 2, topology=hard(1)), gang("b", 6, topology=hard(1))]
    )
    result = compare(inst, ("heuristic",))
    text = format_comparison(result)
    assert "jobs placed" in text and "heuristic" in text
    assert result.metrics[0].jobs_placed == 1 and result.metrics[0].jobs_pending == 1
    assert result.to_dict()["engines"][0]["engine"] == "heuristic"

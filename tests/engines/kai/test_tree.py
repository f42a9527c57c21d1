"""The KAI mirror on gang trees deeper than job → SubJob (KAI's SubGroupSet recursion)."""

from __future__ import annotations

from builders import example1_tree, gang, hard, instance, nested, nodes

import toposolve
from toposolve.engines.kai.tree import order_by_allocation_ratio


def test_members_below_their_threshold_come_first_then_required_then_the_lower_ratio():
    assert order_by_allocation_ratio((0, 1), (1, 1)) < 0  # unsatisfied first
    assert order_by_allocation_ratio((0, 1), (0, 2)) == 0  # both unsatisfied: the name decides
    assert order_by_allocation_ratio((1, 0), (1, 1)) > 0  # optional after required
    assert order_by_allocation_ratio((2, 1), (3, 2)) > 0  # ratio 2 after ratio 1.5
    assert order_by_allocation_ratio((1, 0), (2, 0)) < 0  # optional: fewer allocated first


def _bindings(inst) -> dict[str, str]:
    plan = toposolve.solve(inst, "kai")  # raises on a checker violation
    return {b.pod.split("/", 1)[1]: b.node for b in plan.bindings}


def test_each_group_lands_in_one_domain_of_its_required_tier():
    """A and B (two one-GPU-node pods each) need one tier-1 HyperNode each (a node pair)."""
    inst = instance(
        nodes(8),
        example1_tree(),
        [nested("t", {"A": ["a0", "a1"], "B": ["b0", "b1"]}, group_topology=hard(1))],
    )
    got = _bindings(inst)
    assert got == {"t-a0-0": "node0", "t-a1-0": "node1", "t-b0-0": "node2", "t-b1-0": "node3"}


def test_a_group_that_fits_no_domain_leaves_the_whole_gang_pending():
    """Three pods in one tier-1 pair cannot fit: nothing of the job is placed."""
    inst = instance(
        nodes(8), example1_tree(), [nested("t", {"A": ["a0", "a1", "a2"]}, group_topology=hard(1))]
    )
    assert _bindings(inst) == {}


def test_k_of_n_places_only_the_members_that_fit():
    """A needs one of its two members; only one 8-GPU node is free in the job's tier-1 domain."""
    job = nested("t", {"A": ["a0", "a1"]}, min_members={"A": 1}, job_topology=hard(1), pods=1)
    job.min_available = 1
    inst = instance(nodes(2), example1_tree()[:1], [gang("busy", 1, running={0: "node1"}), job])
    got = _bindings(inst)
    assert got == {"t-a0-0": "node0"}

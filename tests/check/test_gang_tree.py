"""Gang-tree rules (depth 3: job → GangGroup → SubJob) on the Example 1 tree: node0..node7,
s0..s3 (tier 1, node pairs), s4 = {s0, s1}, s5 = {s2, s3} (tier 2), s6 (tier 3)."""

from __future__ import annotations

from builders import example1_tree, hard, instance, nested, nodes

from toposolve.check.checker import check_plan
from toposolve.core.plan import Binding, Plan


def _instance(**kw):
    job = nested("t", {"A": ["a0", "a1"], "B": ["b0", "b1"]}, group_topology=hard(2), **kw)
    return instance(nodes(8), example1_tree(), [job])


def _plan(where: dict[str, str]) -> Plan:
    """Leaf SubGroup -> node of its one pod."""
    return Plan(
        engine="hand",
        status="feasible",
        bindings=[Binding(pod=f"default/t-{leaf}-0", node=n) for leaf, n in where.items()],
    )


def _found(inst, where):
    return sorted((v.kind, v.obj) for v in check_plan(inst, _plan(where)))


def test_each_group_in_one_domain_of_its_required_tier_is_valid():
    where = {"a0": "node0", "a1": "node2", "b0": "node4", "b1": "node7"}
    assert _found(_instance(), where) == []


def test_a_group_spanning_two_domains_of_its_tier_is_rejected():
    where = {"a0": "node0", "a1": "node4", "b0": "node5", "b1": "node7"}
    assert _found(_instance(), where) == [("tier", "GangGroup/default/t/A")]


def test_a_group_below_its_minimum_is_rejected_at_every_level():
    # a1 left out: A has one satisfied member of two; the job gang (4 pods) fails too
    where = {"a0": "node0", "b0": "node4", "b1": "node7"}
    found = _found(_instance(), where)
    assert ("subgroup-gang", "GangGroup/default/t/A") in found
    assert ("gang", "Job/default/t") in found


def test_k_of_n_group_needs_only_k_members():
    inst = _instance(min_members={"A": 1})
    inst.jobs[0].min_available = 3
    assert _found(inst, {"a0": "node0", "b0": "node4", "b1": "node7"}) == []
    # B still needs both of its members
    found = _found(inst, {"a0": "node0", "a1": "node1", "b0": "node4"})
    assert found == [("subgroup-gang", "GangGroup/default/t/B")]


def test_a_deeper_group_is_checked_inside_its_parent():
    """Depth 4: A (tier 3) holds A1 and A2 (tier 1 each); A1's pods split across s0 and s1."""
    job = nested("t", {"A1": ["a0", "a1"], "A2": ["a2", "a3"]}, group_topology=hard(1))
    job.gang_groups.insert(
        0, job.gang_groups[0].model_copy(update={"name": "A", "network_topology": hard(3)})
    )
    for g in job.gang_groups[1:]:
        g.parent = "A"
    inst = instance(nodes(8), example1_tree(), [job])
    ok = {"a0": "node0", "a1": "node1", "a2": "node4", "a3": "node5"}
    assert _found(inst, ok) == []
    bad = {"a0": "node0", "a1": "node2", "a2": "node4", "a3": "node5"}
    assert _found(inst, bad) == [("tier", "GangGroup/default/t/A1")]

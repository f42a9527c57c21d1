"""A hard-limited job with a running pod on a node outside every HyperNode of an allowed tier:
any pod added makes its pods span a HyperNode above the limit, so every engine leaves it
pending (the checker rejects the plan otherwise)."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, hard, instance, nodes

import toposolve
from toposolve.core.instance import NetworkTopology
from toposolve.core.problem import compile_problem
from toposolve.engines.registry import engine_names

NAMES = {1: "rack", 2: "block", 3: "zone"}


def outside(topology: NetworkTopology):
    tree = [h.model_copy(update={"tier_name": NAMES[h.tier]}) for h in example1_tree()]
    lone = gang("a", 2, topology=topology, running={0: "node8"})  # node8: in no HyperNode
    return instance(nodes(9), tree, [lone, gang("b", 2, creation_index=1)])


def test_the_node_is_held_by_no_hypernode_of_an_allowed_tier():
    topo = compile_problem(outside(hard(1))).topology
    assert not topo.held_at_or_below(8, 1) and not topo.held_at_or_below(8, 3)
    assert topo.held_at_or_below(0, 1) and not topo.held_at_or_below(0, 0)
    assert topo.held_at_or_below(8, topo.max_tier)  # the virtual root holds every node


@pytest.mark.parametrize("topology", [hard(1), hard(2),
                                      NetworkTopology(mode="hard", highest_tier_name="rack")])
@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_every_engine_leaves_it_pending(engine, topology):
    plan = toposolve.solve(outside(topology), engine)  # checked inside
    by_job = {j.job: j for j in plan.jobs}
    assert not by_job["default/a"].placed and by_job["default/b"].placed
    assert not [b for b in plan.bindings if b.pod.startswith("default/a-")]


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_running_pods_already_spanning_two_allowed_domains_leave_it_pending(engine):
    split = gang("a", 3, topology=hard(1), running={0: "node0", 1: "node2"})  # racks s0, s1
    plan = toposolve.solve(instance(nodes(8), example1_tree(), [split, gang("b", 2)]), engine)
    by_job = {j.job: j for j in plan.jobs}
    assert not [b for b in plan.bindings if b.pod.startswith("default/a-")]
    assert by_job["default/b"].placed

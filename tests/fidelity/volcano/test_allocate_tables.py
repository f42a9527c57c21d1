"""Volcano's allocate-action test tables (``allocate_test.go``) run through the heuristic.

Each case asserts what the Go test asserts (``uthelper.TestCommonStruct.CheckAll`` /
``CheckBindInHyperNode``): the number of bind requests, the exact pod → node map unless the
case sets ``minimalBindCheck``, and the sorted bind counts per lowest-tier HyperNode. Where a
``minimalBindCheck`` case still lists a map, it is checked too unless ``staleBindMap`` says why
it cannot hold.
"""

from __future__ import annotations

from collections import Counter

import pytest
from fidelity.volcano.cases import case_params, instance_of

from toposolve import solve
from toposolve.core.topology import build_topology

TABLES = ("allocate_network_topologies", "allocate_partition_policy", "allocate_gangs")
PARAMS = [p for table in TABLES for p in case_params(table, pytest)]
TREES = [p for table in TABLES for p in case_params(table, pytest, tree=True)]


def _bind_nums_in_hypernode(case, bindings) -> list[int]:
    """Bind counts grouped by each node's HyperNode of the lowest tier
    (``FindHyperNodeForNode``)."""
    tiers = case["hypernodeTiers"]
    lowest = tiers[min(tiers)]
    owner = {n: hn for hn in lowest for n in case["hypernodeRealNodes"][hn]}
    return sorted(Counter(owner.get(b.node, "") for b in bindings).values())


@pytest.mark.parametrize("case", PARAMS)
def test_allocate_case_binds_as_the_go_test_asserts(case):
    instance = instance_of(case)
    plan = solve(instance, engine="heuristic")
    binds = {b.pod: b.node for b in plan.bindings if not b.nominated}
    expect = case["expect"]
    assert len(binds) == expect["bindsNum"], binds
    if "bindNumsInHyperNode" in expect:
        assert _bind_nums_in_hypernode(case, plan.bindings) == expect["bindNumsInHyperNode"]
    elif not expect.get("minimalBindCheck"):
        assert binds == expect.get("bindMap", {})
    elif "bindMap" in expect and "staleBindMap" not in expect:
        # beyond the Go test, which checks only the count here: the map it lists holds too
        assert {pod: binds.get(pod) for pod in expect["bindMap"]} == expect["bindMap"]
    assert not [b for b in plan.bindings if b.nominated]  # allocate never nominates


@pytest.mark.parametrize("case", PARAMS)
def test_cpsat_plan_is_valid_and_no_worse(case):
    """CP-SAT reads the same SubJobs (the checker agrees on them: ``solve`` checks every plan)
    and is never worse than the Volcano mirror on the profile's objective. It may place more:
    in ``TestAllocateWithPartitionPolicyNetworkTopology/8`` Volcano's SubJob prefilter (all
    three pending workers must fit one 2-node leaf) blocks a placement CP-SAT finds."""
    instance = instance_of(case)
    heuristic = solve(instance, engine="heuristic")
    cpsat = solve(instance, engine="cpsat", time_limit=5, workers=1, deterministic=True)
    assert (
        cpsat.stats["objective_stages"]["placed"] >= heuristic.stats["objective_stages"]["placed"]
    )


@pytest.mark.parametrize("case", TREES)
def test_tree_matches_real_node_sets(case):
    """The port is faithful: the tree's node sets are the Go test's ``HyperNodes`` sets."""
    instance = instance_of(case)
    topology = build_topology(instance.nodes, instance.hypernodes, source=case["name"])
    for name, nodes in case.get("hypernodeRealNodes", {}).items():
        row = topology.members[topology.index[name]].indices
        assert {topology.node_names[n] for n in row} == set(nodes), name

"""CP-SAT on gang trees deeper than job → SubJob: nested hard domains and gangs per level."""

from __future__ import annotations

from builders import example1_tree, gang, hard, instance, nested, nodes

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.gang_tree import min_pods


def _placed(inst) -> dict[str, str]:
    plan = toposolve.solve(inst, "cpsat", time_limit=20)  # raises on a checker violation
    return {b.pod.split("/", 1)[1]: b.node for b in plan.bindings}


def _pair(node: str) -> int:
    return int(node.removeprefix("node")) // 2  # the tier-1 HyperNode s0..s3 holding it


def test_each_group_gets_its_own_domain_where_the_two_level_stand_in_fits_nothing():
    job = nested("t", {"A": ["a0", "a1"], "B": ["b0", "b1"]}, group_topology=hard(1))
    inst = instance(nodes(8), example1_tree(), [job])
    got = _placed(inst)
    assert len(got) == 4
    assert (
        _pair(got["t-a0-0"]) == _pair(got["t-a1-0"]) != _pair(got["t-b0-0"]) == _pair(got["t-b1-0"])
    )
    assert toposolve.solve(inst, "volcano").bindings == []  # the stricter stand-in cannot


def test_a_group_needing_one_of_two_members_places_the_one_that_fits_its_domain():
    """Each member is two 8-GPU pods, a tier-1 pair holds two such pods: A takes one member."""
    job = nested("t", {"A": ["a0", "a1"]}, group_topology=hard(1), min_members={"A": 1}, pods=2)
    job.min_available = 2
    got = _placed(instance(nodes(8), example1_tree(), [job]))
    assert len(got) == 2 and len({_pair(n) for n in got.values()}) == 1
    assert len({pod.rsplit("-", 1)[0] for pod in got}) == 1  # both pods of one member


def test_nested_groups_stay_inside_their_parent_domain():
    """Depth 4: A (tier 2) holds A1 and A2 (tier 1); a running job fills s4's first pair."""
    job = nested("t", {"A1": ["a0", "a1"], "A2": ["a2", "a3"]}, group_topology=hard(1))
    job.gang_groups.insert(
        0, job.gang_groups[0].model_copy(update={"name": "A", "network_topology": hard(2)})
    )
    for g in job.gang_groups[1:]:
        g.parent = "A"
    busy = gang("busy", 2, running={0: "node0", 1: "node1"})
    got = _placed(instance(nodes(8), example1_tree(), [busy, job]))
    assert len(got) == 4 and {_pair(n) for n in got.values()} == {
        2,
        3,
    }  # s5: the only free tier-2 domain


def test_min_pods_takes_the_smallest_members():
    job = nested("t", {"A": ["a0", "a1", "a2"]}, min_members={"A": 2}, pods=2)
    p = compile_problem(instance(nodes(8), example1_tree(), [job]))
    assert min_pods(p, 0) == 4

"""The kube mirror's CompositePodGroup cycle on small hierarchies (every plan checked)."""

from __future__ import annotations

from tests.fidelity.kube.objects import composite, node
from toposolve import solve
from toposolve.formats.load import instance_from_bodies

# 2 zones x 2 racks x 2 nodes of 4 cpus
NODES = [node({"name": f"n{i}", "labels": {"zone": f"z{i // 4}", "rack": f"r{i // 2}"}})
         for i in range(8)]


def leaf(name, pods, cpu="1", minimum=None, key="rack"):
    return {"name": name, "key": key, "policy": {"minCount": minimum or pods},
            "pods": [{"name": f"{name}-{i}", "cpu": cpu} for i in range(pods)]}


def placed(tree):
    instance = instance_from_bodies([(d, "c.yaml") for d in [*NODES, *composite(tree)]], "c",
                                    lambda _: None)
    plan = solve(instance, "kube")  # solve checks the plan
    labels = {n.name: n.labels for n in instance.nodes}
    return {b.pod.split("/")[1]: labels[b.node] for b in plan.bindings}, plan


def test_a_three_level_hierarchy_keeps_each_level_in_one_domain():
    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 2}, "children": [
        {"name": "mid", "key": "rack", "policy": {"minGroupCount": 2},
         "children": [leaf("a", 3, key=None), leaf("b", 3, key=None)]},
        leaf("c", 6)]}
    where, plan = placed(tree)
    assert len(where) == 12 and all(j.placed for j in plan.jobs)
    assert len({w["zone"] for w in where.values()}) == 1
    assert len({where[p]["rack"] for p in where if p[0] in "ab"}) == 1  # 6 cpus: one rack
    assert len({where[p]["rack"] for p in where if p[0] == "c"}) == 1


def test_k_of_n_binds_the_children_that_succeed_only():
    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 1},
            "children": [leaf("big", 2, cpu="8"), leaf("small", 2)]}
    where, plan = placed(tree)
    assert sorted(where) == ["small-0", "small-1"]


def test_a_gang_of_children_out_of_reach_stays_pending_with_upstreams_text():
    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 2},
            "children": [leaf("big", 2, cpu="8"), leaf("small", 2)]}
    where, plan = placed(tree)
    assert not where
    # the root's first placement (z0): big fails, small alone cannot reach minGroupCount 2
    assert [j.reason for j in plan.jobs] == [
        "0/2 placements are available, first placement status: minCount (2) cannot be "
        "satisfied: 0 scheduled, 1 remaining"]
    # the event of big's first pod in its first rack (r0 of z0, two nodes of 4 cpus)
    assert [j.scheduler_reason for j in plan.jobs] == [
        "0/2 nodes are available: 2 Insufficient cpu."]


def test_a_childs_placement_generation_error_ends_the_whole_hierarchy():
    # "broken"'s running pods sit in two racks: TopologyPlacement returns an Error status,
    # which upstream wraps at each CompositePodGroup and which binds nothing, not even the
    # sibling that fits (a basic hierarchy would otherwise bind it)
    broken = {"name": "broken", "key": "rack", "policy": {"minCount": 1},
              "pods": [{"name": "run-0", "node": "n0"}, {"name": "run-1", "node": "n2"},
                       {"name": "new-0"}]}
    mid = {"name": "mid", "policy": "basic", "children": [broken]}
    tree = {"name": "root", "key": "zone", "policy": "basic",
            "children": [mid, leaf("ok", 1)]}
    where, plan = placed(tree)
    assert not where
    assert [j.reason for j in plan.jobs] == [
        "composite pod group evaluation failed due to child error: composite pod group "
        "evaluation failed due to child error: the group's running pods are not in exactly "
        "one domain of its topology key"]
    assert plan.jobs[0].scheduler_reason is None  # an Error status: no pod has a FitError


def test_the_first_placement_status_counts_the_children_tried():
    # small fits, big does not: after the last child 1 of 2 is scheduled, none remains
    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 2},
            "children": [leaf("small", 2), leaf("big", 2, cpu="8")]}
    where, plan = placed(tree)
    assert not where
    assert [j.reason for j in plan.jobs] == [
        "0/2 placements are available, first placement status: minCount (2) cannot be "
        "satisfied: 1 scheduled, 0 remaining"]


def test_a_basic_composite_whose_children_all_fail_is_a_failed_child():
    # GangScheduling's getMinCount gives a basic CompositePodGroup minCount 1: "mid" (its one
    # child does not fit) fails PlacementFeasible, so the root's minGroupCount 2 is out of
    # reach once it is evaluated, and "small", which fits, is not bound
    mid = {"name": "mid", "policy": "basic", "children": [leaf("big", 2, cpu="8")]}
    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 2},
            "children": [mid, leaf("small", 2)]}
    where, plan = placed(tree)
    assert not where
    assert [j.reason for j in plan.jobs] == [
        "0/2 placements are available, first placement status: minCount (2) cannot be "
        "satisfied: 0 scheduled, 1 remaining"]
    # a basic CompositePodGroup with one child that fits succeeds, and counts for its parent
    mid["children"] = [leaf("fits", 2)]
    where, plan = placed(tree)
    assert sorted(where) == ["fits-0", "fits-1", "small-0", "small-1"]


def test_a_basic_root_whose_children_all_fail_reports_its_min_count_of_one():
    tree = {"name": "root", "key": "zone", "policy": "basic",
            "children": [leaf("big", 2, cpu="8"), leaf("huge", 1, cpu="16")]}
    where, plan = placed(tree)
    assert not where
    assert [j.reason for j in plan.jobs] == [
        "0/2 placements are available, first placement status: minCount (1) cannot be "
        "satisfied: 0 scheduled, 0 remaining"]

"""A ``basic`` CompositePodGroup needs one child (GangScheduling's ``getMinCount``): the model
keeps the policy (``GangGroup.basic``) and its minimum 1, so the kube mirror, CP-SAT and the
checker agree that a basic group without a satisfied child is not satisfied."""

from __future__ import annotations

import pytest

from tests.fidelity.kube.objects import composite, node
from toposolve import check_plan, solve
from toposolve.core.instance import GangGroup
from toposolve.core.plan import Binding, Plan
from toposolve.formats.load import instance_from_bodies

# 2 zones x 2 racks x 2 nodes of 4 cpus
NODES = [node({"name": f"n{i}", "labels": {"zone": f"z{i // 4}", "rack": f"r{i // 2}"}})
         for i in range(8)]


def leaf(name, pods, cpu="1"):
    return {"name": name, "key": "rack", "policy": {"minCount": pods},
            "pods": [{"name": f"{name}-{i}", "cpu": cpu} for i in range(pods)]}


def instance(mid_children):
    """Root (minGroupCount 2) over a basic ``mid`` and a leaf ``small`` that fits."""
    mid = {"name": "mid", "policy": "basic", "children": mid_children}
    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 2},
            "children": [mid, leaf("small", 2)]}
    return instance_from_bodies([(d, "c.yaml") for d in [*NODES, *composite(tree)]], "c",
                                lambda _: None)


def test_a_basic_group_is_one_member_needed_and_keeps_its_policy():
    group = GangGroup(name="g", basic=True)
    assert (group.min_members, group.basic) == (1, True)
    assert GangGroup(name="g", min_members=1) != group  # a gang of one is written as a gang
    with pytest.raises(ValueError, match="a basic group needs one member"):
        GangGroup(name="g", basic=True, min_members=2)


@pytest.mark.parametrize("engine", ["kube", "cpsat"])
def test_no_engine_binds_siblings_a_basic_group_without_a_child_cannot_complete(engine):
    # mid's one child does not fit (8 cpus on 4-cpu nodes): mid is not satisfied, so the root's
    # minGroupCount 2 is out of reach and "small", which fits, stays pending
    assert solve(instance([leaf("big", 2, cpu="8")]), engine).bindings == []


@pytest.mark.parametrize("engine", ["kube", "cpsat"])
def test_a_basic_group_with_a_child_that_fits_counts_for_its_parent(engine):
    plan = solve(instance([leaf("fits", 2)]), engine)
    assert sorted(b.pod for b in plan.bindings) == [
        "default/fits-0", "default/fits-1", "default/small-0", "default/small-1"]


def test_the_checker_refuses_siblings_bound_beside_an_empty_basic_group():
    inst = instance([leaf("big", 2, cpu="8")])
    plan = Plan(engine="hand", status="feasible",
                bindings=[Binding(pod="default/small-0", node="n0"),
                          Binding(pod="default/small-1", node="n1")])
    found = {(v.kind, v.obj): v.message for v in check_plan(inst, plan)}
    # the empty basic mid is no satisfied member of the root
    assert found[("subgroup-gang", "GangGroup/default/root/root")] == (
        "1 members satisfied, the minimum is 2")
    # and the job's fewest pods count mid's cheapest child: 2 + 2
    assert found[("gang", "Job/default/root")] == "2 pods placed, minAvailable is 4"


@pytest.mark.parametrize("engine", ["kube", "cpsat"])
def test_a_basic_group_whose_child_already_runs_is_satisfied_without_new_pods(engine):
    # upstream's PodGroup run is feasible on running + scheduled >= minCount: "done" runs its
    # one pod, so mid counts for the root and "small" is bound
    done = {"name": "done", "key": "rack", "policy": {"minCount": 1},
            "pods": [{"name": "done-0", "node": "n0"}]}
    plan = solve(instance([done]), engine)
    assert sorted(b.pod for b in plan.bindings) == ["default/small-0", "default/small-1"]

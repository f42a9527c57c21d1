"""The kube reader's CompositePodGroup hierarchies: the job's gang tree, what is left out."""

from __future__ import annotations

import pytest

from tests.fidelity.kube.objects import composite, node
from toposolve.core.errors import InputError
from toposolve.core.instance import KUBE_PODGROUP_LABEL
from toposolve.formats.load import instance_from_bodies

NODES = [node({"name": f"n{i}", "labels": {"zone": f"z{i // 2}", "rack": f"r{i}"}})
         for i in range(4)]


def read(tree, extra=()):
    warnings: list[str] = []
    docs = [*NODES, *composite(tree), *extra]
    return instance_from_bodies([(d, "c.yaml") for d in docs], "c", warnings.append), warnings


def leaf(name, pods, minimum=1, key="rack"):
    return {"name": name, "key": key, "policy": {"minCount": minimum},
            "pods": [{"name": f"{name}-{i}"} for i in range(pods)]}


def test_a_two_level_hierarchy_is_one_job_with_its_gang_tree():
    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 1}, "children": [
        {"name": "mid", "policy": "basic", "children": [leaf("a", 2, 2)]}, leaf("b", 3, 2)]}
    instance, warnings = read(tree)
    assert not warnings
    (job,) = instance.jobs
    assert job.key == "default/root"
    groups = {g.name: g for g in job.gang_groups}
    assert (groups["root"].parent, groups["root"].min_members, groups["root"].basic) == (
        None, 1, False)
    # basic: one member, as GangScheduling's getMinCount counts it, the policy kept
    assert (groups["mid"].parent, groups["mid"].min_members, groups["mid"].basic) == (
        "root", 1, True)
    assert groups["root"].network_topology.mode == "hard"
    policies = {p.label_selector.match_labels[KUBE_PODGROUP_LABEL]: p
                for p in job.subgroup_policies}
    assert (policies["a"].parent, policies["a"].sub_group_size) == ("mid", 2)
    assert (policies["b"].parent, policies["b"].sub_group_size) == ("root", 2)
    # the fewest pods that satisfy the root: its cheapest child, the basic mid (one child: a's
    # two pods) or b (two pods)
    assert job.min_available == 2
    assert sorted(t.name for t in job.tasks) == ["a", "b"]


def test_broken_parts_are_left_out_with_one_warning_each():
    tree = {"name": "root", "policy": {"minGroupCount": 1},
            "children": [leaf("ok", 1), leaf("short", 1, minimum=3)]}
    orphan = composite(leaf("lost", 1))
    orphan[0]["spec"]["parentCompositePodGroupName"] = "nowhere"
    instance, warnings = read(tree, orphan)
    assert [p.label_selector.match_labels[KUBE_PODGROUP_LABEL]
            for p in instance.jobs[0].subgroup_policies] == ["ok"]
    assert len(warnings) == 2
    assert "PodGroup/default/short: left out of its CompositePodGroup (gang.minCount 3" in (
        warnings[0] + warnings[1])
    assert any("parent CompositePodGroup 'nowhere' is not in the input" in w for w in warnings)


def test_a_hierarchy_deeper_than_four_levels_is_skipped():
    tree = leaf("pg", 1)
    for level in range(4):
        tree = {"name": f"c{level}", "policy": "basic", "children": [tree]}
    instance, warnings = read(tree)
    assert not instance.jobs
    assert warnings == ["c.yaml: CompositePodGroup/default/c3: skipped (its hierarchy has 5 "
                        "levels; kube-scheduler accepts at most 4)"]


def test_a_parent_cycle_is_skipped_with_one_warning_per_member():
    a = composite({"name": "a", "policy": "basic", "children": [leaf("pg", 1)]})
    b = composite({"name": "b", "policy": "basic", "children": []})
    a[0]["spec"]["parentCompositePodGroupName"] = "b"
    b[0]["spec"]["parentCompositePodGroupName"] = "a"
    warnings: list[str] = []
    docs = [*NODES, *a, *b]
    instance = instance_from_bodies([(d, "c.yaml") for d in docs], "c", warnings.append)
    assert not instance.jobs
    assert sorted(w.split(": ")[1] for w in warnings) == ["CompositePodGroup/default/a",
                                                          "CompositePodGroup/default/b"]
    assert all("parents form a cycle" in w for w in warnings)


def test_a_bad_policy_is_one_line_naming_file_object_and_field():
    tree = {"name": "root", "policy": {"minGroupCount": 0}, "children": [leaf("pg", 1)]}
    with pytest.raises(InputError, match="must be at least 1") as err:
        read(tree)
    assert (err.value.file, err.value.obj) == ("c.yaml", "CompositePodGroup/default/root")
    assert err.value.field == "spec.schedulingPolicy.gang.minGroupCount"

"""The kueue engine's TAS path and subGroupPolicies it does not know: TAS places every pending pod
of a podset, so a SubJob that can never reach its ``subGroupSize`` (fewer pods than that) would
break its gang; the plan binds whole SubJobs only, the job only when its gang is then ready."""

from __future__ import annotations

from builders import GPU, example1_tree, instance, nodes, soft

import toposolve
from toposolve.check.checker import check_plan
from toposolve.core.instance import Job, LabelSelector, SubGroupPolicy, Task


def subgroup_job(sizes: list[int], min_sub_groups: int, min_available: int) -> Job:
    """SubJobs (label sg=k) of ``sizes[k]`` pods of one GPU unit each, subGroupSize 2."""
    return Job(name="sg", min_available=min_available,
               tasks=[Task(name=f"t{k}", replicas=n, requests={GPU: 1}, labels={"sg": str(k)})
                      for k, n in enumerate(sizes)],
               subgroup_policies=[SubGroupPolicy(
                   name="p", sub_group_size=2, min_sub_groups=min_sub_groups,
                   match_label_keys=["sg"], label_selector=LabelSelector(match_expressions=[
                       {"key": "sg", "operator": "Exists"}]))])


def solve_checked(inst):
    plan = toposolve.solve(inst, "kueue")
    assert plan.engine == "kueue"
    assert check_plan(inst, plan, eviction_mode="none") == []
    return plan


def test_a_lone_subjob_that_never_fills_leaves_the_job_unbound():
    """One pod in a SubJob of size 2: TAS would place it, but its gang can never be met."""
    plan = solve_checked(instance(nodes(8), example1_tree(), [subgroup_job([1], 1, 1)]))
    assert not plan.bindings and not plan.jobs[0].placed
    assert "subGroupSize" in plan.jobs[0].reason


def test_an_unfillable_subjob_beside_whole_ones_gives_a_valid_plan():
    """Kueue gives the short last slice no domain; whatever it decides, no lone pod is bound."""
    plan = solve_checked(instance(nodes(8), example1_tree(), [subgroup_job([2, 2, 1], 2, 4)]))
    assert "default/sg-t2-0" not in {b.pod for b in plan.bindings}


def test_a_gang_minimum_above_the_whole_slices_leaves_the_job_unbound():
    """Three pods, SubJobs of 2 and 1 (size 2, soft topology: Kueue slices), minAvailable 3:
    Kueue gives the short slice no domain and places 2 pods, fewer than the gang's 3."""
    job = subgroup_job([3], 1, 3)
    job.tasks[0].labels = {}
    job.tasks[0].pod_labels = {0: {"sg": "0"}, 1: {"sg": "0"}, 2: {"sg": "1"}}
    job.subgroup_policies[0].network_topology = soft()
    plan = solve_checked(instance(nodes(8), example1_tree(), [job]))
    assert not plan.bindings and not plan.jobs[0].placed

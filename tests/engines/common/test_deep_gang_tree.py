"""The deepest gang tree the model takes (MAX_GANG_DEPTH levels of GangGroups, each with a hard
domain) solves in every engine that handles trees: their recursive walks stay far inside
Python's recursion limit (a 300-deep KAI chain ended in RecursionError before the limit)."""

from __future__ import annotations

import pytest
from builders import GPU, example1_tree, hard, instance, nodes

import toposolve
from toposolve.core.instance import GangGroup, Job, LabelSelector, SubGroupPolicy, Task
from toposolve.core.limits import MAX_GANG_DEPTH


def deepest_job() -> Job:
    """GangGroups g0 → … → g63 (hard at tier 2), leaves a and b under the deepest one, leaf c
    under the top one; one 1-GPU pod per leaf."""
    groups = [GangGroup(name=f"g{k}", parent=f"g{k - 1}" if k else None, network_topology=hard(2))
              for k in range(MAX_GANG_DEPTH)]
    parents = {"a": groups[-1].name, "b": groups[-1].name, "c": "g0"}
    return Job(
        name="deep",
        min_available=3,
        tasks=[Task(name=leaf, replicas=1, requests={GPU: 1}, labels={"sg": leaf})
               for leaf in parents],
        subgroup_policies=[
            SubGroupPolicy(name="subgroup", sub_group_size=1, parent=parent,
                           label_selector=LabelSelector(match_labels={"sg": leaf}),
                           match_label_keys=["sg"])
            for leaf, parent in parents.items()
        ],
        gang_groups=groups,
    )


@pytest.mark.parametrize("engine", ["kai", "volcano", "cpsat"])
def test_the_deepest_tree_places_every_pod(engine):
    inst = instance(nodes(8), example1_tree(), [deepest_job()])
    plan = toposolve.solve(inst, engine, time_limit=20)  # raises on a checker violation
    assert len(plan.bindings) == 3

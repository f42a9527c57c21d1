"""The model's gang tree: at most MAX_GANG_DEPTH levels of GangGroups, checked in linear time,
whatever format built the job (the check lives in the Job model)."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from toposolve.core.instance import GangGroup, Job, SubGroupPolicy, Task
from toposolve.core.limits import MAX_GANG_DEPTH


def chained(depth: int) -> Job:
    groups = [GangGroup(name=f"g{k}", parent=f"g{k - 1}" if k else None) for k in range(depth)]
    policy = SubGroupPolicy(name="leaf", parent=f"g{depth - 1}")
    return Job(name="j", tasks=[Task(name="w", replicas=1)], gang_groups=groups,
               subgroup_policies=[policy])


def test_the_deepest_tree_is_accepted():
    assert len(chained(MAX_GANG_DEPTH).gang_groups) == MAX_GANG_DEPTH


def test_one_level_more_is_refused_naming_the_gang_group():
    with pytest.raises(ValidationError, match=f"GangGroup 'g{MAX_GANG_DEPTH}' is nested"):
        chained(MAX_GANG_DEPTH + 1)


def test_a_20000_deep_tree_is_refused_fast():
    start = time.perf_counter()
    with pytest.raises(ValidationError, match="levels deep"):
        chained(20_000)
    assert time.perf_counter() - start < 5  # the walk per GangGroup was quadratic


def test_a_cycle_is_still_refused():
    with pytest.raises(ValidationError, match="cycle"):
        Job(name="j", gang_groups=[GangGroup(name="a", parent="b"),
                                   GangGroup(name="b", parent="a")])

"""``toposolve.defrag``: plans with moves, reasons, limits, determinism and old plans."""

from __future__ import annotations

import json
import re

import pytest

from tests.builders import gang, hard, inner, leaf, nodes
from toposolve import Plan, defrag
from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.generate.defrag import TARGET, defrag_family


def test_plan_round_trips_with_moves_and_old_plans_read_without_them(tmp_path):
    fam = defrag_family(3, seed=1)
    plan = defrag(fam.instance, [TARGET])
    path = tmp_path / "plan.json"
    plan.write(path)
    again = Plan.read(path)
    assert again.moves == plan.moves and again.moves
    old = json.loads(path.read_text())
    del old["moves"]
    assert Plan.from_dict(old).moves == []
    assert "moves" not in Plan("x", "OK").to_dict()


def test_same_input_same_plan():
    fam = defrag_family(5, seed=2, k=7, lo=2, hi=3)
    a, b = (defrag(fam.instance, [TARGET]).to_dict(timings=False) for _ in range(2))
    assert a == b


def test_impossible_target_says_which_domain_came_closest():
    tree = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3", "node4"]),
            inner("spine", ["r0", "r1"], 2)]
    big = gang("big", 4, gpus=8000, topology=hard(1))
    plan = defrag(Instance(nodes=nodes(5, gpus=8000), hypernodes=tree, jobs=[big]),
                  ["default/big"])
    entry = plan.job("default/big")
    assert not entry.placed and not plan.moves and not plan.bindings
    assert entry.reason == ("no tier-1 HyperNode can hold 4 pods even if emptied of movable "
                            "jobs: the closest, r1 (3 nodes), holds 3")


def test_max_moves_and_targets_already_fitting():
    fam = defrag_family(4, seed=0, k=8)
    assert fam.minimum >= 1
    blocked = defrag(fam.instance, [TARGET], max_moves=fam.minimum - 1)
    assert blocked.stats["defrag"]["admitted"] == [] and not blocked.moves
    assert "could hold its 8 pods if emptied" in blocked.job(TARGET).reason
    easy = defrag_family(4, seed=0, k=6, lo=1, hi=1)  # a rack has 7 free nodes: no move needed
    plan = defrag(easy.instance, [TARGET])
    assert plan.stats["defrag"]["admitted"] == [TARGET] and plan.moves == []


def _final_nodes(instance: Instance, plan: Plan) -> dict[str, str]:
    """Every pod's node once the plan is carried out, from the instance and the plan alone."""
    where = {}
    for job in instance.jobs:
        for task in job.tasks:
            for index, node in task.running.items():
                where[f"{job.namespace}/{task.pod_name(job.name, index)}"] = node
    where.update({m.pod: m.to for m in plan.moves})
    where.update({b.pod: b.node for b in plan.bindings})
    return where


def _rack_of(instance: Instance) -> dict[str, str]:
    return {m.selector.exact_match: h.name for h in instance.hypernodes if h.tier == 1
            for m in h.members}


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
@pytest.mark.parametrize("admit", [[], [TARGET]])
def test_freed_racks_are_really_idle_in_the_final_state(engine, admit):
    fam = defrag_family(6, seed=0, k=6, lo=3, hi=4)
    plan = defrag(fam.instance, admit, engine=engine, free={1: 2})
    d = plan.stats["defrag"]
    assert len(d["freed"]) == 2 and "free_reason" not in d and d["admitted"] == admit
    assert check_plan(fam.instance, plan, eviction_mode="none") == []
    rack = _rack_of(fam.instance)
    busy = {rack[node] for node in _final_nodes(fam.instance, plan).values()}
    assert busy.isdisjoint(d["freed"])
    before = {rack[node] for node in _final_nodes(fam.instance, Plan("x", "OK")).values()}
    assert set(d["freed"]) <= before  # every rack held pods: the plan did the freeing
    if engine == "cpsat":
        assert d["proven_minimal"]
        assert d["move_cost"] <= defrag(fam.instance, admit, engine="greedy",
                                        free={1: 2}).stats["defrag"]["move_cost"]


def test_free_says_how_many_could_be_freed_when_fewer_than_asked():
    tree = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
            leaf("r2", ["node4", "node5"]), inner("spine", ["r0", "r1", "r2"], 2)]
    pinned = gang("pinned", 1, gpus=8000).model_copy(update={"movable": False})
    pinned.tasks[0].running = {0: "node0"}
    small = gang("small", 1, gpus=2000)
    small.tasks[0].running = {0: "node2"}
    instance = Instance(nodes=nodes(6, gpus=8000), hypernodes=tree, jobs=[pinned, small])
    for engine in ("cpsat", "greedy"):
        plan = defrag(instance, free={"1": 3}, engine=engine)
        d = plan.stats["defrag"]
        assert sorted(d["freed"]) == ["r1", "r2"]
        assert [m.pod for m in plan.moves] == ["default/small-worker-0"]
        assert plan.moves[0].to == "node1"
        assert d["free_reason"].startswith("freed 2 of the 3 tier-1 domains asked: 2 of the "
                                           "tier's 3 hold no pod that must stay")
    assert d["free_reason"].endswith("(not proven: greedy, move limit or time)")
    assert defrag(instance, free={1: 3}).stats["defrag"]["free_reason"].endswith("(proven)")


@pytest.mark.parametrize("free, words", [({7: 1}, "no HyperNode tier 7 to free (tiers: 1, 2)"),
                                         ({1: 0}, "must be a positive integer, not 0")])
def test_bad_free_is_one_line(free, words):
    fam = defrag_family(2, seed=0)
    with pytest.raises(InputError, match=re.escape(words)):
        defrag(fam.instance, free=free)

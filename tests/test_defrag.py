"""``toposolve.defrag``: plans with moves, reasons, limits, determinism and old plans."""

from __future__ import annotations

import json

from tests.builders import gang, hard, inner, leaf, nodes
from toposolve import Plan, defrag
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

"""The aggregated lower bound of ``fragmentation`` against the optimum found by trying every plan
of tiny instances, and the runner's use of it (same plan, proven sooner)."""

from __future__ import annotations

from builders import example1_tree, gang, instance, nodes
from whole_node_plans import CLASSES, floor_run, lexicographic_optimum, random_instance

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.solve import runner
from toposolve.engines.cpsat.solve.fragmentation_bound import fragmentation_lower_bound

SEEDS, HITS = 30, 25


def test_bound_never_above_the_optimum_after_spread_and_mostly_on_it():
    hits = 0
    for seed in range(SEEDS):
        inst = random_instance(seed)
        problem = compile_problem(inst)
        placed, spread, fragmentation = lexicographic_optimum(
            inst, problem, ("spread", "fragmentation"))
        floor, _ = fragmentation_lower_bound(PlacementModel(problem), {"placed": placed},
                                             {"spread": spread}, 5.0)
        assert floor is not None, seed
        assert floor <= fragmentation, seed
        hits += floor == fragmentation
    assert hits >= HITS  # tight where nothing but whole-node packing decides


def test_bound_never_above_the_optimum_right_after_placed():
    """Without a ``spread`` cap (a profile ``placed > fragmentation``) the bound still holds."""
    hits = 0
    for seed in range(0, SEEDS, 3):
        inst = random_instance(seed)
        problem = compile_problem(inst)
        placed, fragmentation = lexicographic_optimum(inst, problem, ("fragmentation",))
        floor, _ = fragmentation_lower_bound(PlacementModel(problem), {"placed": placed}, {}, 5.0)
        assert floor is not None and floor <= fragmentation, seed
        hits += floor == fragmentation
    assert hits >= 8  # of 10


def test_not_built_where_units_may_be_partly_placed():
    inst = instance(nodes(4), example1_tree()[:2],
                    [gang("elastic", 3, min_available=1), gang("g", 2)], CLASSES)
    problem = compile_problem(inst)
    assert fragmentation_lower_bound(PlacementModel(problem), {"placed": 1}, {},
                                     1.0) == (None, 0.0)


def test_not_built_without_a_tree():
    inst = instance(nodes(4), [], [gang("a", 1), gang("b", 2)], CLASSES)
    problem = compile_problem(inst)
    assert fragmentation_lower_bound(PlacementModel(problem), {"placed": 2}, {},
                                     1.0) == (None, 0.0)
    assert toposolve.solve(inst, engine="cpsat").stats["stages"]


def test_runner_stops_at_the_bound_with_the_same_plan(monkeypatch):
    """On an overloaded superpod the fragmentation stage gets a floor at most its value, and the
    plan is the one the search reaches without it."""
    floor_run(monkeypatch, runner, "fragmentation_lower_bound", "fragmentation", load=1.3)

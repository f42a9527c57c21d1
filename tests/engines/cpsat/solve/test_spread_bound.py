"""The aggregated lower bound of ``spread`` against the optimum found by trying every plan of
tiny instances, and the runner's use of it (same plan, proven sooner)."""

from __future__ import annotations

from builders import example1_tree, gang, instance, nodes
from whole_node_plans import CLASSES, floor_run, lexicographic_optimum, random_instance

from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.solve import runner
from toposolve.engines.cpsat.solve.spread_bound import spread_lower_bound

SEEDS, HITS = 30, 25


def test_bound_never_above_the_optimum_and_mostly_on_it():
    hits = 0
    for seed in range(SEEDS):
        inst = random_instance(seed)
        problem = compile_problem(inst)
        placed, spread = lexicographic_optimum(inst, problem)
        floor, _ = spread_lower_bound(PlacementModel(problem), {"placed": placed}, 5.0)
        assert floor is not None
        assert floor <= spread, seed
        hits += floor == spread
    assert hits >= HITS  # tight where nothing but whole-node packing decides


def test_not_built_where_units_may_be_partly_placed():
    inst = instance(nodes(4), example1_tree()[:2],
                    [gang("elastic", 3, min_available=1), gang("g", 2)], CLASSES)
    problem = compile_problem(inst)
    assert spread_lower_bound(PlacementModel(problem), {"placed": 1}, 1.0) == (None, 0.0)


def test_runner_stops_at_the_bound_with_the_same_plan(monkeypatch):
    """On an overloaded superpod the stage ends proven at the bound, and the plan is the one the
    search reaches without it (stopping at a value nothing beats changes no solution)."""
    floor_run(monkeypatch, runner, "spread_lower_bound", "spread", load=1.2)

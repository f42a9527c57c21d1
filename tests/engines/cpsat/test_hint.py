"""Warm starts (engines/cpsat/hint.py): a complete hint from an assignment and whether the model
accepts it. Seed 000's Example 1 of eight identical 8-GPU nodes; `a` is 2 × 8 GPUs hard at
tier 1 (one rack), `b` one 8-GPU pod."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, hard, instance, nodes

from toposolve.engines.assignment import Assignment
from toposolve.engines.cpsat.hint import hint_from_assignment, hint_is_feasible
from toposolve.engines.cpsat.model import PlacementModel
from toposolve.engines.cpsat.parameters import Settings
from toposolve.problem import compile_problem

SETTINGS = Settings(time_limit=5, workers=1, seed=0, deterministic=True, log=False)


@pytest.fixture(scope="module")
def model():
    problem = compile_problem(instance(nodes(8), example1_tree(), [gang("a", 2, topology=hard(1)), gang("b", 1)]))
    return problem, PlacementModel(problem)


def hint_of(model, *placements):
    problem, pm = model
    assignment = Assignment()
    for group, node, count in placements:
        assignment.add(group, node, count)
    hint = hint_from_assignment(problem, pm.vars, assignment)
    return hint, hint_is_feasible(pm.model, hint.values, SETTINGS, 1.0)


def test_a_valid_plan_gives_a_complete_feasible_hint(model):
    hint, feasible = hint_of(model, (0, 0, 1), (0, 1, 1), (1, 4, 1))
    assert (hint.complete, hint.dropped, hint.fits_nodes, feasible) == (True, 0, True, True)


def test_a_plan_breaking_a_rule_gives_an_infeasible_hint(model):
    assert hint_of(model, (0, 0, 1), (0, 2, 1))[1] is False  # `a` across two racks: tier 2 > 1
    assert hint_of(model, (0, 0, 1))[1] is False  # half a gang


def test_an_overfull_node_is_caught_by_the_hint_not_the_aggregated_model(model):
    """Identical nodes share one class in the model, so it sees 16 GPUs of `a` in a class of
    idle room, not two 8-GPU pods on one node: only ``fits_nodes`` tells."""
    hint, feasible = hint_of(model, (0, 0, 2))
    assert hint.fits_nodes is False and feasible is True

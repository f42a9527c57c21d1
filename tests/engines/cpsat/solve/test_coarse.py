"""When the coarse model is used
(:func:`toposolve.engines.cpsat.solve.coarse.aggregation_level`)."""

from __future__ import annotations

from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.classes import build_levels
from toposolve.engines.cpsat.solve.coarse import aggregation_level
from toposolve.generate import generate


def superpod():
    return compile_problem(generate("superpod", nodes=128, load=0.8, seed=3, leaf_size=16))


def test_a_small_cluster_gets_the_exact_model():
    assert aggregation_level(superpod()) == 0


def test_a_smaller_budget_never_gives_a_lower_level():
    problem = superpod()
    levels = [aggregation_level(problem, budget) for budget in (1, 10, 100, 1_000, 10_000, 100_000)]
    assert levels == sorted(levels, reverse=True)
    assert levels[0] > 0 and levels[-1] == 0


def test_even_a_budget_nothing_meets_stays_below_the_root():
    problem = superpod()
    assert aggregation_level(problem, 0) == build_levels(problem).root_level - 1

"""The model's bound on overloaded clusters: redundant knapsacks over whole gangs.

Seed 000's Example-1 tree (see ``test_cpsat_constraints.py``), nodes of 8 GPUs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from builders import example1_tree, gang, hard, instance, nodes

from toposolve.engines.cpsat.model import PlacementModel
from toposolve.generate import generate
from toposolve.problem import compile_problem

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: find the helper
from cpsat_support import solve_checked  # noqa: E402


def _linear_over(pm: PlacementModel, literals) -> list:
    """Linear constraints whose variables are exactly ``literals``."""
    wanted = sorted(v.index for v in literals)
    return [
        c.linear for c in pm.model.proto.constraints
        if c.has_linear() and sorted(c.linear.vars) == wanted
    ]


def test_every_job_enters_the_root_knapsack_with_its_placed_literal():
    # 8 free nodes; the three gangs need 5 + 4 + 3 whole nodes: at the root (and in no single
    # tier-2 domain of 4 nodes for the 5-pod gang) they cannot all be placed
    jobs = [gang("a", 5), gang("b", 4, topology=hard(3)), gang("c", 3)]
    pm = PlacementModel(compile_problem(instance(nodes(8), example1_tree(), jobs)))
    knapsacks = _linear_over(pm, pm.vars.y.values())
    assert len(knapsacks) == 1
    (root,) = knapsacks
    coef = dict(zip(root.vars, root.coeffs, strict=True))
    # coefficients are the gangs' least GPUs (40, 32, 24) over their gcd, capacity 64 / 8
    assert sorted(coef.values()) == [3, 4, 5]
    assert list(root.domain)[-1] == 8


def test_jobs_with_their_own_domain_choice_are_not_counted_twice_at_that_level():
    # "b" chooses among tier-2 domains (hard limit): its choice literals are its knapsack terms
    # there, its placed literal only at the root (5 + 4 nodes > 8)
    jobs = [gang("a", 5), gang("b", 4, topology=hard(2))]
    pm = PlacementModel(compile_problem(instance(nodes(8), example1_tree(), jobs)))
    b = next(uv for uv in pm.vars.units if uv.kind == "job" and uv.hard_domain)
    assert len(_linear_over(pm, pm.vars.y.values())) == 1
    for choose in b.hard_domain.values():
        assert not _linear_over(pm, [choose, pm.vars.y[b.index]])


def test_overloaded_superpod_is_proven_optimal():
    # issue 13's example: 96 nodes in 16-node units at twice the demand. Before these
    # knapsacks the placed stage reached its optimum and never closed the bound (FEASIBLE after
    # 20 s); deterministic budget, so the same work on any machine
    inst = generate("superpod", nodes=96, load=2.0, seed=1, leaf_size=16)
    solved = solve_checked(inst, time_limit=10, deterministic=True)
    placed = solved.result.stats["stages"][0]
    assert placed["stage"] == "placed" and placed["status"] == "OPTIMAL"
    assert solved.result.gap == 0

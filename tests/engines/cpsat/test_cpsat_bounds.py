"""The model's bound on overloaded clusters: redundant knapsacks over whole gangs.

Seed 000's Example-1 tree (see ``test_cpsat_constraints.py``), nodes of 8 GPUs.
"""

from __future__ import annotations

from builders import example1_tree, gang, hard, instance, nodes
from cpsat_support import solve_checked

from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.generate import generate


def _linear_over(pm: PlacementModel, literals) -> list:
    """Linear constraints whose variables are exactly ``literals``."""
    wanted = sorted(v.index for v in literals)
    return [
        c.linear
        for c in pm.model.proto.constraints
        if c.has_linear() and sorted(c.linear.vars) == wanted
    ]


def test_every_job_enters_the_root_knapsack_with_its_placed_literal():
    # 8 free nodes; the three gangs need 5 + 4 + 3 whole nodes: at the root (and in no single
    # tier-2 domain of 4 nodes for the 5-pod gang) they cannot all be placed
    jobs = [gang("a", 5), gang("b", 4, topology=hard(3)), gang("c", 3)]
    pm = PlacementModel(compile_problem(instance(nodes(8), example1_tree(), jobs)))
    knapsacks = _linear_over(pm, pm.vars.y.values())
    # coefficients are the gangs' least GPUs (40, 32, 24) over their gcd, capacity 64 / 8 (the
    # same row in whole nodes: every pod takes a whole node), built once although s6 and the
    # root hold the same nodes
    rows = [(sorted(r.coeffs), list(r.domain)[-1]) for r in knapsacks]
    assert rows == [([3, 4, 5], 8)] * 2


def test_jobs_with_their_own_domain_choice_are_not_counted_twice_at_that_level():
    # "b" chooses among tier-2 domains (hard limit): its choice literals are its knapsack terms
    # there, its placed literal only at the root (5 + 4 nodes > 8)
    jobs = [gang("a", 5), gang("b", 4, topology=hard(2))]
    pm = PlacementModel(compile_problem(instance(nodes(8), example1_tree(), jobs)))
    b = next(uv for uv in pm.vars.units if uv.kind == "job" and uv.hard_domain)
    assert len(_linear_over(pm, pm.vars.y.values())) == 2  # GPUs and whole nodes, at the root
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


def test_whole_node_gangs_count_nodes_not_scattered_gpus():
    # node0 runs a 4-GPU pod: 28 free GPUs but only 3 free nodes. Two 2-node gangs of 8-GPU pods
    # fit by GPUs (32 > 28 says no too) but the node knapsack says it sharply: 2 + 2 > 3 nodes
    busy = gang("busy", 1, gpus=4, running={0: "node0"})
    jobs = [busy, gang("a", 2), gang("b", 2)]
    pm = PlacementModel(compile_problem(instance(nodes(4), [], jobs)))
    ys = [pm.vars.y[j] for j in sorted(pm.vars.y)]
    rows = [(list(r.coeffs), list(r.domain)[-1]) for r in _linear_over(pm, ys)]
    assert ([1, 1], 1) in rows  # in whole nodes: one of the two gangs
    solved = solve_checked(instance(nodes(4), [], jobs))
    assert len(solved.result.assignment.placed_jobs(solved.problem)) == 1


def test_the_coarse_model_bounds_each_later_stage_below_the_exact_optimum(monkeypatch):
    # the coarse model (forced here) reports a bound for spread and fragmentation too; a bound
    # must never pass the exact model's proven optimum
    from toposolve.engines.cpsat.solve import coarse

    inst = generate("superpod", nodes=128, load=0.8, seed=3, leaf_size=16)
    exact = solve_checked(inst, time_limit=20, deterministic=True)
    assert exact.result.status == "OPTIMAL"
    monkeypatch.setattr(coarse, "COUNT_BUDGET", 1)
    monkeypatch.setattr(coarse, "LIFT_BUDGET", -1)  # not the lifted exact model either
    coarse = solve_checked(inst, time_limit=20, deterministic=True)
    assert coarse.result.stats["aggregation_level"] >= 1
    records = {s["stage"]: s for s in coarse.result.stats["stages"]}
    assert list(records) == ["placed", "spread", "fragmentation"]
    assert records["placed"]["status"] == "OPTIMAL"
    for name in ("spread", "fragmentation"):
        record = records[name]
        assert record["bound"] is not None and record["gap"] is not None
        assert record["bound"] <= exact.result.objective.stages[name] + 1e-9
        assert record["bound"] <= record["objective"] + 1e-9
        assert record["objective"] == coarse.result.objective.stages[name]

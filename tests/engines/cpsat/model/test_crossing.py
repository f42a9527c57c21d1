"""CP-SAT with hard limits in a constraint tree (a Topology crossing the main tree): classes
split by the tree's domains, one domain chosen per unit, running pods pinning it; the
whole-gang knapsacks over the tree's domains and the spread stage for such jobs, the optimum
checked against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from builders import crossing_instance, gang, hard, in_cross
from cpsat_support import solve_checked

import toposolve
from toposolve.core.assignment import Assignment
from toposolve.core.instance import PriorityClass
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.candidates import build_candidates
from toposolve.engines.cpsat.model.crossing import (
    crossing_class_keys,
    crossing_knapsack_entries,
    domain_at,
    tree_domains,
)
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.policy.objective import stage_values


def test_domain_at_is_the_widest_domain_of_the_tree_within_the_tier():
    problem = compile_problem(crossing_instance([]))
    tree = problem.trees["cross"]
    names = [tree.names[domain_at(tree, n, 1)] if domain_at(tree, n, 1) >= 0 else None
             for n in range(8)]
    assert names == [None, "c0", "c0", "c1", "c1", "c2", "c2", None]
    assert tree.names[domain_at(tree, 3, 2)] == "cross" and domain_at(tree, 0, 2) == -1


def test_classes_never_straddle_a_domain_of_the_tree():
    problem = compile_problem(crossing_instance([gang("x", 2, topology=in_cross(1))]))
    keys = crossing_class_keys(problem, {})
    assert len({keys[1], keys[2]}) == 1 and keys[2] != keys[3]
    cands = build_candidates(problem)
    unit = cands.job_units[0]
    tree = problem.trees["cross"]
    for c, d in unit.crossing.items():
        assert {domain_at(tree, int(n), 1) for n in cands.classes.nodes[c]} == {d}
    plain = compile_problem(crossing_instance([gang("y", 2, topology=hard(1))]))
    assert crossing_class_keys(plain, {}) != {}  # the tree splits classes for every unit alike


def test_running_pods_pin_the_domain_and_no_domain_allows_nothing():
    problem = compile_problem(crossing_instance([
        gang("x", 3, topology=in_cross(1), running={0: "node3"}, min_available=1)]))
    cands = build_candidates(problem)
    dom = tree_domains(problem, problem.jobs[0].limit, cands.classes.nodes, [3])
    tree = problem.trees["cross"]
    assert {tree.names[d] for d in dom.tolist() if d >= 0} == {"c1"}
    split = tree_domains(problem, problem.jobs[0].limit, cands.classes.nodes, [2, 3])
    assert (split == -1).all()


def test_cpsat_keeps_a_job_in_one_domain_of_its_crossing_tree():
    # 2 whole nodes: only a leaf of the crossing tree holds them, across the main tree's leaves
    inst = crossing_instance([gang("x", 2, topology=in_cross(1)), gang("y", 2, topology=hard(1))])
    plan = toposolve.solve(inst, "cpsat", time_limit=5, workers=1)  # checked inside solve()
    by_job = {j.job: j for j in plan.jobs}
    assert by_job["default/x"].placed and by_job["default/y"].placed
    x = sorted(b.node for b in plan.bindings if b.pod.startswith("default/x-"))
    assert x in (["node1", "node2"], ["node3", "node4"], ["node5", "node6"])
    assert by_job["default/x"].hypernode in ("c0", "c1", "c2")
    assert np.unique([b.node for b in plan.bindings]).size == 4


def test_cpsat_says_a_crossing_trees_limit_keeps_a_job_out():
    # 3 whole nodes: no leaf of the crossing tree holds them (the main tree's s4 would)
    inst = crossing_instance([gang("x", 3, topology=in_cross(1))])
    plan = toposolve.solve(inst, "cpsat", time_limit=5, workers=1)
    (entry,) = plan.jobs
    assert not entry.placed and not plan.bindings
    assert entry.reason == ("its tier limits, one in constraint tree 'cross' (a Topology "
                            "crossing the main tree), leave no room for it")


# ---- whole-gang knapsacks and spread for jobs in constraint trees ---------------------------

MAIN_LEAVES = [{2 * k, 2 * k + 1} for k in range(4)]  # s0..s3 of crossing_instance
CROSS_LEAVES = [{2 * k + 1, 2 * k + 2} for k in range(3)]  # c0..c2 of its tree "cross"
CROSS_NODES = set().union(*CROSS_LEAVES)


def allowed(nodes: tuple[int, ...], limit: str | None) -> bool:
    """Whether whole-node pods on ``nodes`` keep the brute force's job limits."""
    chosen = set(nodes)
    if limit == "cross1":
        return any(chosen <= leaf for leaf in CROSS_LEAVES)
    if limit == "cross2":
        return chosen <= CROSS_NODES
    if limit == "main1":
        return any(chosen <= leaf for leaf in MAIN_LEAVES)
    return True


def brute_force(problem, limits: list[str | None]) -> tuple[int, int, int]:
    """The lexicographic optimum (most placed, least spread, least fragmentation) over every
    plan of the pending whole-node gangs (each gang on free nodes keeping its limit, or not)."""
    busy = {n for g in range(len(problem.group_job)) for n in problem.group_running[g]}
    jobs = [j for j in range(len(problem.jobs)) if problem.has_pending(j)]
    best = None

    def visit(k: int, used: set[int], plan: Assignment) -> None:
        nonlocal best
        if k == len(jobs):
            v = stage_values(problem, plan)
            key = (v["placed"], -v["spread"], -v["fragmentation"])
            best = key if best is None or key > best else best
            return
        j = jobs[k]
        (g,) = problem.jobs[j].groups
        visit(k + 1, used, plan)
        free = [n for n in range(problem.n_nodes) if n not in used and n not in busy]
        for nodes in itertools.combinations(free, len(problem.group_pending[g])):
            if allowed(nodes, limits[j]):
                for n in nodes:
                    plan.add(g, n, 1)
                visit(k + 1, used | set(nodes), plan)
                for n in nodes:
                    plan.counts[g][n] -= 1
                    if not plan.counts[g][n]:
                        del plan.counts[g][n]

    visit(0, set(), Assignment())
    assert best is not None
    return best[0], -best[1], -best[2]


LIMITS = {"cross1": in_cross(1), "cross2": in_cross(2), "main1": hard(1), None: None}


@pytest.mark.parametrize("seed", range(4))
def test_the_optimum_matches_brute_force_with_jobs_in_the_constraint_tree(seed):
    rng = np.random.default_rng(seed)
    kinds = ["cross1", "cross2", "cross1", "main1", None]
    jobs = [gang(f"j{i}", int(rng.integers(2, 4)) if kind in ("cross2", None) else 2,
                 topology=LIMITS[kind], priority_class=str(rng.choice(["low", "high"])))
            for i, kind in enumerate(kinds)]
    busy = rng.choice(8, size=int(rng.integers(1, 3)), replace=False).tolist()
    running = [gang(f"r{n}", 1, running={0: f"node{n}"}) for n in busy]
    inst = crossing_instance(running + jobs).model_copy(update={"priority_classes": [
        PriorityClass(name="low", value=1), PriorityClass(name="high", value=10)]})
    solved = solve_checked(inst, time_limit=20, workers=1)
    assert all(r["status"] == "OPTIMAL" for r in solved.result.stats["stages"])
    values = stage_values(solved.problem, solved.result.assignment)
    limits = [None] * len(running) + kinds
    assert (values["placed"], values["spread"], values["fragmentation"]) == brute_force(
        solved.problem, limits)


def test_the_spread_stage_scores_a_tree_job_by_its_main_tree_domain():
    # c0 and c2 each lie under one tier-2 HyperNode of the main tree (s4, s5); c1 spans the root
    inst = crossing_instance([gang("x", 2, topology=in_cross(1))])
    solved = solve_checked(inst, time_limit=10, workers=1)
    assert solved.nodes_of("x") in (["node1", "node2"], ["node5", "node6"])
    assert stage_values(solved.problem, solved.result.assignment)["spread"] == 2
    runs = {r["stage"]: r for r in solved.result.stats["stages"]}
    assert runs["spread"]["status"] == "OPTIMAL" and runs["spread"]["objective"] == 2


def test_jobs_choosing_one_tree_domain_share_a_knapsack_row():
    problem = compile_problem(crossing_instance([
        gang("x", 2, topology=in_cross(1)), gang("w", 2, topology=in_cross(1)),
        gang("y", 2, topology=hard(1))]))
    built = PlacementModel(problem)
    nodes = built.cands.classes.nodes
    rows = crossing_knapsack_entries(problem, nodes, built.vars.units)
    per_domain = {}
    for classes, entries in rows:
        held = sorted(int(n) for c in classes for n in nodes[c])
        per_domain[tuple(held)] = sorted(uv.index for uv, _ in entries)
    assert per_domain == {(1, 2): [0, 1], (3, 4): [0, 1], (5, 6): [0, 1]}  # not the main-tree y


def test_the_knapsacks_prove_an_overloaded_tree_domain_at_once():
    # four 2-node gangs in the 3 leaves of the crossing tree: one must wait; proven optimal
    inst = crossing_instance([gang(f"x{i}", 2, topology=in_cross(1)) for i in range(4)])
    solved = solve_checked(inst, time_limit=10, workers=1)
    placed = [j for j in solved.plan.jobs if j.placed]
    assert len(placed) == 3
    assert all(r["status"] == "OPTIMAL" for r in solved.result.stats["stages"])

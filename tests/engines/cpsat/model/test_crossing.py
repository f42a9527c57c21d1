"""CP-SAT with hard limits in a constraint tree (a Topology crossing the main tree): classes
split by the tree's domains, one domain chosen per unit, running pods pinning it."""

from __future__ import annotations

import numpy as np
from builders import crossing_instance, gang, hard, in_cross

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.candidates import build_candidates
from toposolve.engines.cpsat.model.crossing import crossing_class_keys, domain_at, tree_domains


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

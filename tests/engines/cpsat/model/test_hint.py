"""Hint encoding (:mod:`toposolve.engines.cpsat.model.hint`): a plan encoded as a hint, read back
as a
model solution and decoded, is the same plan — placements, and evictions when modelled."""

from __future__ import annotations

import random

from builders import example1_tree, gang, hard, instance, nodes
from freed_room_cases import idle_room_taken_by_a_bystander, leftover_room_of_a_stronger_victim
from ortools.sat.python import cp_model

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.cpsat.model.classes import Scope
from toposolve.engines.cpsat.model.eviction import build_eviction_spec
from toposolve.engines.cpsat.model.hint import Hint, hint_from_assignment, hint_is_feasible
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.post.disaggregate import disaggregate
from toposolve.engines.cpsat.solve.parameters import Settings
from toposolve.engines.cpsat.solve.plans import decoded
from toposolve.engines.volcano import run_heuristic
from toposolve.generate import generate
from toposolve.policy.objective import stage_values
from toposolve.policy.profiles import load_profile

PREEMPTION = load_profile("preemption")


def model_of(
    problem: Problem, mode: str | None = None, *, node_by_node: bool = False
) -> PlacementModel:
    scope = Scope(split_nodes=frozenset(range(problem.n_nodes))) if node_by_node else None
    return PlacementModel(problem, scope, build_eviction_spec(problem, mode) if mode else None)


def decode(pm: PlacementModel, hint: Hint) -> Assignment:
    """The plan of the model solution the hint spells out (every variable must have a value)."""
    solution = [hint.values[i] for i in range(len(pm.model.proto.variables))]
    node_counts, refine = disaggregate(pm.problem, pm.cands, pm.counts(solution))
    assert refine == []
    return decoded(pm, solution, node_counts)


def placed(a: Assignment) -> dict[int, dict[int, int]]:
    return {
        g: {n: c for n, c in per.items() if c} for g, per in a.counts.items() if any(per.values())
    }


def test_a_heuristic_plan_decodes_from_its_hint_to_the_same_placements():
    problem = compile_problem(generate("superpod", nodes=32, load=1.3, seed=1))
    plan = run_heuristic(problem, load_profile("lexicographic"))
    pm = model_of(problem, node_by_node=True)
    hint = hint_from_assignment(pm, plan)
    assert hint.complete and hint.fits_nodes and hint.dropped == 0
    assert len(hint.values) == len(pm.model.proto.variables)
    back = decode(pm, hint)
    assert placed(back) == placed(plan) and placed(plan)
    assert back.evicted == []


def test_a_heuristic_plan_with_evictions_decodes_from_its_hint_to_the_same_plan():
    for case, mode in (
        (idle_room_taken_by_a_bystander, "preempt"),
        (leftover_room_of_a_stronger_victim, "both"),
    ):
        problem = compile_problem(case())
        plan = run_heuristic(problem, PREEMPTION, evict=mode)
        assert plan.evicted  # the cases evict
        pm = model_of(problem, mode)
        hint = hint_from_assignment(pm, plan)
        assert hint.complete and hint.fits_nodes
        back = decode(pm, hint)
        assert placed(back) == placed(plan)
        assert sorted(back.evicted) == sorted(plan.evicted)
        assert stage_values(problem, back) == stage_values(problem, plan)


def test_with_node_classes_the_decoded_plan_is_as_good_and_encodes_to_the_same_hint():
    """Classes of identical nodes: the decoded pods may sit on other nodes of the same class,
    but every stage value and the hint itself are unchanged."""
    problem = compile_problem(generate("superpod", nodes=32, load=1.3, seed=1))
    plan = run_heuristic(problem, load_profile("lexicographic"))
    pm = model_of(problem)
    hint = hint_from_assignment(pm, plan)
    back = decode(pm, hint)
    assert stage_values(problem, back) == stage_values(problem, plan)
    assert hint_from_assignment(pm, back).values == hint.values


def test_an_evicted_pod_without_a_slot_makes_the_hint_incomplete():
    """`wall` (high priority) may be evicted by no one: the model has no slot for its pods."""
    problem = compile_problem(idle_room_taken_by_a_bystander())
    plan = run_heuristic(problem, PREEMPTION, evict="preempt")
    plan.evicted = [*plan.evicted, "default/wall-worker-0"]
    hint = hint_from_assignment(model_of(problem, "preempt"), plan)
    assert not hint.complete and hint.dropped == 1


def test_a_node_given_more_than_its_idle_room_does_not_fit():
    """Classes aggregate nodes, so the hint checks node capacity itself."""
    problem = compile_problem(generate("superpod", nodes=32, load=1.3, seed=1))
    pm = model_of(problem)
    g = next(g for g in range(len(problem.group_job)) if problem.group_pending[g])
    n = int(problem.group_feasible[g].nonzero()[0][0])
    crowded = Assignment()
    crowded.add(g, n, problem.group_pending_count(g))  # every pending pod of a group on one node
    hint = hint_from_assignment(pm, crowded)
    assert problem.group_pending_count(g) > 1 and not hint.fits_nodes


def test_the_model_accepts_the_hint_of_a_valid_plan_and_refuses_one_that_breaks_a_rule():
    """Example 1: `a` is 2 × 8 GPUs hard at tier 1 (one rack), `b` one 8-GPU pod."""
    problem = compile_problem(
        instance(nodes(8), example1_tree(), [gang("a", 2, topology=hard(1)), gang("b", 1)])
    )
    pm = model_of(problem)
    settings = Settings(time_limit=5, workers=1, seed=0, deterministic=True, log=False)

    def accepted(*placements: tuple[int, int, int]) -> bool:
        assignment = Assignment()
        for group, node, count in placements:
            assignment.add(group, node, count)
        return hint_is_feasible(
            pm.model, hint_from_assignment(pm, assignment).values, settings, 1.0
        )

    assert accepted((0, 0, 1), (0, 1, 1), (1, 4, 1))
    assert not accepted((0, 0, 1), (0, 2, 1))  # `a` across two racks: tier 2 > 1
    assert not accepted((0, 0, 1))  # half a gang


def test_a_check_that_runs_out_of_time_says_it_does_not_know():
    """Issue 19 §2: a check cut short is not a refusal (the stats say "unknown", not false).
    A feasible subset-sum equality over 60 large random weights is far beyond the check's
    smallest budget."""
    rng = random.Random(0)
    model = cp_model.CpModel()
    picks = [model.new_bool_var(f"x{i}") for i in range(60)]
    weights = [rng.randrange(10**6, 2 * 10**6) for _ in picks]
    target = sum(w for w in weights if rng.random() < 0.5)  # some subset reaches it
    model.add(sum(w * x for w, x in zip(weights, picks, strict=True)) == target)
    settings = Settings(time_limit=5, workers=1, seed=0, deterministic=True, log=False)
    assert hint_is_feasible(model, {}, settings, 0.01) is None

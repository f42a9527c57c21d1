"""The coarse strategy for clusters too large for the exact model.

Why: when the exact model would exceed :data:`COUNT_BUDGET` count variables (estimated as
pending groups × node classes, :func:`aggregation_level`), its presolve alone would eat the
budget. The classes are then taken per HyperNode of a higher tier and everything below is
relaxed (:mod:`.candidates`): the coarse model decides how many pods of each group are placed
and roughly where, and bounds the optimum; :mod:`.repack` turns that into a plan that respects
the real limits. Its status is at best ``FEASIBLE`` unless the later stages' coarse bounds
(:func:`_later_bounds`) are met too, its bound still bounds the exact optimum, and
``export_model`` writes it.
"""

from __future__ import annotations

import time

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.core.status import SolveStatus
from toposolve.engines.cpsat.model.candidates import build_candidates
from toposolve.engines.cpsat.model.classes import Scope, build_levels, class_homes
from toposolve.engines.cpsat.model.lift import all_units
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.post.repack import repack
from toposolve.engines.cpsat.solve.plans import coarse_plan, copy_assignment
from toposolve.engines.cpsat.solve.refill import knapsack_refill
from toposolve.engines.cpsat.solve.runner import Round, Run, Stage, StageRun, write_model
from toposolve.engines.cpsat.solve.stats import CpsatStats
from toposolve.engines.cpsat.solve.warmstart import start_from
from toposolve.policy.objective import evaluate, stage_values

COUNT_BUDGET = 100_000  # count variables above which the lifted or the coarse model is used
# lifted exact model (:mod:`.lift`): its count variables and domain literals per second of the
# time limit above which the coarse model is used instead. scale-6k's lifted model (76k) at a
# 60 s limit reaches the coarse model's `placed` gap; at 12,288 nodes in 32-node leaves lifting
# gains nothing (378k) and the coarse model stays (docs/cpsat-formulation.md, section 6)
LIFT_BUDGET = 2_000


def aggregation_level(problem: Problem, budget: int | None = None) -> int:
    """Lowest level whose classes keep the count variables within ``budget`` (0: exact model).

    Estimate: pending groups × classes, classes counted as distinct (class HyperNode, idle)
    among schedulable nodes (predicates ignored, so it errs towards the exact model)."""
    budget = COUNT_BUDGET if budget is None else budget
    levels = build_levels(problem)
    groups = sum(1 for g in range(len(problem.group_job)) if problem.group_pending[g])
    idle = np.maximum(problem.allocatable - problem.used, 0)[problem.schedulable]
    for level in range(levels.root_level):
        homes = class_homes(problem, levels, level)[problem.schedulable]
        keys = np.concatenate([homes[:, None], idle], axis=1)
        classes = len(np.unique(keys, axis=0)) if len(keys) else 0
        if groups * classes <= budget:
            return level
    return max(levels.root_level - 1, 0)


def lifted_size(problem: Problem) -> int:
    """Count variables and domain literals of the lifted exact model (:mod:`.lift`), read from
    its candidates (nothing of the CP-SAT model is built)."""
    cands = build_candidates(problem, Scope(lift=True))
    size = sum(len(a) for a in cands.allowed.values())
    for unit in all_units(cands):
        if unit.trivial:
            continue
        size += len(unit.hard_domains) if len(unit.hard_domains) > 1 else 0
        size += sum(len(d) for d in unit.spread_domains.values() if len(d) > 1)
    return size


def solve_coarse(run: Run, level: int, hint: Assignment | None, stats: CpsatStats,
                 export_model: str | None):
    """Large instances: the coarse model (relaxed below its aggregation level; lexicographic
    mode solves its first stage only) decides how many pods of each group are placed and
    roughly where, and bounds the optimum; :func:`repack` places them, inside the coarse
    model's domain of each job when it can. The plan is the best of that, the unguided
    repacking, the repacked hint, the hint's knapsack refill (:mod:`.refill`: its first level
    short of the knapsack bound, filled with other whole gangs) and the hint itself."""
    problem = run.problem
    stats.rounds = 1
    run.reporter.set_phase(f"building the coarse model (level {level})")
    pm = PlacementModel(problem, Scope(aggregate_level=level), check=run.budget.check)
    stats.build_seconds = round(time.perf_counter() - run.t0, 3)
    stats.record_size(pm.size())
    every = run.stages(pm)
    stages = every
    if run.spec.mode == "lexicographic":
        # only the first stage: below the aggregation level the later stages are too relaxed to
        # guide the repacking (measured: no better plans, and their presolve costs the budget);
        # they only bound the plan's later stages (_later_bounds)
        stages = [s for s in every if s.name == every[0].name]
    if export_model:
        write_model(pm, stages, export_model)
    run.incumbent = None
    refilled = None
    if hint is not None and run.eviction is None:
        run.reporter.set_phase("refilling the warm start (knapsack)")
        refilled = knapsack_refill(problem, hint)
    if hint is not None:
        run.reporter.set_phase("checking the warm start")
        start_from(run, pm, [hint] + ([refilled] if refilled is not None else []), stats)
    outcome = Round()
    for solution in run.stage_solutions(pm, stages, outcome, total=len(every)):
        outcome.solution = solution
        run.set_hint(pm, dict(enumerate(solution)))
    bound = run.bound(stages, outcome) if outcome.runs else None
    best, status, runs = _coarse_best(run, pm, outcome, hint, refilled, stats)
    if best is not None and len(stages) == 1 and len(every) > 1:
        runs = runs + _later_bounds(run, pm, stages[0], every[1:], outcome, best)
        if (
            status == SolveStatus.FEASIBLE
            and len(runs) == len(every)
            and all(r.status == SolveStatus.OPTIMAL for r in runs)
        ):
            status = SolveStatus.OPTIMAL  # every stage's bound met by the repacked plan: proven
    return (best or Assignment()), status, bound, runs


def _coarse_best(run: Run, pm: PlacementModel, outcome: Round, hint: Assignment | None,
                 refilled: Assignment | None, stats: CpsatStats):
    """The best of the coarse solution's repackings, the repacked hint, the hint's knapsack
    refill (:mod:`.refill`) and the hint (ties: in that order)."""
    problem = run.problem
    options: list[tuple[str, Assignment]] = []
    repacks: list[tuple[str, Assignment, dict[int, int] | None]] = []
    if outcome.solved:
        totals, guide = coarse_plan(pm, outcome.solution)
        repacks += [
            ("coarse-cpsat+guided-repack", totals, guide),
            ("coarse-cpsat+repack", totals, None),
        ]
    if hint is not None:
        repacks.append(("hint+repack", hint, None))
    run.reporter.set_phase("repacking the coarse plan node by node")
    for name, plan, guide in repacks:
        if time.perf_counter() >= run.budget.deadline and options:
            run.budget.note(f"{name} skipped")  # past the deadline: keep what is packed already
            continue
        packed = repack(problem, plan, guide=guide)
        if packed is not None:
            options.append((name, packed))
    if refilled is not None:
        options.append(("hint+knapsack-refill", refilled))
    if hint is not None:
        options.append(("hint", copy_assignment(hint)))
    if not options:
        stats.plan_source = None
        return (None, (SolveStatus.INFEASIBLE if outcome.infeasible else SolveStatus.UNKNOWN),
                outcome.runs)
    best_name, best = options[0]
    best_value = evaluate(problem, best, run.spec, run.comm)
    for name, candidate in options[1:]:
        value = evaluate(problem, candidate, run.spec, run.comm)
        if value.better(best_value):
            best_name, best, best_value = name, candidate, value
    stats.plan_source = best_name
    status = SolveStatus.FALLBACK if best_name == "hint" else SolveStatus.FEASIBLE
    return best, status, outcome.runs


def _later_bounds(run: Run, pm: PlacementModel, first: Stage, later: list[Stage], outcome: Round,
                  plan: Assignment) -> list[StageRun]:
    """Bounds of the coarse plan's later stages (spread, fragmentation) from the coarse model.

    Valid only when the first stage is proven and the plan reaches its optimum ``P``: then every
    exact plan that is lexicographically as good has ``first = P`` and maps to a coarse solution
    with ``first ≥ P`` whose relaxed later stages are no worse; each later stage is minimised
    with the earlier ones held at the *plan's* values (which are at least their optima), so its
    bound is a lower bound of what any plan with the plan's earlier values can reach. The record
    carries the plan's value, that bound and the gap; ``OPTIMAL`` when they meet."""
    runs = outcome.runs
    values = stage_values(run.problem, plan, run.comm)
    if (
        not runs
        or runs[-1].status != SolveStatus.OPTIMAL
        or values.get(first.name) != runs[-1].value
    ):
        return []
    pm.model.add(first.expr >= runs[-1].value)
    out = []
    for k, stage in enumerate(later):
        mine = values.get(stage.name, 0)
        record = StageRun(stage.label, SolveStatus.UNKNOWN, mine, None, 0.0, 0.0, attempts=0)
        if not isinstance(stage.expr, int) and not run.budget.exhausted():
            run.reporter.start_stage(stage.label)
            pm.model.clear_objective()
            (pm.model.maximize if stage.maximise else pm.model.minimize)(stage.expr)
            solver, status = run.search(pm, stage, 1.0 / (len(later) - k), None)
            record.attempts, record.seconds, record.deterministic_time = (1, solver.wall_time,
                                                                          solver.deterministic_time)
            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                record.bound = solver.best_objective_bound
                reached = (
                    mine <= record.bound + 1e-9
                    if stage.maximise is False
                    else mine >= record.bound - 1e-9
                )
                record.status = SolveStatus.OPTIMAL if reached else SolveStatus.FEASIBLE
        elif isinstance(stage.expr, int):  # relaxed away in the coarse model: that is its bound
            record.bound = float(stage.expr)
            record.status = SolveStatus.OPTIMAL if mine == stage.expr else SolveStatus.FEASIBLE
        else:
            run.budget.note(f"{stage.label} bound not searched")
        run.stage_ended(record)
        out.append(record)
        if not isinstance(stage.expr, int):  # held at the plan's value for the next stage
            pm.model.add(stage.expr >= mine if stage.maximise else stage.expr <= mine)
    return out

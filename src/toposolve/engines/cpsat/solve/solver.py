"""``solve_cpsat``: choose the exact or the coarse strategy, then settle the final status,
bound, plan and stats.

Rules and rationale: ``docs/cpsat-formulation.md``, section
``toposolve.engines.cpsat.solve.solver``.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from toposolve.core.assignment import Assignment
from toposolve.core.errors import InputError
from toposolve.core.problem import Problem
from toposolve.core.status import SolveStatus
from toposolve.engines.contract import EngineResult, SolveOptions, proven_bound
from toposolve.engines.cpsat.model.eviction import (
    EvictionSpec,
    build_eviction_spec,
    disruption,
    nominated_jobs,
)
from toposolve.engines.cpsat.model.gpu_frag import NODE_STAGES
from toposolve.engines.cpsat.post.explain import explain_pending
from toposolve.engines.cpsat.solve import coarse
from toposolve.engines.cpsat.solve.budget import OutOfTime
from toposolve.engines.cpsat.solve.coarse import aggregation_level, lifted_size, solve_coarse
from toposolve.engines.cpsat.solve.exact import solve_exact
from toposolve.engines.cpsat.solve.parameters import resolve_settings
from toposolve.engines.cpsat.solve.plans import copy_assignment, set_domains
from toposolve.engines.cpsat.solve.runner import Run
from toposolve.engines.cpsat.solve.stats import CpsatStats
from toposolve.policy.objective import evaluate, stage_values
from toposolve.policy.profiles import Profile, for_eviction
from toposolve.policy.rules import EVICT_MODES

CpsatResult = EngineResult  # the name this engine's result had before the engine contract


def solve_cpsat(problem: Problem, profile: Profile, options: SolveOptions | None = None,
                hint: Assignment | None = None) -> EngineResult:
    """Place the whole pending queue with CP-SAT (see the package docstring); the engine
    contract's ``solve`` (:mod:`toposolve.engines.contract`).

    ``options`` (default: the profile's settings): time limit, workers, seed, deterministic,
    log, progress, export_model, raw parameters, evict, deadline. ``options.deadline``: the
    :class:`~toposolve.core.deadline.Deadline` to honour (default: one starting now, from the
    time limit); :func:`toposolve.solve` starts it before the warm start.

    ``options.evict``: also decide which running pods to evict for pending gangs (preempt,
    reclaim or both; :mod:`.eviction`). ``hint`` — :func:`toposolve.solve` gives the
    heuristic's plan with the same evictions — is the warm start and the fallback;
    ``stats["eviction"]`` compares the disruption of the two plans. Eviction always uses the
    exact model.
    """
    options = options or SolveOptions()
    settings = resolve_settings(profile, options)
    if options.deadline is not None:  # the deadline's limit and mode are the run's
        settings = dataclasses.replace(settings, time_limit=float(options.deadline.limit),
                                       deterministic=options.deadline.deterministic)
    evict = options.evict
    spec = None
    if evict is not None:
        if evict not in EVICT_MODES:
            raise InputError(f"must be one of {', '.join(EVICT_MODES)}, not {evict!r}",
                             field="evict")
        profile = for_eviction(profile, evict)
        spec = build_eviction_spec(problem, evict)
    run = Run(problem, profile, settings, options.progress, spec, options.deadline)
    stats = CpsatStats()
    # constraint trees (crossing Topologies): only the exact model knows them (model/crossing.py)
    # per-device sharing too: the coarse and lifted models pool a node's devices (model/devices.py)
    level = 0 if problem.trees or problem.has_devices else aggregation_level(problem)
    # too large for the plain exact model: the lifted one (still exact) when it fits its budget
    # lifted classes hold several nodes, which the per-node stages cannot see one by one
    run.lift = (
        level > 0
        and spec is None
        and not any(s.name in NODE_STAGES for s in profile.objective.stages)
        and lifted_size(problem) <= coarse.LIFT_BUDGET * settings.time_limit
    )
    level = 0 if run.lift else level
    stats.aggregation_level, stats.lifted = level, run.lift
    # keep time for the reasons and, for the coarse model, for turning its counts into a plan
    run.budget.reserve = min(5.0, 0.1 * settings.time_limit) * (2 if level > 0 else 1)
    with run.reporter:
        return _finish(run, level, hint, stats, options.export_model, evict)


def _finish(run: Run, level: int, hint: Assignment | None, stats: CpsatStats,
            export_model: str | None, evict):
    """Solve, fall back, explain: the rest of :func:`solve_cpsat` (progress reported)."""
    problem, spec = run.problem, run.eviction
    try:
        assignment, status, bound, all_runs = _solve_model(run, level, hint, stats, export_model)
    except OutOfTime:  # the model was not built in time: the warm start, if any
        assignment, status, bound, all_runs = (
            copy_assignment(hint) if hint is not None else Assignment(),
            SolveStatus.FALLBACK,
            None,
            [],
        )
        if hint is None:
            status = SolveStatus.UNKNOWN
    objective = evaluate(problem, assignment, run.spec, run.comm)
    if level == 0 and hint is not None:
        hinted = evaluate(problem, hint, run.spec, run.comm)
        if not status.found or hinted.better(objective):
            assignment, objective, status = copy_assignment(hint), hinted, SolveStatus.FALLBACK
            stats.plan_round = None  # the warm start came back, not a round's plan
    if spec is not None:
        if status != SolveStatus.FALLBACK:  # the heuristic's plan keeps its own nominations
            assignment.nominated_jobs = nominated_jobs(problem, assignment)
        stats.eviction = _eviction_stats(problem, evict, spec, hint, assignment)
        assignment.stats["eviction"] = stats.eviction
    set_domains(problem, assignment)
    assignment.reasons = _reasons(run, assignment, status, level)
    stats.stages = [r.as_dict() for r in all_runs]
    stats.repacked_hints = run.repacked
    stats.cut_short = list(run.budget.cut_short)
    return EngineResult(
        assignment=assignment,
        status=status,
        objective=objective,
        bound=proven_bound(objective.scalar, bound),
        wall_time_s=time.perf_counter() - run.t0,
        stats=stats,
    )


def _solve_model(run: Run, level: int, hint: Assignment | None, stats: CpsatStats,
                 export_model: str | None):
    """The exact or the coarse model, or (evictions on a cluster too large for the exact
    model) the warm start."""
    if run.eviction is not None and level > 0:
        # evictions are decided node by node, so only the exact model has them; it would be too
        # large here (the coarse model's trigger): the heuristic's plan is returned
        stats.eviction_model = (
            f"not built: over {coarse.COUNT_BUDGET} count variables; heuristic plan returned"
        )
        return (copy_assignment(hint) if hint is not None else Assignment(), SolveStatus.FALLBACK,
                None, [])
    if level > 0:
        return solve_coarse(run, level, hint, stats, export_model)
    return solve_exact(run, hint, stats, export_model)


def _reasons(run: Run, assignment: Assignment, status: SolveStatus, level: int) -> dict[int, str]:
    """Reasons for the pending jobs within what is left of the limit (at most 5 s). In
    deterministic mode their solves share a fixed deterministic budget (the same reasons every
    run) and the deadline only stops them."""
    settings, budget = run.settings, run.budget
    if settings.deterministic:
        share = min(5.0, max(1.0, 0.1 * settings.time_limit))
    else:
        share = min(5.0, max(0.0, budget.deadline - time.perf_counter()))
    run.reporter.set_phase("explaining the pending jobs")
    reasons = explain_pending(run.problem, assignment, settings, share, status, level,
                              deadline=budget.deadline)
    undecided = sum(1 for text in reasons.values() if text.startswith("could not determine"))
    if undecided:
        budget.note(
            f"reasons of {undecided} pending job{'s' if undecided > 1 else ''} not determined"
        )
    return reasons


def _eviction_stats(problem: Problem, mode: str | None, spec: EvictionSpec,
                    hint: Assignment | None, plan: Assignment) -> dict[str, Any]:
    """Disruption of the returned plan against the heuristic's (the warm start)."""
    mine = disruption(stage_values(problem, plan))
    out: dict[str, Any] = {
        "mode": mode,
        "victim_jobs": len(spec.victims),
        "slots": len(spec.slots),
        "evictable_pods": sum(len(s.pods) for s in spec.slots),
        "cpsat": mine,
        "nominated_jobs": len(plan.nominated_jobs),
    }
    if hint is not None:
        theirs = disruption(stage_values(problem, hint))
        out["volcano"] = theirs
        out["saved"] = {k: theirs[k] - mine[k] for k in mine}
        out["placed"] = {
            "volcano": stage_values(problem, hint)["placed"],
            "cpsat": stage_values(problem, plan)["placed"],
        }
    return out

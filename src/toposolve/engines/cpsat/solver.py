"""Solve the model stage by stage (or weighted), refine classes, explain, fall back.

Time: ``time_limit`` counts from ``started`` (:func:`toposolve.solve`'s start, so the warm
start is inside it) and covers everything: model building (which stops at the deadline and
returns the warm start), hints, every CP-SAT solve, and the work after the search, for which
``min(5, 0.1 × time_limit)`` seconds are kept back (twice that for the coarse model, which
still has to repack). In deterministic mode (the default) the searches are limited in
deterministic-time units and also capped at the deadline (:mod:`.budget`); whatever the limit
cut short is listed in ``stats["cut_short"]``. Lexicographic
stages split what is left: the stage about to run gets ``remaining × w / Σ w`` over the stages
not yet run, with ``w = 2`` for the first stage and 1 for the others, so the primary stage gets
the largest share and time a stage does not use rolls over. After each stage its expression is
bounded by the value found (``≥`` for maximised, ``≤`` for minimised stages) and the next stage
starts from the previous solution as a complete hint. A stage whose search finds nothing while
budget remains searches again with all that is left; if that finds nothing either, it keeps the
incumbent (the previous stage's solution, or a warm start checked feasible), freezes its value
and the next stage runs. Refinement rounds keep the best plan any of them found. The reasons for pending jobs get at most
5 seconds, never past the deadline (deterministic mode: a fixed deterministic budget, see
:mod:`.explain`).

Bound and gap: ``bound`` bounds ``objective.scalar`` (see :mod:`toposolve.objective`): in
lexicographic mode the first stage's best bound (signed so that larger is better), in weighted
mode the bound of the combined objective; the tightest over refinement rounds. A search that
found no solution reports no bound (CP-SAT's value is then meaningless), and a bound below the
returned plan's scalar is dropped (:func:`~toposolve.engines.contract.proven_bound`): ``None``
means nothing was proved. ``gap = |bound − scalar| / max(1, |scalar|)``.
Per-stage values, bounds, statuses and times are in ``stats["stages"]``.

Size: when the exact model would exceed ``COUNT_BUDGET`` count variables (estimated as pending
groups × node classes), a coarse model aggregated at a higher tier is solved instead (see
:func:`aggregation_level`, :func:`_solve_coarse`, :mod:`.candidates`); its status is at best
``FEASIBLE`` unless the later stages' coarse bounds (:func:`_later_bounds`) are met too,
its bound still bounds the exact optimum, and ``export_model`` writes it.
Before every stage the current plan is also repacked tier-first (:mod:`.repack`) and the better
of the two seeds the hint. A maximised stage whose hint already reaches the largest possible
value is not searched at all.

Status: ``OPTIMAL`` (every stage proven optimal), ``FEASIBLE`` (a plan, not proven optimal),
``INFEASIBLE`` (the model has no solution; it always has the empty plan, so this means a
contradictory input), ``UNKNOWN`` (no plan within the time limit and no hint) and ``FALLBACK``
(the hint is returned because CP-SAT found nothing at least as good as it, or every stage only
kept it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model, cp_model_helper

from ...errors import InputError
from ...objective import (
    ObjectiveValue,
    dominance_weights,
    evaluate,
    pending_level_units,
    stage_values,
)
from ...problem import Problem
from ...profiles import Profile, for_eviction
from ...rules import EVICT_MODES, EvictMode
from ..assignment import Assignment
from ..contract import EngineResult, Progress, proven_bound
from .budget import Budget, OutOfTime
from .candidates import Scope, build_levels, class_homes
from .disaggregate import disaggregate
from .eviction import EvictionSpec, build_eviction_spec, disruption, nominated_jobs
from .explain import explain_pending
from .hint import Hint, apply_hint, hint_from_assignment, hint_is_feasible
from .model import PlacementModel
from .objectives import SAFE_MAGNITUDE, StageExpr, stage_exprs
from .parameters import Settings, resolve_settings
from .progress import Reporter, StageReader
from .repack import repack

MAX_REFINEMENTS = 4
COUNT_BUDGET = 100_000  # count variables above which the coarse model is used
HINT_CHECK_LIMIT = 50_000  # variables above which the hint is not checked by a separate solve
MAX_ATTEMPTS = 2  # searches of one stage: its share, then (if it found nothing) all that is left
RESUME_MIN = 0.02  # fraction of the time limit below which a stage that found nothing gives up
CpsatResult = EngineResult  # the name this engine's result had before the engine contract


@dataclass
class StageRun:
    label: str
    status: str
    value: int | None
    bound: float | None
    seconds: float
    deterministic_time: float
    attempts: int = 1  # searches run (a search that finds nothing is resumed while budget remains)
    kept: bool = False  # no solution of its own: the incumbent was kept, its value frozen
    gap: float | None = None  # in user units (:class:`.progress.StageReader`)
    ended: float = 0.0  # seconds since the run started, when the stage ended

    def as_dict(self) -> dict[str, Any]:
        return {
            "stage": self.label, "status": self.status, "objective": self.value,
            "bound": self.bound, "gap": self.gap, "seconds": round(self.seconds, 3),
            "deterministic_time": round(self.deterministic_time, 3),
            "attempts": self.attempts, "kept_incumbent": self.kept, "ended_s": round(self.ended, 3),
        }


class _SolutionCallback(cp_model.CpSolverSolutionCallback):
    """Reports progress, and stops a maximisation that reached its largest possible value (with
    ~10^12 priority weights CP-SAT's floating-point bound may never close that last gap)."""

    def __init__(self, reporter: Reporter, target: int | None) -> None:
        super().__init__()
        self.reporter = reporter
        self.target = target

    def on_solution_callback(self) -> None:
        self.reporter.solution(self.objective_value, self.best_objective_bound)
        if self.target is not None and self.objective_value >= self.target:
            self.stop_search()


def _weighted_objective(stages: list[StageExpr], weights: dict[str, float]) -> tuple[Any, int]:
    """Σ round(w·scale)·(±expr) with integer coefficients; returns (expr, scale)."""
    integral = all(float(w).is_integer() for w in weights.values())
    scale = 1 if integral else 1000
    coefs = {name: round(w * scale) for name, w in weights.items()}
    magnitude = sum(abs(coefs[s.name]) * s.magnitude for s in stages)
    if magnitude >= SAFE_MAGNITUDE:
        raise InputError(
            "weighted objective too large for CP-SAT (priority weights × units × stage weights "
            "exceed 2^53); use lexicographic mode or smaller weights",
            obj="Profile", field="objective.stages",
        )
    expr = sum(coefs[s.name] * (s.expr if s.maximise else -s.expr) for s in stages)
    return expr, scale


@dataclass
class _Stage:
    label: str
    name: str | None  # stage name, None for the combined weighted objective
    expr: Any
    maximise: bool
    magnitude: int | None = None  # largest value a maximised stage can take


@dataclass
class _Round:
    """Outcome of solving one model: the last stage solution that disaggregates."""

    runs: list[StageRun] = field(default_factory=list)
    solution: list[int] | None = None
    counts: dict[int, dict[int, int]] = field(default_factory=dict)
    refine: list[int] = field(default_factory=list)  # classes to split before trying again
    partial: Assignment | None = None  # the undisaggregable solution, packed as far as it goes
    unpacked: list[int] | None = None  # that solution itself
    infeasible: bool = False

    @property
    def solved(self) -> bool:
        return self.solution is not None

    @property
    def optimal(self) -> bool:
        return bool(self.runs) and all(r.status == "OPTIMAL" for r in self.runs) and not self.refine

    @property
    def searched(self) -> bool:
        """Some stage found a solution of its own (else the plan is the incumbent it was given)."""
        return any(not r.kept for r in self.runs)


class _Run:
    """One call of :func:`solve_cpsat`."""

    def __init__(
        self, problem: Problem, profile: Profile, settings: Settings, progress: Progress | None,
        eviction: EvictionSpec | None = None, started: float | None = None,
    ) -> None:
        self.problem = problem
        self.eviction = eviction
        self.spec = profile.objective
        self.settings = settings
        self.progress = progress
        self.budget = Budget(settings, started)
        self.t0 = self.budget.t0
        self.reader = StageReader(problem)
        self.reporter = Reporter(progress, self.reader, self.t0)
        self.scale = 1
        self.repacked = 0  # hints replaced by a better repacking
        self.hint_values: dict[int, int] = {}
        # the last complete solution known to satisfy the model (a stage's solution, or a hint
        # checked feasible): kept when a stage finds nothing of its own
        self.incumbent: list[int] | None = None

    def set_hint(self, pm: PlacementModel, values: dict[int, int]) -> None:
        self.hint_values = dict(values)
        apply_hint(pm.model, values)

    def stages(self, pm: PlacementModel) -> list[_Stage]:
        """The profile's stages (with evictions, :func:`~toposolve.profiles.for_eviction` has
        already put disruption right after placement)."""
        names = [s.name for s in self.spec.stages]
        if not names:
            return [_Stage("feasibility", None, 0, True)]  # no objective: any valid plan
        lexicographic = self.spec.mode == "lexicographic"
        extra = pm.evict.stage_terms() if pm.evict is not None else None
        exprs = stage_exprs(self.problem, pm.vars, names, allow_split=lexicographic, extra=extra)
        if lexicographic:
            for e in exprs:
                if e.maximise and not isinstance(e.expr, int):
                    # redundant, but a search reaching the largest value then ends OPTIMAL by
                    # itself (deterministic search cannot be stopped by the callback)
                    pm.model.add(e.expr <= e.magnitude)
            return [_Stage(e.label, e.name, e.expr, e.maximise, e.magnitude if e.maximise else None) for e in exprs]
        combined, self.scale = _weighted_objective(exprs, {s.name: s.weight for s in self.spec.stages})
        return [_Stage("weighted", None, combined, True)]

    def solve_once(self, pm: PlacementModel, stage: _Stage, share: float) -> tuple[StageRun, list[int] | None]:
        """Solve one stage; returns its record and the full solution vector (None if none)."""
        complete = len(self.hint_values) == len(pm.model.proto.variables)
        current = [self.hint_values[i] for i in range(len(pm.model.proto.variables))] if complete else None
        if isinstance(stage.expr, int) and current is not None:
            # nothing to optimise (e.g. no fragmentation variables): keep the current solution
            return StageRun(stage.label, "OPTIMAL", stage.expr, float(stage.expr), 0.0, 0.0), current
        if stage.maximise and stage.magnitude is not None and not isinstance(stage.expr, int):
            hinted = _expr_value(stage.expr, self.hint_values)
            if hinted is not None and hinted >= stage.magnitude and current is not None:
                # the (complete) hint already reaches the largest possible value: nothing to search
                return StageRun(stage.label, "OPTIMAL", hinted, float(hinted), 0.0, 0.0), current
        model = pm.model
        model.clear_objective()
        has_objective = not isinstance(stage.expr, int)
        if has_objective:
            (model.maximize if stage.maximise else model.minimize)(stage.expr)
        target = stage.magnitude if has_objective and stage.maximise else None
        run = StageRun(stage.label, "UNKNOWN", None, None, 0.0, 0.0, attempts=0)
        if self.budget.exhausted():
            self.budget.note(f"{stage.label} not searched")
            return run, None  # no time left: not even a presolve (the incumbent is kept)
        while True:
            solver, status = self._search(pm, stage, share, target)
            run.attempts += 1
            run.seconds += solver.wall_time
            run.deterministic_time += solver.deterministic_time
            found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
            if found or status == cp_model.INFEASIBLE or run.attempts >= MAX_ATTEMPTS:
                break
            if self.budget.remaining() < RESUME_MIN * self.settings.time_limit or self.budget.wall_left() <= 0:
                break
            share = 1.0  # found nothing, but budget remains: the stage takes all that is left
        if found and has_objective:
            run.value = round(solver.objective_value)
            run.bound = solver.best_objective_bound  # without a solution CP-SAT's bound means nothing
            if target is not None:
                run.bound = min(run.bound, target)
                if run.value >= target:
                    status = cp_model.OPTIMAL  # nothing can be larger
        elif found:
            run.value, run.bound = 0, 0.0
        run.status = solver.status_name(status)
        return run, (list(solver.response_proto.solution) if found else None)

    def _search(
        self, pm: PlacementModel, stage: _Stage, share: float, target: int | None
    ) -> tuple[cp_model.CpSolver, int]:
        """One CP-SAT search of the stage's objective with ``share`` of the remaining budget."""
        solver = cp_model.CpSolver()
        cap = self.budget.configure(solver, share)
        # OR-Tools 9.15 aborts on stop_search() in interleaved (deterministic) search
        stop_at = None if self.settings.deterministic else target
        callback = _SolutionCallback(self.reporter, stop_at) if self.progress or stop_at is not None else None
        if self.progress:
            solver.best_bound_callback = self.reporter.new_bound
        status = solver.solve(pm.model, callback)
        self.budget.spend(solver)
        if self.budget.stopped_by_wall(solver, cap, status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)):
            self.budget.note(f"{stage.label} stopped by the wall clock before its deterministic budget (may differ between runs)")
        if status == cp_model.MODEL_INVALID:
            problem = pm.model.validate()
            if not problem:  # a valid model: CP-SAT refused its parameters
                raise InputError(
                    "CP-SAT rejected its parameters (see solver.parameters / --param)", obj="Profile",
                    field="solver.parameters",
                )
            raise RuntimeError(f"CP-SAT rejected the model: {problem[:500]}")
        return solver, status

    def stage_solutions(
        self, pm: PlacementModel, stages: list[_Stage], out: _Round, total: int | None = None
    ) -> Iterator[list[int]]:
        """Solve the stages in order, yielding each stage's solution; after the caller's turn
        the stage's value is frozen for the next one (lexicographic). A stage that finds nothing
        keeps the incumbent (its value is frozen and the next stage runs); without one, the
        stages stop, recording whether the first stage proved the model infeasible. ``total``:
        the stages the budget is shared with (default: these)."""
        shares = _stage_shares(total or len(stages))
        for k, stage in enumerate(stages):
            self.reporter.start_stage(stage.label)
            run, solution = self.solve_once(pm, stage, shares[k])
            out.runs.append(run)
            if solution is None and run.status != "INFEASIBLE" and self.incumbent is not None:
                solution, run.kept = self.incumbent, True
                run.value = _expr_value(stage.expr, dict(enumerate(solution)))
            self._stage_ended(run)
            if solution is None:
                out.infeasible = k == 0 and run.status == "INFEASIBLE"
                return
            self.incumbent = solution
            yield solution
            if k + 1 < len(stages) and not isinstance(stage.expr, int):
                pm.model.add(stage.expr >= run.value if stage.maximise else stage.expr <= run.value)

    def _stage_ended(self, run: StageRun) -> None:
        """Gap in user units, end time, one progress line."""
        run.ended = time.perf_counter() - self.t0
        bound = run.bound / self.scale if run.bound is not None and run.label == "weighted" else run.bound
        value = run.value / self.scale if run.value is not None and run.label == "weighted" else run.value
        run.gap = self.reader.read(run.label, value, bound)[1] if run.bound is not None else None
        self.reporter.end_stage(run.label, run.status + (" (kept the incumbent)" if run.kept else ""), value, bound)

    def solve_stages(self, pm: PlacementModel, stages: list[_Stage]) -> _Round:
        out = _Round()
        for solution in self.stage_solutions(pm, stages, out):
            node_counts, refine = disaggregate(self.problem, pm.cands, pm.counts(solution))
            if refine:
                out.refine, out.unpacked = refine, solution
                out.partial = _decoded(pm, solution, node_counts)
                break
            out.solution, out.counts = solution, node_counts
            # next stage's hint: this solution's counts (or their repacking, if better) with
            # every indicator at its best value for those counts
            values = dict(enumerate(solution))
            values.update(self.better_hint(pm, _decoded(pm, solution, node_counts)).values)
            self.set_hint(pm, values)
        return out

    def better_hint(self, pm: PlacementModel, assignment: Assignment) -> Hint:
        """Hint of ``assignment``, or of its tier-first repacking when that is better."""
        hint = hint_from_assignment(self.problem, pm.vars, assignment)
        if pm.evict is not None:
            return _with_evictions(pm, hint, assignment)  # repacking knows nothing of evictions
        if not self.spec.stages:
            return hint
        packed = repack(self.problem, assignment)
        if packed is None:
            return hint
        if not evaluate(self.problem, packed, self.spec).better(evaluate(self.problem, assignment, self.spec)):
            return hint
        packed_hint = hint_from_assignment(self.problem, pm.vars, packed)
        if not (packed_hint.complete and packed_hint.fits_nodes):
            return hint
        self.repacked += 1
        return packed_hint

    def bound(self, stages: list[_Stage], outcome: _Round) -> float | None:
        runs = outcome.runs
        if not runs or runs[0].bound is None:
            return None
        if self.spec.mode == "weighted":
            return runs[0].bound / self.scale
        split = [r for r in runs if r.label.startswith("placed[")]
        if split:
            return _bound_of_split_placed(self.problem, split)
        return runs[0].bound if stages[0].maximise else -runs[0].bound


def _stage_shares(count: int) -> list[float]:
    weights = [2.0] + [1.0] * (count - 1)
    return [w / sum(weights[k:]) for k, w in enumerate(weights)]


def _bound_of_split_placed(problem: Problem, runs: list[StageRun]) -> float | None:
    """Upper bound of the exact ``placed`` scalar from its per-priority sub-stages."""
    units = pending_level_units(problem)
    weights = dominance_weights(units)
    total = 0
    priorities = sorted(units, reverse=True)
    for k, priority in enumerate(priorities):
        if k >= len(runs) or runs[k].bound is None:
            return None
        if runs[k].status == "OPTIMAL":
            total += weights[priority] * (runs[k].value or 0)
            continue
        total += weights[priority] * int(runs[k].bound)
        total += sum(weights[p] * units[p] for p in priorities[k + 1:])
        break
    return float(total)


def _export(pm: PlacementModel, stages: list[_Stage], path: str) -> None:
    """Write the model with the first stage's objective (proto; text if the name ends in .txt)."""
    pm.model.clear_objective()
    if stages and not isinstance(stages[0].expr, int):
        (pm.model.maximize if stages[0].maximise else pm.model.minimize)(stages[0].expr)
    if not pm.model.export_to_file(str(path)):
        raise InputError("cannot write the model", file=str(path))


def solve_cpsat(
    problem: Problem,
    profile: Profile,
    *,
    hint: Assignment | None = None,
    time_limit: float | None = None,
    workers: int | None = None,
    seed: int | None = None,
    deterministic: bool | None = None,
    log: bool = False,
    progress: Progress | None = None,
    export_model: str | None = None,
    parameters: dict | None = None,
    evict: EvictMode | None = None,
    started: float | None = None,
) -> EngineResult:
    """Place the whole pending queue with CP-SAT (see the package docstring).

    ``started``: the ``time.perf_counter()`` the time limit counts from (default: now);
    :func:`toposolve.solve` passes its own start, so the warm start's time is inside the limit.

    ``evict``: also decide which running pods to evict for pending gangs (preempt, reclaim or
    both; :mod:`.eviction`). ``hint`` — :func:`toposolve.solve` gives the heuristic's plan with
    the same evictions — is the warm start and the fallback; ``stats["eviction"]`` compares the
    disruption of the two plans. Eviction always uses the exact model.
    """
    settings = resolve_settings(
        profile, time_limit=time_limit, workers=workers, seed=seed,
        deterministic=deterministic, log=log, parameters=parameters,
    )
    spec = None
    if evict is not None:
        if evict not in EVICT_MODES:
            raise InputError(f"must be one of {', '.join(EVICT_MODES)}, not {evict!r}", field="evict")
        profile = for_eviction(profile, evict)
        spec = build_eviction_spec(problem, evict)
    run = _Run(problem, profile, settings, progress, spec, started)
    stats: dict[str, Any] = {"rounds": 0, "refined_classes": 0, "hint_feasible": None}
    level = aggregation_level(problem)
    stats["aggregation_level"] = level
    # keep time for the reasons and, for the coarse model, for turning its counts into a plan
    run.budget.reserve = min(5.0, 0.1 * settings.time_limit) * (2 if level > 0 else 1)
    with run.reporter:
        return _finish(run, level, hint, stats, export_model, evict)


def _finish(run: _Run, level: int, hint: Assignment | None, stats: dict, export_model: str | None, evict):
    """Solve, fall back, explain: the rest of :func:`solve_cpsat` (progress reported)."""
    problem, spec = run.problem, run.eviction
    try:
        assignment, status, bound, all_runs = _solve_model(run, level, hint, stats, export_model)
    except OutOfTime:  # the model was not built in time: the warm start, if any
        assignment, status, bound, all_runs = _copy(hint) if hint is not None else Assignment(), "FALLBACK", None, []
        if hint is None:
            status = "UNKNOWN"
    objective = evaluate(problem, assignment, run.spec)
    if level == 0 and hint is not None:
        hinted = evaluate(problem, hint, run.spec)
        if status not in ("OPTIMAL", "FEASIBLE") or hinted.better(objective):
            assignment, objective, status = _copy(hint), hinted, "FALLBACK"
    if spec is not None:
        if status != "FALLBACK":  # the heuristic's plan keeps its own nominations
            assignment.nominated_jobs = nominated_jobs(problem, assignment)
        stats["eviction"] = _eviction_stats(problem, evict, spec, hint, assignment)
        assignment.stats["eviction"] = stats["eviction"]
    _set_domains(problem, assignment)
    assignment.reasons = _reasons(run, assignment, status, level)
    stats["stages"] = [r.as_dict() for r in all_runs]
    stats["repacked_hints"] = run.repacked
    stats["cut_short"] = list(run.budget.cut_short)
    return EngineResult(
        assignment=assignment, status=status, objective=objective, bound=proven_bound(objective.scalar, bound),
        wall_time_s=time.perf_counter() - run.t0, stats=stats,
    )


def _solve_model(run: _Run, level: int, hint: Assignment | None, stats: dict, export_model: str | None):
    """The exact or the coarse model, or (evictions on a cluster too large for the exact
    model) the warm start."""
    if run.eviction is not None and level > 0:
        # evictions are decided node by node, so only the exact model has them; it would be too
        # large here (the coarse model's trigger): the heuristic's plan is returned
        stats["eviction_model"] = f"not built: over {COUNT_BUDGET} count variables; heuristic plan returned"
        return _copy(hint) if hint is not None else Assignment(), "FALLBACK", None, []
    if level > 0:
        return _solve_coarse(run, level, hint, stats, export_model)
    return _solve_exact(run, hint, stats, export_model)


def _reasons(run: _Run, assignment: Assignment, status: str, level: int) -> dict[int, str]:
    """Reasons for the pending jobs within what is left of the limit (at most 5 s). In
    deterministic mode their solves share a fixed deterministic budget (the same reasons every
    run) and the deadline only stops them."""
    settings, budget = run.settings, run.budget
    if settings.deterministic:
        share = min(5.0, max(1.0, 0.1 * settings.time_limit))
    else:
        share = min(5.0, max(0.0, budget.deadline - time.perf_counter()))
    run.reporter.set_phase("explaining the pending jobs")
    reasons = explain_pending(run.problem, assignment, settings, share, status, level, deadline=budget.deadline)
    undecided = sum(1 for text in reasons.values() if text.startswith("could not determine"))
    if undecided:
        budget.note(f"reasons of {undecided} pending job{'s' if undecided > 1 else ''} not determined")
    return reasons


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


@dataclass
class _Found:
    """A plan one round found, its objective value and the round's outcome."""

    plan: Assignment
    value: ObjectiveValue
    outcome: _Round


def _solve_exact(run: _Run, hint: Assignment | None, stats: dict, export_model: str | None):
    """The exact model, refined until its counts pack node by node. The best plan of any round
    is kept (a later round, with less time, may find nothing or worse) and is the warm start
    of the next round when it beats the hint. The bound is the tightest any round proved."""
    problem = run.problem
    all_runs: list[StageRun] = []
    bounds: list[float] = []
    split: frozenset[int] = frozenset()
    seed_hint = hint
    best: _Found | None = None
    for round_no in range(MAX_REFINEMENTS + 1):
        stats["rounds"] = round_no + 1
        run.reporter.set_phase("building the model" + (f" (refinement round {round_no})" if round_no else ""))
        try:
            pm = PlacementModel(problem, Scope(split_nodes=split), run.eviction, run.budget.check)
        except OutOfTime:
            if best is None:
                raise
            break  # no time for another refinement round: the best plan so far
        stats["build_seconds"] = round(time.perf_counter() - run.t0, 3)
        stats.update(pm.size())
        stages = run.stages(pm)
        if round_no == 0 and export_model:
            _export(pm, stages, export_model)
        run.incumbent = None
        if seed_hint is not None:
            run.reporter.set_phase("checking the warm start")
            _seed(run, pm, seed_hint, stats if round_no == 0 and hint is not None else None)
        outcome = run.solve_stages(pm, stages)
        all_runs += outcome.runs
        bound = run.bound(stages, outcome) if outcome.runs else None
        bounds += [bound] if bound is not None else []
        if outcome.solved:
            plan = _decoded(pm, outcome.solution, outcome.counts)
            found = _Found(plan, evaluate(problem, plan, run.spec), outcome)
            best = found if best is None or found.value.better(best.value) else best
        if outcome.refine and not run.budget.exhausted() and round_no < MAX_REFINEMENTS:
            split = split | frozenset(int(n) for c in outcome.refine for n in pm.cands.classes.nodes[c])
            stats["refined_classes"] += len(outcome.refine)
            seed_hint = _warm_start(run, hint, best) or outcome.partial
            continue
        if outcome.refine and pm.evict is None:
            best = _repacked(run, pm, outcome, best)
        break
    bound = min(bounds) if bounds else None  # every round's model bounds the exact optimum
    if best is None:
        return Assignment(), ("INFEASIBLE" if outcome.infeasible else "UNKNOWN"), bound, all_runs
    if not best.outcome.searched:
        status = "FALLBACK"  # every stage kept the warm start: nothing of CP-SAT's own
    else:
        status = "OPTIMAL" if best.outcome is outcome and outcome.optimal else "FEASIBLE"
    return best.plan, status, bound, all_runs


def _repacked(run: _Run, pm: PlacementModel, outcome: _Round, best: _Found | None) -> _Found | None:
    """No round left for a solution that does not pack node by node: its pod counts repacked
    (:mod:`.repack`), if that fits and beats ``best``. (Not with evictions: repacking knows
    nothing of them.)"""
    totals, guide = _coarse_plan(pm, outcome.unpacked)
    plan = repack(run.problem, totals, guide=guide)
    if plan is None:
        return best
    found = _Found(plan, evaluate(run.problem, plan, run.spec), outcome)
    return found if best is None or found.value.better(best.value) else best


def _warm_start(run: _Run, hint: Assignment | None, best: _Found | None) -> Assignment | None:
    """The better of the hint and the best plan found so far (ties: the hint)."""
    if best is None:
        return hint
    if hint is None or best.value.better(evaluate(run.problem, hint, run.spec)):
        return best.plan
    return hint


def _seed(run: _Run, pm: PlacementModel, seed_hint: Assignment, stats: dict | None) -> None:
    """Hint the model with ``seed_hint`` (or its better repacking). A complete hint the model is
    checked to accept becomes the incumbent; ``stats`` records the check."""
    h = hint_from_assignment(run.problem, pm.vars, seed_hint)
    if pm.evict is not None:
        h = _with_evictions(pm, h, seed_hint)
    # the repacked hint only while time is left (it costs a repacking of the whole queue)
    values = run.better_hint(pm, seed_hint).values if h.complete and run.budget.wall_left() > 0 else h.values
    run.set_hint(pm, values)
    size = len(pm.model.proto.variables)
    feasible = None  # larger models: the check would cost a full presolve
    if not (h.complete and h.fits_nodes):
        feasible = False
    elif size <= HINT_CHECK_LIMIT and run.budget.wall_left() > 0:
        check = min(5.0, max(1.0, 0.1 * run.settings.time_limit))
        feasible = hint_is_feasible(pm.model, values, run.settings, check, wall_cap=max(run.budget.wall_left(), 0.01))
    if feasible and len(values) == size:
        run.incumbent = [values[i] for i in range(size)]
    if stats is not None:
        stats["hint_dropped_pods"] = h.dropped
        stats["hint_feasible"] = feasible


def _solve_coarse(run: _Run, level: int, hint: Assignment | None, stats: dict, export_model: str | None):
    """Large instances: the coarse model (relaxed below its aggregation level; lexicographic
    mode solves its first stage only) decides how many pods of each group are placed and
    roughly where, and bounds the optimum; :func:`repack` places them, inside the coarse
    model's domain of each job when it can. The plan is the best of that, the unguided
    repacking, the repacked hint and the hint itself."""
    problem = run.problem
    stats["rounds"] = 1
    run.reporter.set_phase(f"building the coarse model (level {level})")
    pm = PlacementModel(problem, Scope(aggregate_level=level), check=run.budget.check)
    stats["build_seconds"] = round(time.perf_counter() - run.t0, 3)
    stats.update(pm.size())
    every = run.stages(pm)
    stages = every
    if run.spec.mode == "lexicographic":
        # only the first stage: below the aggregation level the later stages are too relaxed to
        # guide the repacking (measured: no better plans, and their presolve costs the budget);
        # they only bound the plan's later stages (_later_bounds)
        stages = [s for s in every if s.name == every[0].name]
    if export_model:
        _export(pm, stages, export_model)
    run.incumbent = None
    if hint is not None:
        run.reporter.set_phase("checking the warm start")
        _seed(run, pm, hint, stats)
    outcome = _Round()
    for solution in run.stage_solutions(pm, stages, outcome, total=len(every)):
        outcome.solution = solution
        run.set_hint(pm, dict(enumerate(solution)))
    bound = run.bound(stages, outcome) if outcome.runs else None
    best, status, runs = _coarse_best(run, pm, outcome, hint, stats)
    if best is not None and len(stages) == 1 and len(every) > 1:
        runs = runs + _later_bounds(run, pm, stages[0], every[1:], outcome, best)
        if status == "FEASIBLE" and len(runs) == len(every) and all(r.status == "OPTIMAL" for r in runs):
            status = "OPTIMAL"  # every stage's bound met by the repacked plan: proven
    return (best or Assignment()), status, bound, runs


def _coarse_best(run: _Run, pm: PlacementModel, outcome: _Round, hint: Assignment | None, stats: dict):
    """The best of the coarse solution's repackings, the repacked hint and the hint."""
    problem = run.problem
    options: list[tuple[str, Assignment]] = []
    repacks: list[tuple[str, Assignment, dict[int, int] | None]] = []
    if outcome.solved:
        totals, guide = _coarse_plan(pm, outcome.solution)
        repacks += [("coarse-cpsat+guided-repack", totals, guide), ("coarse-cpsat+repack", totals, None)]
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
    if hint is not None:
        options.append(("hint", _copy(hint)))
    if not options:
        stats["plan_source"] = None
        return None, ("INFEASIBLE" if outcome.infeasible else "UNKNOWN"), outcome.runs
    best_name, best = options[0]
    best_value = evaluate(problem, best, run.spec)
    for name, candidate in options[1:]:
        value = evaluate(problem, candidate, run.spec)
        if value.better(best_value):
            best_name, best, best_value = name, candidate, value
    stats["plan_source"] = best_name
    status = "FALLBACK" if best_name == "hint" else "FEASIBLE"
    return best, status, outcome.runs


def _later_bounds(
    run: _Run, pm: PlacementModel, first: _Stage, later: list[_Stage], outcome: _Round, plan: Assignment
) -> list[StageRun]:
    """Bounds of the coarse plan's later stages (spread, fragmentation) from the coarse model.

    Valid only when the first stage is proven and the plan reaches its optimum ``P``: then every
    exact plan that is lexicographically as good has ``first = P`` and maps to a coarse solution
    with ``first ≥ P`` whose relaxed later stages are no worse; each later stage is minimised
    with the earlier ones held at the *plan's* values (which are at least their optima), so its
    bound is a lower bound of what any plan with the plan's earlier values can reach. The record
    carries the plan's value, that bound and the gap; ``OPTIMAL`` when they meet."""
    runs = outcome.runs
    values = stage_values(run.problem, plan)
    if not runs or runs[-1].status != "OPTIMAL" or values.get(first.name) != runs[-1].value:
        return []
    pm.model.add(first.expr >= runs[-1].value)
    out = []
    for k, stage in enumerate(later):
        mine = values.get(stage.name, 0)
        record = StageRun(stage.label, "UNKNOWN", mine, None, 0.0, 0.0, attempts=0)
        if not isinstance(stage.expr, int) and not run.budget.exhausted():
            run.reporter.start_stage(stage.label)
            pm.model.clear_objective()
            (pm.model.maximize if stage.maximise else pm.model.minimize)(stage.expr)
            solver, status = run._search(pm, stage, 1.0 / (len(later) - k), None)
            record.attempts, record.seconds, record.deterministic_time = 1, solver.wall_time, solver.deterministic_time
            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                record.bound = solver.best_objective_bound
                reached = mine <= record.bound + 1e-9 if stage.maximise is False else mine >= record.bound - 1e-9
                record.status = "OPTIMAL" if reached else "FEASIBLE"
        elif isinstance(stage.expr, int):  # relaxed away in the coarse model: that is its bound
            record.bound = float(stage.expr)
            record.status = "OPTIMAL" if mine == stage.expr else "FEASIBLE"
        else:
            run.budget.note(f"{stage.label} bound not searched")
        run._stage_ended(record)
        out.append(record)
        if not isinstance(stage.expr, int):  # held at the plan's value for the next stage
            pm.model.add(stage.expr >= mine if stage.maximise else stage.expr <= mine)
    return out


def _expr_value(expr: Any, values: dict[int, int]) -> int | None:
    """Value of a linear expression under ``values`` (None if a variable has no value)."""
    if isinstance(expr, int):
        return expr
    flat = cp_model_helper.FlatIntExpr(expr)
    total = flat.offset
    for var, coef in zip(flat.vars, flat.coeffs, strict=True):
        if var.index not in values:
            return None
        total += coef * values[var.index]
    return total


def _coarse_plan(pm: PlacementModel, solution: list[int]) -> tuple[Assignment, dict[int, int]]:
    """Per-group totals of a coarse solution (node ignored: repack only reads totals) and, per
    job, the lowest HyperNode holding the classes it uses (the repacking tries there first)."""
    problem, cands = pm.problem, pm.cands
    totals = Assignment()
    homes: dict[int, list[int]] = {}
    for g, row in pm.counts(solution).items():
        if row.sum():
            totals.add(g, 0, int(row.sum()))
            used = cands.allowed[g][row > 0]
            homes.setdefault(int(problem.group_job[g]), []).extend(cands.classes.home[used].tolist())
    topo = problem.topology
    guide = {}
    for j, hs in homes.items():
        h = hs[0]
        for other in hs[1:]:
            h = topo.lca(h, other)
        guide[j] = h
    return totals, guide


def _decoded(pm: PlacementModel, solution: list[int], counts: dict[int, dict[int, int]]) -> Assignment:
    """The plan of a solution: its node counts and, when evictions are modelled, its evictions."""
    out = _as_assignment(counts)
    if pm.evict is not None:
        out.evicted = pm.evict.evicted(solution)
    return out


def _with_evictions(pm: PlacementModel, hint: Hint, assignment: Assignment) -> Hint:
    """``hint`` completed with the eviction variables of ``assignment``; capacity is checked
    node by node with the evicted pods gone (the model's classes cannot see it)."""
    assert pm.evict is not None
    values, stray = pm.evict.hint_values(assignment)
    problem = pm.problem
    left = problem.allocatable - problem.used - assignment.usage(problem)
    for pod in assignment.evicted:
        if pod in problem.running_pods:
            left[problem.running_pods[pod]] += problem.group_request[problem.pod_group[pod]]
    touched = sorted({n for per in assignment.counts.values() for n, c in per.items() if c > 0})
    fits = bool((left[touched] >= 0).all()) if touched else True
    return Hint(
        values={**hint.values, **values}, complete=hint.complete and stray == 0,
        dropped=hint.dropped + stray, fits_nodes=fits,
    )


def _eviction_stats(
    problem: Problem, mode: str | None, spec: EvictionSpec, hint: Assignment | None, plan: Assignment
) -> dict[str, Any]:
    """Disruption of the returned plan against the heuristic's (the warm start)."""
    mine = disruption(stage_values(problem, plan))
    out: dict[str, Any] = {
        "mode": mode, "victim_jobs": len(spec.victims), "slots": len(spec.slots),
        "evictable_pods": sum(len(s.pods) for s in spec.slots), "cpsat": mine,
        "nominated_jobs": len(plan.nominated_jobs),
    }
    if hint is not None:
        theirs = disruption(stage_values(problem, hint))
        out["heuristic"] = theirs
        out["saved"] = {k: theirs[k] - mine[k] for k in mine}
        out["placed"] = {"heuristic": stage_values(problem, hint)["placed"], "cpsat": stage_values(problem, plan)["placed"]}
    return out


def _as_assignment(counts: dict[int, dict[int, int]]) -> Assignment:
    out = Assignment()
    for g, per in counts.items():
        for n, c in per.items():
            out.add(g, n, c)
    return out


def _copy(a: Assignment) -> Assignment:
    return Assignment(
        counts={g: dict(per) for g, per in a.counts.items()},
        job_domain=dict(a.job_domain), subjob_domain=dict(a.subjob_domain),
        reasons=dict(a.reasons), evicted=list(a.evicted), nominated_jobs=set(a.nominated_jobs),
    )


def _set_domains(problem: Problem, assignment: Assignment) -> None:
    """Report the lowest HyperNode holding each placed job's (and policy SubJob's) pods."""
    topo = problem.topology
    evicted = set(assignment.evicted)
    nodes_of_group: dict[int, list[int]] = {}
    for pod, n in problem.running_pods.items():
        if pod not in evicted:
            nodes_of_group.setdefault(problem.pod_group[pod], []).append(n)
    for g, per in assignment.counts.items():
        nodes_of_group.setdefault(g, []).extend(n for n, c in per.items() if c > 0)
    for j in assignment.placed_jobs(problem):
        cj = problem.jobs[j]
        assignment.job_domain[j] = topo.lca_of_nodes([n for g in cj.groups for n in nodes_of_group.get(g, [])])
        for s in cj.subjobs:
            if problem.subjobs[s].policy < 0:
                continue
            nodes = [n for g in problem.subjobs[s].groups for n in nodes_of_group.get(g, [])]
            if nodes:
                assignment.subjob_domain[s] = topo.lca_of_nodes(nodes)

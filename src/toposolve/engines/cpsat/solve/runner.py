"""The stage runner: solve one model's objective stages in order within a share of the budget.

Rules and rationale: ``docs/cpsat-formulation.md``, section
``toposolve.engines.cpsat.solve.runner``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model, cp_model_helper

from toposolve.core.assignment import Assignment
from toposolve.core.deadline import Deadline
from toposolve.core.errors import InputError
from toposolve.core.paths import replacing
from toposolve.core.problem import Problem
from toposolve.core.status import SolveStatus
from toposolve.engines.contract import UNSET, Progress, Unset
from toposolve.engines.cpsat.model.eviction import EvictionSpec
from toposolve.engines.cpsat.model.hint import apply_hint
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.model.objectives import SAFE_MAGNITUDE, StageExpr, stage_exprs
from toposolve.engines.cpsat.post.disaggregate import disaggregate
from toposolve.engines.cpsat.solve.budget import Budget
from toposolve.engines.cpsat.solve.fragmentation_bound import fragmentation_lower_bound
from toposolve.engines.cpsat.solve.parameters import Settings
from toposolve.engines.cpsat.solve.placed_bound import placed_upper_bound
from toposolve.engines.cpsat.solve.plans import decoded
from toposolve.engines.cpsat.solve.progress import Reporter, StageReader
from toposolve.engines.cpsat.solve.spread_bound import spread_lower_bound
from toposolve.engines.cpsat.solve.warmstart import choose_start
from toposolve.policy.objective import dominance_weights, pending_level_units
from toposolve.policy.profiles import Profile

SPREAD_BOUND_DTIME = 1.0  # deterministic units the aggregated spread bound may take (~0.05 used)
FRAGMENTATION_BOUND_DTIME = 1.0  # likewise for the fragmentation bound
MAX_ATTEMPTS = 2  # searches of one stage: its share, then (if it found nothing) all that is left
# minimised stages whose value is a sum of non-negative terms (docs/ranks.md): an incumbent at
# 0 is optimal, so the stage keeps it rather than spend its share of the budget finding so
NEVER_NEGATIVE = frozenset({"comm", "dp_span", "pp_span", "edge_floor", "span_floor"})
RESUME_MIN = 0.02  # fraction of the time limit below which a stage that found nothing gives up


@dataclass
class StageRun:
    label: str
    status: SolveStatus
    value: int | None
    bound: float | None
    seconds: float
    deterministic_time: float
    attempts: int = 1  # searches run (a search that finds nothing is resumed while budget remains)
    kept: bool = False  # no solution of its own: the incumbent was kept, its value frozen
    gap: float | None = None  # in user units (:class:`.progress.StageReader`)
    ended: float = 0.0  # seconds since the run started, when the stage ended
    round_no: int = 0  # the exact model's refinement round (0: the first model)
    # a lower bound computed outside the search (:mod:`.spread_bound`, :mod:`.fragmentation_bound`)
    floor: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "stage": self.label, "round": self.round_no, "status": str(self.status),
            "objective": self.value,
            "bound": self.bound, "gap": self.gap, "seconds": round(self.seconds, 3),
            "deterministic_time": round(self.deterministic_time, 3),
            "attempts": self.attempts, "kept_incumbent": self.kept, "ended_s": round(self.ended, 3),
            "floor": self.floor,
        }


def _classes_of(pm: PlacementModel, nodes: list[int]) -> list[int]:
    """The (base) classes holding ``nodes``, ascending."""
    wanted = set(nodes)
    return [c for c, members in enumerate(pm.cands.classes.nodes[: pm.cands.classes.n_base])
            if wanted.intersection(members.tolist())]


class _SolutionCallback(cp_model.CpSolverSolutionCallback):
    """Reports progress, and stops a maximisation that reached its largest possible value (with
    ~10^12 priority weights CP-SAT's floating-point bound may never close that last gap), or a
    minimisation that reached its ``floor`` (a bound the search itself does not know)."""

    def __init__(self, reporter: Reporter, target: int | None, floor: int | None = None) -> None:
        super().__init__()
        self.reporter = reporter
        self.target = target
        self.floor = floor

    def on_solution_callback(self) -> None:
        self.reporter.solution(self.objective_value, self.best_objective_bound)
        if ((self.target is not None and self.objective_value >= self.target)
                or (self.floor is not None and self.objective_value <= self.floor)):
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
class Stage:
    label: str
    name: str | None  # stage name, None for the combined weighted objective
    expr: Any
    maximise: bool
    magnitude: int | None = None  # largest value a maximised stage can take


@dataclass
class Round:
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
        return bool(self.runs) and all(r.status == SolveStatus.OPTIMAL
                                       for r in self.runs) and not self.refine

    @property
    def searched(self) -> bool:
        """Some stage found a solution of its own (else the plan is the incumbent it was given)."""
        return any(not r.kept for r in self.runs)


class Run:
    """One call of :func:`solve_cpsat`."""

    def __init__(
        self, problem: Problem, profile: Profile, settings: Settings, progress: Progress | None,
        eviction: EvictionSpec | None = None, deadline: Deadline | None = None,
    ) -> None:
        self.problem = problem
        self.eviction = eviction
        self.spec = profile.objective
        self.comm = profile.comm  # prices the comm stage
        self.settings = settings
        self.progress = progress
        self.budget = Budget(settings, deadline)
        self.t0 = self.budget.t0
        self.reader = StageReader(problem)
        self.reporter = Reporter(progress, self.reader, self.t0)
        self.scale = 1
        self.repacked = 0  # hints replaced by a better repacking
        self.hint_values: dict[int, int] = {}
        # the last complete solution known to satisfy the model (a stage's solution, or a hint
        # checked feasible): kept when a stage finds nothing of its own
        self.incumbent: list[int] | None = None
        self.lift = False  # the exact model lifts whole-node pods (:mod:`.lift`)
        # the knapsack bound of ``placed`` (:mod:`.placed_bound`): UNSET until first needed
        self.placed_bound: int | None | Unset = UNSET
        # maximised stages frozen so far in this model: label -> value (``expr ≥ value``)
        self.frozen: dict[str, int] = {}
        # minimised stages frozen so far in this model: label -> value (``expr ≤ value``)
        self.capped: dict[str, int] = {}
        self.stage_floor: int | None = None  # the stage being solved: its floor (:meth:`floor`)

    def set_hint(self, pm: PlacementModel, values: dict[int, int]) -> None:
        self.hint_values = dict(values)
        apply_hint(pm.model, values)

    def stages(self, pm: PlacementModel) -> list[Stage]:
        """The profile's stages (with evictions, :func:`~toposolve.policy.profiles.for_eviction` has
        already put disruption right after placement)."""
        names = [s.name for s in self.spec.stages]
        if not names:
            return [Stage("feasibility", None, 0, True)]  # no objective: any valid plan
        lexicographic = self.spec.mode == "lexicographic"
        extra = pm.evict.stage_terms() if pm.evict is not None else None
        exprs = stage_exprs(self.problem, pm.vars, names, allow_split=lexicographic, extra=extra,
                            comm=self.comm)
        if lexicographic:
            self._cap_placed(exprs)
            for e in exprs:
                if e.maximise and not isinstance(e.expr, int):
                    # redundant, but a search reaching the largest value then ends OPTIMAL by
                    # itself (deterministic search cannot be stopped by the callback)
                    pm.model.add(e.expr <= e.magnitude)
            return [Stage(e.label, e.name, e.expr, e.maximise,
                          e.magnitude if e.maximise else None) for e in exprs]
        combined, self.scale = _weighted_objective(exprs,
                                                   {s.name: s.weight for s in self.spec.stages})
        return [Stage("weighted", None, combined, True)]

    def _cap_placed(self, exprs: list[StageExpr]) -> None:
        """Lower the unsplit ``placed`` stage's largest value to :func:`placed_upper_bound` (no
        evictions: they free capacity the bound does not count); computed once per run."""
        if self.eviction is not None:
            return
        if self.placed_bound is UNSET:
            self.placed_bound = placed_upper_bound(self.problem)
        for e in exprs:
            if e.label == "placed" and self.placed_bound is not None:
                e.magnitude = min(e.magnitude, self.placed_bound)

    def solve_once(self, pm: PlacementModel, stage: Stage, share: float) -> tuple[StageRun,
                                                                                  list[int] | None]:
        """Solve one stage; returns its record and the full solution vector (None if none)."""
        complete = len(self.hint_values) == len(pm.model.proto.variables)
        current = [self.hint_values[i]
                   for i in range(len(pm.model.proto.variables))] if complete else None
        if isinstance(stage.expr, int) and current is not None:
            # nothing to optimise (e.g. no fragmentation variables): keep the current solution
            return StageRun(stage.label, SolveStatus.OPTIMAL, stage.expr, float(stage.expr), 0.0,
                            0.0), current
        if stage.maximise and stage.magnitude is not None and not isinstance(stage.expr, int):
            hinted = expr_value(stage.expr, self.hint_values)
            if hinted is not None and hinted >= stage.magnitude and current is not None:
                # the (complete) hint already reaches the largest possible value: nothing to search
                return StageRun(stage.label, SolveStatus.OPTIMAL, hinted, float(hinted), 0.0,
                                0.0), current
        if stage.label in NEVER_NEGATIVE and self.incumbent is not None:
            if expr_value(stage.expr, dict(enumerate(self.incumbent))) == 0:
                # the incumbent (feasible) already reaches the least possible value
                return StageRun(stage.label, SolveStatus.OPTIMAL, 0, 0.0, 0.0, 0.0), self.incumbent
        model = pm.model
        model.clear_objective()
        has_objective = not isinstance(stage.expr, int)
        if has_objective:
            (model.maximize if stage.maximise else model.minimize)(stage.expr)
        target = stage.magnitude if has_objective and stage.maximise else None
        run = StageRun(stage.label, SolveStatus.UNKNOWN, None, None, 0.0, 0.0, attempts=0)
        if self.budget.exhausted():
            self.budget.note(f"{stage.label} not searched")
            return run, None  # no time left: not even a presolve (the incumbent is kept)
        run.floor = self.stage_floor = self.floor(pm, stage) if has_objective else None
        try:
            while True:
                solver, status = self.search(pm, stage, share, target)
                run.attempts += 1
                run.seconds += solver.wall_time
                run.deterministic_time += solver.deterministic_time
                found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
                if found or status == cp_model.INFEASIBLE or run.attempts >= MAX_ATTEMPTS:
                    break
                if (self.budget.remaining() < RESUME_MIN * self.settings.time_limit
                    or self.budget.wall_left() <= 0):
                    break
                share = 1.0  # found nothing, but budget remains: the stage takes all that is left
        finally:
            self.stage_floor = None  # searches outside this stage (:mod:`.coarse`) have none
        if found and has_objective:
            run.value = round(solver.objective_value)
            # without a solution CP-SAT's bound means nothing
            run.bound = solver.best_objective_bound
            if target is not None:
                run.bound = min(run.bound, target)
                if run.value >= target:
                    status = cp_model.OPTIMAL  # nothing can be larger
            if run.floor is not None:
                run.bound = max(run.bound, run.floor)
                if run.value <= run.floor:
                    status = cp_model.OPTIMAL  # nothing can be smaller
        elif found:
            run.value, run.bound = 0, 0.0
        run.status = SolveStatus(solver.status_name(status))
        return run, (list(solver.response_proto.solution) if found else None)

    def floor(self, pm: PlacementModel, stage: Stage) -> int | None:
        """A lower bound of a lexicographic ``spread`` or ``fragmentation`` stage found outside
        its search (:mod:`.spread_bound`, :mod:`.fragmentation_bound`, over the stages frozen
        before it), or None."""
        if stage.maximise or self.spec.mode != "lexicographic":
            return None
        if stage.name == "spread":
            return spread_lower_bound(pm, self.frozen, SPREAD_BOUND_DTIME, self.settings.seed)[0]
        if stage.name == "fragmentation":
            return fragmentation_lower_bound(pm, self.frozen, self.capped,
                                             FRAGMENTATION_BOUND_DTIME, self.settings.seed)[0]
        return None

    def search(self, pm: PlacementModel, stage: Stage, share: float,
               target: int | None) -> tuple[cp_model.CpSolver, int]:
        """One CP-SAT search of the stage's objective with ``share`` of the remaining budget;
        a minimisation stops once it reaches :attr:`stage_floor` (not in the interleaved
        portfolio)."""
        solver = cp_model.CpSolver()
        cap = self.budget.configure(solver, share)
        # OR-Tools 9.15 aborts on stop_search() in interleaved (deterministic) search; stopping
        # the sequential search at a value nothing can beat leaves its solution as it was
        interleaved = solver.parameters.interleave_search
        stop_at = None if self.settings.deterministic else target
        stop_below = None if interleaved else self.stage_floor
        callback = (_SolutionCallback(self.reporter, stop_at, stop_below)
                    if self.progress or stop_at is not None or stop_below is not None else None)
        if self.progress:
            solver.best_bound_callback = self.reporter.new_bound
        status = solver.solve(pm.model, callback)
        self.budget.spend(solver)
        if self.budget.stopped_by_wall(solver, cap,
                                       status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)):
            self.budget.note(
                f"{stage.label} stopped by the wall clock before its deterministic "
                f"budget (may differ between runs)"
            )
        if status == cp_model.MODEL_INVALID:
            problem = pm.model.validate()
            if not problem:  # a valid model: CP-SAT refused its parameters
                raise InputError(
                    "CP-SAT rejected its parameters (see solver.parameters / --param)",
                    obj="Profile",
                    field="solver.parameters",
                )
            raise RuntimeError(f"CP-SAT rejected the model: {problem[:500]}")
        return solver, status

    def stage_solutions(self, pm: PlacementModel, stages: list[Stage], out: Round,
                        total: int | None = None) -> Iterator[list[int]]:
        """Solve the stages in order, yielding each stage's solution; after the caller's turn
        the stage's value is frozen for the next one (lexicographic). A stage that finds nothing
        keeps the incumbent (its value is frozen and the next stage runs); without one, the
        stages stop, recording whether the first stage proved the model infeasible. ``total``:
        the stages the budget is shared with (default: these)."""
        shares = stage_shares(total or len(stages))
        self.frozen, self.capped = {}, {}
        for k, stage in enumerate(stages):
            self.reporter.start_stage(stage.label, self._start_value(stage))
            run, solution = self.solve_once(pm, stage, shares[k])
            out.runs.append(run)
            if (
                solution is None
                and run.status != SolveStatus.INFEASIBLE
                and self.incumbent is not None
            ):
                solution, run.kept = self.incumbent, True
                run.value = expr_value(stage.expr, dict(enumerate(solution)))
            self.stage_ended(run)
            if solution is None:
                out.infeasible = k == 0 and run.status == SolveStatus.INFEASIBLE
                return
            self.incumbent = solution
            yield solution
            if k + 1 < len(stages) and not isinstance(stage.expr, int):
                pm.model.add(stage.expr >= run.value if stage.maximise else stage.expr <= run.value)
                (self.frozen if stage.maximise else self.capped)[stage.label] = run.value

    def _start_value(self, stage: Stage) -> float | None:
        """The stage's value in the incumbent it starts from (user units), if there is one."""
        if self.incumbent is None or not self.reporter.callback:
            return None
        value = expr_value(stage.expr, dict(enumerate(self.incumbent)))
        return value / self.scale if stage.label == "weighted" else value

    def stage_ended(self, run: StageRun) -> None:
        """Gap in user units, end time, one progress line."""
        run.ended = time.perf_counter() - self.t0
        bound = (
            run.bound / self.scale
            if run.bound is not None and run.label == "weighted"
            else run.bound
        )
        value = (
            run.value / self.scale
            if run.value is not None and run.label == "weighted"
            else run.value
        )
        run.gap = self.reader.read(run.label, value, bound)[1] if run.bound is not None else None
        self.reporter.end_stage(run.label,
                run.status + (" (kept the incumbent)" if run.kept else ""), value, bound)

    def solve_stages(self, pm: PlacementModel, stages: list[Stage]) -> Round:
        out = Round()
        for solution in self.stage_solutions(pm, stages, out):
            node_counts, refine = disaggregate(self.problem, pm.cands, pm.counts(solution))
            if not refine and pm.devices is not None:  # nodes whose pods do not pack on devices
                refine = _classes_of(pm, pm.devices.picks(solution, node_counts)[1])
            if refine:
                out.refine, out.unpacked = refine, solution
                out.partial = decoded(pm, solution, node_counts)
                break
            out.solution, out.counts = solution, node_counts
            # next stage's hint: this solution's counts (or their repacking, if better) with
            # every indicator at its best value for those counts
            values = dict(enumerate(solution))
            values.update(choose_start(self, pm, [decoded(pm, solution, node_counts)]).values)
            self.set_hint(pm, values)
        return out

    def bound(self, stages: list[Stage], outcome: Round) -> float | None:
        runs = outcome.runs
        if not runs or runs[0].bound is None:
            return None
        if self.spec.mode == "weighted":
            return runs[0].bound / self.scale
        split = [r for r in runs if r.label.startswith("placed[")]
        if split:
            return bound_of_split_placed(self.problem, split)
        return runs[0].bound if stages[0].maximise else -runs[0].bound


def stage_shares(count: int) -> list[float]:
    weights = [2.0] + [1.0] * (count - 1)
    return [w / sum(weights[k:]) for k, w in enumerate(weights)]


def bound_of_split_placed(problem: Problem, runs: list[StageRun]) -> float | None:
    """Upper bound of the exact ``placed`` scalar from its per-priority sub-stages."""
    units = pending_level_units(problem)
    weights = dominance_weights(units)
    total = 0
    priorities = sorted(units, reverse=True)
    for k, priority in enumerate(priorities):
        if k >= len(runs) or runs[k].bound is None:
            return None
        if runs[k].status == SolveStatus.OPTIMAL:
            total += weights[priority] * (runs[k].value or 0)
            continue
        total += weights[priority] * int(runs[k].bound)
        total += sum(weights[p] * units[p] for p in priorities[k + 1 :])
        break
    return float(total)


def write_model(pm: PlacementModel, stages: list[Stage], path: str) -> None:
    """Write the model with the first stage's objective (proto; text if the name ends in .txt)."""
    pm.model.clear_objective()
    if stages and not isinstance(stages[0].expr, int):
        (pm.model.maximize if stages[0].maximise else pm.model.minimize)(stages[0].expr)
    with replacing(path, "wb") as out:  # the temporary name ends in .txt where path does
        if not pm.model.export_to_file(out.name):
            raise InputError("cannot write the model", file=str(path))


def expr_value(expr: Any, values: dict[int, int]) -> int | None:
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

"""The exact strategy: the model with a count variable per pod group and node class, refined
until its counts pack node by node.

Why rounds: node classes aggregate identical nodes, so a solution's counts may not split over
a class's nodes (:mod:`.disaggregate`); those classes are split into single nodes and the model
is solved again, at most :data:`MAX_REFINEMENTS` times. The best plan of any round is kept (a
later round, with less time, may find nothing or worse) and is the warm start of the next round
when it beats the hint; the bound is the tightest any round proved (every round's model bounds
the exact optimum). A solution no round packs has its counts repacked (:mod:`.repack`) when
that fits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from toposolve.core.assignment import Assignment
from toposolve.core.status import SolveStatus
from toposolve.engines.cpsat.model.classes import Scope
from toposolve.engines.cpsat.model.gpu_frag import per_node_split
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.post.repack import repack
from toposolve.engines.cpsat.solve.budget import OutOfTime
from toposolve.engines.cpsat.solve.comm_start import fewest_leaves_start
from toposolve.engines.cpsat.solve.plans import coarse_plan, decoded
from toposolve.engines.cpsat.solve.runner import Round, Run, StageRun, write_model
from toposolve.engines.cpsat.solve.stats import CpsatStats
from toposolve.engines.cpsat.solve.warmstart import start_from
from toposolve.policy.objective import ObjectiveValue, evaluate

MAX_REFINEMENTS = 4


@dataclass
class _Found:
    """A plan one round found, its objective value and the round's outcome."""

    plan: Assignment
    value: ObjectiveValue
    outcome: Round
    round: int | None = None  # None: repacked, not a round's own solution


def solve_exact(run: Run, hint: Assignment | None, stats: CpsatStats, export_model: str | None):
    """The exact model, refined until its counts pack node by node. The best plan of any round
    is kept (a later round, with less time, may find nothing or worse) and is the warm start
    of the next round when it beats the hint. The bound is the tightest any round proved."""
    problem = run.problem
    all_runs: list[StageRun] = []
    bounds: list[float] = []
    # nodes the per-node stages see one by one (none unless the profile names them)
    split = per_node_split(problem, [s.name for s in run.spec.stages])
    starts = [hint] if hint is not None else []  # plans the next round may start from
    if hint is not None and run.eviction is None and any(
            s.name in ("comm", "edge_floor", "span_floor") for s in run.spec.stages):
        greedy = fewest_leaves_start(problem, hint)  # the comm stage's own warm start
        starts += [greedy] if greedy is not None else []
    best: _Found | None = None
    for round_no in range(MAX_REFINEMENTS + 1):
        stats.rounds = round_no + 1
        run.reporter.set_phase("building the model"
                               + (f" (refinement round {round_no})" if round_no else ""))
        try:
            pm = PlacementModel(problem, Scope(split_nodes=split, lift=run.lift), run.eviction,
                                run.budget.check)
        except OutOfTime:
            if best is None:
                raise
            break  # no time for another refinement round: the best plan so far
        stats.build_seconds = round(time.perf_counter() - run.t0, 3)
        stats.record_size(pm.size())
        stages = run.stages(pm)
        if round_no == 0 and export_model:
            write_model(pm, stages, export_model)
        run.incumbent = None
        if starts:
            run.reporter.set_phase("checking the warm start")
            start_from(run, pm, starts, stats if round_no == 0 and hint is not None else None)
        outcome = run.solve_stages(pm, stages)
        for stage_run in outcome.runs:
            stage_run.round_no = round_no
        all_runs += outcome.runs
        bound = run.bound(stages, outcome) if outcome.runs else None
        bounds += [bound] if bound is not None else []
        if outcome.solved:
            plan = decoded(pm, outcome.solution, outcome.counts)
            found = _Found(plan, evaluate(problem, plan, run.spec, run.comm), outcome, round_no)
            best = found if best is None or found.value.better(best.value) else best
        if outcome.refine and not run.budget.exhausted() and round_no < MAX_REFINEMENTS:
            split = split | frozenset(int(n) for c in outcome.refine
                                      for n in pm.cands.classes.nodes[c])
            stats.refined_classes += len(outcome.refine)
            # the hint or this run's best plan so far (when better), else the partial packing
            starts = [p for p in (hint,
                    best.plan if best else None) if p is not None] or [outcome.partial]
            continue
        if outcome.refine and pm.evict is None and not problem.has_devices:  # repack pools devices
            best = _repacked(run, pm, outcome, best)
        break
    bound = min(bounds) if bounds else None  # every round's model bounds the exact optimum
    if best is None:
        return Assignment(), (SolveStatus.INFEASIBLE if outcome.infeasible
                              else SolveStatus.UNKNOWN), bound, all_runs
    stats.plan_round = best.round
    if not best.outcome.searched:
        status = SolveStatus.FALLBACK  # every stage kept the warm start: nothing of CP-SAT's own
    else:
        status = (
            SolveStatus.OPTIMAL
            if best.outcome is outcome and outcome.optimal
            else SolveStatus.FEASIBLE
        )
    return best.plan, status, bound, all_runs


def _repacked(run: Run, pm: PlacementModel, outcome: Round, best: _Found | None) -> _Found | None:
    """No round left for a solution that does not pack node by node: its pod counts repacked
    (:mod:`.repack`), if that fits and beats ``best``. (Not with evictions: repacking knows
    nothing of them.)"""
    totals, guide = coarse_plan(pm, outcome.unpacked)
    plan = repack(run.problem, totals, guide=guide)
    if plan is None:
        return best
    found = _Found(plan, evaluate(run.problem, plan, run.spec, run.comm), outcome)
    return found if best is None or found.value.better(best.value) else best

"""Why a pending job was left pending: small per-job relaxations, cheapest first.

Rules and rationale: ``docs/cpsat-formulation.md``, section
``toposolve.engines.cpsat.post.explain``.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.core.status import SolveStatus
from toposolve.engines.common.blockers import subjob_shortfall
from toposolve.engines.cpsat.model.classes import Scope, build_levels, pods_that_fit
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.solve.parameters import Settings
from toposolve.policy.objective import accelerator_resources, accelerator_units
from toposolve.policy.rules import task_minimums

PER_SOLVE_CAP = 2.0


def _unit_label(problem: Problem, groups: list[int]) -> str:
    acc = accelerator_resources(problem)
    if not acc or not (problem.group_request[np.ix_(groups, acc)] > 0).any():
        return "pods"
    names = " ".join(problem.resources[r].lower() for r in acc)
    return "GPUs" if "gpu" in names else "NPUs"


class _Explainer:
    def __init__(self, problem: Problem, assignment: Assignment, settings: Settings, budget: float,
                 aggregate_level: int, deadline: float | None = None) -> None:
        self.problem = problem
        self.aggregate_level = aggregate_level
        self.assignment = assignment
        self.settings = settings
        # deterministic mode: the solves share ``budget`` deterministic units (the same reasons
        # every run) and the wall clock only stops them at the run's deadline
        wall = time.perf_counter() + budget
        self.deadline = wall if deadline is None else (deadline if settings.deterministic
                                                       else min(wall, deadline))
        self.budget = budget
        self.deterministic_left = budget
        usage = assignment.usage(problem)
        self.used_after = problem.used + usage
        self.queue_extra: dict[str, np.ndarray] = {}
        for g, per in assignment.counts.items():
            q = problem.jobs[int(problem.group_job[g])].queue
            amount = sum(per.values()) * problem.group_request[g]
            self.queue_extra[q] = self.queue_extra.get(q, 0) + amount
        self.units = accelerator_units(problem)

    def fits(self, j: int, scope: Scope, share: float) -> bool | None:
        """Can job ``j`` alone be placed in ``scope``? None when undecided in time."""
        if self.deadline - time.perf_counter() <= 0.01:
            return None
        if self.aggregate_level:
            scope = replace(scope, aggregate_level=self.aggregate_level)
        pm = PlacementModel(self.problem, scope)
        if j not in pm.vars.y:
            return False
        pm.model.add(pm.vars.y[j] == 1)
        left = self.deadline - time.perf_counter()
        if left <= 0.01 or (self.settings.deterministic and self.deterministic_left <= 0.001):
            return None
        solver = cp_model.CpSolver()
        if self.settings.deterministic:
            self.settings.configure(solver, min(PER_SOLVE_CAP, self.deterministic_left * share),
                                    workers=1, wall_cap=left)
        else:
            self.settings.configure(solver, min(PER_SOLVE_CAP, left * share), workers=1)
        solver.parameters.log_search_progress = False
        status = solver.solve(pm.model)
        self.deterministic_left -= solver.deterministic_time
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return True
        if status == cp_model.INFEASIBLE:
            return False
        return None

    def reason(self, j: int, share: float) -> str:
        problem = self.problem
        cj = problem.jobs[j]
        pending = [g for g in cj.groups if problem.group_pending[g]]
        if not any((problem.group_feasible[g] & problem.schedulable).any() for g in pending):
            return (
                "no node passes its predicates (nodeSelector, node affinity, taints, unschedulable)"
            )
        undecided = "could not determine why within the time limit"
        after = self.fits(
            j,
            Scope(
                jobs=(j,), used=self.used_after, queue_used_extra=self.queue_extra, objective=False
            ),
            share,
        )
        if after is None:
            return undecided
        if after:
            return (
                "fits in what the other placements leave, but the search stopped before placing it"
            )
        alone = self.fits(j, Scope(jobs=(j,), objective=False), share)
        if alone is None:
            return undecided
        if alone:
            return "blocked by other jobs' placements" + self._blockers(j)
        hard_job = cj.limit is not None and cj.limit.hard
        hard_sub = [
            s
            for s in cj.subjobs
            if problem.subjobs[s].policy >= 0
            and problem.subjobs[s].limit is not None
            and problem.subjobs[s].limit.hard
        ]
        if hard_job or hard_sub:
            relaxations = []
            if hard_job:
                relaxations.append(("job",
                                    Scope(jobs=(j,), ignore_job_limits=True, objective=False)))
            if hard_sub:
                relaxations.append(("subjob",
                                    Scope(jobs=(j,), ignore_subjob_limits=True, objective=False)))
            if hard_job and hard_sub:
                relaxations.append(("both", Scope(jobs=(j,), ignore_limits=True, objective=False)))
            for which, scope in relaxations:
                free = self.fits(j, scope, share)
                if free is None:
                    return undecided
                if free:
                    return self._tier_message(j, which, hard_sub)
        unqueued = self.fits(j,
                Scope(jobs=(j,), ignore_limits=True, ignore_queue=True, objective=False), share)
        if unqueued:
            return f"queue {cj.queue!r} capability would be exceeded"
        need, free_amount, label = self._need_and_free(j, pending, None)
        return (f"does not fit even alone on the idle cluster (needs {need} {label}; the idle "
                f"nodes it may use have {free_amount})")

    def _blockers(self, j: int) -> str:
        problem = self.problem
        usable = np.zeros(problem.n_nodes, dtype=bool)
        for g in problem.jobs[j].groups:
            usable |= problem.group_feasible[g]
        pods: dict[int, int] = {}
        for g, per in self.assignment.counts.items():
            other = int(problem.group_job[g])
            if other == j:
                continue
            n_here = sum(c for n, c in per.items() if usable[n])
            if n_here:
                pods[other] = pods.get(other, 0) + n_here
        if not pods:
            return ""
        ranked = sorted(pods, key=lambda o: (-pods[o], o))
        names = ", ".join(problem.jobs[o].key for o in ranked[:3])
        more = f" and {len(ranked) - 3} more" if len(ranked) > 3 else ""
        return f": {names}{more} took the room it needs"

    def _need_and_free(self, j: int, groups: list[int], level: int | None, size: int | None = None,
                       running: int | None = None) -> tuple[int, int, str]:
        """Least amount the job (or a SubJob of ``size``) must add, and the largest free amount
        in one level-``level`` domain (whole cluster when ``level`` is None)."""
        problem = self.problem
        label = _unit_label(problem, groups)
        per_pod = {g: (int(self.units[g]) if label != "pods" else 1) for g in groups}
        cheapest = min(groups, key=lambda g: per_pod[g])
        minimum = job_need_pods(problem, j) if size is None else size
        already = problem.job_running_count(j) if running is None else running
        need = max(1, minimum - already) * per_pod[cheapest]
        per_node = np.zeros(problem.n_nodes, dtype=np.int64)
        for g in groups:
            fits = np.minimum(self._idle_fit(g), len(problem.group_pending[g]))
            per_node = np.maximum(per_node, fits * per_pod[g])
        if level is None:
            return need, int(per_node.sum()), label
        levels = build_levels(problem)
        dom = levels.domain[level][problem.topology.node_home]
        keep = dom >= 0
        totals = np.bincount(dom[keep], weights=per_node[keep].astype(float),
                             minlength=len(problem.topology.names))
        return need, int(totals.max()) if totals.size else 0, label

    def _idle_fit(self, g: int) -> np.ndarray:
        """[N] pods of group ``g`` each node takes on the cluster before the plan."""
        problem = self.problem
        idle = np.maximum(problem.allocatable - problem.used, 0)
        fits = pods_that_fit(problem.group_request[g], idle)
        return np.where(problem.group_feasible[g] & problem.schedulable, fits, 0)

    def _tier_message(self, j: int, which: str, hard_sub: list[int]) -> str:
        problem = self.problem
        cj = problem.jobs[j]
        if j in problem.crossing_jobs:  # the room counts below are the main tree's
            return (f"its tier limits, one in constraint tree {problem.crossing_jobs[j]!r} (a "
                    "Topology crossing the main tree), leave no room for it")
        if hard_sub:
            need = max(0, job_need_pods(problem, j) - problem.job_running_count(j))
            counted = subjob_shortfall(
                problem,
                j,
                need,
                self._idle_fit,
                cj.limit.tier if cj.limit and cj.limit.hard else None,
                lambda s: problem.subjobs[s].limit.tier if s in hard_sub else None,
            )
            if counted is not None:
                return counted
        levels = build_levels(problem)
        pending = [g for g in cj.groups if problem.group_pending[g]]
        if which == "both":
            limits = sorted({problem.subjobs[s].limit.tier for s in hard_sub})
            return (
                f"its tier limits together (job ≤ {cj.limit.tier}, SubJobs ≤ "
                f"{', '.join(map(str, limits))}) leave no room for it"
            )
        if which == "job":
            limit, what = cj.limit.tier, ""
            groups, size, running = pending, job_need_pods(problem, j), problem.job_running_count(j)
        else:
            sj = problem.subjobs[hard_sub[0]]
            limit = sj.limit.tier
            groups = [g for g in sj.groups if problem.group_pending[g]] or pending
            size = sj.min_available
            running = problem.running_count(sj.groups)
            what = f" SubJob {sj.id} ({size} pods):"
        level = levels.level_of_limit(limit)
        if level < 0:
            return f"no HyperNode has tier ≤ {limit}"
        need, best, label = self._need_and_free(j, groups, level, size, running)
        # there is that much room: what fails is combining it with the other limits
        if best >= need:
            subject = what.strip(" :") or "the job"
            return (
                f"no HyperNode of tier ≤ {limit} holds {subject} together with its other "
                f"constraints "
                f"(it needs {need} {label}; the largest tier-{int(levels.tiers[level])} free, "
                f"{best}, "
                "is not in a usable combination)"
            )
        return (
            f"no HyperNode of tier ≤ {limit} has room for{what} {need} {label} "
            f"(largest tier-{int(levels.tiers[level])} free: {best})"
        )


def job_need_pods(problem: Problem, j: int) -> int:
    """Pods a job must have to be ready: minAvailable, its SubJob minimums, its task minimums."""
    cj = problem.jobs[j]
    by_policy = sum(
        minimum
        * next(
            (
                problem.subjobs[s].min_available
                for s in cj.subjobs
                if problem.subjobs[s].policy == p
            ),
            1,
        )
        for p, minimum in cj.min_subjobs.items()
    )
    return max(cj.min_available, by_policy, sum(task_minimums(problem.jobs[j]).values()))


def explain_pending(
    problem: Problem,
    assignment: Assignment,
    settings: Settings,
    budget: float,
    status: SolveStatus,
    aggregate_level: int = 0,
    deadline: float | None = None,
) -> dict[int, str]:
    """Reason for every job with pending pods that ``assignment`` leaves without new pods
    (highest priority first, while the budget lasts; never past ``deadline``, a
    ``time.perf_counter()`` value)."""
    placed = assignment.placed_jobs(problem)
    pending = [
        cj.index for cj in problem.jobs if cj.index not in placed and problem.has_pending(cj.index)
    ]
    if not pending:
        return {}
    pending.sort(key=lambda j: (-problem.jobs[j].priority, j))
    explainer = _Explainer(problem, assignment, settings, budget, aggregate_level, deadline)
    out: dict[int, str] = {}
    for k, j in enumerate(pending):
        out[j] = explainer.reason(j, 1.0 / (len(pending) - k))
    if status in (SolveStatus.UNKNOWN, SolveStatus.FALLBACK):
        for j, text in out.items():
            if text.startswith("fits in what"):
                out[j] = f"fits in what the other placements leave; not placed ({status} plan)"
    return out

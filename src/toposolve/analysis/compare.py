"""Run several engines on one instance and show what each achieves, side by side."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toposolve.core.errors import require_type
from toposolve.core.instance import Instance
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.contract import EngineRefusal
from toposolve.policy.metrics import PlanMetrics, plan_metrics
from toposolve.policy.profiles import Profile, for_eviction, load_profile
from toposolve.policy.ranks import comm_totals, compare_ranks
from toposolve.solve import SolveOptions, solve_problem


@dataclass
class JobDiff:
    job: str
    per_engine: dict[str, str]  # engine -> "hypernode (tier t)" or "pending: reason"
    # "placement": placed by some engines only; "reason": pending everywhere, for different
    # reasons; "tier": domains of different tiers; "domain": same tier, another HyperNode (an
    # equivalent choice, summarised in one line of the table)
    kind: str = "domain"


@dataclass
class Comparison:
    instance: str
    metrics: list[PlanMetrics]
    plans: dict[str, Plan]
    diffs: list[JobDiff] = field(default_factory=list)
    problem: Problem | None = None  # the compiled instance the plans refer to
    # engine -> why it cannot take the instance
    refused: dict[str, str] = field(default_factory=dict)
    # engine -> {"index": …, "volcano": …, "ranked": …} communication totals over ranked jobs
    # (toposolve.policy.ranks.comm_totals); empty when no job has more than one pod placed
    comm: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "instance": self.instance,
            "engines": [m.to_dict() for m in self.metrics],
            "diffs": [{"job": d.job, "kind": d.kind, **d.per_engine} for d in self.diffs],
        }
        if self.comm:
            out["comm"] = {e: {side: dict(v) for side, v in c.items()}
                           for e, c in self.comm.items()}
        return {**out, "refused": dict(self.refused)} if self.refused else out


def _describe(plan: Plan, job: str, tiers: dict[str, int]) -> str:
    entry = plan.job(job)
    if entry is None:
        return "-"
    if not entry.placed:
        return f"pending: {entry.reason}"
    if entry.hypernode is None:
        return "placed"
    return f"{entry.hypernode} (tier {tiers.get(entry.hypernode, '?')})"


def _diff_kind(entries: list, tiers: dict[str, int]) -> str:
    placed = {bool(e and e.placed) for e in entries}
    if len(placed) > 1:
        return "placement"
    if placed == {False}:
        return "reason"
    domain_tiers = {tiers.get(e.hypernode) for e in entries}
    return "tier" if len(domain_tiers) > 1 else "domain"


def compare(instance: Instance, engines: tuple[str, ...] | None = None,
            profile: Profile | str | None = None, **options: Any) -> Comparison:
    """Solve ``instance`` with each engine (same profile and options) and measure the plans.

    An engine that refuses the instance (:class:`~toposolve.engines.contract.EngineRefusal`: a
    gang tree deeper than it models) is listed in ``refused`` with its one-line reason; when
    every engine refuses, the first refusal is raised.

    Parameters
    ----------
    instance
        The instance to solve.
    engines
        Registered engine names (default: the input's scheduler's mirror and ``cpsat``).
    profile
        A profile, its name in ``models/`` or a YAML path (default: the default profile).
    **options
        Solve options (:class:`~toposolve.engines.contract.SolveOptions` fields: ``time_limit``,
        ``evict``, ``seed`` …), the same for every engine.

    Returns
    -------
    Comparison
        The plans, their metrics, the jobs placed differently, and the refusals.
    """
    require_type(instance, Instance, "instance")
    if engines is None:  # the input's scheduler's mirror and the optimum
        from toposolve.solve import default_engine

        engines = (default_engine(instance), "cpsat")
    if not isinstance(profile, Profile):
        profile = load_profile(profile)
    profile = for_eviction(profile, options.get("evict"))  # as solve_problem ranks the plans
    problem = compile_problem(instance)
    plans: dict[str, Plan] = {}
    metrics: list[PlanMetrics] = []
    refused: dict[str, EngineRefusal] = {}
    comm: dict[str, dict[str, dict[str, Any]]] = {}
    for engine in engines:
        try:
            plan = solve_problem(problem, engine, profile, SolveOptions(**options))
        except EngineRefusal as why:
            refused[engine] = why
            continue
        plans[engine] = plan
        metrics.append(plan_metrics(problem, plan, profile.objective, profile.comm))
        jobs = compare_ranks(problem, plan, profile.comm)
        if jobs:
            comm[engine] = comm_totals(jobs)
    if not plans and refused:
        raise next(iter(refused.values()))
    return Comparison(
        instance=instance.source, metrics=metrics, plans=plans, diffs=job_diffs(problem, plans),
        problem=problem,
        refused={e: str(why) for e, why in refused.items()}, comm=comm,
    )


def job_diffs(problem: Problem, plans: dict[str, Plan]) -> list[JobDiff]:
    """Jobs whose placement (or pending reason) differs between the plans, in job order."""
    tiers: dict[str, int] = {}
    for topo in (*problem.trees.values(), problem.topology):  # constraint trees' domains too
        tiers.update((name, int(topo.tier[i])) for i, name in enumerate(topo.names))
    diffs: list[JobDiff] = []
    for key in (cj.key for cj in problem.jobs):
        described = {e: _describe(p, key, tiers) for e, p in plans.items()}
        if len(set(described.values())) > 1:
            diffs.append(JobDiff(key, described,
                                 _diff_kind([p.job(key) for p in plans.values()], tiers)))
    return diffs

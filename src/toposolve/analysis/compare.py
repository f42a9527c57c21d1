"""Run several engines on one instance and show what each achieves, side by side."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toposolve.core.instance import Instance
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.contract import EngineRefusal
from toposolve.policy.metrics import PlanMetrics, plan_metrics
from toposolve.policy.profiles import Profile, for_eviction, load_profile
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
    refused: dict[str, str] = field(default_factory=dict)  # engine -> why it cannot take the instance

    def to_dict(self) -> dict[str, Any]:
        out = {
            "instance": self.instance,
            "engines": [m.to_dict() for m in self.metrics],
            "diffs": [{"job": d.job, "kind": d.kind, **d.per_engine} for d in self.diffs],
        }
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


def compare(
    instance: Instance,
    engines: tuple[str, ...] | None = None,
    profile: Profile | str | None = None,
    **options: Any,
) -> Comparison:
    """Solve ``instance`` with each engine (same profile and options) and measure the plans.

    An engine that refuses the instance (:class:`~toposolve.engines.contract.EngineRefusal`: a
    gang tree deeper than it models) is listed in ``refused`` with its one-line reason; when
    every engine refuses, the first refusal is raised."""
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
    for engine in engines:
        try:
            plan = solve_problem(problem, engine, profile, SolveOptions(**options))
        except EngineRefusal as why:
            refused[engine] = why
            continue
        plans[engine] = plan
        metrics.append(plan_metrics(problem, plan, profile.objective))
    if not plans and refused:
        raise next(iter(refused.values()))
    return Comparison(
        instance=instance.source, metrics=metrics, plans=plans, diffs=job_diffs(problem, plans), problem=problem,
        refused={e: str(why) for e, why in refused.items()},
    )


def job_diffs(problem: Problem, plans: dict[str, Plan]) -> list[JobDiff]:
    """Jobs whose placement (or pending reason) differs between the plans, in job order."""
    topo = problem.topology
    tiers = {name: int(topo.tier[i]) for i, name in enumerate(topo.names)}
    diffs: list[JobDiff] = []
    for key in (cj.key for cj in problem.jobs):
        described = {e: _describe(p, key, tiers) for e, p in plans.items()}
        if len(set(described.values())) > 1:
            diffs.append(JobDiff(key, described, _diff_kind([p.job(key) for p in plans.values()], tiers)))
    return diffs


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


ROWS: tuple[tuple[str, str], ...] = (
    ("status", "status"),
    ("jobs placed", "jobs_placed"),
    ("jobs pending", "jobs_pending"),
    ("pods bound", "pods_bound"),
    ("accelerators placed", "units_placed"),
    ("accelerators by priority", "units_by_priority"),
    ("accelerator utilisation", "utilisation"),
    ("mean job domain tier", "mean_domain_tier"),
    ("mean pod-pair LCA tier", "mean_pair_lca_tier"),
    ("free whole leaf domains", "free_leaves"),
    ("free whole domains a tier up", "free_tier2"),
    ("largest free domain (nodes)", "largest_free_domain_nodes"),
    ("evictions", "evictions"),
    ("broken gangs", "broken_gangs"),
    ("gap", "gap"),
    ("wall time (s)", "wall_time_s"),
)


def format_comparison(result: Comparison, *, max_diffs: int = 30) -> str:
    """The human table: one column per engine, then the per-job differences."""
    names = [m.engine for m in result.metrics]
    width = max(len(label) for label, _ in ROWS) + 2
    cells = [_fmt(getattr(m, attr)) for m in result.metrics for _, attr in ROWS]
    col = max(14, *(len(n) + 2 for n in names), *(len(c) + 2 for c in cells))
    lines = [f"instance: {result.instance}"] + [f"{e}: refused: {why}" for e, why in result.refused.items()]
    lines.append("metric".ljust(width) + "".join(n.rjust(col) for n in names))
    for label, attr in ROWS:
        lines.append(label.ljust(width) + "".join(_fmt(getattr(m, attr)).rjust(col) for m in result.metrics))
    stage_names = list(result.metrics[0].objective_stages) if result.metrics else []
    for stage in stage_names:
        lines.append(
            f"objective: {stage}".ljust(width)
            + "".join(_fmt(m.objective_stages.get(stage)).rjust(col) for m in result.metrics)
        )
    sections = (
        ("jobs placed differently", ("placement", "tier")),
        ("jobs pending in every engine, for different reasons", ("reason",)),
    )
    for title, kinds in sections:
        lines.extend(_diff_section(title, [d for d in result.diffs if d.kind in kinds], max_diffs))
    same_tier = sum(d.kind == "domain" for d in result.diffs)
    if same_tier:
        jobs = "job sits" if same_tier == 1 else "jobs sit"
        lines.append(f"{same_tier} more {jobs} in another HyperNode of the same tier (--json lists them)")
    return "\n".join(lines)


def _diff_section(title: str, diffs: list[JobDiff], max_diffs: int) -> list[str]:
    if not diffs:
        return []
    lines = ["", f"{title} ({len(diffs)}):"]
    for d in diffs[:max_diffs]:
        lines.append(f"  {d.job}")
        lines.extend(f"    {engine:>10}: {text}" for engine, text in d.per_engine.items())
    if len(diffs) > max_diffs:
        lines.append(f"  … {len(diffs) - max_diffs} more (use --json for all)")
    return lines

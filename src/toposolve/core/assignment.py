"""What every engine decides, in counts, and its conversions to and from a named :class:`Plan`.

Engines work with counts of interchangeable pods (pod groups, see :mod:`toposolve.core.problem`);
names are given here by one documented rule so that every engine names pods the same way:
the pending pods of a group, in pod-index order, fill the group's nodes in ascending node index.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from toposolve.core.errors import InputError, require_type
from toposolve.core.footprint import Footprint
from toposolve.core.gang import gang_ready
from toposolve.core.plan import Binding, JobPlacement, Plan, SubJobPlacement
from toposolve.core.problem import Problem


@dataclass
class Assignment:
    """New placements and domain choices of one engine run."""

    counts: dict[int, dict[int, int]] = field(default_factory=dict)  # group -> node -> new pods
    job_domain: dict[int, int] = field(default_factory=dict)  # job -> HyperNode index
    subjob_domain: dict[int, int] = field(default_factory=dict)  # SubJob -> HyperNode index
    reasons: dict[int, str] = field(default_factory=dict)  # job -> why it is pending
    # job -> the mirrored scheduler's own wording of that reason (mirror engines that give it)
    scheduler_reasons: dict[int, str] = field(default_factory=dict)
    evicted: list[str] = field(default_factory=list)  # full names of running pods removed
    nominated_jobs: set[int] = field(default_factory=set)  # jobs whose bindings wait for evictions
    stats: dict = field(default_factory=dict)  # engine facts for the plan's stats (e.g. evictions)
    # per-device sharing: group -> node -> the devices each new pod takes, one tuple per pod
    devices: dict[int, dict[int, list[tuple[int, ...]]]] = field(default_factory=dict)

    def add_devices(self, group: int, node: int, picks: list[tuple[int, ...]]) -> None:
        """Record the devices of new pods of ``group`` on ``node`` (one tuple per pod)."""
        if picks:
            self.devices.setdefault(group, {}).setdefault(node, []).extend(picks)

    def add(self, group: int, node: int, count: int) -> None:
        if count <= 0:
            return
        per_node = self.counts.setdefault(group, {})
        per_node[node] = per_node.get(node, 0) + count

    def placed_jobs(self, problem: Problem) -> set[int]:
        return {int(problem.group_job[g]) for g, nodes in self.counts.items() if nodes}

    def usage(self, problem: Problem) -> np.ndarray:
        """[N, R] resources taken by the new placements."""
        out = np.zeros_like(problem.allocatable)
        for g, per_node in self.counts.items():
            for n, c in per_node.items():
                out[n] += c * problem.group_request[g]
        return out


def to_plan(
    problem: Problem,
    assignment: Assignment,
    *,
    engine: str,
    status: str,
    objective: float | None = None,
    bound: float | None = None,
    wall_time_s: float = 0.0,
    stats: dict | None = None,
) -> Plan:
    """The named :class:`Plan` of ``assignment`` (pods named by the module's rule).

    Each placed job and SubJob reports ``assignment.job_domain`` / ``subjob_domain`` where the
    engine set one, else the domain its pods occupy (:class:`toposolve.core.footprint.Footprint`).
    :func:`from_plan` is the inverse.

    Parameters
    ----------
    problem
        The compiled problem.
    assignment
        The engine's decisions.
    engine, status, objective, bound, wall_time_s
        Copied into the plan.
    stats
        Engine statistics, merged over ``assignment.stats``; a ``victims`` report is added when
        the plan evicts.

    Returns
    -------
    Plan
    """
    require_type(problem, Problem, "problem")
    require_type(assignment, Assignment, "assignment")
    bindings = _bindings(problem, assignment)
    evicted = set(assignment.evicted)
    names = problem.topology.node_names
    evictions = [Binding(pod=p, node=names[problem.running_pods[p]]) for p in sorted(evicted)]
    victims = victim_report(problem, evicted)
    return Plan(
        engine=engine,
        status=status,
        objective=objective,
        bound=bound,
        wall_time_s=wall_time_s,
        bindings=bindings,
        evictions=evictions,
        jobs=_job_placements(problem, assignment),
        stats={**assignment.stats, **(stats or {}), **({"victims": victims} if victims else {})},
    )


def from_plan(problem: Problem, plan: Plan) -> Assignment:
    """The :class:`Assignment` of ``plan``: the inverse of :func:`to_plan`.

    Bindings become counts per group and node, nominated bindings mark their jobs, evictions,
    reported domains and pending reasons are kept, and ``plan.stats`` becomes the assignment's
    stats (without ``victims``, which :func:`to_plan` derives again). For a plan an engine
    emitted, ``to_plan(problem, from_plan(problem, plan), engine=plan.engine, ...)`` gives the
    plan back (``metrics`` aside, which :func:`toposolve.solve` adds); a plan naming pods against
    the module's rule comes back with the pods renamed by it.

    Parameters
    ----------
    problem
        The compiled problem the plan is for.
    plan
        A plan of that problem (any engine's, or read from a file).

    Returns
    -------
    Assignment

    Raises
    ------
    InputError
        The plan names a pod, node, job, SubJob or HyperNode the problem does not have.
    """
    require_type(problem, Problem, "problem")
    require_type(plan, Plan, "plan")
    out = Assignment(
        evicted=[e.pod for e in plan.evictions],
        stats={k: v for k, v in plan.stats.items() if k != "victims"}
    )
    for b in plan.bindings:
        g = _look_up(problem.pod_group, b.pod, "Pod", "bindings.pod")
        n = _look_up(problem.node_index, b.node, "Node", "bindings.node")
        out.add(g, n, 1)
        if b.devices is not None:
            out.add_devices(g, n, [tuple(b.devices)])
        if b.nominated:
            out.nominated_jobs.add(int(problem.group_job[g]))
    for e in plan.evictions:
        _look_up(problem.running_pods, e.pod, "running Pod", "evictions.pod")
    job_index = {cj.key: cj.index for cj in problem.jobs}
    hypernodes = problem.topology.index
    for entry in plan.jobs:
        j = _look_up(job_index, entry.job, "Job", "jobs.job")
        if not entry.placed:
            if entry.reason is not None:
                out.reasons[j] = entry.reason
            if entry.scheduler_reason is not None:
                out.scheduler_reasons[j] = entry.scheduler_reason
            continue
        limit = problem.jobs[j].limit
        if entry.hypernode is not None and (limit is None or limit.tree is None):
            out.job_domain[j] = _look_up(hypernodes, entry.hypernode, "HyperNode", "jobs.hypernode")
        subjob_index = {problem.subjobs[s].id: s for s in problem.jobs[j].subjobs}
        for sub in entry.subjobs:
            s = _look_up(subjob_index, sub.id, f"SubJob of {entry.job}", "jobs.subjobs.id")
            limit = problem.subjobs[s].limit
            if limit is not None and limit.tree is not None:
                continue  # a domain of a crossing Topology's tree, re-derived from the bindings
            if sub.hypernode is not None:
                out.subjob_domain[s] = _look_up(hypernodes, sub.hypernode, "HyperNode",
                                                "jobs.subjobs.hypernode")
    return out


def _look_up(index: Mapping[str, int], name: str, what: str, field_name: str) -> int:
    if name not in index:
        raise InputError(f"no {what} {name!r} in the instance", obj="Plan", field=field_name)
    return index[name]


def _bindings(problem: Problem, assignment: Assignment) -> list[Binding]:
    """A group's pending pods in index order fill its nodes in ascending node index (and the
    devices recorded for the group on a node, in their order)."""
    names = problem.topology.node_names
    bindings: list[Binding] = []
    for g in sorted(assignment.counts):
        pending = problem.group_pending[g]
        cursor = 0
        nominated = int(problem.group_job[g]) in assignment.nominated_jobs
        devices = assignment.devices.get(g, {})
        for n in sorted(assignment.counts[g]):
            c = assignment.counts[g][n]
            if c <= 0:
                continue
            picks = devices.get(n, [])
            for k, pod in enumerate(pending[cursor : cursor + c]):
                taken = list(picks[k]) if k < len(picks) else None
                bindings.append(Binding(pod=pod, node=names[n], nominated=nominated,
                                        devices=taken))
            cursor += c
        if cursor > len(pending):
            raise ValueError(f"engine placed {cursor} pods of a group with {len(pending)} pending")
    return bindings


def _job_placements(problem: Problem, assignment: Assignment) -> list[JobPlacement]:
    """Every job with pending pods: its domain and SubJob domains, or why it stays pending."""
    hn_names = problem.topology.names
    placed = {int(problem.group_job[g]) for g in assignment.counts
              if _has_new_pods(assignment, [g])}
    footprint = Footprint.of_jobs(problem, assignment, placed)

    def domain(reported: dict[int, int], key: int, groups: list[int], limit=None) -> str:
        h = reported.get(key)
        if limit is not None and limit.tree is not None:
            # a constraint in a crossing Topology's tree: its domain is one of that tree (an
            # engine reports domains of the main tree)
            tree = problem.topology_of(limit)
            return tree.names[tree.lca_of_nodes(list(footprint.node_counts(groups)))]
        return hn_names[footprint.domain(groups) if h is None else h]

    jobs: list[JobPlacement] = []
    for cj in problem.jobs:
        j = cj.index
        if j not in placed:
            if problem.has_pending(j):  # a fully running job has nothing to decide
                jobs.append(
                    JobPlacement(job=cj.key, placed=False,
                                 reason=assignment.reasons.get(j, "not placed"),
                                 scheduler_reason=assignment.scheduler_reasons.get(j)))
            continue
        subs = [
            SubJobPlacement(id=sj.id, hypernode=domain(assignment.subjob_domain, s, sj.groups,
                                                       sj.limit if sj.policy >= 0 else None))
            for s, sj in ((s, problem.subjobs[s]) for s in cj.subjobs)
            if sj.id != cj.key and _has_new_pods(assignment, sj.groups)
        ]
        jobs.append(
            JobPlacement(job=cj.key, placed=True,
                         hypernode=domain(assignment.job_domain, j, cj.groups, cj.limit),
                         subjobs=subs))
    return jobs


def _has_new_pods(assignment: Assignment, groups: list[int]) -> bool:
    return any(c > 0 for g in groups for c in assignment.counts.get(g, {}).values())


def victim_report(problem: Problem, evicted: set[str]) -> list[dict]:
    """Per job that loses pods: how many, how many it keeps, and whether its gang is broken.

    Parameters
    ----------
    problem
        The compiled problem.
    evicted
        Full names of the running pods evicted.

    Returns
    -------
    list of dict
        ``job``, ``evicted``, ``keeps`` and ``broken`` (the gang was ready and falls below its
        minimum, as ``objective.broken_gangs`` counts it), per job in index order.
    """
    lost: dict[int, int] = {}
    for pod in evicted:
        j = int(problem.group_job[problem.pod_group[pod]])
        lost[j] = lost.get(j, 0) + 1
    report = []
    for j in sorted(lost):
        before = problem.running_per_group(problem.jobs[j].groups)
        after = dict(before)
        for pod in evicted:
            g = problem.pod_group[pod]
            if g in after:
                after[g] -= 1
        report.append(
            {
                "job": problem.jobs[j].key,
                "evicted": lost[j],
                "keeps": sum(after.values()),
                "broken": gang_ready(problem, j, before) and not gang_ready(problem, j, after),
            }
        )
    return report

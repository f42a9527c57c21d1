"""What every engine decides, in counts, and its conversion to a named :class:`Plan`.

Engines work with counts of interchangeable pods (pod groups, see :mod:`toposolve.problem`);
names are given here by one documented rule so that every engine names pods the same way:
the pending pods of a group, in pod-index order, fill the group's nodes in ascending node index.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..plan import Binding, JobPlacement, Plan, SubJobPlacement
from ..problem import Problem


@dataclass
class Assignment:
    """New placements and domain choices of one engine run."""

    counts: dict[int, dict[int, int]] = field(default_factory=dict)  # group -> node -> new pods
    job_domain: dict[int, int] = field(default_factory=dict)  # job -> HyperNode index
    subjob_domain: dict[int, int] = field(default_factory=dict)  # SubJob -> HyperNode index
    reasons: dict[int, str] = field(default_factory=dict)  # job -> why it is pending
    evicted: list[str] = field(default_factory=list)  # full names of running pods removed
    nominated_jobs: set[int] = field(default_factory=set)  # jobs whose bindings wait for evictions
    stats: dict = field(default_factory=dict)  # engine facts for the plan's stats (e.g. evictions)

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


def domain_of_nodes(problem: Problem, nodes: list[int]) -> int:
    """Lowest HyperNode holding ``nodes`` (what a plan reports for a job or SubJob)."""
    return problem.topology.lca_of_nodes(nodes)


def _still_running(problem: Problem, evicted: set[str], jobs: dict[int, list[int]]) -> dict[int, set[int]]:
    """Per group: the nodes of its running pods that are not evicted. Without evictions only
    the groups of ``jobs`` are listed (the others are not asked for)."""
    if not evicted:
        return {g: set(problem.group_running[g]) for j in jobs for g in problem.jobs[j].groups if problem.group_running[g]}
    still_running: dict[int, set[int]] = {}
    for pod, n in problem.running_pods.items():
        if pod not in evicted:
            still_running.setdefault(problem.pod_group[pod], set()).add(n)
    return still_running


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
    """The named :class:`Plan` of ``assignment`` (pods named by the module's rule)."""
    bindings, nodes_of_job, nodes_of_subjob = _bindings(problem, assignment)
    evicted = set(assignment.evicted)
    _add_running_nodes(problem, evicted, nodes_of_job, nodes_of_subjob)
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
        jobs=_job_placements(problem, assignment, nodes_of_job, nodes_of_subjob),
        stats={**assignment.stats, **(stats or {}), **({"victims": victims} if victims else {})},
    )


NodesOf = dict[int, list[int]]  # job (or SubJob) -> nodes holding its pods


def _bindings(problem: Problem, assignment: Assignment) -> tuple[list[Binding], NodesOf, NodesOf]:
    """Bindings (a group's pending pods in index order fill its nodes in ascending order) and
    the nodes of each placed job and SubJob."""
    names = problem.topology.node_names
    bindings: list[Binding] = []
    nodes_of_job: NodesOf = {}
    nodes_of_subjob: NodesOf = {}
    for g in sorted(assignment.counts):
        pending = problem.group_pending[g]
        cursor = 0
        j = int(problem.group_job[g])
        s = int(problem.group_subjob[g])
        nominated = j in assignment.nominated_jobs
        for n in sorted(assignment.counts[g]):
            c = assignment.counts[g][n]
            if c <= 0:
                continue
            for pod in pending[cursor : cursor + c]:
                bindings.append(Binding(pod=pod, node=names[n], nominated=nominated))
            cursor += c
            nodes_of_job.setdefault(j, []).append(n)
            nodes_of_subjob.setdefault(s, []).append(n)
        if cursor > len(pending):
            raise ValueError(f"engine placed {cursor} pods of a group with {len(pending)} pending")
    return bindings, nodes_of_job, nodes_of_subjob


def _add_running_nodes(problem: Problem, evicted: set[str], nodes_of_job: NodesOf, nodes_of_subjob: NodesOf) -> None:
    """A placed job's (SubJob's) domain includes the nodes of its pods that keep running."""
    for g, live in _still_running(problem, evicted, nodes_of_job).items():
        j = int(problem.group_job[g])
        s = int(problem.group_subjob[g])
        if j in nodes_of_job:
            nodes_of_job[j].extend(live)
        if s in nodes_of_subjob:
            nodes_of_subjob[s].extend(live)


def _job_placements(
    problem: Problem, assignment: Assignment, nodes_of_job: NodesOf, nodes_of_subjob: NodesOf
) -> list[JobPlacement]:
    """Every job with pending pods: its domain and SubJob domains, or why it stays pending."""
    hn_names = problem.topology.names
    jobs: list[JobPlacement] = []
    for cj in problem.jobs:
        j = cj.index
        if j not in nodes_of_job:
            if problem.has_pending(j):  # a fully running job has nothing to decide
                jobs.append(JobPlacement(job=cj.key, placed=False, reason=assignment.reasons.get(j, "not placed")))
            continue
        dom = assignment.job_domain.get(j, domain_of_nodes(problem, nodes_of_job[j]))
        subs = [
            SubJobPlacement(
                id=problem.subjobs[s].id,
                hypernode=hn_names[assignment.subjob_domain.get(s, domain_of_nodes(problem, nodes_of_subjob[s]))],
            )
            for s in cj.subjobs
            if s in nodes_of_subjob and problem.subjobs[s].id != cj.key
        ]
        jobs.append(JobPlacement(job=cj.key, placed=True, hypernode=hn_names[dom], subjobs=subs))
    return jobs


def victim_report(problem: Problem, evicted: set[str]) -> list[dict]:
    """Per job that loses pods: how many, how many it keeps, and whether its gang is broken
    (it was ready and falls below its minimum — seed 002; see ``objective.broken_gangs``)."""
    from ..objective import gang_ready

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

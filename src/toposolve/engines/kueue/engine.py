"""The Kueue mirror: admission order, ClusterQueue nominal quota, TAS placement per podset.

Order: pending workloads by priority (descending), then creation (``creation_index``), across
ClusterQueues — Kueue's BestEffortFIFO heads compared by priority and timestamp; a workload that
does not fit is skipped and the next one tried. Quota: a ClusterQueue admits a workload while the
requests of its admitted and running pods stay within its nominal quota (the queue's capability);
cohort borrowing is not modelled. A workload is all-or-nothing: its podsets are placed one after
another with the earlier ones' pods assumed, and the whole workload is rolled back if one fails.
Nodes: each job sees the domain tree of its node pool (its ResourceFlavor's nodes) in its
flavor's Topology — a constraint tree when that Topology crosses the main tree
(:mod:`toposolve.engines.kueue.flavor_trees`); a required job that already runs (pods being
replaced after a node failure) sees only the required-level domain holding its first running pod.
Per-device sharing: an admitted workload's pods then take devices on their nodes
(:mod:`toposolve.engines.kueue.devices`); if one fits none, the workload is not bound. A workload
whose flavor has no Topology (or any, on an instance without a tree) is admitted by quota and
placed pod by pod as kube-scheduler would (:mod:`toposolve.engines.kueue.non_tas`).
"""

from __future__ import annotations

import numpy as np

from toposolve.core.assignment import Assignment
from toposolve.core.gang import gang_ready
from toposolve.core.podset_groups import inactive_message
from toposolve.core.problem import CompiledJob, Problem
from toposolve.core.refusal import MISSING_LEVEL
from toposolve.engines.common.admission import admission_order
from toposolve.engines.common.capacity import Capacity, fit_in
from toposolve.engines.common.devices import DeviceRoom
from toposolve.engines.common.missing_level import explain_unplaceable
from toposolve.engines.common.node_scores import NodeScoring
from toposolve.engines.kueue.devices import bind_on_devices, device_room
from toposolve.engines.kueue.flavor_trees import TreeViews, job_tree
from toposolve.engines.kueue.no_flavor import failing_podsets, no_matching_flavor
from toposolve.engines.kueue.non_tas import (
    is_non_tas,
    node_scoring,
    place_pods,
    unbound_reason,
    whole_subjobs,
)
from toposolve.engines.kueue.placement import place
from toposolve.engines.kueue.quota import QuotaBook
from toposolve.engines.kueue.reasons import (
    Exclusions,
    elastic_hold,
    exclusions,
    kueue_message,
)
from toposolve.engines.kueue.requests import (
    Gates,
    JobRequest,
    KueueText,
    job_requests,
    replacement_domain,
)
from toposolve.engines.kueue.tree import DomainTree, build_tree


def _to_nodes(tree: DomainTree, cap: Capacity, request: np.ndarray, feasible: np.ndarray,
              leaves: list[tuple[int, int]]) -> list[tuple[int, int]] | str:
    """(node, pods) per leaf, taken from ``cap``; pooled leaves are filled first-fit over their
    nodes by name."""
    H = tree.n_hypernodes
    out: list[tuple[int, int]] = []
    names = tree.problem.topology.node_names
    for d, count in leaves:
        if d >= H:
            out.append((d - H, count))
            cap.free[d - H] -= count * request
            continue
        members = tree.nodes_of(d)
        if not tree.pooled and len(members) == 1:  # a hostname leaf: Kueue counted its node
            out.append((members[0], count))
            cap.free[members[0]] -= count * request
            continue
        left = count
        for n in sorted(members, key=lambda n: names[n]):
            if left == 0:
                break
            take = min(int(fit_in(cap.free[n : n + 1], request, feasible[n : n + 1])[0]), left)
            if take:
                out.append((n, take))
                cap.free[n] -= take * request
                left -= take
        if left:
            return (f"domain {tree.problem.topology.names[d]} holds the pods only with its nodes' "
                    f"capacity pooled")
    return out


def _bind(problem: Problem, assignment: Assignment, cap: Capacity, groups: list[int],
          per_node: list[tuple[int, int]]) -> None:
    """Give the groups' pending pods, in order, to the nodes."""
    pods = [g for g in groups for _ in problem.group_pending[g]]
    cursor = 0
    for n, count in per_node:
        for g in pods[cursor : cursor + count]:
            assignment.add(g, n, 1)
            cap.take(g, n, 1)
        cursor += count


def _scheduler_reason(tree: DomainTree, full: DomainTree, free: np.ndarray, req: JobRequest,
                      reason: str) -> str:
    """Kueue's message for the podset (the workers' podset of a group) that did not fit."""
    problem = tree.problem
    task = problem.group_task[req.groups[0]]
    j = int(problem.group_job[req.groups[0]])
    stats = exclusions(tree, full, free, req.spec, task, j)
    return kueue_message(reason, task, problem.instance.jobs[j].topology_name, stats)


def _place_job(tree: DomainTree, full: DomainTree, cap: Capacity, requests: list[JobRequest],
               assignment: Assignment) -> tuple[str, str | None] | None:
    """Place the job's podsets; on failure toposolve's reason and Kueue's wording (None when
    Kueue would say something else)."""
    problem = tree.problem
    for req in requests:
        placed = place(tree, cap.free, req.spec)
        if isinstance(placed, str):
            return placed, _scheduler_reason(tree, full, cap.free, req, placed)
        saved = cap.snapshot()
        spec = req.spec
        leader = []
        if req.leader:
            leader = _to_nodes(tree, cap, spec.leader_request,
                               spec.leader_feasible & spec.feasible, placed.leader)
        workers = (leader if isinstance(leader, str) else _to_nodes(tree, cap, spec.request,
                                                                    spec.feasible, placed.workers))
        cap.restore(saved)
        for got in (leader, workers):
            if isinstance(got, str):
                return got, None
        _bind(problem, assignment, cap, req.leader, leader)
        _bind(problem, assignment, cap, req.groups, workers)
    return None


def _replacement_pool(problem: Problem, cj: CompiledJob,
                      first_node: int | None) -> np.ndarray | None:
    """The nodes a job may use: its pool, and for a required job that already runs (pods being
    replaced: ``first_node`` is its first running pod's) only the domain at the required level
    holding its running pods (Kueue's ``requiredReplacementDomain``)."""
    if first_node is None or cj.limit is None or not cj.limit.hard:
        return cj.pool
    running = [n for g in cj.groups for n in problem.group_running[g]]
    inside = replacement_domain(problem, running, cj.limit.tier)
    return inside if cj.pool is None else inside & cj.pool


def _refused_request(problem: Problem, j: int, assignment: Assignment) -> bool:
    """Whether job ``j``'s request is one Kueue never places (``Problem.refused_jobs``), Kueue's
    words recorded: a level no flavor has (before quota and TAS), or layers TAS refuses (as a
    :class:`KueueText`). toposolve's reason is :func:`explain_unplaceable`'s, as for every
    engine."""
    refusal = problem.refused_jobs.get(j)
    if refusal is None:
        return False
    job = problem.instance.jobs[j]
    if refusal.kind == MISSING_LEVEL:
        if (words := no_matching_flavor(job)) is not None:
            assignment.scheduler_reasons[j] = words
    elif refusal.why == inactive_message(job.queue):  # refused as a whole, before flavors
        assignment.scheduler_reasons[j] = refusal.why
    elif podsets := failing_podsets(job, never_placed=True):
        assignment.scheduler_reasons[j] = kueue_message(
            refusal.why, podsets[0], job.topology_name, Exclusions())
    # else a numeric tier below the lowest one (a Volcano-only input): Kueue has no words for it
    return True


def _whole_subjobs_only(problem: Problem, assignment: Assignment, j: int,
                        before: dict[int, dict[int, int]]) -> tuple[str, None] | None:
    """Keep job ``j``'s new pods (``assignment.counts`` against ``before``) of whole SubJobs only
    (:func:`~toposolve.engines.kueue.non_tas.whole_subjobs`: TAS places every pod, also those
    of a SubJob that can never reach its ``subGroupSize``); the reason when its gang is not
    ready with those kept (also where Kueue left a short last slice without a domain)."""
    groups = problem.jobs[j].groups
    new = [(g, n) for g in groups for n, count in sorted(assignment.counts.get(g, {}).items())
           for _ in range(count - before.get(g, {}).get(n, 0))]
    kept = whole_subjobs(problem, new)
    holding = problem.running_per_group(groups)
    for g, _ in kept:
        holding[g] += 1
    if not gang_ready(problem, j, holding):
        return (f"TAS places {len(new)} of its pods, {len(kept)} of them in SubJobs that reach "
                "their subGroupSize: its gang (minAvailable, task and sub-group minimums) is not "
                "ready with them", None)
    if len(kept) < len(new):
        for g in groups:  # the left-out pods hold their nodes in ``cap``: they were placed
            assignment.counts.pop(g, None)
            if g in before:
                assignment.counts[g] = dict(before[g])
        for g, n in kept:
            assignment.add(g, n, 1)
    return None


def _admit_non_tas(problem: Problem, cap: Capacity, quota: QuotaBook, scoring: NodeScoring,
                   room: DeviceRoom | None, j: int, assignment: Assignment) -> None:
    """Job ``j`` on a flavor without a Topology: admitted by quota, then its pods placed one by
    one as kube-scheduler does (:mod:`toposolve.engines.kueue.non_tas`); bound only when its gang
    minimum fits, its pods that fit holding their nodes either way."""
    cj = problem.jobs[j]
    groups = [g for g in cj.groups if problem.group_pending[g]]
    demand = quota.demand(groups)
    why = quota.admits(cj.queue, demand)
    if why is not None:
        assignment.reasons[j] = why
        if (words := quota.kueue_message(j, groups, False)) is not None:
            assignment.scheduler_reasons[j] = words
        return
    quota.charge(cj.queue, demand)  # admitted: quota held until eviction
    trial = place_pods(problem, cap, scoring, j)
    for g, n in trial.pods:  # kube-scheduler binds each pod that fits: it runs
        cap.take(g, n, 1)
    pending = sum(len(problem.group_pending[g]) for g in groups)
    bound = whole_subjobs(problem, trial.pods)
    holding = problem.running_per_group(cj.groups)
    for g, _ in bound:
        holding[g] += 1
    if not bound or not gang_ready(problem, j, holding):  # task and sub-group minimums too
        assignment.reasons[j] = unbound_reason(len(trial.pods), pending, cj.min_available)
        return
    before = {g: dict(v) for g, v in assignment.counts.items()}
    for g, n in bound:
        assignment.add(g, n, 1)
    if room is not None and (why := bind_on_devices(problem, room, assignment, j, before)):
        assignment.reasons[j] = why


def run_kueue(problem: Problem, *, least_free_capacity: bool = True,
        balanced_placement: bool = False, node_affinity_preferred: bool = False,
        elastic_slices: bool = False) -> Assignment:
    """Admit and place the pending workloads as Kueue's TAS would (see the module doc).

    ``least_free_capacity``, ``balanced_placement``, ``node_affinity_preferred`` and
    ``elastic_slices`` are Kueue's feature gates ``TASProfileMixed`` (on by default),
    ``TASBalancedPlacement``, ``TASRespectNodeAffinityPreferred`` and
    ``ElasticJobsViaWorkloadSlicesWithTAS`` (alpha, off by default)."""
    gates = Gates(profile_mixed=least_free_capacity, balanced_placement=balanced_placement,
                  node_affinity_preferred=node_affinity_preferred)
    # one per Topology tree and node pool (Kueue: per ResourceFlavor)
    trees: dict[tuple[str | None, bytes | None], DomainTree] = {}
    views = TreeViews(problem)
    first_node: dict[int, int] = {}
    for pod in problem.running:  # job, task, index order
        first_node.setdefault(pod.job, pod.node)
    cap = Capacity(problem)  # TAS: pooled per node, also with per-device sharing
    room = device_room(problem)
    quota = QuotaBook(problem)
    scoring = node_scoring(problem)  # kube-scheduler's, for workloads admitted without TAS
    assignment = Assignment()
    for j in admission_order(problem):
        cj = problem.jobs[j]
        if _refused_request(problem, j, assignment):
            continue
        if is_non_tas(problem, j):
            _admit_non_tas(problem, cap, quota, scoring, room, j, assignment)
            continue
        try:
            name = job_tree(problem, j)
        except ValueError as exc:
            assignment.reasons[j] = str(exc)
            continue
        view = views.of(name)
        pool = _replacement_pool(view, cj, first_node.get(j))
        key = (name, None if pool is None else pool.tobytes())
        if key not in trees:
            trees[key] = build_tree(view, pool)
        tree = trees[key]
        full_key = (name, None if cj.pool is None else cj.pool.tobytes())
        if full_key not in trees:
            trees[full_key] = build_tree(view, cj.pool)
        requests = job_requests(view, tree, j, gates)
        if isinstance(requests, str):
            assignment.reasons[j] = requests
            if isinstance(requests, KueueText):  # no statistics: not a not-fit message
                assignment.scheduler_reasons[j] = kueue_message(
                    requests, requests.podset, problem.instance.jobs[j].topology_name,
                    Exclusions())
            continue
        demand = quota.demand([g for r in requests for g in r.groups + r.leader])
        why = quota.admits(cj.queue, demand)
        if why is not None:
            assignment.reasons[j] = why
            if (words := quota.kueue_message(j, [g for r in requests for g in r.groups],
                                             any(r.leader for r in requests))) is not None:
                assignment.scheduler_reasons[j] = words
            continue
        held = elastic_hold(problem.instance.jobs[j]) if elastic_slices else None
        if held is not None:  # the TAS flavor assigner's podset error
            podset, error = held
            assignment.reasons[j] = f"podset {podset!r}: {error}"
            assignment.scheduler_reasons[j] = (f"failed to assign flavors to pod set {podset}: "
                                               f"{error}")
            continue
        saved, before = cap.snapshot(), {g: dict(v) for g, v in assignment.counts.items()}
        failed = (_place_job(tree, trees[full_key], cap, requests, assignment)
                  or _whole_subjobs_only(problem, assignment, j, before))
        if failed is not None:
            cap.restore(saved)
            assignment.counts = before
            assignment.reasons[j] = failed[0]
            if failed[1] is not None:
                assignment.scheduler_reasons[j] = failed[1]
            continue
        quota.charge(cj.queue, demand)  # admitted: quota and TAS usage held until eviction
        if room is not None and (why := bind_on_devices(problem, room, assignment, j, before)):
            assignment.reasons[j] = why
    return explain_unplaceable(problem, assignment, scheduler_words=True)

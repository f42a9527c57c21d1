"""A compiled job → the podset requests Kueue's TAS would place, in order.

* A job with a network topology (one podset, or one podset group): one request over all its
  pending pods — ``hard`` → required at the limit's tier, otherwise preferred at
  ``limit.preferred`` (else the limit's tier). A hard limit at the root's tier or above is no
  constraint. SubJobs of equal size with a hard limit are its slices.
* A job without one: each SubJob policy with a topology is a request of its own (Kueue places
  podsets one after another with the earlier ones' usage assumed); partitions (and policies that
  make several SubJobs) are slices of an unconstrained request; pods in no constrained SubJob form one
  unconstrained request per task (Kueue's implied / unconstrained podsets).
* Several tasks in one constrained request is Kueue's leader/worker podset group; its leader
  logic is not mirrored yet: such a job stays pending with that reason.

Unconstrained requests use LeastFreeCapacity at the lowest level (the default "mixed" profile;
``least_free_capacity=False`` gives BestFit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import PARTITION_ID_LABEL
from ...problem import Limit, Problem
from .placement import PodSetRequest
from .tree import DomainTree


@dataclass
class JobRequest:
    groups: list[int]  # pod groups, in pod order (slices in partition order)
    spec: PodSetRequest


def _ordered_groups(problem: Problem, groups: list[int]) -> list[int]:
    def key(g: int):
        s = problem.subjobs[int(problem.group_subjob[g])]
        return (s.match_index, s.id, g)

    return sorted((g for g in groups if problem.group_pending[g]), key=key)


def _slices(problem: Problem, subjobs: list[int], tree: DomainTree) -> tuple[int, int] | str:
    """(slice level, slice size) of constrained SubJobs of equal size, or why they are not slices."""
    limits = {problem.subjobs[s].limit for s in subjobs}
    sizes = {sum(len(problem.group_pending[g]) for g in problem.subjobs[s].groups) for s in subjobs}
    if len(limits) != 1 or len(sizes) != 1:
        return "SubJobs of unequal size or topology cannot be Kueue podset slices"
    limit = limits.pop()
    return min(limit.tier, tree.top), sizes.pop()


def _spec(problem: Problem, tree: DomainTree, groups: list[int], limit: Limit | None, least_free: bool) -> PodSetRequest:
    g0 = groups[0]
    count = sum(len(problem.group_pending[g]) for g in groups)
    root_tier = problem.topology.max_tier
    constrained = limit is not None and not (limit.hard and limit.tier >= root_tier)
    if constrained:
        level = limit.tier if limit.hard else (limit.preferred or limit.tier)
        level = max(min(level, tree.top), tree.lowest)
    else:
        level = tree.lowest
    return PodSetRequest(
        request=problem.group_request[g0],
        feasible=np.logical_and.reduce([problem.group_feasible[g] for g in groups]),
        count=count,
        level=level,
        required=bool(constrained and limit.hard),
        unconstrained=not constrained and least_free,
        slice_level=tree.lowest,
    )


def job_requests(problem: Problem, tree: DomainTree, j: int, least_free: bool = True) -> list[JobRequest] | str:
    cj = problem.jobs[j]
    constrained_sjs = [s for s in cj.subjobs if problem.subjobs[s].policy >= 0 and problem.subjobs[s].limit is not None]
    if cj.limit is not None:
        groups = _ordered_groups(problem, cj.groups)
        if not groups:
            return []
        if len({problem.group_task[g] for g in groups}) > 1:
            return "podset group with several podsets (Kueue's leader/worker placement) is not mirrored yet"
        spec = _spec(problem, tree, groups, cj.limit, least_free)
        pending_sjs = [s for s in constrained_sjs if any(problem.group_pending[g] for g in problem.subjobs[s].groups)]
        if pending_sjs:
            got = _slices(problem, pending_sjs, tree)
            if isinstance(got, str):
                return got
            spec.slice_level, spec.slice_size = got
            spec.slice_level = max(spec.slice_level, tree.lowest)
            if spec.slice_level > spec.level:
                spec.level = spec.slice_level  # Kueue rejects a slice level above the podset's
        return [JobRequest(groups, spec)]
    requests: list[JobRequest] = []
    covered: set[int] = set()
    by_policy: dict[int, list[int]] = {}
    for s in constrained_sjs:
        by_policy.setdefault(problem.subjobs[s].policy, []).append(s)
    for p, sjs in sorted(by_policy.items()):
        groups = _ordered_groups(problem, [g for s in sjs for g in problem.subjobs[s].groups])
        covered.update(g for s in sjs for g in problem.subjobs[s].groups)
        if not groups:
            continue
        if len({problem.group_task[g] for g in groups}) > 1:
            return "podset group with several podsets (Kueue's leader/worker placement) is not mirrored yet"
        if PARTITION_ID_LABEL in cj.policy_match_keys[p] or len(sjs) > 1:  # slices of a slice-only podset
            got = _slices(problem, [s for s in sjs if any(problem.group_pending[g] for g in problem.subjobs[s].groups)], tree)
            if isinstance(got, str):
                return got
            spec = _spec(problem, tree, groups, None, least_free)
            spec.level, spec.unconstrained = tree.top, least_free  # Kueue: slice-only → highest level
            spec.slice_level, spec.slice_size = max(got[0], tree.lowest), got[1]
        else:
            spec = _spec(problem, tree, groups, problem.subjobs[sjs[0]].limit, least_free)
        requests.append(JobRequest(groups, spec))
    rest: dict[str, list[int]] = {}
    for g in cj.groups:
        if g not in covered and problem.group_pending[g]:
            rest.setdefault(problem.group_task[g], []).append(g)
    for groups in rest.values():
        requests.append(JobRequest(_ordered_groups(problem, groups), _spec(problem, tree, groups, None, least_free)))
    return sorted(requests, key=lambda r: min(r.groups))  # Kueue places podsets in spec order

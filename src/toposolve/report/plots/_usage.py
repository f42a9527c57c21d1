"""Private: what occupies each node after a plan, in a form the plots can aggregate.

Shares are **dominant shares**: a request's share of a node is the largest fraction it takes of
any resource the node offers (the ``pods`` count excluded), so a CPU-only pod on a GPU node shows
the CPU it takes. Per node, when the shares of its occupants after the plan (running pods that
stay, new pods) add up to more than 1 (two pods each maxing a different resource), they are
scaled down to sum to 1. Evicted pods are not occupants after the plan: their share is reported
apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.plan import Plan
from toposolve.core.problem import POD_COUNT_RESOURCE, Problem
from toposolve.policy.objective import accelerator_resources, accelerator_units


@dataclass
class NodeOccupancy:
    """Per-node dominant shares after a plan (see the module docstring)."""

    running: np.ndarray  # [N] running pods that stay
    evicted: np.ndarray  # [N] running pods the plan evicts (not part of the sum to 1)
    job_share: np.ndarray  # [K, N] new pods of job ``jobs[k]``
    jobs: list[int]  # job indices with new pods, largest first
    job_units: dict[int, int]  # accelerator units (pods without accelerators count 1) per job


def dominant_share(amounts: np.ndarray, alloc: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Largest fraction of any counted resource, row by row ([..., R] against [..., R])."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(alloc > 0, amounts / np.where(alloc > 0, alloc, 1), 0.0)
    ratio = ratio[..., counted]
    return ratio.max(axis=-1) if ratio.shape[-1] else np.zeros(ratio.shape[:-1])


def counted_resources(problem: Problem) -> np.ndarray:
    """[R] mask of the resources shares are taken over (all but the pod count)."""
    return np.array([r != POD_COUNT_RESOURCE for r in problem.resources], dtype=bool)


def node_occupancy(problem: Problem, plan: Plan | None) -> NodeOccupancy:
    """Dominant shares of running, evicted and newly placed pods on every node."""
    n_nodes, n_res = problem.allocatable.shape
    alloc = problem.allocatable.astype(float)
    counted = counted_resources(problem)
    evicted_use = np.zeros((n_nodes, n_res))
    job_of: list[int] = []
    node_of: list[int] = []
    group_of: list[int] = []
    if plan is not None:
        for e in plan.evictions:
            node = problem.running_pods[e.pod]
            evicted_use[node] += problem.group_request[problem.pod_group[e.pod]]
        for b in plan.bindings:
            g = problem.pod_group[b.pod]
            group_of.append(g)
            job_of.append(int(problem.group_job[g]))
            node_of.append(problem.node_index[b.node])
    running = dominant_share(problem.used - evicted_use, alloc, counted)
    evicted = dominant_share(evicted_use, alloc, counted)

    units = accelerator_units(problem)
    job_units: dict[int, int] = {}
    for g, j in zip(group_of, job_of, strict=True):
        job_units[j] = job_units.get(j, 0) + int(units[g])
    jobs = sorted(job_units, key=lambda j: (-job_units[j], problem.jobs[j].key))
    row = {j: k for k, j in enumerate(jobs)}
    job_share = np.zeros((len(jobs), n_nodes))
    if group_of:
        # one row per (job, node) pair actually used: [K, N, R] would be large at 6k nodes
        pair = np.array([row[j] for j in job_of]) * n_nodes + np.array(node_of)
        pairs, inverse = np.unique(pair, return_inverse=True)
        amounts = np.zeros((len(pairs), n_res))
        np.add.at(amounts, inverse, problem.group_request[np.array(group_of)].astype(float))
        k, n = np.divmod(pairs, n_nodes)
        job_share[k, n] = dominant_share(amounts, alloc[n], counted)

    # what occupies the node after the plan sums to at most 1; evicted pods are gone, so their
    # share is kept apart (capped at 1) — it is capacity the new pods may reuse
    total = running + job_share.sum(axis=0)
    scale = np.where(total > 1, 1 / np.where(total > 0, total, 1), 1.0)
    return NodeOccupancy(running * scale, np.minimum(evicted, 1.0), job_share * scale, jobs,
                         job_units)


def unavailable_nodes(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """[N] masks of nodes no new pod may take: unschedulable ones (cordoned, or NotReady where a
    reader marks it so) and schedulable ones with a NoSchedule/NoExecute taint that no pending pod
    tolerates (with no pending pod: every such taint)."""
    unschedulable = ~problem.schedulable
    hard_taint = np.array([any(t.effect in ("NoSchedule",
            "NoExecute") for t in node.taints) for node in problem.instance.nodes], dtype=bool)
    pending = [g for g, pods in enumerate(problem.group_pending) if pods]
    wanted = problem.group_feasible[pending].any(axis=0) if pending else np.zeros(problem.n_nodes,
                                                                                  dtype=bool)
    return unschedulable, problem.schedulable & hard_taint & ~wanted


def utilisation_resources(problem: Problem) -> tuple[list[int], str]:
    """Resources utilisation is measured on: the accelerators, else cpu, else all counted."""
    acc = accelerator_resources(problem)
    if acc:
        names = sorted({problem.resources[r] for r in acc})
        return acc, " + ".join(names)
    if "cpu" in problem.resource_index:
        return [problem.resource_index["cpu"]], "cpu"
    counted = np.flatnonzero(counted_resources(problem)).tolist()
    return counted, "resources"


def usage_after(problem: Problem, plan: Plan | None) -> np.ndarray:
    """[N, R] resources in use after the plan (running − evicted + new)."""
    usage = problem.used.astype(float).copy()
    if plan is None:
        return usage
    for e in plan.evictions:
        usage[problem.running_pods[e.pod]] -= problem.group_request[problem.pod_group[e.pod]]
    for b in plan.bindings:
        usage[problem.node_index[b.node]] += problem.group_request[problem.pod_group[b.pod]]
    return usage

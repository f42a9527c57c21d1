"""Human summary of an instance (``toposolve show``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toposolve.core.instance import Queue
from toposolve.core.problem import Problem
from toposolve.core.quantity import format_amount


def _constraint(limit, spec=None) -> str:
    """``hard tier ≤ 2``, with ``in <HyperNode>`` where the spec keeps its pods under one (the
    tree of its Topology, when an input holds several), ``in constraint tree <name>`` where it
    is measured in a tree crossing the main one."""
    if limit is None:
        return "none"
    if limit.tree is not None:
        return f"{'hard' if limit.hard else 'soft'} tier ≤ {limit.tier} in constraint tree " \
            f"{limit.tree}"
    within = spec.within_hypernode if spec is not None else None
    return f"{'hard' if limit.hard else 'soft'} tier ≤ {limit.tier}" + (
        f" in {within}" if within else "")


def queue_hierarchy(queues: list[Queue]) -> list[str]:
    """Indented lines of the queue tree (``spec.parent``); empty when no queue names a parent.

    A queue without a parent is under ``root`` (as in Volcano); a queue whose parent is not in
    the input hangs under that name, marked; each queue is printed once even if the parents form
    a cycle (Volcano's capacity plugin rejects those).
    """
    if not any(q.parent for q in queues):
        return []
    names = {q.name for q in queues}
    children: dict[str, list[str]] = {}
    for q in queues:
        if q.name != "root":
            children.setdefault(q.parent or "root", []).append(q.name)
    tops = ["root"] + sorted(p for p in children if p not in names and p != "root")
    lines = ["queue hierarchy:"]
    shown: set[str] = set()
    stack = [(top, 1, top not in names and top != "root") for top in reversed(tops)]
    while stack:
        name, depth, missing = stack.pop()
        lines.append("  " * depth + name + (" (not in the input)" if missing else ""))
        shown.add(name)
        stack += [(c, depth + 1,
                   False) for c in reversed(sorted(children.get(name, []))) if c not in shown]
    cyclic = sorted(names - shown)
    if cyclic:
        lines.append(f"  in a parent cycle: {', '.join(cyclic)}")
    return lines


def _tiers(topo) -> list[tuple[int, str | None, np.ndarray]]:
    """Per tier, lowest first: the tier, its names (if HyperNodes give any; several where a forest
    of Topologies shares the tier), its HyperNodes."""
    return [(t, ", ".join(k for k, v in topo.tier_name_to_tier.items() if v == t) or None,
             np.flatnonzero(topo.tier == t)) for t in sorted(set(topo.tier.tolist()))]


def _resource_totals(problem: Problem) -> list[tuple[str, int, int]]:
    """Per resource: the cluster's allocatable and what running pods use (milli-units, exact
    Python ints: 25k nodes x 2 TiB in milli-bytes is past int64)."""
    return [(r, int(problem.allocatable[:, i].sum(dtype=object)),
             int(problem.used[:, i].sum(dtype=object))) for i, r in enumerate(problem.resources)]


def _pods(problem: Problem, cj) -> tuple[int, int]:
    """A job's pending and running pods."""
    return (sum(len(problem.group_pending[g]) for g in cj.groups),
            int(problem.job_running_count(cj.index)))


def _tier_lines(topo) -> list[str]:
    """One line per tier of ``topo``: its HyperNodes, their sizes, the first names."""
    lines = []
    for t, tier_name, at in _tiers(topo):
        names = [topo.names[h] for h in at[:6]]
        more = f", … (+{at.size - 6})" if at.size > 6 else ""
        sizes = topo.node_count[at]
        label = f"tier {t}" + (f" ({tier_name})" if tier_name else "")
        count = "1 HyperNode" if at.size == 1 else f"{at.size} HyperNodes"
        size = f"{sizes.min()}" if sizes.min() == sizes.max() else f"{sizes.min()}–{sizes.max()}"
        each = "" if at.size == 1 else " each"
        lines.append(f"  {label}: {count}, {size} nodes{each}: {', '.join(names)}{more}")
    return lines


def describe_instance(problem: Problem, *, max_jobs: int = 50) -> str:
    inst = problem.instance
    topo = problem.topology
    lines = [f"instance: {inst.source}"]
    n_unsched = int((~problem.schedulable).sum())
    lines.append(f"nodes: {problem.n_nodes} ({n_unsched} unschedulable)")
    for r, total, used in _resource_totals(problem):
        lines.append(f"  {r}: allocatable {format_amount(total, r)}, used by running pods "
                     f"{format_amount(used, r)}")
    lines.append(f"HyperNodes: {len(topo.names) - 1} (+ virtual root {topo.names[topo.root]}, "
                 f"tier {topo.max_tier})")
    lines += _tier_lines(topo)
    for name, tree in problem.trees.items():
        lines.append(f"constraint tree {name} (a Topology crossing the main tree over the same "
                     f"nodes): {len(tree.names) - 1} HyperNodes")
        lines += _tier_lines(tree)
    pending_jobs = [problem.jobs[j] for j in problem.pending_jobs]
    running_jobs = len(problem.jobs) - len(pending_jobs)
    lines.append(f"jobs: {len(problem.jobs)} ({len(pending_jobs)} with pending pods, "
                 f"{running_jobs} fully running)")
    queues = sorted({cj.queue for cj in problem.jobs})
    lines.append(f"queues: {', '.join(queues) or '-'}")
    lines += queue_hierarchy(inst.queues)
    for cj in pending_jobs[:max_jobs]:
        pending, running = _pods(problem, cj)
        subs = [problem.subjobs[s] for s in cj.subjobs if problem.subjobs[s].policy >= 0]
        job = inst.jobs[cj.index]
        sub_text = ""
        if subs:
            spec = job.subgroup_policies[subs[0].policy].network_topology
            sub_text = (f", {len(subs)} SubJobs of {subs[0].min_available} "
                        f"({_constraint(subs[0].limit, spec)})")
        if cj.gang_nodes:
            sub_text += (f", gang tree of depth {problem.gang_depth(cj.index)} "
                         f"({len(cj.gang_nodes)} GangGroups)")
        lines.append(
            f"  {cj.key}: queue {cj.queue}, priority {cj.priority}, {pending} pending + {running} "
            f"running, "
            f"minAvailable {cj.min_available}, topology "
            f"{_constraint(cj.limit, job.network_topology)}{sub_text}"
        )
    if len(pending_jobs) > max_jobs:
        lines.append(f"  … {len(pending_jobs) - max_jobs} more jobs")
    return "\n".join(lines)


def instance_summary(problem: Problem) -> dict[str, Any]:
    """What ``show`` prints, as numbers (``show --json``).

    Parameters
    ----------
    problem
        The compiled instance.

    Returns
    -------
    dict
        ``nodes``, ``unschedulable_nodes``, ``resources`` (per resource: ``allocatable_milli``,
        ``used_milli``), ``tiers`` (per tier: ``tier``, ``name``, ``hypernodes``,
        ``nodes_min``, ``nodes_max``), ``constraint_trees`` (per crossing Topology's tree, its
        ``tiers`` likewise; only when the instance has some), ``jobs`` / ``pending_jobs`` /
        ``queues`` and
        ``pending`` (per pending job: ``job``, ``queue``, ``priority``, ``pending_pods``,
        ``running_pods``, ``min_available``, ``topology``).
    """
    pending = [problem.jobs[j] for j in problem.pending_jobs]
    trees = {"constraint_trees": {name: _tier_entries(tree) for name, tree in
                                  problem.trees.items()}} if problem.trees else {}
    return {
        "instance": problem.instance.source,
        "nodes": problem.n_nodes,
        "unschedulable_nodes": int((~problem.schedulable).sum()),
        "resources": {r: {"allocatable_milli": total, "used_milli": used}
                      for r, total, used in _resource_totals(problem)},
        "tiers": _tier_entries(problem.topology),
        **trees,
        "jobs": len(problem.jobs),
        "pending_jobs": len(pending),
        "queues": sorted({cj.queue for cj in problem.jobs}),
        "pending": [_pending_entry(problem, cj) for cj in pending],
    }


def _tier_entries(topo) -> list[dict[str, Any]]:
    counts = topo.node_count
    return [{"tier": int(t), "name": name, "hypernodes": int(at.size),
             "nodes_min": int(counts[at].min()), "nodes_max": int(counts[at].max())}
            for t, name, at in _tiers(topo)]


def _pending_entry(problem: Problem, cj) -> dict[str, Any]:
    pending, running = _pods(problem, cj)
    return {"job": cj.key, "queue": cj.queue, "priority": int(cj.priority),
            "pending_pods": pending, "running_pods": running,
            "min_available": int(cj.min_available), "topology": _constraint(cj.limit)}

"""Rule ``tier``: hard network-topology limits of jobs and SubJobs, and reported domains.

* A hard job that receives bindings (or whose pods the plan moves) must end with all its placed
  pods (running and not evicted, plus bound, at their new nodes when moved) under one HyperNode
  of tier ≤ its limit (their lowest common HyperNode). The same holds for each SubJob with a
  hard policy that receives bindings, with the policy's own limit (inside the job's domain).
* The limit is ``highestTierAllowed``, or the tier that ``highestTierName`` names (via the
  HyperNodes' ``tierName``); without either it is the root's tier (no limit). A name no
  HyperNode carries drops the constraint, as Volcano does (it cannot translate the name, so the
  job is not in hard mode).
* A running pod on a node the instance does not have lies in no HyperNode: it is left out of
  every span (it counts toward gangs, see :mod:`.gangs`).
* A HyperNode the plan reports for a job or SubJob that exists must, for a hard job or SubJob,
  have tier ≤ limit and hold every placed pod of it. A name the instance does not have is no
  violation: the plan may come from another form of the same cluster (HyperNodes built from
  labels have generated names), and the pods' nodes are judged by the span rule above;
  :func:`foreign_domains` lists such names so that the report can say so.
* ``within_hypernode``: placed pods stay under that HyperNode; a spec naming a ``tree``: in it;
  one naming a ``missing_level`` (a level its tree lacks) or ``never_placed`` admits no placed pod.
"""

from __future__ import annotations

from toposolve.check.context import Context
from toposolve.check.violation import Violation
from toposolve.core.instance import NetworkTopology


def is_hard(spec: NetworkTopology | None) -> bool:
    return spec is not None and spec.mode == "hard"


def _spec_of_subjob(ctx: Context, sid: str) -> NetworkTopology | None:
    pod = ctx.pods_of_subjob[sid][0]
    if pod.policy < 0:
        return pod.job.network_topology
    return pod.job.subgroup_policies[pod.policy].network_topology


def check_span(ctx: Context, obj: str, spec: NetworkTopology, nodes: list[str]) -> list[Violation]:
    tree = ctx.tree_of(spec)
    limit = tree.tier_limit(spec)
    if limit is None:
        return []  # an unknown highestTierName: Volcano drops the constraint
    lca = tree.lca(nodes)
    if tree.tier[lca] > limit:
        return [Violation(
            "tier", obj,
            f"pods span HyperNode {lca!r} of tier {tree.tier[lca]}, above the limit {limit}",
        )]
    return []


def _check_reported(ctx: Context, obj: str, hypernode: str, spec: NetworkTopology | None,
                    nodes: list[str]) -> list[Violation]:
    tree = ctx.tree if spec is None else ctx.tree_of(spec)
    if hypernode not in tree.tier:
        return []  # another form's name: the domain is judged by the pods' nodes
    if not is_hard(spec):
        return []
    out: list[Violation] = []
    limit = tree.tier_limit(spec)
    if limit is not None and tree.tier[hypernode] > limit:
        out.append(Violation(
            "tier", obj,
            f"reported HyperNode {hypernode!r} has tier {tree.tier[hypernode]}, above the limit "
            f"{limit}",
        ))
    outside = sorted({n for n in nodes if not tree.contains(hypernode, n)})
    if outside:
        out.append(Violation(
            "tier", obj,
            f"reported HyperNode {hypernode!r} does not hold node(s) {', '.join(outside[:5])}"
            + (" …" if len(outside) > 5 else ""),
        ))
    return out


def in_tree(ctx: Context, pods: list) -> list[str]:
    """Nodes of the placed ``pods`` that the instance has (pods on absent nodes are nowhere)."""
    return [n for n in ctx.placed(pods) if n in ctx.tree.home]


def check_tiers(ctx: Context) -> list[Violation]:
    out: list[Violation] = []
    for key in ctx.jobs_changed:
        spec = ctx.jobs[key].network_topology
        if is_hard(spec):
            out += check_span(ctx, f"Job/{key}", spec, in_tree(ctx, ctx.pods_of_job[key]))
    for sid in ctx.subjobs_changed:
        spec = _spec_of_subjob(ctx, sid)
        if ctx.pods_of_subjob[sid][0].policy >= 0 and is_hard(spec):
            out += check_span(ctx, f"SubJob/{sid}", spec, in_tree(ctx, ctx.pods_of_subjob[sid]))

    for entry in ctx.plan.jobs:
        job = ctx.jobs.get(entry.job)
        if job is None:
            continue  # reported by plan-jobs
        if entry.hypernode is not None:
            nodes = in_tree(ctx, ctx.pods_of_job[job.key])
            out += _check_reported(ctx, f"Job/{job.key}", entry.hypernode, job.network_topology,
                                   nodes)
        for sub in entry.subjobs:
            members = ctx.pods_of_subjob.get(sub.id)
            if sub.hypernode is None or not members or members[0].job is not job:
                continue  # an unknown SubJob is reported by plan-jobs
            spec = _spec_of_subjob(ctx, sub.id)
            out += _check_reported(ctx, f"SubJob/{sub.id}", sub.hypernode, spec,
                                   in_tree(ctx, members))
    return out


def _within_specs(job, policy: int) -> list[NetworkTopology]:
    """The specs with a ``within_hypernode``, a ``missing_level`` or ``never_placed``: the
    job's, the pod's policy's and those of the GangGroups above it."""
    specs = [job.network_topology]
    parent = None
    if policy >= 0:
        specs.append(job.subgroup_policies[policy].network_topology)
        parent = job.subgroup_policies[policy].parent
    groups = {g.name: g for g in job.gang_groups}
    while parent is not None:  # the model refuses parent cycles
        specs.append(groups[parent].network_topology)
        parent = groups[parent].parent
    return [s for s in specs
            if s is not None and (s.within_hypernode or s.missing_level or s.never_placed)]


def check_within(ctx: Context) -> list[Violation]:
    """Every pod the plan places lies under each ``within_hypernode`` of its constraints (the
    Topology a Kueue/KAI constraint names, where an input holds several)."""
    out: list[Violation] = []
    for pod_name, node in ctx.arrivals.items():
        pod = ctx.pods[pod_name]
        for spec in _within_specs(pod.job, pod.policy):
            name, tree = spec.within_hypernode, ctx.tree_of(spec)
            if spec.never_placed is not None:
                out.append(Violation("tier", f"Pod/{pod_name}",
                                     f"its constraint is never placed: {spec.never_placed}"))
            elif spec.missing_level is not None:
                out.append(Violation("tier", f"Pod/{pod_name}",
                                     f"its constraint names level {spec.missing_level!r}, which "
                                     "its topology lacks: no node satisfies it"))
            elif name not in tree.tier:
                out.append(Violation("tier", f"Pod/{pod_name}",
                                     f"withinHyperNode {name!r} is not a HyperNode"))
            elif node in tree.home and not tree.contains(name, node):
                out.append(Violation("tier", f"Pod/{pod_name}",
                                     f"on {node!r}, outside HyperNode {name!r} of its topology"))
    return out


def foreign_domains(ctx: Context) -> list[str]:
    """HyperNode names the plan reports that the instance does not have, sorted."""
    names = {e.hypernode for e in ctx.plan.jobs if e.hypernode is not None}
    names |= {sub.hypernode for e in ctx.plan.jobs for sub in e.subjobs
              if sub.hypernode is not None}
    known = set(ctx.tree.tier).union(*(tree.tier for tree in ctx.trees.values()))
    return sorted(names - known)

"""The cluster as the plan leaves it, plus the violations found while applying the plan.

Evictions are applied first, then bindings, so a pod may be evicted and bound again (a move).
A binding or eviction that is itself wrong (unknown pod or node, a pod bound twice or bound
while it still runs, an eviction of a pod that does not run there) is reported and then left out
of the final state, so that one mistake is not reported again by every later rule.
Nominated bindings count like any other binding: the plan promises the pod that node.
Moves (defragmentation) are applied after evictions and bindings: a moved pod leaves its
``from`` node for its ``to`` node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from toposolve.check.pods import PodInfo, index_pods
from toposolve.check.reuse import cluster_parts
from toposolve.check.tree import HyperNodeTree, build_constraint_trees
from toposolve.check.violation import Violation
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job, NetworkTopology, Node, Queue
from toposolve.core.plan import Plan


@dataclass
class Context:
    instance: Instance
    plan: Plan
    tree: HyperNodeTree
    pods: dict[str, PodInfo]
    jobs: dict[str, Job]
    nodes: dict[str, Node]
    queues: dict[str, Queue]
    bound: dict[str, str] = field(default_factory=dict)  # accepted new bindings: pod -> node
    evicted: dict[str, str] = field(default_factory=dict)  # accepted evictions: pod -> node
    moved: dict[str, str] = field(default_factory=dict)  # accepted moves: pod -> its new node
    placement: dict[str, str] = field(default_factory=dict)  # pod -> node after the plan
    pods_of_job: dict[str, list[PodInfo]] = field(default_factory=dict)  # every job has a list
    pods_of_subjob: dict[str, list[PodInfo]] = field(default_factory=dict)  # never empty
    # the instance's constraint trees (Topologies crossing the main tree) by name
    trees: dict[str, HyperNodeTree] = field(default_factory=dict)

    def tree_of(self, spec: NetworkTopology) -> HyperNodeTree:
        """The tree ``spec`` is measured in: its constraint tree, else the main one; a tree the
        instance lacks is an input error."""
        if spec.tree is None:
            return self.tree
        if spec.tree not in self.trees:
            raise InputError(f"constraint tree {spec.tree!r} is not in the input",
                             file=self.instance.source, obj="Instance",
                             field="networkTopology.tree")
        return self.trees[spec.tree]

    def jobs_of(self, pods) -> list[str]:
        """Keys of the jobs of ``pods`` (names), in instance order."""
        keys = {self.pods[p].job.key for p in pods}
        return [key for key in self.jobs if key in keys]

    def subjobs_of(self, pods) -> list[str]:
        """Ids of the SubJobs of ``pods`` (names)."""
        ids = {self.pods[p].subjob for p in pods}
        return [sid for sid in self.pods_of_subjob if sid in ids]

    @cached_property
    def jobs_with_bindings(self) -> list[str]:
        """Keys of jobs that receive new (or nominated) bindings, in instance order."""
        return self.jobs_of(self.bound)

    @cached_property
    def subjobs_with_bindings(self) -> list[str]:
        """Ids of SubJobs that receive new (or nominated) bindings."""
        return self.subjobs_of(self.bound)

    @cached_property
    def arrivals(self) -> dict[str, str]:
        """Pods the plan puts on a node they do not run on (bound or moved there) -> node."""
        return {**self.moved, **self.bound}

    @cached_property
    def jobs_with_moves(self) -> list[str]:
        """Keys of jobs the plan moves pods of, in instance order."""
        return self.jobs_of(self.moved)

    @cached_property
    def jobs_changed(self) -> list[str]:
        """Keys of jobs the plan binds or moves pods of, in instance order."""
        return self.jobs_of(self.arrivals)

    @cached_property
    def subjobs_changed(self) -> list[str]:
        """Ids of SubJobs the plan binds or moves pods of."""
        return self.subjobs_of(self.arrivals)

    def placed(self, pods: list[PodInfo]) -> list[str]:
        """Nodes of those ``pods`` that hold them after the plan (one entry per pod)."""
        return [self.placement[p.name] for p in pods if p.name in self.placement]


def build_context(instance: Instance, plan: Plan) -> tuple[Context, list[Violation]]:
    """Index the instance, apply the plan, and report bad bindings and evictions."""
    jobs: dict[str, Job] = {}
    for job in instance.jobs:
        if job.key in jobs:
            raise InputError("duplicate job", file=instance.source, obj=f"Job/{job.key}")
        jobs[job.key] = job
    tree, nodes = cluster_parts(instance)
    ctx = Context(instance=instance, plan=plan, tree=tree, pods=index_pods(instance), jobs=jobs,
                  nodes=nodes, queues={q.name: q for q in instance.queues},
                  trees=build_constraint_trees(instance))
    ctx.pods_of_job = {key: [] for key in jobs}
    for pod in ctx.pods.values():
        ctx.pods_of_job[pod.job.key].append(pod)
        ctx.pods_of_subjob.setdefault(pod.subjob, []).append(pod)

    violations: list[Violation] = []

    def known(pod: str, node: str) -> bool:
        ok = True
        if pod not in ctx.pods:
            violations.append(Violation("unknown-pod", f"Pod/{pod}", "no such pod in the instance"))
            ok = False
        if node not in ctx.nodes:
            violations.append(
                Violation("unknown-node", f"Pod/{pod}", f"node {node!r} does not exist"))
            ok = False
        return ok

    for ev in plan.evictions:
        if not known(ev.pod, ev.node):
            continue
        running_on = ctx.pods[ev.pod].running_on
        if ev.pod in ctx.evicted:
            violations.append(Violation("not-running", f"Pod/{ev.pod}", "evicted twice"))
        elif running_on is None:
            violations.append(Violation("not-running", f"Pod/{ev.pod}", "evicted but not running"))
        elif running_on != ev.node:
            violations.append(Violation("not-running", f"Pod/{ev.pod}",
                                        f"evicted from {ev.node!r} but runs on {running_on!r}"))
        else:
            ctx.evicted[ev.pod] = ev.node

    for b in plan.bindings:
        if not known(b.pod, b.node):
            continue
        running_on = ctx.pods[b.pod].running_on
        if b.pod in ctx.bound:
            violations.append(Violation("duplicate-binding", f"Pod/{b.pod}",
                                        f"bound to {b.node!r} and to {ctx.bound[b.pod]!r}"))
        elif running_on is not None and b.pod not in ctx.evicted:
            violations.append(Violation("duplicate-binding", f"Pod/{b.pod}",
                                        f"bound to {b.node!r} while running on {running_on!r}"))
        else:
            ctx.bound[b.pod] = b.node

    violations += apply_moves(ctx, known)
    for pod in ctx.pods.values():
        if pod.running_on is not None and pod.name not in ctx.evicted:
            ctx.placement[pod.name] = pod.running_on
    ctx.placement.update(ctx.moved)
    ctx.placement.update(ctx.bound)
    return ctx, violations


def apply_moves(ctx: Context, known) -> list[Violation]:
    """Accept the plan's moves into ``ctx.moved``; report (kind ``move``) a move of a pod that
    does not run on its ``from`` node, a pod moved twice, evicted or bound as well, or a move
    onto the node it runs on. ``known(pod, node)`` reports unknown names."""
    out: list[Violation] = []
    for m in ctx.plan.moves:
        if not known(m.pod, m.source) or not known(m.pod, m.to):
            continue
        obj, running_on = f"Pod/{m.pod}", ctx.pods[m.pod].running_on
        if running_on != m.source:
            where = "is not running" if running_on is None else f"runs on {running_on!r}"
            out.append(Violation("move", obj, f"moved from {m.source!r} but {where}"))
        elif m.pod in ctx.moved:
            out.append(Violation("move", obj, "moved twice"))
        elif m.pod in ctx.evicted:
            out.append(Violation("move", obj, "both moved and evicted"))
        elif m.pod in ctx.bound:
            out.append(Violation("move", obj, "both moved and bound"))
        elif m.to == m.source:
            out.append(Violation("move", obj, f"moved onto {m.to!r}, the node it runs on"))
        else:
            ctx.moved[m.pod] = m.to
    return out

"""Rules on single nodes and queues: ``predicate``, ``capacity``, ``queue-capability``.

``predicate``: unschedulable nodes, untolerated NoSchedule/NoExecute taints, nodeSelector,
required node affinity, and the job's node pool.

Predicates and capacity are checked where the plan adds pods (binds or moves them); capacity
and queue capability are checked only where the plan adds pods (a node or queue that
was already over its limit before the plan is not the plan's doing), and on a node only for the
resources those pods request (Kubernetes' rule). Resource ``pods``: where a
node's allocatable (or a queue's capability) declares it, every pod takes 1000 milli of it.
"""

from __future__ import annotations

from collections import defaultdict

from toposolve.check.context import Context
from toposolve.check.labels import requirement_holds
from toposolve.check.violation import Violation
from toposolve.core.instance import NODE_NAME_FIELD, Node, PodConstraints, Taint

POD_COUNT = "pods"
ONE_POD = 1000  # milli-units of resource "pods" taken by one pod


def _tolerated(constraints: PodConstraints, taint: Taint) -> bool:
    for tol in constraints.tolerations:
        if tol.effect not in ("", taint.effect):
            continue
        if tol.operator == "Exists" and tol.key in ("", taint.key):
            return True
        if tol.operator == "Equal" and tol.key == taint.key and tol.value == taint.value:
            return True
    return False


def predicate_failure(node: Node, constraints: PodConstraints) -> str | None:
    """Why a pod with ``constraints`` may not be bound to ``node`` (None if it may)."""
    if node.unschedulable:
        return "node is unschedulable"
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not _tolerated(constraints, taint):
            return f"taint {taint.key}={taint.value}:{taint.effect} is not tolerated"
    for key, value in constraints.node_selector.items():
        if node.labels.get(key) != value:
            return f"nodeSelector {key}={value} does not match"
    terms = constraints.affinity_terms
    # a requirement on metadata.name (Kubernetes matchFields) tests the node's name
    fields = {**node.labels, NODE_NAME_FIELD: node.name}
    if terms and not any(all(requirement_holds(r, fields) for r in term) for term in terms):
        return "no required node-affinity term matches"
    return None


def pool_failure(node: Node, pool: dict[str, str]) -> str | None:
    """Why ``node`` is outside a job's node pool (Kueue: its ResourceFlavor's nodeLabels)."""
    for key, value in pool.items():
        if node.labels.get(key) != value:
            return f"outside the job's node pool ({key}={value})"
    return None


def check_predicates(ctx: Context) -> list[Violation]:
    out: list[Violation] = []
    cache: dict[tuple[int, str], str | None] = {}
    for pod_name, node_name in ctx.arrivals.items():
        pod = ctx.pods[pod_name]
        constraints = pod.task.constraints
        key = (id(constraints), id(pod.job), node_name)
        if key not in cache:
            node = ctx.nodes[node_name]
            cache[key] = predicate_failure(node, constraints) or pool_failure(node,
                pod.job.node_pool)
        if cache[key] is not None:
            out.append(Violation("predicate", f"Pod/{pod_name}", f"on {node_name!r}: {cache[key]}"))
    return out


def pod_usage(ctx: Context, pod_names: list[str], counted: dict[str, int]) -> dict[str, int]:
    """Summed requests of pods.

    Parameters
    ----------
    ctx
        The checker's context.
    pod_names
        Full names of the pods.
    counted
        The capacity they are counted against: ``pods`` counts one pod each when it declares it.

    Returns
    -------
    dict
        Resource → summed amount (milli-units).
    """
    total: dict[str, int] = defaultdict(int)
    for name in pod_names:
        for resource, amount in ctx.pods[name].task.requests.items():
            if resource != POD_COUNT:
                total[resource] += amount
        if POD_COUNT in counted:
            total[POD_COUNT] += ONE_POD
    return total


def check_capacity(ctx: Context) -> list[Violation]:
    # Kubernetes' rule (NodeResourcesFit): a pod fits if every resource it requests fits, so a
    # resource that no pod bound by the plan requests is not checked, even if running pods
    # already hold more of it than the node has (a node shrunk under them).
    requested: dict[str, set[str]] = defaultdict(set)
    for pod_name, node_name in ctx.arrivals.items():
        requested[node_name].update(r for r, amount in ctx.pods[pod_name].task.requests.items()
                                    if amount > 0)
    on_node: dict[str, list[str]] = {name: [] for name in requested}
    for pod_name, node_name in ctx.placement.items():
        if node_name in on_node:
            on_node[node_name].append(pod_name)
    out: list[Violation] = []
    for node in ctx.instance.nodes:
        if node.name not in requested:
            continue
        checked = requested[node.name] | {POD_COUNT}
        for resource, used in sorted(pod_usage(ctx, on_node[node.name], node.allocatable).items()):
            have = node.allocatable.get(resource, 0)
            if resource in checked and used > have:
                out.append(Violation("capacity", f"Node/{node.name}",
                                     f"{resource}: pods request {used}m, allocatable is {have}m"))
    return out


def check_queue_capability(ctx: Context) -> list[Violation]:
    queues_touched = {ctx.pods[p].job.queue for p in ctx.bound}
    capped = [q for q in ctx.instance.queues if q.name in queues_touched and q.capability]
    if not capped:
        return []
    in_queue: dict[str, list[str]] = defaultdict(list)
    for pod_name in ctx.placement:
        in_queue[ctx.pods[pod_name].job.queue].append(pod_name)
    out: list[Violation] = []
    for queue in capped:
        used = pod_usage(ctx, in_queue[queue.name], queue.capability)
        for resource, cap in sorted(queue.capability.items()):
            if used.get(resource, 0) > cap:
                out.append(Violation("queue-capability", f"Queue/{queue.name}",
                        f"{resource}: pods request {used[resource]}m, capability is {cap}m"))
    return out

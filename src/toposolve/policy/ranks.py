"""Rank assignment for a given placement (docs/ranks.md): which pod gets which block of ranks.

The baseline, *index order*, gives the ``i``-th ranked pod of a job (tasks in declaration order,
pods by index, as the job controller numbers them) rank block ``i``. The optimised order lists
the pods depth-first over the HyperNode tree (:func:`toposolve.policy.comm.dfs_order`) and hands
them the rank blocks in one of a few orders (:func:`candidate_orders`), keeping the cheapest.
``method="volcano"`` follows Volcano's rank-order proposal instead
(:mod:`toposolve.policy.volcano_ranks`), the baseline peers ship.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.errors import InputError, require_type
from toposolve.core.instance import Instance, Job
from toposolve.core.parallelism import Layout, parse_parallelism, ranks_per_pod, ring_layout
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.policy.comm import CommMetrics, Edges, dfs_order, layout_edges, measure
from toposolve.policy.profiles import CommWeights
from toposolve.policy.volcano_ranks import volcano_blocks

INDEX_ORDER = "index order"
VOLCANO_RULE = "volcano rule"
METHODS = ("optimal", "volcano", "index")


@dataclass(frozen=True)
class JobPods:
    """The ranked pods of one job after a plan, in index order, and their nodes."""

    key: str
    pods: tuple[str, ...]  # "<namespace>/<pod>"
    nodes: np.ndarray  # [P] node index of each pod
    layout: Layout
    per_pod: int  # ranks per pod
    hard: bool = False  # the job's network topology is hard (Volcano's rule reads it)


def placed_nodes(problem: Problem, plan: Plan) -> dict[str, int]:
    """Pod name → node index after ``plan``: running pods not evicted, then its bindings."""
    evicted = {e.pod for e in plan.evictions}
    out = {pod: node for pod, node in problem.running_pods.items() if pod not in evicted}
    index = problem.topology.node_index
    out.update((b.pod, index[b.node]) for b in plan.bindings if b.node in index)
    return out


def job_pods(job: Job, nodes_of: dict[str, int]) -> JobPods | None:
    """The ranked pods of ``job`` and their nodes, or None when there is nothing to rank.

    With a parallelism layout every ranked pod (every pod when the world is the pod count,
    else every pod holding accelerators) must be placed; without one, the placed pods form one
    ring. None: fewer than two ranked pods, or a layout whose pods are not all placed.
    """
    names = [f"{job.namespace}/{t.pod_name(job.name, i)}"
             for t in job.tasks for i in range(t.replicas)]
    if job.parallelism is None:
        placed = [p for p in names if p in nodes_of]
        layout, per_pod = ring_layout(len(placed)), 1
    else:
        layout = parse_parallelism(job.parallelism)
        units = job.pod_accelerators()
        per_pod = ranks_per_pod(layout, units)
        placed = names if layout.world == len(names) else [
            p for p, u in zip(names, units, strict=True) if u > 0]
        if any(p not in nodes_of for p in placed):
            return None
    if len(placed) < 2:
        return None
    hard = job.network_topology is not None and job.network_topology.mode == "hard"
    return JobPods(job.key, tuple(placed), np.array([nodes_of[p] for p in placed],
                                                   dtype=np.int64), layout, per_pod, hard)


def candidate_orders(layout: Layout, per_pod: int, blocks: int) -> list[tuple[str, np.ndarray]]:
    """Orders in which the depth-first pods take the rank blocks (duplicates left out).

    ``rank order``: blocks ascending (the layout's consecutive groups stay together);
    ``dp-contiguous``: by (pp stage, dp replica, tp) — every DP group is one run of pods;
    ``pipeline-contiguous``: by (dp replica, pp stage, tp) — every pipeline is one run.
    """
    first = np.arange(blocks, dtype=np.int64) * per_pod
    coord = {a: (first // layout.stride(a)) % layout.sizes[a] for a in layout.sizes}
    out = [("rank order", np.arange(blocks, dtype=np.int64))]
    for name, outer, inner in (("dp-contiguous", "pp", "dp"), ("pipeline-contiguous", "dp", "pp")):
        out.append((name, np.lexsort((coord["tp"], coord[inner], coord[outer]))))
    seen: set[bytes] = set()
    unique = []
    for name, order in out:
        if order.tobytes() not in seen:
            seen.add(order.tobytes())
            unique.append((name, order))
    return unique


def optimise(problem: Problem, pods: JobPods, weights: CommWeights | None = None,
             edges: Edges | None = None) -> tuple[str, np.ndarray, CommMetrics]:
    """The cheapest rank assignment of the candidates, the index order among them.

    Returns
    -------
    tuple
        The candidate's name, ``pod_of_block`` ([blocks] index into ``pods.pods`` of the pod
        holding each block) and its metrics. Ties: lowest cost, then fewest cross-leaf ring
        edges, then smallest largest DP span, then the first of index order, rank order,
        dp-contiguous, pipeline-contiguous.
    """
    topo = problem.topology
    edges = edges or layout_edges(pods.layout, pods.per_pod)
    n = len(pods.pods)
    seq = dfs_order(topo, pods.nodes)
    tried = [(INDEX_ORDER, np.arange(n, dtype=np.int64))]
    for name, order in candidate_orders(pods.layout, pods.per_pod, n):
        pod_of_block = np.empty(n, dtype=np.int64)
        pod_of_block[order] = seq
        tried.append((name, pod_of_block))
    best = None
    for position, (name, pod_of_block) in enumerate(tried):
        m = measure(topo, pods.nodes[pod_of_block], edges, weights)
        score = (round(m.cost, 9), m.cross_leaf_edges,
                 -2 if m.largest_dp_span is None else m.largest_dp_span, position)
        if best is None or score < best[0]:
            best = (score, name, pod_of_block, m)
    assert best is not None
    return best[1], best[2], best[3]


def by_method(problem: Problem, pods: JobPods, method: str, weights: CommWeights | None = None,
              edges: Edges | None = None) -> tuple[str, np.ndarray, CommMetrics]:
    """The rank assignment of ``method`` (one of :data:`METHODS`): ``optimal`` (:func:`optimise`),
    ``volcano`` (Volcano's rule) or ``index`` (index order); returns as :func:`optimise`."""
    if method == "optimal":
        return optimise(problem, pods, weights, edges)
    if method == "volcano":
        name, pod_of_block = VOLCANO_RULE, volcano_blocks(problem.topology, pods.nodes, pods.hard)
    elif method == "index":
        name, pod_of_block = INDEX_ORDER, np.arange(len(pods.pods), dtype=np.int64)
    else:
        raise ValueError(f"rank method must be one of {', '.join(METHODS)}, not {method!r}")
    edges = edges or layout_edges(pods.layout, pods.per_pod)
    return name, pod_of_block, measure(problem.topology, pods.nodes[pod_of_block], edges, weights)


def rank_map(pods: JobPods, pod_of_block: np.ndarray) -> dict[str, int]:
    """Pod → its first rank, in index order of the pods."""
    first = {int(p): b * pods.per_pod for b, p in enumerate(pod_of_block.tolist())}
    return {pods.pods[i]: first[i] for i in range(len(pods.pods))}


def blocks_of(pods: JobPods, ranks: dict[str, int], where: str) -> np.ndarray:
    """``pod_of_block`` of a rank map (a plan's ``ranks`` entry); InputError if it is not one
    block per ranked pod."""
    pod_of_block = np.full(len(pods.pods), -1, dtype=np.int64)
    for i, pod in enumerate(pods.pods):
        rank = ranks.get(pod)
        block = -1 if rank is None or rank % pods.per_pod else rank // pods.per_pod
        if not 0 <= block < len(pods.pods) or pod_of_block[block] >= 0:
            raise InputError(f"rank {rank!r} of pod {pod} is not a free block start (a multiple "
                             f"of {pods.per_pod} below {pods.layout.world})", obj="Plan",
                             field=f"ranks.{where}")
        pod_of_block[block] = i
    return pod_of_block


def ranked_jobs(problem: Problem, plan: Plan) -> list[JobPods]:
    """:class:`JobPods` of every job with pending pods that has something to rank after ``plan``,
    in job order."""
    nodes_of = placed_nodes(problem, plan)
    jobs = problem.instance.jobs
    out = [job_pods(jobs[problem.jobs[j].index], nodes_of) for j in problem.pending_jobs]
    return [p for p in out if p is not None]


def assign_ranks(instance: Instance | Problem, plan: Plan, weights: CommWeights | None = None,
                 method: str = "optimal") -> dict[str, dict[str, int]]:
    """The optimised rank map of every job of ``plan`` (job key → pod → first rank).

    Parameters
    ----------
    instance
        The instance the plan is for, or its compiled problem.
    plan
        Any engine's plan (not changed: ``plan.ranks = assign_ranks(instance, plan)`` keeps it).
    weights
        The cost model (default: :class:`CommWeights`' defaults; a profile's ``comm``).
    method
        ``optimal`` (the cheapest candidate), ``volcano`` (Volcano's rank-order rule) or
        ``index`` (index order).

    Returns
    -------
    dict
        The value for ``plan.ranks``: jobs with more than one ranked pod, in job order.
    """
    require_type(plan, Plan, "plan")
    problem = instance if isinstance(instance, Problem) else compile_problem(instance)
    out: dict[str, dict[str, int]] = {}
    for pods in ranked_jobs(problem, plan):
        _, pod_of_block, _ = by_method(problem, pods, method, weights)
        out[pods.key] = rank_map(pods, pod_of_block)
    return out


@dataclass(frozen=True)
class JobComm:
    """One job's communication under index order, Volcano's rule and the plan's (or
    optimised) ranks."""

    job: str
    layout: str
    pods: int
    index: CommMetrics
    ranked: CommMetrics
    source: str  # "plan" (the plan's ranks) or the optimiser's candidate name
    volcano: CommMetrics | None = None


def compare_ranks(problem: Problem, plan: Plan,
                  weights: CommWeights | None = None) -> list[JobComm]:
    """Every ranked job of ``plan`` measured in index order and with ranks: the plan's own
    ``ranks`` entry where it has one (checked: one block per ranked pod), else optimised."""
    out = []
    for pods in ranked_jobs(problem, plan):
        edges = layout_edges(pods.layout, pods.per_pod)
        index = measure(problem.topology, pods.nodes, edges, weights)
        if pods.key in plan.ranks:
            pod_of_block = blocks_of(pods, plan.ranks[pods.key], pods.key)
            source, ranked = "plan", measure(problem.topology, pods.nodes[pod_of_block], edges,
                                             weights)
        else:
            source, _, ranked = optimise(problem, pods, weights, edges)
        volcano = by_method(problem, pods, "volcano", weights, edges)[2]
        out.append(JobComm(pods.key, pods.layout.text, len(pods.pods), index, ranked, source,
                           volcano))
    return out


def comm_totals(jobs: list[JobComm]) -> dict[str, dict[str, float | int | None]]:
    """Totals over jobs, ``{"index": …, "volcano": …, "ranked": …}``: cross-leaf ring edges
    and comm cost summed, the largest DP span the largest of any job (None without DP groups);
    ``volcano`` only when every job has it."""
    out: dict[str, dict[str, float | int | None]] = {}
    sides = ["index", "volcano", "ranked"]
    if any(j.volcano is None for j in jobs):
        sides.remove("volcano")
    for side in sides:
        metrics = [getattr(j, side) for j in jobs]
        spans = [m.largest_dp_span for m in metrics if m.largest_dp_span is not None]
        out[side] = {
            "cross_leaf_ring_edges": sum(m.cross_leaf_edges for m in metrics),
            "largest_dp_span_tier": max(spans) if spans else None,
            "comm_cost": round(sum(m.cost for m in metrics), 6),
        }
    return out

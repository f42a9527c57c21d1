"""Rank assignment for a given placement (docs/ranks.md): which pod gets which block of ranks.

The baseline, *index order*, gives the ``i``-th ranked pod of a job (tasks in declaration order,
pods by index, as the job controller numbers them) rank block ``i``. The optimised order lists
the pods depth-first over the HyperNode tree (:func:`toposolve.policy.comm.dfs_order`) and hands
them the rank blocks in one of a few orders (:func:`candidate_orders`, :func:`aligned_orders`),
keeping the cheapest (the plan's largest DP span first with ``dp_span_first``).
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
from toposolve.core.topology import Topology
from toposolve.policy.cell_orders import cell_permutations
from toposolve.policy.comm import (
    CommMetrics,
    Edges,
    dfs_order,
    group_components,
    layout_edges,
    measure,
)
from toposolve.policy.comm_stage import level_tiers, node_cells
from toposolve.policy.dealt_orders import dealt_orders
from toposolve.policy.profiles import CommWeights
from toposolve.policy.swap_polish import polish
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
    ``pipeline-contiguous``: by (dp replica, pp stage, tp) — every pipeline is one run;
    ``bands of a stages`` for each divisor ``1 < a < pp``: by (stage // a, replica, stage % a, tp)
    — the pipelines cut into pieces of ``a`` stages, so a leaf holding ``c`` consecutive pods
    holds about ``a × c/a`` (stages × replicas), a tile with a shorter boundary than a whole
    pipeline when ``c`` is small against ``pp`` (docs/ranks.md, section 6c);
    ``pipelines zigzag`` and ``bands of a stages, snaked``: the same with every other pipeline
    (band) walked backwards, so a cell's pods straddling two pipelines (bands) sit at the same
    end of both (section 7b).
    """
    coord = _coords(layout, per_pod, blocks)
    out = [("rank order", np.arange(blocks, dtype=np.int64))]
    for name, outer, inner in (("dp-contiguous", "pp", "dp"), ("pipeline-contiguous", "dp", "pp")):
        out.append((name, np.lexsort((coord["tp"], coord[inner], coord[outer]))))
    pp, stage, replica = layout.sizes["pp"], coord["pp"], coord["dp"]
    # the same, every other pipeline / band walked backwards: the last pods of one pipeline
    # (band) and the first of the next are neighbours (docs/ranks.md, section 7b)
    out.append(("pipelines zigzag",
                np.lexsort((coord["tp"], np.where(replica % 2, -stage, stage), replica))))
    for a in (a for a in range(2, pp) if pp % a == 0):
        band = stage // a
        out.append((f"bands of {a} stages", np.lexsort((coord["tp"], stage % a, replica, band))))
        out.append((f"bands of {a} stages, snaked",
                    np.lexsort((coord["tp"], stage % a, np.where(band % 2, -replica, replica),
                                band))))
    return _unique(out)


def _coords(layout: Layout, per_pod: int, blocks: int) -> dict[str, np.ndarray]:
    """[blocks] coordinate of each block's first rank along each axis."""
    first = np.arange(blocks, dtype=np.int64) * per_pod
    return {a: (first // layout.stride(a)) % layout.sizes[a] for a in layout.sizes}


def _unique(orders: list[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
    seen: set[bytes] = set()
    unique = []
    for name, order in orders:
        if order.tobytes() not in seen:
            seen.add(order.tobytes())
            unique.append((name, order))
    return unique


def aligned_orders(topo: Topology, seq_nodes: np.ndarray, layout: Layout,
                   per_pod: int) -> list[tuple[str, np.ndarray]]:
    """Orders that keep whole DP components (or pipelines) inside the cells of one level.

    For each level below the root whose cells hold, along the depth-first sequence
    ``seq_nodes`` (the pods' nodes in DFS order), runs of a multiple of the component size
    (:func:`~toposolve.policy.comm.group_components` of the DP groups, ``dp`` axis, or of the
    pipelines, ``pp``): each run takes the next components (by lowest block) and lists their
    blocks by (replica, stage, tp) for DP components — pieces of pipelines stay together below
    that level — or by (stage, replica, tp) for pipelines. Every component then lies in one
    cell of the level: the largest DP (pipeline) span is at most its tier (docs/ranks.md, 6c).
    """
    blocks = len(seq_nodes)
    coord = _coords(layout, per_pod, blocks)
    edges = layout_edges(layout, per_pod)
    tiers = level_tiers(topo)
    cells = node_cells(topo, tiers)[seq_nodes]
    out = []
    for axis, groups, inner in (("dp", edges.dp_groups, ("dp", "pp")),
                                ("pp", edges.pp_chains, ("pp", "dp"))):
        if layout.sizes[axis] < 2:
            continue
        labels = group_components(groups, blocks)
        comps, size = np.unique(labels, return_counts=True)
        if len(set(size.tolist())) != 1:
            continue
        for level in range(cells.shape[1]):
            change = np.flatnonzero(np.diff(cells[:, level])) + 1
            runs = np.diff(np.concatenate(([0], change, [blocks])))
            if len(runs) < 2 or (runs % size[0]).any():
                continue
            band_of_comp = np.repeat(np.arange(len(runs)), runs // size[0])
            band = band_of_comp[np.searchsorted(comps, labels)]
            order = np.lexsort((coord["tp"], coord[inner[1]], coord[inner[0]], band))
            out.append((f"{axis} groups per tier-{tiers[level]} domain", order))
    return out


def optimise(problem: Problem, pods: JobPods, weights: CommWeights | None = None,
             edges: Edges | None = None,
             span_cap: int | None = None) -> tuple[str, np.ndarray, CommMetrics]:
    """The cheapest rank assignment of the candidates, the index order among them.

    Returns
    -------
    tuple
        The candidate's name, ``pod_of_block`` ([blocks] index into ``pods.pods`` of the pod
        holding each block) and its metrics. Ties: lowest cost, then fewest cross-leaf ring
        edges, then smallest largest DP span, then the first of index order and
        :func:`candidate_orders`, then :func:`aligned_orders`, then the leaf cells reordered,
        then :func:`~toposolve.policy.dealt_orders.dealt_orders` level by level, then the
        best of them polished (:func:`~toposolve.policy.swap_polish.polish`). With
        ``weights.dp_span_first`` the largest DP span comes before the cost, any span up to
        ``span_cap`` (the plan's :func:`plan_span_cap`) counting as ``span_cap``.
    """
    topo = problem.topology
    weights = weights or CommWeights()
    edges = edges or layout_edges(pods.layout, pods.per_pod)
    n = len(pods.pods)
    seq = dfs_order(topo, pods.nodes)
    tried = [(INDEX_ORDER, np.arange(n, dtype=np.int64))]
    orders = candidate_orders(pods.layout, pods.per_pod, n)
    orders += aligned_orders(topo, pods.nodes[seq], pods.layout, pods.per_pod)
    orders = _unique(orders)
    tiers = level_tiers(topo)
    cells = node_cells(topo, tiers)[pods.nodes[seq]]
    moved = cell_permutations(cells[:, 0], orders, edges) if cells.shape[1] else []
    for level in range(1, cells.shape[1]):  # stages dealt to the cells of each level above
        moved += dealt_orders(cells[:, level], cells[:, 0], pods.layout, pods.per_pod,
                              candidate_orders, f"stages dealt to tier-{tiers[level]} domains")
    for name, order, positions in [(name, order, None) for name, order in orders] + moved:
        pod_of_block = np.empty(n, dtype=np.int64)
        pod_of_block[order] = seq if positions is None else seq[positions]
        tried.append((name, pod_of_block))
    best = min((_score(topo, pods, pod_of_block, edges, weights, span_cap, position), name,
                pod_of_block) for position, (name, pod_of_block) in enumerate(tried))
    # the best candidate's pods swapped between leaves of one level-1 cell while that cuts
    # fewer ring edges (docs/ranks.md, section 8b); kept only if it scores better
    node_cell = node_cells(topo, tiers)[pods.nodes]
    capped = node_cell[:, 1] if node_cell.shape[1] > 1 else np.zeros(n, dtype=np.int64)
    polished = polish(best[2], node_cell[:, 0], capped, edges) if node_cell.shape[1] else None
    if polished is not None:
        score = _score(topo, pods, polished, edges, weights, span_cap, len(tried))
        best = min(best, (score, f"{best[1]}, polished", polished))
    return best[1], best[2], best[0][-1]


def _score(topo: Topology, pods: JobPods, pod_of_block: np.ndarray, edges: Edges,
           weights: CommWeights, span_cap: int | None, position: int) -> tuple:
    """:func:`optimise`'s sort key of one candidate, its metrics last."""
    m = measure(topo, pods.nodes[pod_of_block], edges, weights)
    span = -2 if m.largest_dp_span is None else m.largest_dp_span
    first = max(span, span_cap if span_cap is not None else span)
    return (first if weights.dp_span_first else 0, round(m.cost, 9), m.cross_leaf_edges, span,
            position, m)


def plan_span_cap(problem: Problem, jobs: list[JobPods],
                  weights: CommWeights | None = None) -> int | None:
    """With ``weights.dp_span_first``: the smallest largest DP span the plan's ``jobs`` reach
    together — the largest over the jobs of each one's smallest (:func:`optimise`). Each job
    then takes its cheapest order within it, rather than its own smallest span at any cost
    (docs/ranks.md, section 6c); at least the tier of level ``weights.dp_span_from_level``.
    None without ``dp_span_first`` or DP groups."""
    if weights is None or not weights.dp_span_first:
        return None
    spans = [optimise(problem, pods, weights)[2].largest_dp_span for pods in jobs]
    spans = [s for s in spans if s is not None]
    if not spans:
        return None
    tiers = level_tiers(problem.topology)
    return max(*spans, tiers[min(weights.dp_span_from_level, len(tiers) - 1)])


def by_method(problem: Problem, pods: JobPods, method: str, weights: CommWeights | None = None,
              edges: Edges | None = None,
              span_cap: int | None = None) -> tuple[str, np.ndarray, CommMetrics]:
    """The rank assignment of ``method`` (one of :data:`METHODS`): ``optimal`` (:func:`optimise`,
    with the plan's ``span_cap``), ``volcano`` (Volcano's rule) or ``index`` (index order);
    returns as :func:`optimise`."""
    if method == "optimal":
        return optimise(problem, pods, weights, edges, span_cap)
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
    jobs = ranked_jobs(problem, plan)
    cap = plan_span_cap(problem, jobs, weights) if method == "optimal" else None
    for pods in jobs:
        _, pod_of_block, _ = by_method(problem, pods, method, weights, span_cap=cap)
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
    jobs = ranked_jobs(problem, plan)
    cap = None if all(p.key in plan.ranks for p in jobs) else plan_span_cap(problem, jobs, weights)
    for pods in jobs:
        edges = layout_edges(pods.layout, pods.per_pod)
        index = measure(problem.topology, pods.nodes, edges, weights)
        if pods.key in plan.ranks:
            pod_of_block = blocks_of(pods, plan.ranks[pods.key], pods.key)
            source, ranked = "plan", measure(problem.topology, pods.nodes[pod_of_block], edges,
                                             weights)
        else:
            source, _, ranked = optimise(problem, pods, weights, edges, cap)
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

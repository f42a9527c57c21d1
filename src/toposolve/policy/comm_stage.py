"""The ``comm`` objective stage: domain crossings of the jobs that carry a parallelism layout.

For each job with a ``toposolve.io/parallelism`` layout that the plan places, and each tier
``t`` below the root, ``k_t`` is the number of tier-``t`` *cells* its ranked pods (running and
new) occupy — the highest HyperNode of tier ≤ ``t`` above a pod's node, or the node itself when
it has none. The stage minimises ``Σ_jobs tp_j · Σ_t Δ_t · (k_t − [k_t = 1])``, ``Δ_t`` the step
of the tier multiplier of :class:`~toposolve.policy.profiles.CommWeights` from tier ``t`` to the
next one (scaled to integers), ``tp_j`` the ring edges one pod-to-pod edge carries (the TP size
when pods hold whole TP groups, else 1); ``k_t − 1`` for pipelines without DP (chains). With
TP inside pods it is the fewest ring edges leaving each tier under any rank order, exactly the
count of the depth-first order for a ring; the derivation and the bounds for tp×pp×dp layouts
are in docs/ranks.md, section 6. The ``dp_span`` and ``pp_span`` stages (:func:`span_value`): per
tier, whether some cell holds a partial DP component / pipeline — the smallest largest DP /
pipeline span of any rank order (section 6b).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from toposolve.core.parallelism import is_accelerator, parse_parallelism
from toposolve.core.problem import Problem
from toposolve.core.topology import Topology
from toposolve.policy.comm import group_components, layout_edges
from toposolve.policy.profiles import CommWeights

STEP_SCALE = 1000  # non-integer tier steps are counted in thousandths


def level_tiers(topo: Topology) -> list[int]:
    """The tiers present, ascending, the root's last (the levels the stage counts cells at are
    all but the last)."""
    return sorted({int(t) for t in topo.tier.tolist()})


def tier_steps(tiers: list[int], weights: CommWeights | None = None) -> list[int]:
    """Integer ``Δ_l`` per level below the root: ``m(l+1) − m(l)`` with
    ``m(l) = tier_factor ** (tiers[l] − tiers[0])``, times :data:`STEP_SCALE` unless every step
    is a whole number."""
    factor = (weights or CommWeights()).tier_factor
    mult = [factor ** (t - tiers[0]) for t in tiers]
    steps = [b - a for a, b in zip(mult, mult[1:], strict=False)]
    if all(math.isclose(s, round(s)) for s in steps):
        return [round(s) for s in steps]
    return [round(s * STEP_SCALE) for s in steps]


def comm_jobs(problem: Problem) -> list[int]:
    """Jobs with pending pods that carry a parallelism layout, in job order."""
    return [j for j in problem.pending_jobs if problem.jobs[j].parallelism is not None]


def ranked_groups(problem: Problem, j: int) -> list[int]:
    """The job's groups whose pods hold ranks: those requesting accelerators, or every group
    when none does (one rank per pod)."""
    groups = problem.jobs[j].groups
    acc = [r for r, name in enumerate(problem.resources) if is_accelerator(name)]
    with_acc = [g for g in groups if acc and (problem.group_request[g, acc] > 0).any()]
    return with_acc or list(groups)


def edge_factor(problem: Problem, j: int, ranked_pods: int) -> int:
    """Ring edges (per rank) one edge between two of job ``j``'s ``ranked_pods`` pods stands
    for: the TP size when each pod holds whole TP groups (``tp`` divides its ranks), else 1."""
    text = problem.jobs[j].parallelism
    if text is None or ranked_pods <= 0:
        return 1
    layout = parse_parallelism(text)
    per_pod, tp = layout.world // ranked_pods, layout.sizes["tp"]
    return tp if per_pod >= tp and per_pod % tp == 0 else 1


def job_pods(problem: Problem, j: int) -> int:
    """Pods of job ``j``'s ranked groups (pending and running)."""
    return sum(problem.group_size(g) for g in ranked_groups(problem, j))


def node_cells(topo: Topology, tiers: list[int]) -> np.ndarray:
    """[N, L] the cell of each node at each level below the root: the highest HyperNode of
    tier ≤ the level's tier holding it, else ``-(node + 1)`` (the node is its own cell)."""
    n = len(topo.node_names)
    table = topo.node_at_tier
    out = np.empty((n, max(0, len(tiers) - 1)), dtype=np.int64)
    cell = -(np.arange(n, dtype=np.int64) + 1)
    column = 0
    for level, tier in enumerate(tiers[:-1]):
        while column <= tier:
            cell = np.where(table[:, column] >= 0, table[:, column], cell)
            column += 1
        out[:, level] = cell
    return out


def is_chain(problem: Problem, j: int) -> bool:
    """Whether job ``j``'s ring edges form chains only (``pp > 1``, ``dp = 1``): ``k`` cells then
    need ``k − 1`` crossings, not ``k``."""
    text = problem.jobs[j].parallelism
    if text is None:
        return False
    sizes = parse_parallelism(text).sizes
    return sizes["dp"] == 1 and sizes["pp"] > 1


def crossings(cells: np.ndarray, steps: list[int], chain: bool = False) -> int:
    """``Σ_l Δ_l · (k_l − [k_l = 1])`` for one job's pods' cells ([pods, L]);
    ``Σ_l Δ_l · (k_l − 1)`` for a ``chain``."""
    total = 0
    for level, step in enumerate(steps):
        k = len(np.unique(cells[:, level]))
        total += step * (k - 1 if chain else (k if k > 1 else 0))
    return total


def job_nodes(problem: Problem, assignment, j: int, evicted: set[int], *,
              per_pod: bool) -> list[int]:
    """The nodes of job ``j``'s ranked pods after ``assignment``: its new pods' nodes (once per
    pod when ``per_pod``, else once per node and group) and its running pods' not ``evicted``."""
    groups = set(ranked_groups(problem, j))
    nodes = [n for g in sorted(groups) for n, c in assignment.counts.get(g, {}).items()
             for _ in range(c if per_pod else min(c, 1))]
    nodes += [n for pod, n in problem.running_pods.items()
              if pod not in evicted and problem.pod_group[pod] in groups]
    return nodes


def placed_cells(problem: Problem, assignment, weights: CommWeights | None, *,
                 per_pod: bool, counted=lambda j: True):
    """Per placed layout job ``j`` that ``counted(j)`` accepts: ``(j, cells, steps)`` — the level
    cells of its pods' nodes (:func:`job_nodes`) and the tier steps of ``weights``."""
    topo = problem.topology
    tiers = level_tiers(topo)
    steps = tier_steps(tiers, weights)
    placed = assignment.placed_jobs(problem)
    evicted = set(assignment.evicted)
    cells = None
    for j in comm_jobs(problem):
        if j not in placed or not counted(j):
            continue
        nodes = job_nodes(problem, assignment, j, evicted, per_pod=per_pod)
        cells = node_cells(topo, tiers) if cells is None else cells
        yield j, cells[np.array(nodes, dtype=np.int64)], steps


def comm_value(problem: Problem, assignment, weights: CommWeights | None = None) -> int:
    """The ``comm`` stage value of ``assignment`` (see the module docstring)."""
    total = 0
    for j, cells, steps in placed_cells(problem, assignment, weights, per_pod=False):
        if len(cells) < 2:  # one pod (two on one node fall out of crossings: one cell)
            continue
        factor = edge_factor(problem, j, job_pods(problem, j))
        total += factor * crossings(cells, steps, is_chain(problem, j))
    return total


@lru_cache(maxsize=256)
def component_size(text: str, per_pod: int, axis: str) -> int | None:
    """Pods of one ``axis`` component (:func:`~toposolve.policy.comm.group_components` of the
    layout's DP groups, ``axis="dp"``, or pipelines, ``"pp"``) when the axis has size ≥ 2 and
    every component has the same number of pods; None otherwise."""
    layout = parse_parallelism(text)
    if layout.sizes[axis] < 2:
        return None
    edges = layout_edges(layout, per_pod)
    groups = edges.dp_groups if axis == "dp" else edges.pp_chains
    labels = group_components(groups, layout.world // per_pod)
    sizes = set(np.unique(labels, return_counts=True)[1].tolist())
    return sizes.pop() if len(sizes) == 1 else None


def group_size(problem: Problem, j: int, axis: str) -> int | None:
    """Pods of one ``axis`` component of job ``j`` (:func:`component_size`: a DP group's pods,
    ``dp``, or a pipeline's, ``pp``, with one TP group per pod); None when the job has no
    layout, the axis has size 1 or the components differ in size (the stage does not count it)."""
    text = problem.jobs[j].parallelism
    pods = job_pods(problem, j)
    if text is None or pods <= 0 or parse_parallelism(text).world % pods:
        return None
    return component_size(text, parse_parallelism(text).world // pods, axis)


def misaligned(cells: np.ndarray, steps: list[int], size: int, from_level: int = 0) -> int:
    """``Σ_{l ≥ from_level} Δ_l · [some level-l cell holds a number of the pods ([pods, L] cells)
    that is not a multiple of size]`` — with ``from_level`` 0 the tier multiplier of the smallest
    largest span of a component of ``size`` pods that any rank order reaches, less the lowest
    tier's (docs/ranks.md, 6b)."""
    total = 0
    for level, step in enumerate(steps):
        if level < from_level:
            continue
        _, counts = np.unique(cells[:, level], return_counts=True)
        total += step * int((counts % size != 0).any())
    return total


def span_value(problem: Problem, assignment, weights: CommWeights | None = None,
               axis: str = "dp") -> int:
    """The ``dp_span`` (``axis="dp"``) or ``pp_span`` (``"pp"``) stage value of ``assignment``:
    :func:`misaligned` summed over the placed jobs of :func:`group_size`, running pods
    included; DP from ``weights.dp_span_from_level`` up."""
    total = 0
    start = (weights or CommWeights()).dp_span_from_level if axis == "dp" else 0
    for j, cells, steps in placed_cells(problem, assignment, weights, per_pod=True,
                                        counted=lambda j: group_size(problem, j, axis)):
        total += misaligned(cells, steps, group_size(problem, j, axis), start)
    return total


def dp_span_value(problem: Problem, assignment, weights: CommWeights | None = None) -> int:
    """The ``dp_span`` stage value (:func:`span_value` over DP components)."""
    return span_value(problem, assignment, weights, "dp")


def pp_span_value(problem: Problem, assignment, weights: CommWeights | None = None) -> int:
    """The ``pp_span`` stage value (:func:`span_value` over pipelines): per tier, whether some
    cell holds a partial pipeline — the smallest largest pipeline span of any rank order."""
    return span_value(problem, assignment, weights, "pp")

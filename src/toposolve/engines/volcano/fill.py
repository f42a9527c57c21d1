"""Placing a SubJob's pods on nodes inside one HyperNode (``allocateResourcesForTasks``).

Volcano scores nodes per pod. For topology pods the score is the LCA score against the SubJob's
running LCA (0 for every node before its first pod), plus a task-count tie-break per lowest-tier
HyperNode; ties go to the tie rank. Played out pod by pod this is a *fill*: the first pod takes
the best-ranked feasible node, that node stays best while it has room (same leaf, growing task
count), then the rest of its leaf, then leaves whose LCA with it is lowest. We compute that order
once per group and fill it with a cumulative sum — identical choices, no per-pod loop over nodes.

Normal pods (no topology) use the fading score, which changes as HyperNodes fill, so they are
placed pod by pod (vectorised over nodes).
"""

from __future__ import annotations

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.volcano.scores import fading_node_scores
from toposolve.engines.volcano.state import ClusterState
from toposolve.policy.profiles import PluginArgs


def anchor_lca_tiers(state: ClusterState, nodes: np.ndarray, anchor: int) -> np.ndarray:
    """Tier of LCA(lowest-tier HyperNode of each node, ``anchor``); ``inf`` for a node that no
    lowest-tier HyperNode holds (Volcano scores it 0)."""
    anchor_chain = state.hn_ancestors[anchor]
    anchor_chain = anchor_chain[anchor_chain >= 0]
    chains = state.node_chain[nodes]
    first_hit = np.isin(chains, anchor_chain).argmax(axis=1)
    lca = chains[np.arange(nodes.size), first_hit]
    lca_tier = state.topology.tier[lca].astype(float)
    return np.where(state.leaf[nodes] >= 0, lca_tier, np.inf)


def proximity_order(state: ClusterState, nodes: np.ndarray, anchor: int | None,
                    groups: list[int]) -> np.ndarray:
    """``nodes`` sorted the way successive LCA-scored picks would take them.

    Key: tier of LCA(leaf(n), anchor) ascending (nodes outside any leaf last), then more of the
    SubJob's pods already in the node's leaf, then the leaf's best tie rank, then the node's rank.
    This is the order of :func:`~.scores.lca_node_scores`, highest first, re-scored after each pick.
    """
    if nodes.size == 0:
        return nodes
    rank = state.node_rank[nodes]
    leaf = state.leaf[nodes]
    if anchor is None:
        first = nodes[np.argmin(rank)]
        anchor = int(state.leaf[first]) if state.leaf[first] >= 0 else None
    if anchor is None:
        lca_tier = np.where(leaf >= 0, 0.0, np.inf)
    else:
        lca_tier = anchor_lca_tiers(state, nodes, anchor)
    tasks = state.tasks_in(groups)
    per_leaf: dict[int, int] = {}
    leaf_rank: dict[int, int] = {}
    for lf, n, r in zip(leaf.tolist(), nodes.tolist(), rank.tolist(), strict=True):
        per_leaf[lf] = per_leaf.get(lf, 0) + int(tasks[n])
        leaf_rank[lf] = min(leaf_rank.get(lf, r), r)
    leaf_tasks = np.array([per_leaf[lf] if lf >= 0 else 0 for lf in leaf.tolist()])
    leaf_best = np.array([leaf_rank[lf] if lf >= 0 else r for lf, r in zip(leaf.tolist(),
            rank.tolist(), strict=True)])
    order = np.lexsort((rank, leaf_best, -leaf_tasks, lca_tier))
    return nodes[order]


def fill(state: ClusterState, group: int, nodes_in_order: np.ndarray, fit: np.ndarray,
         count: int) -> int:
    """Place up to ``count`` pods of ``group`` on ``nodes_in_order``, each node filled first."""
    if count <= 0 or nodes_in_order.size == 0:
        return 0
    room = fit[nodes_in_order]
    before = np.cumsum(room) - room
    take = np.clip(count - before, 0, room)
    used = take > 0
    state.place(group, nodes_in_order[used], take[used])
    return int(take.sum())


def place_normal_pods(state: ClusterState, problem: Problem, args: PluginArgs, group: int,
                      count: int, candidates: np.ndarray) -> int:
    """Place ``count`` pods of a no-topology group one by one by the fading node score."""
    placed = 0
    request = problem.group_request[group]
    root_tier = problem.topology.max_tier
    mask = np.zeros(problem.n_nodes, dtype=bool)
    mask[candidates] = True
    room = state.queue_room(group)
    fit = state.fit_counts(group, candidates)
    while placed < count and placed < room:
        ok = mask & (fit > 0)
        if not ok.any():
            break
        score = fading_node_scores(problem, state.topology.node_at_tier, state.hn_used,
                                   state.hn_alloc, request, args, root_tier)
        score = np.where(ok, score, -np.inf)
        best = np.flatnonzero(np.isclose(score, score.max()) & ok)
        node = int(best[np.argmin(state.node_rank[best])])
        state.place(group, node, 1)
        fit[node] = state.fit_counts(group, np.array([node]))[node]  # only this node changed
        placed += 1
    return placed

"""Volcano's network-topology-aware scores, as documented public functions (seed 004, §4–5).

All functions are vectorised over HyperNodes or nodes. Scores here are on Volcano's 0..1 scale
before the plugin multiplies by ``100 × weight`` (a common factor that never changes a choice).
"""

from __future__ import annotations

import numpy as np

from toposolve.core.problem import Problem
from toposolve.policy.profiles import PluginArgs


def resource_weights(problem: Problem, args: PluginArgs) -> np.ndarray:
    """[R] bin-packing weight of each resource; resources not configured weigh 0.

    Volcano turns negative weights into 1; we do the same.
    """
    weights = np.zeros(len(problem.resources))
    for name, w in args.resource_weights().items():
        i = problem.resource_index.get(name)
        if i is not None:
            weights[i] = w if w >= 0 else 1
    return weights


def binpack_score(used: np.ndarray, allocatable: np.ndarray, request: np.ndarray,
                  weights: np.ndarray) -> np.ndarray:
    """HyperNodeOrderFn bin-packing score of placing ``request`` on each row.

    ``score = Σ_r w_r (used_r + request_r) / alloc_r / Σ_r w_r`` over the configured resources the
    request asks for; 0 when any of them would overflow (``used + request > alloc``) or no weight
    applies. ``used``/``allocatable`` are [K, R]; ``request`` is [R].
    """
    active = (request > 0) & (weights > 0)
    if not active.any():
        return np.zeros(used.shape[0])
    u = used[:, active].astype(float) + request[active]
    a = allocatable[:, active].astype(float)
    w = weights[active]
    overflow = (u > a).any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(a > 0, u / np.where(a > 0, a, 1), 0.0)
    score = ratio @ w / w.sum()
    return np.where(overflow, 0.0, score)


def task_num_share(tasks_in_hypernode: np.ndarray, total_tasks: int) -> np.ndarray:
    """``scoreWithTaskNum``: share of the SubJob's tasks already inside each candidate."""
    if total_tasks <= 0:
        return np.zeros(len(tasks_in_hypernode))
    return tasks_in_hypernode / total_tasks


def add_task_num_tie_break(scores: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Add ``share`` only to the candidates tied at the maximum score (Volcano's rule)."""
    if len(scores) == 0:
        return scores
    top = np.isclose(scores, scores.max())
    if top.sum() <= 1:
        return scores
    return scores + np.where(top, share, 0.0)


def tier_weights(min_tier: int, max_tier: int, fading: float) -> np.ndarray:
    """Weights ``fading^(t-1)`` for tiers ``min_tier..max_tier`` (``0^0 = 1``).

    With the default 0.8 the tiers 0, 1, 2, 3, 4 weigh 1.25, 1, 0.8, 0.64, 0.512. Tier 0 with
    fading 0 would weigh ``0^-1 = +Inf`` in Volcano (every score then NaN); here it takes the
    limit of the normalised weights as fading → 0 instead: tier 0 alone counts.
    """
    tiers = np.arange(min_tier, max_tier + 1)
    if fading == 0 and min_tier < 1:
        return (tiers == min_tier).astype(float)
    return np.array([1.0 if t == 1 else fading ** (t - 1) for t in tiers], dtype=float)


def lca_tier_score(lca_tier: np.ndarray, min_tier: int, max_tier: int) -> np.ndarray:
    """``(maxTier − tier(LCA)) / (maxTier − minTier)``; 1 when the tiers span a single value.

    ``maxTier`` is the virtual root's tier, so an LCA at the root scores 0. A node whose lowest
    HyperNode *is* the allocated HyperNode scores 1 (the caller sets that case).
    """
    if max_tier == min_tier:
        return np.ones(len(lca_tier))
    return (max_tier - lca_tier) / (max_tier - min_tier)


def lca_node_scores(lca_tier: np.ndarray, at_anchor: np.ndarray, min_tier: int, max_tier: int,
                    share: np.ndarray) -> np.ndarray:
    """Topology-pod node score (``batchNodeOrderFnForNetworkAwarePods``) of each node.

    ``lca_tier`` is the tier of LCA(node's lowest-tier HyperNode, the SubJob's running LCA),
    NaN where the node has no such HyperNode (score 0); ``at_anchor`` marks nodes whose HyperNode
    *is* the running LCA (score 1); the others score :func:`lca_tier_score`. The nodes tied at the
    top then get the SubJob's task share of their HyperNode (``share``) on top. The caller handles
    a SubJob with no running LCA yet (every node scores 0).
    """
    base = np.where(at_anchor, 1.0, lca_tier_score(np.nan_to_num(lca_tier), min_tier, max_tier))
    base = np.where(np.isnan(lca_tier), 0.0, base)
    return add_task_num_tie_break(base, share)


def fading_node_scores(problem: Problem, node_at_tier: np.ndarray, hn_used: np.ndarray,
        hn_alloc: np.ndarray, request: np.ndarray, args: PluginArgs, root_tier: int) -> np.ndarray:
    """Normal-pod score of every node: tier-weighted fading of HyperNode bin-packing.

    ``score(n) = Σ_t w_t · ts_t(n) / Σ_t w_t`` for t in ``minTier..rootTier`` (the virtual root's
    tier included, as in Volcano's code), where ``ts_t(n)`` is the bin-packing score of the tier-t
    HyperNode holding ``n``, or 1.0 when no tier-t HyperNode holds it. Disabled → all zeros.
    """
    n = node_at_tier.shape[0]
    if not args.normal_pod_enable:
        return np.zeros(n)
    weights = resource_weights(problem, args)
    min_tier = problem.topology.min_tier
    wts = tier_weights(min_tier, root_tier, args.normal_pod_fading)
    # one bin-packing score per HyperNode, then a gather per tier; index -1 reads the 1.0 pad
    per_hn = np.append(binpack_score(hn_used, hn_alloc, request, weights), 1.0)
    total = np.zeros(n)
    for k, t in enumerate(range(min_tier, root_tier + 1)):
        if t < node_at_tier.shape[1]:
            total += wts[k] * per_hn[node_at_tier[:, t]]
        else:
            total += wts[k]
    return total / wts.sum() if wts.sum() > 0 else total

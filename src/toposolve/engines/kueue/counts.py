"""Phase 1 of Kueue's TAS assignment (``fillInCounts``): per-domain pod, slice and leader counts.

Per domain (ids of :class:`~toposolve.engines.kueue.tree.DomainTree`) the state holds Kueue's
``podCount``, ``podCountWithLeader``, ``leaderCount``, ``sliceCount`` and
``sliceCountWithLeader``:

* a leaf holds ``podCount`` pods of the request in its free capacity (a pooled leaf sums its
  nodes' capacity first); with a leader (a podset group's single-pod podset) ``leaderCount`` is 1
  where the leader fits and ``podCountWithLeader`` the workers that still fit beside it;
* a parent sums its children's ``podCount``; its ``podCountWithLeader`` is that sum minus the
  smallest leader penalty (``podCount − podCountWithLeader``) among the children that can host
  the leader (all children without a leader), 0 if none can; ``leaderCount`` is the children's
  maximum;
* ``sliceCount`` is ``podCount // sliceSize`` at the slice level, the children's sum above it
  and 0 below it; ``sliceCountWithLeader`` alike, minus the smallest penalty above the slice level;
* multi-layer slices (``inner``: level → inner slice size): a child at such a level gives its
  parent its counts rounded down to a multiple of that size (Kueue's ``sliceSizeAtLevel``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.topology import subtree_sums
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.kueue.tree import DomainTree

NO_PENALTY = np.iinfo(np.int64).max


@dataclass
class CountRequest:
    """What phase 1 needs of a request: one worker pod, one leader pod, where they may go."""

    request: np.ndarray  # [R] one worker pod
    feasible: np.ndarray  # [N] predicates
    slice_level: int
    slice_size: int
    leader_request: np.ndarray | None = None  # [R] the leader pod of a podset group
    leader_feasible: np.ndarray | None = None  # [N]
    preference: np.ndarray | None = None  # [N] preferred node-affinity scores (gate on), else None
    # multi-layer slices: level -> inner slice size, for the levels below the slice level down to
    # the innermost layer's (Kueue's sliceSizeAtLevel); empty for one layer
    inner: dict[int, int] = field(default_factory=dict)


class DomainState:
    """Kueue's ``domainState`` for every domain, as arrays (phase 2 mutates them)."""

    def __init__(self, size: int) -> None:
        zero = np.zeros(size, dtype=np.int64)
        self.pc, self.pcl, self.lc, self.sc, self.scl = (zero.copy() for _ in range(5))
        # affinityScore (gate TASRespectNodeAffinityPreferred on), None when the gate is off
        self.aff: np.ndarray | None = None

    def copy(self) -> DomainState:
        out = DomainState(0)
        out.pc, out.pcl, out.lc, out.sc, out.scl = (a.copy() for a in (self.pc, self.pcl, self.lc,
                                                                       self.sc, self.scl))
        out.aff = self.aff
        return out

    def clear(self, mask: np.ndarray) -> None:
        """Kueue's ``clearState`` of the masked domains."""
        for a in (self.pc, self.pcl, self.lc, self.sc, self.scl):
            a[mask] = 0

    def clear_leader(self, mask: np.ndarray) -> None:
        """Kueue's ``clearLeaderCapacity`` of the masked domains."""
        for a in (self.pcl, self.scl, self.lc):
            a[mask] = 0


def fill_counts(tree: DomainTree, free: np.ndarray, req: CountRequest) -> DomainState:
    """Phase 1 over the whole tree."""
    H = tree.n_hypernodes
    st = DomainState(len(tree.level))
    usable = tree.usable  # nodes of the tree (schedulable, in the job's pool)
    feasible = req.feasible & usable
    leader_feasible = None if req.leader_request is None else req.leader_feasible & feasible
    if tree.leaf_tier:  # a bottom-tier leaf holds what its (summed) free capacity holds
        leaves = np.array(tree.levels.get(tree.bottom, []), dtype=np.int64)
        members = tree.problem.topology.members[leaves]
        pooled_free = (free * usable[:, None]).astype(np.float64)
        leaf_free = subtree_sums(members,
                                 pooled_free) if leaves.size else np.zeros((0, free.shape[1]))
        if tree.pooled:  # Kueue checks no selector on a pooled leaf
            feasible = leader_feasible = None
        else:  # one node per leaf: its predicates
            feasible = subtree_sums(members, feasible) > 0
            if leader_feasible is not None:
                leader_feasible = subtree_sums(members, leader_feasible) > 0
    else:
        leaves = H + np.arange(free.shape[0], dtype=np.int64)
        leaf_free = free
    st.pc[leaves] = fit_in(leaf_free, req.request, feasible)
    st.pcl[leaves] = st.pc[leaves]
    if req.leader_request is not None:
        hosts = fit_in(leaf_free, req.leader_request, leader_feasible) > 0
        st.lc[leaves] = hosts
        beside = fit_in(leaf_free - req.leader_request, req.request, feasible)
        st.pcl[leaves] = np.where(hosts, beside, st.pc[leaves])
    refill(tree, st, req, None)
    if req.preference is not None:
        st.aff = _affinity(tree, req.preference * (req.feasible & usable))
    return st


def _affinity(tree: DomainTree, score: np.ndarray) -> np.ndarray:
    """``affinityScore`` per domain: a hostname leaf's node score (admissible nodes only, as
    the simulator scores only feasible nodes), a parent's the sum of its children's; pooled
    leaves are never scored by Kueue (no node is looked at)."""
    if tree.pooled:
        return np.zeros(len(tree.level), dtype=np.int64)
    return np.concatenate([subtree_sums(tree.problem.topology.members, score),
                           score]).astype(np.int64)


def refill(tree: DomainTree, st: DomainState, req: CountRequest, mask: np.ndarray | None) -> None:
    """Kueue's ``fillInCountsHelper``: slice counts of the leaves, then every parent bottom-up
    (only the masked domains when ``mask`` is given)."""
    leaves = tree.leaves if mask is None else tree.leaves[mask[tree.leaves]]
    at_slice = leaves[tree.level[leaves] == req.slice_level]
    below = leaves[tree.level[leaves] != req.slice_level]
    st.sc[at_slice], st.scl[at_slice] = (st.pc[at_slice] // req.slice_size,
                                         st.pcl[at_slice] // req.slice_size)
    st.sc[below] = st.scl[below] = 0
    leader = req.leader_request is not None
    for t, (kids, parents) in tree.edges.items():
        if mask is not None:
            keep = mask[parents]
            kids, parents = kids[keep], parents[keep]
        if kids.size:
            unit = _inner_units(tree, kids, req.inner)
            _sum_children(st, kids, parents, leader, t == req.slice_level, req.slice_size, unit)


def _inner_units(tree: DomainTree, kids: np.ndarray, inner: dict[int, int]) -> np.ndarray | None:
    """Per child, the inner slice size its counts are rounded down to (None: no inner layer)."""
    if not inner:
        return None
    unit = np.ones(kids.size, dtype=np.int64)
    for level, size in inner.items():
        unit[tree.level[kids] == level] = size
    return unit


def _sum_children(st: DomainState, kids: np.ndarray, parents: np.ndarray, leader: bool,
                  at_slice: bool, size: int, unit: np.ndarray | None = None) -> None:
    own = np.unique(parents)
    contributes = st.lc[kids] > 0 if leader else np.ones(kids.size, dtype=bool)
    kid_pc, kid_pcl = st.pc[kids], st.pcl[kids]
    if unit is not None:  # only whole inner slices count towards the parent
        kid_pc, kid_pcl = kid_pc // unit * unit, kid_pcl // unit * unit
    pod_penalty = np.full(len(st.pc), NO_PENALTY, dtype=np.int64)
    slice_penalty = pod_penalty.copy()
    np.minimum.at(pod_penalty, parents,
                  np.where(contributes, kid_pc - kid_pcl, NO_PENALTY))
    np.minimum.at(slice_penalty, parents,
                  np.where(contributes, st.sc[kids] - st.scl[kids], NO_PENALTY))
    slices = np.zeros(len(st.pc), dtype=np.int64)
    np.add.at(slices, parents, st.sc[kids])
    st.pc[own] = 0
    np.add.at(st.pc, parents, kid_pc)
    st.lc[own] = 0
    np.maximum.at(st.lc, parents, st.lc[kids])
    hosts = pod_penalty[own] != NO_PENALTY
    st.pcl[own] = np.where(hosts, st.pc[own] - np.where(hosts, pod_penalty[own], 0), 0)
    if at_slice:
        st.sc[own], st.scl[own] = st.pc[own] // size, st.pcl[own] // size
    else:
        st.sc[own] = slices[own]
        st.scl[own] = np.where(hosts, slices[own] - np.where(hosts, slice_penalty[own], 0), 0)


@dataclass
class PodSetRequest(CountRequest):
    """What Kueue places at once: ``count`` worker pods of one shape (plus a group's leader)."""

    count: int = 0
    level: int = 0  # requested level (tier)
    required: bool = False
    unconstrained: bool = False  # Kueue's isUnconstrained: no level, implied or slice-only
    least_free: bool = False  # LeastFreeCapacity (unconstrained in the default "mixed" profile)
    balanced: bool = False  # the TASBalancedPlacement gate
    # multi-layer slices, outermost first: (level, slice size); empty for one layer or none
    layers: list[tuple[int, int]] = field(default_factory=list)

    @property
    def leaders(self) -> int:
        return 0 if self.leader_request is None else 1

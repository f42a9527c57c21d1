"""Kueue's topology domains over the compiled HyperNode tree.

A domain id is a HyperNode index ``h`` (``0 <= h < H``) or a node ``n`` as ``H + n``. Levels are
tiers; nodes are the level below the lowest tier (``bottom - 1``). The lowest level Kueue assigns
at (``lowest``) is:

* the bottom tier when it is ``kubernetes.io/hostname`` (each of its HyperNodes holds one node):
  those HyperNodes are the leaves, their one node's capacity and predicates theirs;
* the bottom tier **pooled** when the instance comes from Kueue and its lowest level is not the
hostname:
  Kueue sums the capacity of a leaf's nodes and never looks inside it (the pods then go to its
  nodes first-fit, see :mod:`toposolve.engines.kueue.placement`);
* the node level otherwise — the usual Kueue setup with the hostname appended as lowest level.

Nodes outside every HyperNode are outside the topology (Kueue's TAS skips nodes without the
level labels), and so are unschedulable nodes (cordoned or NotReady: Kueue's node cache drops
them) and nodes outside the job's node pool (a ResourceFlavor's tree holds only the nodes with
its ``nodeLabels``): a domain with none of its nodes left does not exist. Sort keys are label
paths (HyperNode names split at ``/``), so equal domains are ordered by their label values as
Kueue orders them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.core.problem import Problem
from toposolve.core.topology import subtree_sums


@dataclass
class DomainTree:
    problem: Problem
    pooled: bool  # bottom-tier leaves pool their nodes' capacity, selectors unchecked
    leaf_tier: bool  # the bottom tier holds the leaves (pooled, or one node each); else the nodes
    lowest: int  # lowest level Kueue assigns at
    bottom: int  # lowest HyperNode tier (nodes are level bottom - 1)
    children: list[list[int]]  # per domain id
    level: np.ndarray  # [H + N] tier (bottom - 1 for nodes)
    levels: dict[int, list[int]]  # tier -> domain ids at that level (non-empty domains only)
    top: int  # highest level with domains
    usable: np.ndarray  # [N] bool: nodes in the tree
    leaves: np.ndarray  # domain ids without children: nodes, or pooled bottom-tier HyperNodes
    # parent level -> (children, their parents): the tree's edges, grouped so that a bottom-up
    # pass over ascending levels sees every child before its parent
    edges: dict[int, tuple[np.ndarray, np.ndarray]]

    @property
    def n_hypernodes(self) -> int:
        return len(self.problem.topology.names)

    @cached_property
    def keys(self) -> list[tuple[str, ...]]:
        topo = self.problem.topology
        names = [tuple(name.split("/")) for name in topo.names]
        home = topo.node_home
        return names + [(*names[int(home[n])],
                         topo.node_names[n]) for n in range(self.problem.n_nodes)]

    def level_name(self, level: int) -> str:
        """The level's label key (its tier name), else ``tier <n>``."""
        names = {t: name for name, t in self.problem.topology.tier_name_to_tier.items()}
        return names.get(level,
                         "kubernetes.io/hostname" if level < self.bottom else f"tier {level}")

    def subtree(self, roots: list[int]) -> np.ndarray:
        """[H + N] bool: the domains ``roots`` and everything below them."""
        mask = np.zeros(len(self.level), dtype=bool)
        mask[roots] = True
        for t in sorted(self.edges, reverse=True):
            kids, parents = self.edges[t]
            mask[kids] |= mask[parents]
        return mask

    @cached_property
    def first_node(self) -> np.ndarray:
        """[H + N] per domain its lowest-indexed usable node (-1: none): a hostname leaf's one
        node, looked up per leaf by every failure's statistics."""
        H = self.n_hypernodes
        members = self.problem.topology.members
        out = np.full(len(self.level), -1, dtype=np.int64)
        out[H:] = np.arange(self.problem.n_nodes)
        for d in range(H):
            row = members.indices[members.indptr[d] : members.indptr[d + 1]]
            row = row[self.usable[row]]
            if row.size:
                out[d] = int(row.min())
        return out

    def nodes_of(self, d: int) -> list[int]:
        """Nodes under domain ``d``."""
        H = self.n_hypernodes
        if d >= H:
            return [d - H]
        members = self.problem.topology.members  # CSR: row d's columns, without slicing a matrix
        return [n for n in members.indices[members.indptr[d] : members.indptr[d + 1]].tolist()
                if self.usable[n]]


def build_tree(problem: Problem, pool: np.ndarray | None = None) -> DomainTree:
    """The domains of the schedulable nodes of ``pool`` (all nodes when None)."""
    topo = problem.topology
    H, N = len(topo.names), problem.n_nodes
    root = topo.root
    tier_name = {t: name for name, t in topo.tier_name_to_tier.items()}
    real = [h for h in range(H) if h != root]
    bottom = min((int(topo.tier[h]) for h in real), default=1)
    tier1 = [h for h in real if int(topo.tier[h]) == bottom]
    single = bool(tier1) and all(int(topo.node_count[h]) == 1 for h in tier1)
    pooled = (
        problem.scheduler == "kueue"
        and bool(tier1)
        and tier_name.get(bottom) != HOSTNAME_LABEL
        and not single
    )
    leaf_tier = pooled or single
    usable = (topo.node_home != root) & problem.schedulable
    if pool is not None:
        usable &= pool
    kept = subtree_sums(topo.members, usable) > 0  # [H] domains with a usable node
    children: list[list[int]] = [[k for k in kids if kept[k]] for kids in topo.children] + [
        [] for _ in range(N)
    ]
    for n in np.flatnonzero(usable).tolist():
        home = int(topo.node_home[n])
        if not (leaf_tier and int(topo.tier[home]) == bottom):
            children[home].append(H + n)
    children[root] = []
    level = np.concatenate([topo.tier.astype(np.int64), np.full(N, bottom - 1, dtype=np.int64)])
    levels: dict[int, list[int]] = {}
    for h in range(H):
        if h != root and kept[h]:
            levels.setdefault(int(topo.tier[h]), []).append(h)
    if not leaf_tier:
        levels[bottom - 1] = [H + n for n in np.flatnonzero(usable).tolist()]
    lowest = bottom if leaf_tier else bottom - 1
    # without any domain (no usable node), the levels still run up to the topology's top
    top = max(
        (t for t, ds in levels.items() if ds),
        default=max((int(topo.tier[h]) for h in real), default=bottom),
    )
    leaves = np.array(
        [d for d, kids in enumerate(children) if not kids and d != root], dtype=np.int64
    )
    edges = _edges(children, level)
    return DomainTree(problem, pooled, leaf_tier, lowest, bottom, children, level, levels, top,
                      usable, leaves, edges)


def _edges(children: list[list[int]], level: np.ndarray) -> dict[int,
                                                                 tuple[np.ndarray, np.ndarray]]:
    by_level: dict[int, tuple[list[int], list[int]]] = {}
    for d, kids in enumerate(children):
        if kids:
            got = by_level.setdefault(int(level[d]), ([], []))
            got[0].extend(kids)
            got[1].extend([d] * len(kids))
    return {
        t: (np.array(k, dtype=np.int64), np.array(p, dtype=np.int64))
        for t, (k, p) in sorted(by_level.items())
    }

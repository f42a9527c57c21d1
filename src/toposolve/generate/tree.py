"""Regular HyperNode trees: leaves of consecutive nodes, fixed fan-out per tier, one top.

A tree is given bottom-up: ``leaf_size`` nodes per leaf HyperNode (tier ``base_tier``, 1 by
default; Volcano also allows 0), then ``fanout[j]`` children per HyperNode of the ``j + 1``-th
tier above, then a single top HyperNode (tier ``top_tier``) over all HyperNodes of the tier below.
The node count is rounded up to whole leaves; a HyperNode at the end
of a tier may have fewer children than its fan-out (the native format's ``count`` remainder).
Nodes are numbered in tree order, so consecutive nodes share their lowest domains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from toposolve.core.limits import MAX_NODES


@dataclass(frozen=True)
class Tree:
    n_nodes: int
    leaf_size: int
    fanout: tuple[int, ...]
    tier_names: tuple[str, ...]  # leaf tier first; the last names the top
    base_tier: int = 1  # the leaves' tier

    @property
    def tiers(self) -> int:
        """How many tiers the tree has (the top included)."""
        return len(self.fanout) + 2

    @property
    def top_tier(self) -> int:
        return self.base_tier + self.tiers - 1

    @property
    def counts(self) -> tuple[int, ...]:
        """HyperNodes per tier, leaf tier first."""
        counts = [self.n_nodes // self.leaf_size]
        for f in self.fanout:
            counts.append(math.ceil(counts[-1] / f))
        return (*counts, 1)

    @property
    def domain_nodes(self) -> tuple[int, ...]:
        """Most nodes a HyperNode of each tier holds, leaf tier first."""
        sizes = [self.leaf_size]
        for f in self.fanout:
            sizes.append(sizes[-1] * f)
        return (*sizes, self.n_nodes)

    @property
    def hypernode_count(self) -> int:
        return sum(self.counts)

    def tightest_tier(self, nodes: int) -> int:
        """The lowest tier whose HyperNodes can hold ``nodes`` nodes."""
        for tier, size in enumerate(self.domain_nodes, start=self.base_tier):
            if size >= nodes:
                return tier
        return self.top_tier

    def domain_size(self, tier: int) -> int:
        """Most nodes a HyperNode of ``tier`` holds."""
        return self.domain_nodes[tier - self.base_tier]

    def domain_of(self, tier: int) -> np.ndarray:
        """Index (within its tier) of the tier-``tier`` HyperNode holding each node."""
        node = np.arange(self.n_nodes)
        if tier == self.top_tier:
            return np.zeros(self.n_nodes, dtype=np.int64)
        return node // self.domain_size(tier)

    def name_pattern(self, tier: int) -> str:
        k = tier - self.base_tier
        name = self.tier_names[k]
        if tier == self.top_tier:
            return name
        width = max(2, len(str(self.counts[k] - 1)))
        return f"{name}-{{i:0{width}d}}"

    def levels(self) -> list[dict[str, Any]]:
        """The native ``topology.levels`` of this tree (top-down)."""
        counts = self.counts
        top = self.top_tier
        levels: list[dict[str, Any]] = [{"tier": top, "name": self.name_pattern(top), "count": 1}]
        parents = 1
        for tier in range(top - 1, self.base_tier - 1, -1):
            k = tier - self.base_tier
            count = counts[k]
            per = count if tier == top - 1 else self.fanout[k]
            level: dict[str, Any] = {"tier": tier, "name": self.name_pattern(tier), "per": per}
            if count != parents * per:
                level["count"] = count
            if tier == self.base_tier:
                level["nodes"] = self.leaf_size
            levels.append(level)
            parents = count
        return levels

    def topology(self) -> dict[str, Any]:
        return {"tierNames": dict(enumerate(self.tier_names, start=self.base_tier)),
                "levels": self.levels()}


def regular_tree(nodes: int, leaf_size: int, fanout: tuple[int, ...],
                 tier_names: tuple[str, ...] | None = None, *, base_tier: int = 1) -> Tree:
    """A tree over ``nodes`` rounded up to whole leaves; default tier names ``tier1``…, ``top``."""
    n_nodes = math.ceil(nodes / leaf_size) * leaf_size
    if n_nodes > MAX_NODES:
        raise ValueError(
            f"the tree would have {n_nodes:,} nodes, more than the limit {MAX_NODES:,}")
    tiers = len(fanout) + 2
    names = tier_names or tuple(f"tier{t}" for t in range(1, tiers)) + ("top",)
    if len(names) != tiers:
        raise ValueError(f"{len(names)} tier names for {tiers} tiers")
    return Tree(n_nodes, leaf_size, tuple(fanout), tuple(names), base_tier)


@dataclass(frozen=True)
class TierSizes:
    """The largest domain of each tier of any tree (irregular ones too): what
    :func:`~toposolve.generate.jobs.pending_jobs` needs to pick a job's tight tier."""

    largest: tuple[int, ...]  # most nodes under one HyperNode, lowest tier first
    base_tier: int = 1

    @property
    def top_tier(self) -> int:
        return self.base_tier + len(self.largest) - 1

    def tightest_tier(self, nodes: int) -> int:
        """The lowest tier one of whose HyperNodes holds ``nodes`` nodes (the top otherwise)."""
        return next(
            (t for t, size in enumerate(self.largest, start=self.base_tier) if size >= nodes),
            self.top_tier)

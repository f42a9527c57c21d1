"""Defrag targets no move admitted, remembered until the cluster changes near them
(``--defrag …,retry=changed``).

Every node carries the stamp of the last change on it (a pod bound, evicted, moved, finished, or
the node failing or returning). A target a defrag call did not admit is remembered with its
candidate domains' nodes and the stamp of that call; while no node of those domains changed
since, offering it again would ask the same question of the same neighbourhood, and the call is
skipped. Rationale and measurement: ``docs/defrag.md``, "Over time".
"""

from __future__ import annotations

import numpy as np


class VainTargets:
    """Per-node change stamps and the targets remembered as vain (by job key)."""

    def __init__(self, n_nodes: int) -> None:
        self.stamp = 0
        self.node_stamp = np.zeros(n_nodes, dtype=np.int64)
        self.vain: dict[str, tuple[np.ndarray, int]] = {}

    def touch(self, nodes: np.ndarray | list[int]) -> None:
        """Something changed on ``nodes`` (node indices; negative ones are ignored)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        nodes = nodes[nodes >= 0]
        if len(nodes):
            self.stamp += 1
            self.node_stamp[nodes] = self.stamp

    def remember(self, key: str, region: np.ndarray) -> None:
        """Target ``key`` was offered in vain; ``region`` [N] bool marks its candidate nodes."""
        self.vain[key] = (np.flatnonzero(region), self.stamp)

    def unchanged(self, key: str) -> bool:
        """Whether ``key`` was offered in vain and nothing changed near it since (a changed
        target is forgotten)."""
        entry = self.vain.get(key)
        if entry is None:
            return False
        nodes, at = entry
        if (self.node_stamp[nodes] > at).any():
            del self.vain[key]
            return False
        return True

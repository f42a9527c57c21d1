"""Mutable cluster state for the greedy engine: node idle, HyperNode used, undo log.

Dry runs place pods, score the result and roll back with :meth:`ClusterState.undo_to`, the way
Volcano's ``Statement.Discard`` does, without copying the arrays.
"""

from __future__ import annotations

import numpy as np

from ...problem import Problem


def ancestor_table(parent: np.ndarray) -> np.ndarray:
    """[H, D] ancestors of each HyperNode (itself first), padded with -1."""
    chains = []
    for h in range(len(parent)):
        chain = [h]
        while parent[chain[-1]] >= 0:
            chain.append(int(parent[chain[-1]]))
        chains.append(chain)
    depth = max(len(c) for c in chains)
    table = np.full((len(parent), depth), -1, dtype=np.int64)
    for h, chain in enumerate(chains):
        table[h, : len(chain)] = chain
    return table


class ClusterState:
    """Idle resources per node and used resources per HyperNode, with an undo log."""

    def __init__(self, problem: Problem, node_rank: np.ndarray, hypernode_rank: np.ndarray) -> None:
        topo = problem.topology
        self.problem = problem
        self.topology = topo
        self.node_rank = node_rank  # tie-break rank of each node (lower wins)
        self.hypernode_rank = hypernode_rank
        self.idle = problem.allocatable - problem.used
        self.members = topo.members.astype(np.int64).tocsr()
        self.hn_alloc = np.asarray(self.members @ problem.allocatable)
        self.hn_used = np.asarray(self.members @ problem.used)
        self.hn_ancestors = ancestor_table(topo.parent)
        self.node_chain = self.hn_ancestors[topo.node_home]  # [N, D]
        self.leaf = topo.node_at_tier[:, 0] if topo.max_tier >= 1 else np.full(problem.n_nodes, -1)
        # per group: node -> pods of that group on the node (running and placed)
        self.group_nodes: list[dict[int, int]] = [dict(r) for r in problem.group_running]
        self.queue_used: dict[str, np.ndarray] = {}
        for g, running in enumerate(problem.group_running):
            q = problem.jobs[int(problem.group_job[g])].queue
            total = sum(running.values())
            if total:
                self._queue_add(q, total * problem.group_request[g])
        self.log: list[tuple[int, int, int]] = []

    def _queue_add(self, queue: str, amount: np.ndarray) -> None:
        cur = self.queue_used.get(queue)
        self.queue_used[queue] = amount.copy() if cur is None else cur + amount

    # ---- placement -------------------------------------------------------------------------
    def place(self, group: int, node: int, count: int) -> None:
        if count <= 0:
            return
        amount = count * self.problem.group_request[group]
        self.idle[node] -= amount
        chain = self.node_chain[node]
        self.hn_used[chain[chain >= 0]] += amount
        nodes = self.group_nodes[group]
        nodes[node] = nodes.get(node, 0) + count
        self._queue_add(self.problem.jobs[int(self.problem.group_job[group])].queue, amount)
        self.log.append((group, node, count))

    def mark(self) -> int:
        return len(self.log)

    def undo_to(self, mark: int) -> list[tuple[int, int, int]]:
        """Roll back every placement after ``mark``; return them (oldest first)."""
        undone = self.log[mark:]
        for group, node, count in reversed(undone):
            amount = count * self.problem.group_request[group]
            self.idle[node] += amount
            chain = self.node_chain[node]
            self.hn_used[chain[chain >= 0]] -= amount
            nodes = self.group_nodes[group]
            nodes[node] -= count
            if not nodes[node]:
                del nodes[node]
            q = self.problem.jobs[int(self.problem.group_job[group])].queue
            self.queue_used[q] = self.queue_used[q] - amount
        del self.log[mark:]
        return undone

    def replay(self, placements: list[tuple[int, int, int]]) -> None:
        for group, node, count in placements:
            self.place(group, node, count)

    # ---- queries ---------------------------------------------------------------------------
    def fit_counts(self, group: int) -> np.ndarray:
        """[N] how many more pods of ``group`` each node can take (predicates included)."""
        problem = self.problem
        req = problem.group_request[group]
        need = req > 0
        feasible = problem.group_feasible[group]
        if not need.any():
            return np.where(feasible, np.iinfo(np.int64).max // 4, 0)
        fit = (np.maximum(self.idle[:, need], 0) // req[need]).min(axis=1)
        return np.where(feasible, fit, 0)

    def queue_room(self, group: int) -> int:
        """Pods of ``group`` its queue's capability still admits (a large number if uncapped)."""
        problem = self.problem
        queue_name = problem.jobs[int(problem.group_job[group])].queue
        queue = next((q for q in problem.instance.queues if q.name == queue_name), None)
        if queue is None or not queue.capability:
            return 1 << 40
        used = self.queue_used.get(queue_name, np.zeros(len(problem.resources), dtype=np.int64))
        req = problem.group_request[group]
        room = 1 << 40
        for r, cap in queue.capability.items():
            i = problem.resource_index.get(r)
            if i is None or req[i] <= 0:
                continue
            room = min(room, max(0, (cap - int(used[i])) // int(req[i])))
        return room

    def hypernode_capacity(self, fit: np.ndarray) -> np.ndarray:
        """[H] pods that fit in each HyperNode given per-node fit counts."""
        return np.asarray(self.members @ np.minimum(fit, 1 << 40)).ravel()

    def subtree_mask(self, root: int) -> np.ndarray:
        """[H] True for ``root`` and every HyperNode below it."""
        return (self.hn_ancestors == root).any(axis=1)

    def tasks_in(self, groups: list[int]) -> np.ndarray:
        """[N] pods of ``groups`` on each node (running and placed so far)."""
        out = np.zeros(self.problem.n_nodes, dtype=np.int64)
        for g in groups:
            for n, c in self.group_nodes[g].items():
                out[n] += c
        return out

    def nodes_of(self, groups: list[int]) -> list[int]:
        return sorted({n for g in groups for n, c in self.group_nodes[g].items() if c > 0})

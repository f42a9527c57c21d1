"""Mutable cluster state for the greedy engine: node idle, HyperNode used, undo log.

Dry runs place pods, score the result and roll back with :meth:`ClusterState.undo_to`, the way
Volcano's ``Statement.Discard`` does, without copying the arrays. Placements are logged in
batches (one group on many nodes) so a fill costs a few numpy operations, not one per node.
Queries can be scoped to the nodes of one HyperNode, which keeps dry runs local.

Evictions (the preemption/reclaim pass) go through the same log as :class:`Eviction` entries:
they unpack like a placement with negative counts and carry the evicted pods' names, so marks,
:meth:`ClusterState.undo_to` and :meth:`ClusterState.replay` work across both.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from toposolve.core.limits import UNLIMITED
from toposolve.core.problem import Problem
from toposolve.core.topology import subtree_sums
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.common.devices import DeviceRoom
from toposolve.engines.common.queues import capability_items

Batch = tuple[int, np.ndarray, np.ndarray]  # (group, nodes, counts)


class Eviction(tuple):
    """A logged eviction: unpacks as ``(group, nodes, counts)`` with negative counts, like a
    placement batch, and names the evicted pods in ``pods``."""

    pods: tuple[str, ...]

    def __new__(cls, group: int, nodes: np.ndarray, counts: np.ndarray, pods: tuple[str, ...]):
        self = super().__new__(cls, (group, nodes, counts))
        self.pods = tuple(pods)
        return self


class FreedDevices(NamedTuple):
    """The device room a logged eviction freed: ``held[k]`` ([D] thousandths) on ``nodes[k]``,
    one row per evicted pod."""

    nodes: np.ndarray
    held: np.ndarray


class ClusterState:
    """Idle resources per node and used resources per HyperNode, with an undo log."""

    def __init__(self, problem: Problem, node_rank: np.ndarray, hypernode_rank: np.ndarray) -> None:
        topo = problem.topology
        self.problem = problem
        self.topology = topo
        self.node_rank = node_rank  # tie-break rank of each node (lower wins)
        self.hypernode_rank = hypernode_rank
        self.idle = problem.allocatable - problem.used
        self.members = topo.member_counts
        # HyperNode totals in float64, as Volcano's Resource is: int64 milli-bytes of memory
        # summed over thousands of nodes would overflow
        self.hn_alloc = subtree_sums(self.members, problem.allocatable.astype(float))
        self.hn_used = subtree_sums(self.members, problem.used.astype(float))
        self.hn_ancestors = topo.ancestor_table
        self.node_chain = self.hn_ancestors[topo.node_home]  # [N, D]
        self.leaf = topo.node_leaf
        self.queue_of_group = [problem.jobs[j].queue for j in problem.group_job.tolist()]
        self.queues = problem.queues
        # per group: node -> pods of that group on the node (running and placed)
        self.group_nodes: list[dict[int, int]] = [dict(r) for r in problem.group_running]
        self.queue_used: dict[str, np.ndarray] = problem.queue_usage()
        # what each queue's running pods still hold: before the plan, less the pods evicted
        # (placements never count): the allocation reclaim judges a victim queue by
        self.queue_held: dict[str, np.ndarray] = problem.queue_usage()
        self.log: list[Batch] = []
        # per-device sharing: free device room, and per log entry the devices its pods took
        # (one list of per-pod tuples per node of the batch) or, for an eviction, freed
        self.devices = DeviceRoom(problem) if problem.has_devices else None
        self.device_log: list[list[list[tuple[int, ...]]] | FreedDevices] = []
        self.subtree = lru_cache(maxsize=None)(self._subtree)

    def _queue_add(self, queue: str, amount: np.ndarray) -> None:
        amount = amount.astype(float)  # totals over many pods overflow int64 milli-bytes
        cur = self.queue_used.get(queue)
        self.queue_used[queue] = amount if cur is None else cur + amount

    # ---- placement -------------------------------------------------------------------------
    def _apply(self, group: int, nodes: np.ndarray, counts: np.ndarray, sign: int,
               eviction: bool = False) -> None:
        req = self.problem.group_request[group]
        amounts = sign * counts[:, None] * req[None, :]
        self.take_room(nodes, amounts)
        per_node = self.group_nodes[group]
        for n, c in zip(nodes.tolist(), counts.tolist(), strict=True):
            left = per_node.get(n, 0) + sign * c
            if left:
                per_node[n] = left
            else:
                per_node.pop(n, None)
        total = amounts.astype(float).sum(axis=0)
        self._queue_add(self.queue_of_group[group], total)
        if eviction:
            self.queue_held[self.queue_of_group[group]] += total

    def take_room(self, nodes: np.ndarray, amounts: np.ndarray) -> None:
        """Take ``amounts[i]`` (negative: give back) from the idle room of ``nodes[i]`` and from
        their HyperNodes, logging nothing: placements go through :meth:`place`; the eviction
        pass also hides room freed for other jobs this way (:mod:`.evict.room`)."""
        np.add.at(self.idle, nodes, -amounts)
        chains = self.node_chain[nodes]
        valid = chains >= 0
        per = np.repeat(amounts, valid.sum(axis=1), axis=0)
        np.add.at(self.hn_used, chains[valid], per.astype(float))

    def place(self, group: int, nodes, counts) -> None:
        """Place ``counts[i]`` pods of ``group`` on ``nodes[i]`` (scalars allowed)."""
        nodes = np.atleast_1d(np.asarray(nodes, dtype=np.int64))
        counts = np.atleast_1d(np.asarray(counts, dtype=np.int64))
        keep = counts > 0
        if not keep.any():
            return
        nodes, counts = nodes[keep], counts[keep]
        self._apply(group, nodes, counts, +1)
        self.log.append((group, nodes, counts))
        if self.devices is not None:
            self.device_log.append([self.devices.take(group, n, c) for n, c in
                                    zip(nodes.tolist(), counts.tolist(), strict=True)])

    def evict(self, pod_names) -> None:
        """Take running pods (full names ``ns/pod``) off their nodes: node idle, HyperNode used,
        queue usage and the group's per-node counts go back down. Logged as one
        :class:`Eviction` per group, so :meth:`undo_to` puts the pods back."""
        problem = self.problem
        in_force = set(self.evicted_pods())
        per_group: dict[int, list[str]] = {}
        for name in dict.fromkeys(pod_names):
            if name not in problem.running_pods or name in in_force:
                raise ValueError(f"cannot evict {name!r}: it is not running")
            per_group.setdefault(problem.pod_group[name], []).append(name)
        for group in sorted(per_group):
            pods = per_group[group]
            per_node: dict[int, int] = {}
            for name in pods:
                n = problem.running_pods[name]
                per_node[n] = per_node.get(n, 0) + 1
            nodes = np.array(sorted(per_node), dtype=np.int64)
            counts = -np.array([per_node[n] for n in nodes.tolist()], dtype=np.int64)
            self._record(Eviction(group, nodes, counts, tuple(pods)))

    def _record(self, batch: Eviction) -> None:
        group, nodes, counts = batch
        self._apply(group, nodes, counts, +1, eviction=True)
        self.log.append(batch)
        if self.devices is not None:  # the evicted pods' devices are free again
            where = np.array([self.problem.running_pods[p] for p in batch.pods], dtype=np.int64)
            freed = FreedDevices(where, self.devices.held_by(list(batch.pods)))
            self.devices.release(freed.nodes, freed.held)
            self.device_log.append(freed)

    def evicted_pods(self, since: int = 0) -> list[str]:
        """Names of the pods evicted after log position ``since`` and not undone, in order."""
        return [p for b in self.log[since:] if isinstance(b, Eviction) for p in b.pods]

    def mark(self) -> int:
        return len(self.log)

    def undo_to(self, mark: int) -> list[Batch]:
        """Roll back every placement after ``mark``; return them (oldest first)."""
        undone = self.log[mark:]
        for batch in reversed(undone):
            group, nodes, counts = batch
            self._apply(group, nodes, counts, -1, eviction=isinstance(batch, Eviction))
        if self.devices is not None:
            for (group, nodes, _), picks in zip(undone, self.device_log[mark:], strict=True):
                if isinstance(picks, FreedDevices):
                    self.devices.release(picks.nodes, -picks.held)
                    continue
                for n, taken in zip(nodes.tolist(), picks, strict=True):
                    self.devices.give_back(group, n, taken)
            del self.device_log[mark:]
        del self.log[mark:]
        return undone

    def replay(self, placements: list[Batch]) -> None:
        """Apply batches returned by :meth:`undo_to` again (evictions included)."""
        for batch in placements:
            if isinstance(batch, Eviction):
                self._record(batch)
            else:
                group, nodes, counts = batch
                self.place(group, nodes, counts)

    def placed_pods(self, since: int = 0) -> int:
        """New pods placed after log position ``since`` (evictions are not counted)."""
        return int(sum(int(b[2].sum()) for b in self.log[since:] if not isinstance(b, Eviction)))

    # ---- queries ---------------------------------------------------------------------------
    def nodes_in(self, h: int) -> np.ndarray:
        """Real nodes under HyperNode ``h`` (ascending)."""
        return self.problem.nodes_in(h)

    def _subtree(self, root: int) -> np.ndarray:
        """HyperNodes at or below ``root``, ascending."""
        return np.flatnonzero((self.hn_ancestors == root).any(axis=1))

    def fit_counts(self, group: int, nodes: np.ndarray | None = None) -> np.ndarray:
        """[N] more pods of ``group`` each node can take (predicates included); with ``nodes``,
        only those are computed and the rest are 0."""
        problem = self.problem
        req = problem.group_request[group]
        if nodes is None:
            nodes = np.arange(problem.n_nodes)
        out = np.zeros(problem.n_nodes, dtype=np.int64)
        out[nodes] = fit_in(self.idle[nodes], req, problem.group_feasible[group][nodes])
        if self.devices is not None:
            out[nodes] = np.minimum(out[nodes], self.devices.fit_counts(group, nodes))
        return out

    def placed_devices(self) -> list[tuple[int, int, list[tuple[int, ...]]]]:
        """(group, node, devices of each pod) of every placement in the log, oldest first."""
        if self.devices is None:
            return []
        out = []
        for (group, nodes, _), picks in zip(self.log, self.device_log, strict=True):
            if not isinstance(picks, FreedDevices):
                out += [(group, n, taken) for n, taken in zip(nodes.tolist(), picks, strict=True)]
        return out

    def queue_room(self, group: int) -> int:
        """Pods of ``group`` its queue's capability still admits (a large number if uncapped)."""
        problem = self.problem
        queue_name = self.queue_of_group[group]
        queue = self.queues.get(queue_name)
        if queue is None or not queue.capability:
            return UNLIMITED
        used = self.queue_used.get(queue_name, np.zeros(len(problem.resources)))
        req = problem.group_request[group]
        room = UNLIMITED
        for i, cap in capability_items(problem, queue):
            if req[i] <= 0:
                continue
            room = min(room, max(0, (cap - int(used[i])) // int(req[i])))
        return room

    def per_hypernode(self, node_values: np.ndarray,
                      hypernodes: np.ndarray | None = None) -> np.ndarray:
        """Sum of ``node_values`` under each HyperNode (all, or just ``hypernodes``)."""
        if hypernodes is None:
            return subtree_sums(self.members, node_values)
        nz = np.flatnonzero(node_values)
        out = np.zeros(len(self.topology.names), dtype=np.int64)
        if nz.size:
            chains = self.node_chain[nz]
            valid = chains >= 0
            np.add.at(out, chains[valid],
                      np.repeat(np.minimum(node_values[nz], UNLIMITED), valid.sum(axis=1)))
        return out[hypernodes]

    def tasks_in(self, groups: list[int]) -> np.ndarray:
        """[N] pods of ``groups`` on each node (running and placed so far)."""
        out = np.zeros(self.problem.n_nodes, dtype=np.int64)
        for g in groups:
            for n, c in self.group_nodes[g].items():
                out[n] += c
        return out

    def group_count(self, g: int) -> int:
        """Pods of group ``g`` running or placed so far (on absent nodes included)."""
        return sum(self.group_nodes[g].values()) + self.problem.group_running_absent[g]

    def nodes_of(self, groups: list[int]) -> list[int]:
        return sorted({n for g in groups for n, c in self.group_nodes[g].items() if c > 0})

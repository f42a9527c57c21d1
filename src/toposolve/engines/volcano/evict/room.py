"""Who may take the room an eviction frees (the justified-eviction rule, ``docs/eviction.md``).

The room idle before the plan is anyone's: the allocate pass, which runs first, binds into it.
The room freed by evicting pods of job ``v`` is only for jobs allowed to evict ``v`` — the
preemptor that evicted it, or a later one with the same right. The pass keeps, per node and
victim job, the freed room no preemptor has taken yet; while it searches for a preemptor, the
room of victims it may not evict is hidden from the cluster state, and after a success the
room its pods took is charged to its own victims. Those charges are a witness that the plan
meets the rule (a feasible transport of requests to room, which the checker looks for too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.volcano.state import ClusterState


class FreedRoom:
    """Freed room not taken yet: node -> victim job -> amount per resource (and per device of
    the node, with per-device sharing)."""

    def __init__(self, problem: Problem, state: ClusterState) -> None:
        self.problem = problem
        self.state = state
        self.pools: dict[int, dict[int, np.ndarray]] = {}

    def add(self, pods: list[str]) -> None:
        """Record the room freed by evicting ``pods`` (with per-device sharing, the devices'
        thousandths after the resources: each device is room of its own)."""
        problem = self.problem
        devices = self.state.devices
        held = devices.held_by(pods) if devices is not None else np.zeros((len(pods), 0),
                                                                          dtype=np.int64)
        for pod, device_row in zip(pods, held, strict=True):
            g = problem.pod_group[pod]
            pool = self.pools.setdefault(problem.running_pods[pod], {})
            v = int(problem.group_job[g])
            pool[v] = pool.get(v, 0) + np.concatenate([problem.group_request[g], device_row])

    def _room(self, n: int) -> np.ndarray:
        """Node ``n``'s idle room now: resources, then its devices' free thousandths."""
        devices = self.state.devices
        if devices is None:
            return self.state.idle[n]
        return np.concatenate([self.state.idle[n], devices.free[n]])

    def _take(self, nodes: np.ndarray, amounts: np.ndarray) -> None:
        """Take ``amounts`` (resources, then devices) from the state's room of ``nodes``."""
        width = len(self.problem.resources)
        self.state.take_room(nodes, amounts[:, :width])
        if self.state.devices is not None:
            self.state.devices.release(nodes, -amounts[:, width:])

    @contextmanager
    def hidden_from(self, may_take: Callable[[int], bool]) -> Iterator[None]:
        """While the block runs, the state shows no room of victims ``may_take`` refuses."""
        nodes, amounts = [], []
        for n, pool in sorted(self.pools.items()):
            hide = sum((room for v, room in pool.items() if not may_take(v)),
                       start=np.zeros_like(self._room(n)))
            if hide.any():
                nodes.append(n)
                amounts.append(hide)
        if not nodes:
            yield
            return
        where, how_much = np.array(nodes, dtype=np.int64), np.array(amounts, dtype=np.int64)
        self._take(where, how_much)
        try:
            yield
        finally:
            self._take(where, -how_much)

    def settle(self, may_take: Callable[[int], bool]) -> None:
        """Charge the room taken since the last call: on each node, what the pools hold beyond
        the node's idle room comes out of the pools ``may_take`` accepts first (the preemptor
        just placed drew only on those), then out of the others (a deficit the node had before
        the plan, which any freed room pays). Devices are charged as resources of their own."""
        for n, pool in self.pools.items():
            excess = np.maximum(sum(pool.values()) - self._room(n), 0)
            if not excess.any():
                continue
            order = sorted(pool, key=lambda v: (not may_take(v), v))
            for v in order:
                paid = np.minimum(pool[v], excess)
                pool[v] = pool[v] - paid
                excess = excess - paid

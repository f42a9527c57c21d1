"""Per-device room: how many pods of a device shape fit on a node, and which devices they take.

The one device rule of the engines (docs/formats.md, "Per-device GPU sharing"), Volcano's
``gpushare`` allocation: a pod taking ``milli`` of ``count`` devices takes the ``count``
lowest-index devices that still have ``milli`` free (first fit); whole-device pods
(``milli`` = 1000) so take the lowest free devices. KAI's ``gpupack`` rule (``PACK``) takes the
most-used devices that fit first (docs/kai-fidelity.md, "GPU sharing"). The pick of one pod
(``pick_devices`` and the rules) is ``core/device_pick.py``, shared with the readers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.assignment import Assignment
from toposolve.core.device_pick import DEVICE_RULES, FIRST_FIT, PACK, pick_devices
from toposolve.core.instance import DEVICE_MILLI
from toposolve.core.limits import UNLIMITED
from toposolve.core.problem import Problem
from toposolve.engines.common.capacity import Capacity, fit_in

__all__ = ["DEVICE_RULES", "FIRST_FIT", "PACK", "DeviceCapacity", "DeviceRoom",
           "DeviceSnapshot", "capacity_for", "device_fit", "pick_devices"]


def device_fit(free: np.ndarray, milli: int, count: int, rule: str = FIRST_FIT) -> np.ndarray:
    """How many pods of one shape fit in each row of ``free``, taking devices by ``rule``.

    Parameters
    ----------
    free
        [rows, D] free thousandths of each device.
    milli, count
        The shape; ``count`` 0 takes no device (every row: ``UNLIMITED``).
    rule
        As in :func:`pick_devices` (it only matters for shared pods of several devices).

    Returns
    -------
    numpy.ndarray
        [rows] int64 pod counts.
    """
    rows = free.shape[0]
    if count == 0:
        return np.full(rows, UNLIMITED, dtype=np.int64)
    per_device = np.maximum(free, 0) // milli
    if count == 1:
        return per_device.sum(axis=1).astype(np.int64)
    if milli == DEVICE_MILLI:  # whole devices: lowest free ones, count at a time
        return (per_device.sum(axis=1) // count).astype(np.int64)
    out = np.zeros(rows, dtype=np.int64)
    for r in np.flatnonzero(per_device.sum(axis=1) >= count):  # rare: shared multi-device pods
        room = free[r].copy()
        while (picked := pick_devices(room, milli, count, rule)) is not None:
            room[list(picked)] -= milli
            out[r] += 1
    return out


class DeviceRoom:
    """Free thousandths per node and device ([N, D]) of a problem with per-device sharing;
    pods take devices by ``rule`` (:func:`pick_devices`)."""

    def __init__(self, problem: Problem, rule: str = FIRST_FIT) -> None:
        self.problem = problem
        self.rule = rule
        self.free = DEVICE_MILLI - problem.device_used

    def shape(self, group: int) -> tuple[int, int]:
        return self.problem.device_shape(group)

    def fit_counts(self, group: int, nodes: np.ndarray) -> np.ndarray:
        """[len(nodes)] pods of ``group`` the devices of ``nodes`` still hold."""
        return device_fit(self.free[nodes], *self.shape(group), self.rule)

    def take(self, group: int, node: int, count: int) -> list[tuple[int, ...]]:
        """Place ``count`` pods of ``group`` on ``node``: their devices, one tuple per pod."""
        milli, devices = self.shape(group)
        if devices == 0:
            return []
        picks = []
        for _ in range(count):
            picked = pick_devices(self.free[node], milli, devices, self.rule)
            if picked is None:
                raise ValueError(f"pod of group {group} does not fit the devices of node {node}")
            self.free[node, list(picked)] -= milli
            picks.append(picked)
        return picks

    def give_back(self, group: int, node: int, picks: list[tuple[int, ...]]) -> None:
        """Undo :meth:`take`."""
        milli = self.shape(group)[0]
        for picked in picks:
            self.free[node, list(picked)] += milli

    def held_by(self, pods: list[str]) -> np.ndarray:
        """[len(pods), D] thousandths of each device of its node each running pod holds
        (``Problem.running_device_use``): what evicting it frees."""
        out = np.zeros((len(pods), self.free.shape[1]), dtype=np.int64)
        for k, pod in enumerate(pods):
            for device, milli in self.problem.running_device_use.get(pod, {}).items():
                out[k, device] = milli
        return out

    def release(self, nodes: np.ndarray, held: np.ndarray) -> None:
        """Free ``held[k]`` on the devices of ``nodes[k]`` (negative: take it again)."""
        np.add.at(self.free, nodes, held)


@dataclass(frozen=True)
class DeviceSnapshot:
    """Saved free resources, free devices and device log of a :class:`DeviceCapacity`."""

    free: np.ndarray
    devices: np.ndarray
    picks: dict[tuple[int, int], list[tuple[int, ...]]]

    def copy(self) -> DeviceSnapshot:
        return DeviceSnapshot(self.free.copy(), self.devices.copy(),
                              {key: list(v) for key, v in self.picks.items()})


class DeviceCapacity(Capacity):
    """:class:`~toposolve.engines.common.capacity.Capacity` that also places pods on devices.

    ``take`` takes the pods' devices too and logs them per (group, node); ``snapshot`` /
    ``restore`` cover the devices and the log, so an engine's rollbacks stay exact.
    """

    def __init__(self, problem: Problem, rule: str = FIRST_FIT) -> None:
        super().__init__(problem)
        self.room = DeviceRoom(problem, rule)
        self.picks: dict[tuple[int, int], list[tuple[int, ...]]] = {}

    def fit_counts_of(self, group: int, nodes: np.ndarray) -> np.ndarray:
        """[len(nodes)] pods of ``group`` the free resources and devices of ``nodes`` hold."""
        pooled = fit_in(self.free[nodes], self.problem.group_request[group],
                        self.problem.group_feasible[group, nodes])
        return np.minimum(pooled, self.room.fit_counts(group, nodes))

    def take(self, group: int, node: int, count: int) -> None:
        super().take(group, node, count)
        picks = self.room.take(group, node, count)
        if picks:
            self.picks.setdefault((group, node), []).extend(picks)

    def add_devices_to(self, assignment: Assignment) -> Assignment:
        """Record in ``assignment`` the devices the placed pods took (by group, then node);
        ``assignment`` itself."""
        for (g, n), picks in sorted(self.picks.items()):
            assignment.add_devices(g, n, picks)
        return assignment

    def snapshot(self) -> DeviceSnapshot:
        return DeviceSnapshot(self.free, self.room.free, self.picks).copy()

    def restore(self, saved: DeviceSnapshot) -> None:
        self.free, self.room.free, self.picks = saved.free, saved.devices, saved.picks


def capacity_for(problem: Problem, rule: str = FIRST_FIT) -> Capacity:
    """The engines' capacity: :class:`DeviceCapacity` when ``problem`` shares devices."""
    return DeviceCapacity(problem, rule) if problem.has_devices else Capacity(problem)

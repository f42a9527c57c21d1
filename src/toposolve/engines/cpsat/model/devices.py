"""Per-device GPU sharing in the exact model: which devices of a node the new pods take.

Rules and rationale: ``docs/cpsat-formulation.md``, section 10. A node with devices that the
model has split out (``scope.split_nodes``) has ``y[g, n, d]``: the pods of group ``g`` on its
device ``d``. Other nodes' pods are packed onto devices after the solve (:func:`pack_node`);
a node whose pods do not pack is split, with ``y``, in the next refinement round.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.assignment import Assignment
from toposolve.core.instance import DEVICE_MILLI
from toposolve.core.problem import Problem
from toposolve.engines.common.devices import DeviceRoom, pick_devices
from toposolve.engines.cpsat.model.classes import Candidates


class DeviceModel:
    """The ``y`` variables and per-device constraints of one model (``problem.has_devices``).

    Per device-using group and allowed node: Σ_d y = count·x (a pod takes ``count`` devices,
    at most one share of each: y ≤ x when count > 1); per device: Σ_g milli·y ≤ its free
    thousandths. Devices of one node with the same free room are interchangeable: their
    loads are non-increasing in device order (symmetry breaking, kept by the hint).

    ``freed`` (with evictions): node -> device -> ``(thousandths, pod evicted)`` of the
    evictable pods there; the free room then counts them as held and gives each back when
    its pod is evicted, and devices are interchangeable only if they hold the same such pods."""

    def __init__(self, model: cp_model.CpModel, problem: Problem, cands: Candidates,
                 x: dict[int, list[cp_model.IntVar]],
                 freed: Callable[[int], dict[int, list[tuple[int, cp_model.IntVar]]]] | None = None
                 ) -> None:
        self.problem = problem
        self.freed = freed or _nothing_freed
        self.cands = cands
        used = problem.device_used if cands.scope.device_used is None else cands.scope.device_used
        self.free = DEVICE_MILLI - used  # [N, D]
        # (group, node) -> [(device, variable)]
        self.y: dict[tuple[int, int], list[tuple[int, cp_model.IntVar]]] = {}
        self.caps: dict[int, int] = {}  # variable index -> upper bound
        self.modelled: set[int] = set()  # nodes with y variables
        for g in sorted(x):
            milli, count = problem.device_shape(g)
            if count == 0:
                continue
            for c, var, ub in zip(cands.allowed[g].tolist(), x[g], cands.ub[g].tolist(),
                                  strict=True):
                nodes = cands.classes.nodes[c]
                if len(nodes) == 1 and int(nodes[0]) in cands.scope.split_nodes:
                    self.modelled.add(int(nodes[0]))
                    self._add_pod_count(model, g, int(nodes[0]), var, int(ub), milli, count)
        self._add_device_room(model)

    def _add_pod_count(self, model, g: int, n: int, x, ub: int, milli: int, count: int) -> None:
        """``y[g, n, d]`` for the devices with room for one share, Σ_d y = count·x."""
        per = []
        for d in np.flatnonzero(self.free[n] >= milli).tolist():
            cap = min(ub, int(self.free[n, d]) // milli)
            y = model.new_int_var(0, cap, f"dev_{g}_{n}_{d}")
            if count > 1 and cap > 1:
                model.add(y <= x)  # one share of a device per pod
            per.append((d, y))
            self.caps[y.index] = cap
        model.add(sum(y for _, y in per) == count * x)
        self.y[(g, n)] = per

    def _loads(self) -> dict[int, dict[int, list[tuple[int, cp_model.IntVar, int]]]]:
        """node -> device -> [(milli, variable, upper bound)]."""
        out: dict[int, dict[int, list[tuple[int, cp_model.IntVar, int]]]] = {}
        for (g, n), per in self.y.items():
            milli = self.problem.device_shape(g)[0]
            for d, y in per:
                ub = self.caps[y.index]
                out.setdefault(n, {}).setdefault(d, []).append((milli, y, ub))
        return out

    def _add_device_room(self, model) -> None:
        for n, per_device in sorted(self._loads().items()):
            freed = self.freed(n)
            for d, terms in sorted(per_device.items()):
                kept = freed.get(d, [])
                if kept:  # room = free without the evictable pods − those kept
                    model.add(sum(m * y for m, y, _ in terms) - sum(u * b for u, b in kept)
                              <= int(self.free[n, d]) - sum(u for u, _ in kept))
                elif sum(m * ub for m, _, ub in terms) > self.free[n, d]:
                    model.add(sum(m * y for m, y, _ in terms) <= int(self.free[n, d]))
            ordered = sorted(per_device)
            same = self.signatures(n)
            for a, b in zip(ordered, ordered[1:], strict=False):
                if same[a] == same[b]:  # interchangeable devices
                    model.add(sum(m * y for m, y, _ in per_device[a])
                              >= sum(m * y for m, y, _ in per_device[b]))

    def picks(self, solution: list[int], counts: dict[int, dict[int, int]]
              ) -> tuple[dict[int, dict[int, list[tuple[int, ...]]]], list[int]]:
        """group -> node -> the devices of each new pod (``y`` on modelled nodes, packed on
        the others), from a full solution vector and its node ``counts``; and the nodes whose
        pods do not pack."""
        out: dict[int, dict[int, list[tuple[int, ...]]]] = {}
        for (g, n), per in sorted(self.y.items()):
            taken = {d: solution[y.index] for d, y in per if solution[y.index] > 0}
            if taken:
                out.setdefault(g, {})[n] = split_pods(taken, self.problem.device_shape(g)[1])
        per_node: dict[int, dict[int, int]] = {}
        for g, nodes in counts.items():
            if self.problem.device_shape(g)[1] == 0:
                continue
            for n, c in nodes.items():
                if c > 0 and n not in self.modelled:
                    per_node.setdefault(n, {})[g] = c
        failed = []
        for n, groups in sorted(per_node.items()):
            packed = pack_node(self.problem, self.free[n], groups)
            if packed is None:
                failed.append(n)
                continue
            for g, pods in packed.items():
                out.setdefault(g, {})[n] = pods
        return out, failed

    def hint_values(self, assignment: Assignment,
                    node_map: dict[int, int]) -> dict[int, int] | None:
        """Values of every ``y`` for ``assignment`` (its device picks, first fit where it has
        none), nodes moved by ``node_map`` (twin relabelling) and interchangeable devices
        reordered by load; None when its pods do not fit the devices."""
        picks = plan_picks(self.problem, assignment)
        if picks is None:
            return None
        per_node: dict[int, dict[int, dict[int, int]]] = {}  # node -> group -> device -> pods
        for g, nodes in picks.items():
            for n, pods in nodes.items():
                target = node_map.get(n, n)
                row = per_node.setdefault(target, {}).setdefault(g, {})
                for picked in pods:
                    for d in picked:
                        row[d] = row.get(d, 0) + 1
        values = {y.index: 0 for per in self.y.values() for _, y in per}
        for n, groups in per_node.items():
            move = self._canonical(n, groups)
            for g, row in groups.items():
                if n not in self.modelled:
                    continue  # packed after the solve, as the plan's own devices
                ys = dict(self.y.get((g, n), []))
                for d, cnt in row.items():
                    y = ys.get(move[d])
                    if y is None:
                        return None
                    values[y.index] = cnt
        return values

    def signatures(self, n: int) -> list[tuple]:
        """Per device of node ``n``: its free room and the evictable pods it holds; devices of
        equal signature are interchangeable."""
        freed = self.freed(n)
        return [(int(self.free[n, d]), tuple((u, b.index) for u, b in freed.get(d, [])))
                for d in range(self.free.shape[1])]

    def _canonical(self, n: int, groups: dict[int, dict[int, int]]) -> dict[int, int]:
        """Device -> device: among interchangeable devices (:meth:`signatures`), loads
        non-increasing in order."""
        load = np.zeros(self.free.shape[1], dtype=np.int64)
        for g, row in groups.items():
            for d, cnt in row.items():
                load[d] += cnt * self.problem.device_shape(g)[0]
        move: dict[int, int] = {}
        signature = self.signatures(n)
        for key in sorted(set(signature)):
            same = [d for d, s in enumerate(signature) if s == key]
            ranked = sorted(same, key=lambda d: (-int(load[d]), d))
            move.update({d: slot for d, slot in zip(ranked, same, strict=True)})
        return move


def split_pods(taken: dict[int, int], count: int) -> list[tuple[int, ...]]:
    """Pods of ``count`` devices each from per-device pod counts (no device more than once per
    pod): each pod takes the ``count`` devices with the most pods left (ties: lowest index)."""
    left = dict(taken)
    pods = sum(left.values()) // count
    out = []
    for _ in range(pods):
        chosen = sorted(sorted(left, key=lambda d: (-left[d], d))[:count])
        for d in chosen:
            left[d] -= 1
            if not left[d]:
                del left[d]
        out.append(tuple(chosen))
    return out


def pack_node(problem: Problem, free: np.ndarray, groups: dict[int, int]
              ) -> dict[int, list[tuple[int, ...]]] | None:
    """Devices for ``groups`` (group -> pods) on one node of ``free`` [D] thousandths: largest
    share first (then group index), each pod by the engines' rule
    (:func:`~toposolve.engines.common.devices.pick_devices`); None when one does not fit."""
    room = free.copy()
    out: dict[int, list[tuple[int, ...]]] = {}
    for g in sorted(groups, key=lambda g: (-int(problem.group_device_milli[g]), g)):
        milli, count = problem.device_shape(g)
        for _ in range(groups[g]):
            picked = pick_devices(room, milli, count)
            if picked is None:
                return None
            room[list(picked)] -= milli
            out.setdefault(g, []).append(picked)
    return out


def plan_picks(problem: Problem, assignment: Assignment
               ) -> dict[int, dict[int, list[tuple[int, ...]]]] | None:
    """group -> node -> devices of each new pod: ``assignment``'s own picks, and first fit
    (:class:`~toposolve.engines.common.devices.DeviceRoom`, groups then nodes ascending) for
    placements it gives none, on the devices its evictions leave; None when they do not fit."""
    room = DeviceRoom(problem)
    evicted = sorted(p for p in set(assignment.evicted) if p in problem.running_pods)
    room.release(np.array([problem.running_pods[p] for p in evicted], dtype=np.int64),
                 room.held_by(evicted))
    out: dict[int, dict[int, list[tuple[int, ...]]]] = {}
    missing = []
    for g in sorted(assignment.counts):
        if problem.device_shape(g)[1] == 0:
            continue
        for n, c in sorted(assignment.counts[g].items()):
            given = assignment.devices.get(g, {}).get(n, [])
            if c > 0 and len(given) == c:
                out.setdefault(g, {})[n] = list(given)
                milli = problem.device_shape(g)[0]
                np.subtract.at(room.free[n], [d for p in given for d in p], milli)
            elif c > 0:
                missing.append((g, n, c))
    if (room.free < 0).any():
        return None
    for g, n, c in missing:
        try:
            out.setdefault(g, {})[n] = room.take(g, n, c)
        except ValueError:
            return None
    return out


def devices_after(problem: Problem, assignment: Assignment) -> np.ndarray | None:
    """[N, D] thousandths of each device held once ``assignment``'s pods run, its evicted pods
    still counted (their room is the preemptors', as the pooled ``used`` of the reasons keeps
    it); None without per-device sharing, or when its pods do not fit the devices."""
    if not problem.has_devices:
        return None
    picks = plan_picks(problem, assignment)
    if picks is None:
        return None
    used = problem.device_used.copy()
    for g, nodes in picks.items():
        for n, pods in nodes.items():
            np.add.at(used[n], [d for p in pods for d in p], problem.device_shape(g)[0])
    return used


def _nothing_freed(n: int) -> dict[int, list[tuple[int, cp_model.IntVar]]]:
    """No evictions: no device room comes back."""
    return {}

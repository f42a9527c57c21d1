"""FGD's baseline score plugins and FGD itself, per device, vectorised over nodes.

Each policy scores every feasible node with the integer score its simulator plugin returns
(``pkg/simulator/plugin``); the node with the highest score wins and a tie goes to the node of
lowest ``rank`` (the simulator prefixes node names with a random permutation and the vendored
``selectHost`` keeps the smallest name among equal scores). Devices: a whole-GPU pod always
takes the lowest-index free devices (``AllocateExclusiveGpuId``); a shared pod takes the
fullest device it fits on, the first of equals (``gpusel best``, the artifact's default for
BestFit and GpuPacking), a random one it fits on (Random, ``gpusel random``) or the device
whose use raises fragmentation least (FGD).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from toposolve.policy.fgd_measure import TargetWorkload, device_parts
from toposolve.sim.fgd.frag import frag_after_share, node_frag
from toposolve.sim.fgd.state import MILLI, Pods, State, first_free_devices

MAX_SCORE = 100
MAX_SPEC_CPU = 128_000  # gpushareutils.MaxSpecCpu
MAX_SPEC_GPU = 8_000  # gpushareutils.MaxSpecGpu


class Policy(Protocol):
    """Chooses a node and devices for pod ``i`` among the feasible ``nodes`` (indices)."""

    def choose(self, state: State, pods: Pods, i: int,
               nodes: np.ndarray) -> tuple[int, tuple[int, ...]]: ...


def is_shared(pods: Pods, i: int) -> bool:
    """A pod that takes part of one device."""
    return int(pods.count[i]) == 1 and int(pods.milli[i]) < MILLI


def best_fit_device(left: np.ndarray, milli: int) -> int:
    """The device with the least free milli-GPUs that still fits ``milli`` (first of equals)."""
    room = np.where(left >= milli, left, np.iinfo(np.int64).max)
    return int(np.argmin(room))


def devices_for(state: State, pods: Pods, i: int, node: int) -> tuple[int, ...]:
    """``gpusel best``: best-fit device for a shared pod, lowest free devices otherwise."""
    if is_shared(pods, i):
        return (best_fit_device(state.gpu_left[node], int(pods.milli[i])),)
    return first_free_devices(state.gpu_left[node], int(pods.count[i]))


def pick(score: np.ndarray, nodes: np.ndarray, rank: np.ndarray) -> int:
    """The highest-scoring node; among equals the one of lowest rank."""
    best = nodes[score == score.max()]
    return int(best[np.argmin(rank[best])])


class RandomPolicy:
    """``RandomScore``: a uniformly random feasible node; a random device the pod fits on."""

    def __init__(self, rank: np.ndarray, rng: np.random.Generator) -> None:
        self.rng = rng

    def choose(self, state, pods, i, nodes):
        node = int(nodes[self.rng.integers(len(nodes))])
        if is_shared(pods, i):
            fits = np.flatnonzero(state.gpu_left[node] >= pods.milli[i])
            return node, (int(fits[self.rng.integers(len(fits))]),)
        return node, first_free_devices(state.gpu_left[node], int(pods.count[i]))


class BestFitPolicy:
    """``BestFitScore``: least CPU and GPU left after placing (each normalised, weight ½)."""

    def __init__(self, rank: np.ndarray, rng: np.random.Generator) -> None:
        self.rank = rank

    def choose(self, state, pods, i, nodes):
        cpu = (state.cpu_left[nodes] - pods.cpu[i]) / MAX_SPEC_CPU * 0.5
        gpu = (state.gpu_left[nodes].sum(axis=1) - pods.gpu_milli[i]) / MAX_SPEC_GPU * 0.5
        score = np.trunc((1.0 - (cpu + gpu)) * MAX_SCORE)
        node = pick(score, nodes, self.rank)
        return node, devices_for(state, pods, i, node)


def packing_score(left: np.ndarray, gpus: np.ndarray, milli: int, count: int) -> np.ndarray:
    """``GpuPackingScore`` of ``K`` nodes (``left`` is ``K × D``) for a GPU pod.

    Highest when the pod only uses partly used devices (the fuller the better), then when it
    opens few free devices of a used node, lowest on an untouched node.
    """
    full = (left >= MILLI).sum(axis=1)
    ordered = np.sort(left, axis=1)  # the simulator's ascending walk (values only)
    fit = ordered >= milli
    used = fit & (np.cumsum(fit, axis=1) <= count)
    opened = (used & (ordered >= MILLI)).sum(axis=1)
    free_pct = np.where(used, ordered * 100 // MILLI, 0).sum(axis=1)
    score = np.maximum(MAX_SCORE - free_pct // 10, MAX_SCORE // 2)
    score = np.where(opened > 0, np.maximum(MAX_SCORE // 2 - opened, MAX_SCORE // 3), score)
    return np.where(full == gpus, np.maximum(MAX_SCORE // 3 - full, full), score)


class GpuPackingPolicy:
    """``GpuPackingScore``; a CPU-only pod scores 0 everywhere (so the lowest-rank node)."""

    def __init__(self, rank: np.ndarray, rng: np.random.Generator) -> None:
        self.rank = rank

    def choose(self, state, pods, i, nodes):
        if int(pods.count[i]) == 0:
            score = np.zeros(len(nodes), dtype=np.int64)
        else:
            score = packing_score(state.gpu_left[nodes], state.nodes.gpus[nodes],
                                  int(pods.milli[i]), int(pods.count[i]))
        node = pick(score, nodes, self.rank)
        return node, devices_for(state, pods, i, node)


def frag_score(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """FGD's node score: ``int(sigmoid((before − after) / 1000) × 100)``."""
    return np.trunc(1.0 / (1.0 + np.exp(-(before - after) / 1000.0)) * MAX_SCORE)


class FGDPolicy:
    """``FGDScore``: the node and device whose use raises the node's fragmentation least.

    Scores are cached per pod shape and node, and recomputed only for the nodes that changed
    since (``State.version``); the current fragmentation of every node is kept up to date the
    same way.
    """

    def __init__(self, rank: np.ndarray, rng: np.random.Generator, tp: TargetWorkload) -> None:
        self.rank, self.tp = rank, tp
        self.seen: np.ndarray | None = None
        self.cache: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _refresh(self, state: State) -> None:
        if self.seen is None:
            n = len(state.version)
            self.seen = np.full(n, -1, dtype=np.int64)
            self.nfit = np.zeros((n, len(self.tp.weight)), dtype=np.int64)
            self.small = np.zeros_like(self.nfit)
            self.frag = np.zeros(n)
        changed = np.flatnonzero(self.seen != state.version)
        if len(changed):
            left = state.gpu_left[changed]
            self.nfit[changed], self.small[changed] = device_parts(left, self.tp.milli)
            self.frag[changed] = node_frag(state.cpu_left[changed], left,
                                           state.nodes.model[changed], self.tp)
            self.seen[changed] = state.version[changed]

    def _scores(self, state: State, pods: Pods, i: int,
                nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Score and (shared pods) device of each node in ``nodes``, for pod ``i``."""
        cpu, milli, count = int(pods.cpu[i]), int(pods.milli[i]), int(pods.count[i])
        left, model = state.gpu_left[nodes], state.nodes.model[nodes]
        if is_shared(pods, i):
            after = frag_after_share(
                self.nfit[nodes], self.small[nodes], left.sum(axis=1).astype(np.float64),
                state.cpu_left[nodes], left, self.tp.access.T[model], cpu, milli, self.tp)
            score = np.where(left >= milli, frag_score(self.frag[nodes, None], after), -np.inf)
            device = np.argmax(score, axis=1)  # the first of the best devices
            return score[np.arange(len(nodes)), device], device
        if count:
            free = left >= MILLI
            left = left - np.where(free & (np.cumsum(free, axis=1) <= count), milli, 0)
        after = node_frag(state.cpu_left[nodes] - cpu, left, model, self.tp)
        return frag_score(self.frag[nodes], after), np.zeros(len(nodes), dtype=np.int64)

    def node_scores(self, state: State, pods: Pods, i: int,
                    nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """FGD's score of each node in ``nodes`` for pod ``i``, and (shared pods) the device it
        would take there; from the cache where the node has not changed."""
        self._refresh(state)
        key = (int(pods.cpu[i]), int(pods.milli[i]), int(pods.count[i]),
               pods.access[i].tobytes())
        if key not in self.cache:
            n = len(state.version)
            self.cache[key] = (np.full(n, -1, dtype=np.int64), np.zeros(n),
                               np.zeros(n, dtype=np.int64))
        stamp, score, device = self.cache[key]
        stale = nodes[stamp[nodes] != state.version[nodes]]
        if len(stale):
            score[stale], device[stale] = self._scores(state, pods, i, stale)
            stamp[stale] = state.version[stale]
        return score[nodes], device[nodes]

    def choose(self, state, pods, i, nodes):
        score, device = self.node_scores(state, pods, i, nodes)
        node = pick(score, nodes, self.rank)
        return node, fgd_devices(state, pods, i, node, int(device[nodes == node][0]))


def fgd_devices(state: State, pods: Pods, i: int, node: int, device: int) -> tuple[int, ...]:
    """Pod ``i``'s devices on ``node``: FGD's ``device`` for a shared pod, else the lowest
    free ones."""
    if is_shared(pods, i):
        return (device,)
    return first_free_devices(state.gpu_left[node], int(pods.count[i]))

"""Trace-driven clusters from the Alibaba GPU trace (``instances/data``, see ATTRIBUTION.md).

Nodes are the trace's openb GPU nodes (or ``nodes`` shapes drawn from them), labelled
``alibaba.com/gpu-model``; the topology (the trace has none) is synthesised: racks of 16–32
nodes per GPU model (tier 1), one pool per model (tier 2), one cluster on top (tier 3). Pending
gangs of ``2**k`` pods take request shapes from the trace's GPU pods (a shared GPU rounded up to
a whole one) until ``load`` is met, with hard, soft or no topology at the gang's tight tier;
``occupancy`` places running gangs first. ``docs/generate.md`` has the exact draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.paths import TRACE_DIR
from toposolve.formats.native.names import compress_names
from toposolve.formats.trace.openb import MODEL_LABEL, NODES_CSV, PODS_CSV, read_trace_csv
from toposolve.generate.common import document
from toposolve.generate.jobs import PRIORITY_CLASSES, PRIORITY_WEIGHTS

DATA_DIR = TRACE_DIR
GPU = "nvidia.com/gpu"
MAX_GANG = 64


@dataclass(frozen=True)
class _Shape:
    cpu_milli: int
    memory_mib: int
    gpus: int


def _read_csv(name: str) -> list[dict[str, str]]:
    return read_trace_csv(DATA_DIR / name)


@lru_cache(maxsize=1)
def trace_nodes() -> tuple[tuple[str, _Shape], ...]:
    try:
        return tuple(
            (row["model"], _Shape(int(row["cpu_milli"]), int(row["memory_mib"]), int(row["gpu"])))
            for row in _read_csv(NODES_CSV)
        )
    except (KeyError, ValueError) as exc:
        raise InputError(f"unreadable row: {exc}", file=str(DATA_DIR / NODES_CSV)) from None


@lru_cache(maxsize=1)
def trace_pods() -> tuple[_Shape, ...]:
    try:
        rows = _read_csv(PODS_CSV)
        # num_gpu ≥ 1; a fractional share (gpu_milli < 1000) has num_gpu 1: one whole GPU
        return tuple(_Shape(int(r["cpu_milli"]), int(r["memory_mib"]),
                            int(r["num_gpu"])) for r in rows if int(r["num_gpu"]) >= 1)
    except (KeyError, ValueError) as exc:
        raise InputError(f"unreadable row: {exc}", file=str(DATA_DIR / PODS_CSV)) from None


def _requests(shape: _Shape) -> dict[str, Any]:
    return {GPU: shape.gpus, "cpu": f"{shape.cpu_milli}m", "memory": f"{shape.memory_mib}Mi"}


@dataclass
class _Cluster:
    """The picked nodes, laid out model by model into racks and pools."""

    models: list[str]
    names: list[str]  # node names, in node-index order
    node_model: list[str]
    groups: list[dict[str, Any]]  # the native document's nodeGroups
    racks: list[list[int]]  # node indices of each rack
    pools: dict[str, list[int]]  # model -> rack indices
    capacity: np.ndarray  # [nodes, (cpu_milli, memory_mib, gpus)]

    def hypernodes(self) -> list[dict[str, Any]]:
        """Racks (tier 1), one pool per model (tier 2), the cluster (tier 3)."""
        out: list[dict[str, Any]] = []
        for model in self.models:
            for j, r in enumerate(self.pools[model]):
                out.append({"name": f"{model.lower()}-rack-{j:02d}", "tier": 1,
                            "nodes": compress_names([self.names[i] for i in self.racks[r]])})
        for model in self.models:
            out.append({"name": f"{model.lower()}-pool", "tier": 2,
                        "children": [f"{model.lower()}-rack-{j:02d}"
                                     for j in range(len(self.pools[model]))]})
        out.append(
            {"name": "cluster", "tier": 3, "children": [f"{m.lower()}-pool" for m in self.models]})
        return out


def _pick_nodes(rng: np.random.Generator, nodes: int | None) -> list[tuple[str, _Shape]]:
    """The trace's nodes (or ``nodes`` draws from them), sorted by model and shape."""
    catalogue = trace_nodes()
    picked = list(catalogue) if nodes is None else [catalogue[i]
                                                    for i in rng.integers(len(catalogue),
                                                        size=nodes)]
    picked.sort(key=lambda ms: (ms[0], -ms[1].gpus, -ms[1].cpu_milli, -ms[1].memory_mib))
    return picked


def _node_groups(prefix: str, model: str, members: list[_Shape]) -> list[dict[str, Any]]:
    """One nodeGroup per run of equal shapes among ``members`` (the nodes of one model)."""
    groups: list[dict[str, Any]] = []
    for k, shape in enumerate(members):
        if k and shape == members[k - 1]:
            groups[-1]["count"] += 1
            continue
        group: dict[str, Any] = {"name": f"{prefix}-{{i:04d}}", "count": 1}
        if k:
            group["start"] = k
        group["allocatable"] = {
            "cpu": f"{shape.cpu_milli}m", "memory": f"{shape.memory_mib}Mi", GPU: shape.gpus,
            "pods": 110,
        }
        group["labels"] = {MODEL_LABEL: model}
        groups.append(group)
    return groups


def _lay_out(rng: np.random.Generator, picked: list[tuple[str, _Shape]]) -> _Cluster:
    """Name the nodes and cut each model's nodes into racks of 16-32 (one draw per rack)."""
    models = sorted({m for m, _ in picked})
    names: list[str] = []
    node_model: list[str] = []
    groups: list[dict[str, Any]] = []
    racks: list[list[int]] = []
    pools: dict[str, list[int]] = {}
    for model in models:
        members = [s for m, s in picked if m == model]
        prefix = model.lower()
        first = len(names)
        names.extend(f"{prefix}-{k:04d}" for k in range(len(members)))
        node_model.extend([model] * len(members))
        groups.extend(_node_groups(prefix, model, members))
        pool = pools.setdefault(model, [])
        k = 0
        while k < len(members):
            size = int(rng.integers(16, 33))
            pool.append(len(racks))
            racks.append(list(range(first + k, first + min(k + size, len(members)))))
            k += size
    capacity = np.array([[s.cpu_milli, s.memory_mib, s.gpus] for _, s in picked], dtype=np.int64)
    return _Cluster(models, names, node_model, groups, racks, pools, capacity)


class _GangDraws:
    """Gang draws over the trace's pod shapes that fit some node, with per-rack fit counts."""

    def __init__(self, rng: np.random.Generator, cluster: _Cluster):
        capacity = cluster.capacity
        self.rng = rng
        self.cluster = cluster
        self.shapes = [
            p for p in trace_pods()
            if np.any(np.all(capacity >= [p.cpu_milli, p.memory_mib, p.gpus], axis=1))
        ]
        if not self.shapes:
            raise ValueError("no trace pod fits any node of this cluster")
        self._rack_fit: dict[_Shape, np.ndarray] = {}

    def rack_fit(self, shape: _Shape) -> np.ndarray:
        """Pods of ``shape`` each rack holds when empty."""
        if shape not in self._rack_fit:
            capacity = self.cluster.capacity
            per_node = np.minimum.reduce([
                capacity[:, 0] // max(shape.cpu_milli, 1),
                capacity[:, 1] // max(shape.memory_mib, 1),
                capacity[:, 2] // shape.gpus,
            ])
            self._rack_fit[shape] = np.array([per_node[r].sum() for r in self.cluster.racks],
                                             dtype=np.int64)
        return self._rack_fit[shape]

    def pool_fit(self, shape: _Shape, model: str) -> int:
        return int(self.rack_fit(shape)[self.cluster.pools[model]].sum())

    def gang(self) -> tuple[_Shape, int]:
        """One shape and ``2**k`` pods (k geometric), capped at MAX_GANG and a quarter of the
        fit."""
        shape = self.shapes[int(self.rng.integers(len(self.shapes)))]
        pods = 2 ** min(int(self.rng.geometric(0.4)) - 1, 6)
        cap = max(1, int(self.rack_fit(shape).sum()) // 4)
        return shape, max(1, min(pods, MAX_GANG, cap))

    def tight_tier(self, shape: _Shape, pods: int, models: list[str]) -> int:
        """Rack (1) if one eligible rack holds the gang, else pool (2) if one pool does, else 3."""
        eligible_racks = [r for m in models for r in self.cluster.pools[m]]
        if self.rack_fit(shape)[eligible_racks].max() >= pods:
            return 1
        if any(self.pool_fit(shape, m) >= pods for m in models):
            return 2
        return 3


def _first_fit(free: np.ndarray, candidates: list[int], need: np.ndarray,
               pods: int) -> tuple[np.ndarray, list[int]]:
    """``free`` after placing ``pods`` pods of ``need`` first-fit on ``candidates``, and where
    (fewer positions than ``pods`` when they do not fit)."""
    placed: list[int] = []
    trial = free.copy()
    for i in candidates:
        while len(placed) < pods and np.all(trial[i] >= need):
            trial[i] -= need
            placed.append(i)
        if len(placed) == pods:
            break
    return trial, placed


def _running_gangs(rng: np.random.Generator, draws: _GangDraws,
                   occupancy: float) -> list[dict[str, Any]]:
    """Running gangs, first-fit from a random rack on within its pool, until ``occupancy`` of
    the nodes run something (or 50 gangs in all did not fit)."""
    cluster = draws.cluster
    free = cluster.capacity.copy()
    busy = np.zeros(len(cluster.names), dtype=bool)
    jobs: list[dict[str, Any]] = []
    misses = 0
    while busy.mean() < occupancy and misses < 50:
        shape, pods = draws.gang()
        start_rack = int(rng.integers(len(cluster.racks)))
        pool = cluster.pools[cluster.node_model[cluster.racks[start_rack][0]]]
        order = pool[pool.index(start_rack):] + pool[:pool.index(start_rack)]
        candidates = [i for r in order for i in cluster.racks[r]]
        need = np.array([shape.cpu_milli, shape.memory_mib, shape.gpus])
        trial, placed = _first_fit(free, candidates, need, pods)
        if len(placed) < pods:
            misses += 1
            continue
        free[:] = trial
        busy[placed] = True
        jobs.append({"name": f"run-{len(jobs):04d}", "priorityClass": "normal",
                     "tasks": [{"name": "worker", "replicas": pods, "requests": _requests(shape),
                                "running": compress_names([cluster.names[i] for i in placed])}]})
    return jobs


def _pending_gang(rng: np.random.Generator, draws: _GangDraws, name: str, shape: _Shape,
                  pods: int) -> dict[str, Any]:
    """One pending gang: priority, maybe a model nodeSelector, and a constraint at its tight
    tier."""
    models = draws.cluster.models
    job: dict[str, Any] = {"name": name,
                           "priorityClass": PRIORITY_CLASSES[rng.choice(3,
                               p=PRIORITY_WEIGHTS)]["name"]}
    task: dict[str, Any] = {"name": "worker", "replicas": pods, "requests": _requests(shape)}
    eligible_models = models
    if rng.random() < 0.2:
        roomy = [m for m in models if draws.pool_fit(shape, m) >= pods]
        if roomy:
            model = roomy[int(rng.integers(len(roomy)))]
            task["nodeSelector"] = {MODEL_LABEL: model}
            eligible_models = [model]
    tight = draws.tight_tier(shape, pods, eligible_models)
    r = rng.random()
    if r < 0.3 and tight < 3:
        job["networkTopology"] = {"mode": "hard", "highestTierAllowed": tight}
    elif r < 0.6:
        job["networkTopology"] = {"mode": "soft", "highestTierAllowed": tight}
    job["tasks"] = [task]
    return job


def _pending_gangs(rng: np.random.Generator, draws: _GangDraws,
                   target: float) -> list[dict[str, Any]]:
    """Pending gangs until their GPUs reach ``target`` within 3 % (or 200 draws overshot)."""
    jobs: list[dict[str, Any]] = []
    demand, misses = 0, 0
    while demand < target * 0.97 and misses < 200:
        shape, pods = draws.gang()
        if demand + shape.gpus * pods > target * 1.03:
            misses += 1
            continue
        demand += shape.gpus * pods
        jobs.append(_pending_gang(rng, draws, f"job-{len(jobs):04d}", shape, pods))
    return jobs


def alibaba(rng: np.random.Generator, nodes: int | None, load: float, *,
            occupancy: float = 0.0) -> dict[str, Any]:
    """The ``alibaba`` preset's native document (see the module docstring)."""
    cluster = _lay_out(rng, _pick_nodes(rng, nodes))
    total_gpus = int(cluster.capacity[:, 2].sum())
    draws = _GangDraws(rng, cluster)
    doc = document(
        "alibaba",
        f"Alibaba GPU trace: {len(cluster.names)} nodes, {total_gpus} GPUs, {len(cluster.models)} "
        "models"
    )
    doc["nodeGroups"] = cluster.groups
    doc["topology"] = {"tierNames": {1: "rack", 2: "pool", 3: "cluster"},
                       "hyperNodes": cluster.hypernodes()}
    doc["queues"] = [{"name": "default", "weight": 1}]
    doc["priorityClasses"] = [dict(pc) for pc in PRIORITY_CLASSES]
    doc["jobs"] = _running_gangs(rng, draws, occupancy) + _pending_gangs(rng, draws,
        load * total_gpus)
    return doc

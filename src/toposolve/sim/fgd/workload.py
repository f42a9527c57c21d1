"""FGD's openb workload: the trace read per device, shuffled and tuned to a GPU load.

The simulator (``pkg/simulator/core.go``, ``simulator.go``: ``SortClusterPods``,
``TunePodsByNodeTotalResource``) seeds its random source with the tune seed, sorts the pods by
name and shuffles them, then appends copies of uniformly drawn trace pods (drawn from the
name-sorted trace) while ``requested + milli(copy) ≤ ratio × capacity`` — note ``milli`` per
device, not the copy's total — and stops at the first copy that would pass it. The copies are
not shuffled in. Above the target it removes uniformly drawn pods instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from toposolve.core.paths import TRACE_DIR
from toposolve.formats.trace.openb import NODES_CSV, PODS_CSV, read_trace_csv
from toposolve.sim.fgd.state import MILLI, Nodes, Pods


def load_nodes(path: Path | None = None) -> Nodes:
    """The openb GPU nodes (``openb_gpu_nodes.csv``: 1,213 nodes, 6,212 GPUs)."""
    rows = read_trace_csv(path or TRACE_DIR / NODES_CSV)
    models = tuple(sorted({r["model"] for r in rows if r["model"]}))
    index = {m: k for k, m in enumerate(models)}
    return Nodes(
        names=tuple(r["sn"] for r in rows),
        cpu=np.array([int(r["cpu_milli"]) for r in rows], dtype=np.int64),
        mem=np.array([int(r["memory_mib"]) for r in rows], dtype=np.int64),
        gpus=np.array([int(r["gpu"]) for r in rows], dtype=np.int64),
        model=np.array([index.get(r["model"], 0) for r in rows], dtype=np.int64),
        models=models,
    )


def load_pods(models: tuple[str, ...], path: Path | None = None) -> Pods:
    """The openb pods, sorted by name (``openb_pod_default.csv``: 8,152 pods).

    ``gpu_milli`` is per device; a pod with ``num_gpu`` > 1 asks for whole devices (as the
    simulator's ``pod_csv_to_yaml.py`` caps milli at 1000). ``gpu_spec`` (``A|B``) limits the
    models; an unknown model in it matches no node.
    """
    rows = sorted(read_trace_csv(path or TRACE_DIR / PODS_CSV), key=lambda r: r["name"])
    count = np.array([int(r["num_gpu"]) for r in rows], dtype=np.int64)
    milli = np.array([min(int(r["gpu_milli"]), MILLI) for r in rows], dtype=np.int64)
    access = np.ones((len(rows), len(models)), dtype=bool)
    for k, r in enumerate(rows):
        spec = [s for s in r.get("gpu_spec", "").split("|") if s]
        if spec:
            access[k] = [m in spec for m in models]
    return Pods(
        names=tuple(r["name"] for r in rows),
        cpu=np.array([int(r["cpu_milli"]) for r in rows], dtype=np.int64),
        mem=np.array([int(r["memory_mib"]) for r in rows], dtype=np.int64),
        count=count,
        milli=np.where(count > 0, milli, 0),
        access=access,
    )


@dataclass(frozen=True)
class Experiment:
    """One seed's arrivals and node tie-break ranks."""

    pods: Pods  # in arrival order
    rank: np.ndarray  # per node: lower wins a tie (the simulator's random name prefix)
    seed: int


def tune(base: Pods, capacity: int, ratio: float, rng: np.random.Generator) -> Pods:
    """``base`` (already in arrival order) tuned to ``ratio × capacity`` milli-GPUs requested.

    Parameters
    ----------
    base
        The shuffled trace; the copies are drawn from ``base`` sorted by name.
    capacity
        The cluster's milli-GPUs.
    ratio
        FGD's tune ratio (1.3 in the paper); ≤ 0 keeps ``base``.
    rng
        The experiment's random source, after the shuffle.
    """
    target = ratio * capacity
    total = int(base.gpu_milli.sum())
    if ratio <= 0 or total == target:
        return base
    if total > target:
        keep = list(range(len(base)))
        while total > target:
            gone = keep.pop(int(rng.integers(len(keep))))
            total -= int(base.gpu_milli[gone])
        return base.take(np.array(keep, dtype=np.int64))
    by_name = np.argsort(np.array(base.names), kind="stable")
    extra: list[int] = []
    while True:
        k = int(by_name[int(rng.integers(len(base)))])
        if total + int(base.milli[k]) > target:
            break
        total += int(base.gpu_milli[k])
        extra.append(k)
    names = base.names + tuple(f"{base.names[k]}-tuned-{j}" for j, k in enumerate(extra))
    return base.take(np.concatenate([np.arange(len(base)), np.array(extra, dtype=np.int64)]),
                     names)


def experiment(nodes: Nodes, trace: Pods, seed: int, ratio: float = 1.3,
               shuffle: bool = True) -> Experiment:
    """FGD's setting for one seed: shuffle ``trace``, tune it to ``ratio``, rank the nodes.

    Parameters
    ----------
    nodes, trace
        The cluster and the name-sorted trace (:func:`load_nodes`, :func:`load_pods`).
    seed
        FGD's tune seed (42–51 in the paper).
    ratio
        The tune ratio: requested milli-GPUs / the cluster's.
    shuffle
        ``False`` keeps the name order (the simulator without ``--shuffle-pod``).
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(trace)) if shuffle else np.arange(len(trace))
    pods = tune(trace.take(order), nodes.gpu_capacity, ratio, rng)
    return Experiment(pods, rng.permutation(len(nodes.names)), seed)

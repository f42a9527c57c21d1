"""The Alibaba openb trace (``openb_pod_list_default.csv``, 8,152 pods) as a replay trace.

Every pod is used, whatever its phase (as FGD's simulator does). Options of :func:`openb_trace`:
``gpu_sharing`` (``"whole"``: a shared GPU asks for one whole GPU; ``"milli"``: for its
milli-GPUs of the node's pool), ``gangs`` (``"single"`` pod jobs, or ``"window"``: consecutive
identical pods created close together form one gang), ``timing`` (``"trace"`` times, or FGD's
``"sequence"``), ``inflate`` (FGD's workload tuning to a GPU load), ``order`` (``"trace"`` or
``"shuffle"``) and ``qos_priority`` (``LS`` high, ``Burstable``/``Guaranteed`` normal, ``BE``
low). ``gpu_spec`` becomes required node affinity on ``alibaba.com/gpu-model``, the label the
``alibaba`` cluster preset sets. ``docs/formats.md`` gives each choice in full.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    PRIORITY_CLASSES,
    Job,
    LabelRequirement,
    PodConstraints,
    PriorityClass,
)
from toposolve.core.paths import TRACE_DIR
from toposolve.formats.trace.bulk import make_job, make_task
from toposolve.formats.trace.model import Trace, TraceJob

NODES_CSV = "openb_gpu_nodes.csv"
PODS_CSV = "openb_pod_default.csv"
MODEL_LABEL = "alibaba.com/gpu-model"
GPU = "nvidia.com/gpu"
MIB_MILLI = 1024 * 1024 * 1000  # one MiB in milli-units
QOS_CLASS = {"LS": "high", "Burstable": "normal", "Guaranteed": "normal", "BE": "low"}
_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "creation_time",
            "deletion_time")


def read_trace_csv(path: Path) -> list[dict[str, str]]:
    """The rows of one of the Alibaba trace's bundled CSV files.

    Parameters
    ----------
    path
        The file, normally ``TRACE_DIR / NODES_CSV`` or ``TRACE_DIR / PODS_CSV``.

    Returns
    -------
    list of dict
        One mapping of column to text per row.

    Raises
    ------
    InputError
        When the file cannot be read (the bundled data is missing).
    """
    try:
        with path.open(newline="") as f:
            return list(csv.DictReader(f))
    except OSError as exc:
        raise InputError(f"Alibaba trace data missing ({exc.strerror}); restore instances/data",
                         file=str(path)) from None


@lru_cache(maxsize=4)
def _pods(path: str | Path | None) -> list[dict[str, Any]]:
    if path is None:
        rows, source = read_trace_csv(TRACE_DIR / PODS_CSV), PODS_CSV
    else:
        source = str(path)
        try:
            with Path(path).open(newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", file=source) from None
    pods = []
    for line, row in enumerate(rows, start=2):
        missing = [c for c in _COLUMNS if c not in row]
        if missing:
            raise InputError(f"missing column {missing[0]!r}", file=source, field=f"line {line}")
        try:
            pod = {k: int(row[k])
                   for k in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time")}
            pod["end"] = int(row["deletion_time"])
            pod["scheduled"] = int(row["scheduled_time"]) if row.get(
                "scheduled_time") else pod["creation_time"]
        except (TypeError, ValueError):
            raise InputError("expected integers", file=source, obj=f"Pod/{row.get('name')}",
                             field=f"line {line}") from None
        pod.update(name=row["name"].lower(), spec=row.get("gpu_spec") or "", qos=row.get("qos")
                   or "")
        pods.append(pod)
    return pods


def _gpu_milli(pod: dict[str, Any], sharing: str) -> int:
    if pod["num_gpu"] == 0:
        return 0
    if sharing == "milli" and pod["num_gpu"] == 1:
        return min(pod["gpu_milli"], 1000)
    return pod["num_gpu"] * 1000


def _shape(pod: dict[str, Any]) -> tuple:
    return (pod["cpu_milli"], pod["memory_mib"], pod["num_gpu"], pod["gpu_milli"], pod["spec"],
            pod["qos"])


def _gangs(pods: list[dict[str, Any]], mode: str, window: float,
           max_gang: int) -> list[list[dict[str, Any]]]:
    if mode == "single":
        return [[p] for p in pods]
    gangs: list[list[dict[str, Any]]] = []
    for pod in pods:
        last = gangs[-1] if gangs else None
        if (last is not None and _shape(last[0]) == _shape(pod) and len(last) < max_gang
                and pod["creation_time"] - last[0]["creation_time"] <= window):
            last.append(pod)
        else:
            gangs.append([pod])
    return gangs


@cache
def _constraints(spec: str) -> PodConstraints:
    """One shared (never mutated) constraints object per ``gpu_spec``: cycles cache predicates by
    it."""
    if not spec:
        return PodConstraints()
    requirement = LabelRequirement(key=MODEL_LABEL, operator="In", values=spec.split("|"))
    return PodConstraints(affinity_terms=[[requirement]])


def _job(gang: list[dict[str, Any]], name: str, sharing: str, qos_priority: bool) -> Job:
    """The gang as a one-task Volcano job (built directly: the values are ours, not a user's)."""
    pod = gang[0]
    requests = {"cpu": pod["cpu_milli"], "memory": pod["memory_mib"] * MIB_MILLI}
    milli = _gpu_milli(pod, sharing)
    if milli:
        requests[GPU] = milli
    constraints = _constraints(pod["spec"])
    task = make_task(name="worker", replicas=len(gang), requests=requests, constraints=constraints)
    priority = QOS_CLASS.get(pod["qos"]) if qos_priority else None
    return make_job(name=name, min_available=len(gang), priority_class=priority, tasks=[task])


def _tune(units: list[Any], demand: Sequence[int], target: float,
          rng: np.random.Generator) -> list[int]:
    """Indices into ``units`` after FGD's tuning to ``target`` requested milli-GPUs."""
    chosen = list(range(len(units)))
    total = sum(demand)
    while total > target and chosen:
        total -= demand[chosen.pop(int(rng.integers(len(chosen))))]
    while total < target:
        k = int(rng.integers(len(units)))
        if total + demand[k] > target:
            break  # FGD stops at the first draw that would overshoot
        chosen.append(k)
        total += demand[k]
    return chosen


def openb_trace(
    path: str | Path | None = None,
    *,
    gpu_sharing: str = "whole",
    gangs: str = "single",
    gang_window: float = 60.0,
    max_gang: int = 64,
    timing: str = "trace",
    inflate: float | None = None,
    capacity: float | None = None,
    order: str = "trace",
    qos_priority: bool = False,
    seed: int = 0,
) -> Trace:
    """The openb trace (bundled copy when ``path`` is None); see the module docstring.

    ``capacity`` is the cluster's GPUs, needed with ``inflate``.
    """
    for name, value, allowed in (("gpu_sharing", gpu_sharing, ("whole", "milli")),
                                 ("gangs", gangs, ("single", "window")),
                                 ("timing", timing, ("trace", "sequence")),
                                 ("order", order, ("trace", "shuffle"))):
        if value not in allowed:
            raise InputError(f"must be one of {', '.join(allowed)}, not {value!r}",
                             obj="openb trace", field=name)
    if inflate is not None and not capacity:
        raise InputError("inflating needs the cluster's GPU capacity", obj="openb trace",
                         field="capacity")
    rng = np.random.default_rng(seed)
    units = _gangs(_pods(path), gangs, gang_window, max_gang)
    demand = [len(g) * _gpu_milli(g[0], gpu_sharing) for g in units]
    picks = list(range(len(units))) if inflate is None else _tune(units, demand,
                                                                  inflate * capacity * 1000, rng)
    if order == "shuffle":
        picks = [picks[k] for k in rng.permutation(len(picks))]
    jobs: list[TraceJob] = []
    seen: set[int] = set()
    for position, k in enumerate(picks):
        gang = units[k]
        name = gang[0]["name"] if len(gang) == 1 else f"{gang[0]['name']}-x{len(gang)}"
        if k in seen:  # a drawn copy (the first occurrence keeps the trace's name)
            name = f"{name}-tuned-{position}"
        seen.add(k)
        job = _job(gang, name, gpu_sharing, qos_priority)
        if timing == "sequence":
            jobs.append(TraceJob(job, float(position), None))
        else:
            duration = max(max(p["end"] - p["scheduled"], 1) for p in gang)
            jobs.append(TraceJob(job, float(gang[0]["creation_time"]), float(duration)))
    classes = [PriorityClass(**pc) for pc in PRIORITY_CLASSES] if qos_priority else []
    return Trace(jobs, str(path or PODS_CSV), priority_classes=classes).sorted()

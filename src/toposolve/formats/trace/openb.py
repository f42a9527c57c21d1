"""The Alibaba openb trace (``openb_pod_list_default.csv``, 8,152 pods) as a replay trace.

Every pod is used, whatever its phase (as FGD's simulator does). Options of :func:`openb_trace`:
``gpu_sharing`` (``"whole"``: a shared GPU asks for one whole GPU; ``"milli"``: for its
milli-GPUs of the node's pool; ``"device"``: for ``gpu_milli`` of each of ``num_gpu`` devices,
a ``deviceShare``), ``gangs`` (``"single"`` pod jobs, or ``"window"``: consecutive
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
    DeviceShare,
    Job,
    LabelRequirement,
    PodConstraints,
    PriorityClass,
)
from toposolve.core.limits import (
    MAX_BYTES,
    MAX_INTEGER,
    MAX_NAME_LENGTH,
    MAX_PODS_PER_JOB,
    MAX_QUANTITY,
    MAX_SEED,
    MAX_TRACE_JOBS,
    MAX_TRACE_LOAD,
)
from toposolve.core.paths import TRACE_DIR
from toposolve.formats.trace.bulk import make_job, make_task
from toposolve.formats.trace.model import Trace, TraceJob
from toposolve.formats.trace.options import choice, integer, number
from toposolve.formats.trace.rows import gc_paused, name_problem, read_rows, shown

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


_MAX_MIB = MAX_BYTES // 2**20  # memory_mib whose bytes are within MAX_BYTES
_BOUNDS = {"cpu_milli": MAX_QUANTITY * 1000, "memory_mib": _MAX_MIB, "num_gpu": MAX_QUANTITY,
           "gpu_milli": MAX_QUANTITY * 1000, "creation_time": MAX_INTEGER,
           "deletion_time": MAX_INTEGER, "scheduled_time": MAX_INTEGER}


def _number(text: str, column: str, line: int, source: str, obj: str) -> int:
    try:
        value = int(text) if len(text) <= 20 else None  # longer is beyond every bound
    except ValueError:
        value = None
    if value is None or not 0 <= value <= _BOUNDS[column]:
        raise InputError(f"expected an integer in [0, {_BOUNDS[column]:,}], got {text[:40]!r}",
                         file=source, obj=obj, field=f"line {line}: {column}")
    return value


def _pod(cells: list[str], index: dict[str, int], line: int, source: str) -> dict[str, Any]:
    def cell(column: str) -> str:
        k = index.get(column)
        return cells[k].strip() if k is not None and k < len(cells) else ""

    name = cell("name").lower()
    obj = f"Pod/{shown(name)}"
    problem = name_problem(name)
    if problem:
        raise InputError(problem, file=source, obj=obj, field=f"line {line}: name")
    pod: dict[str, Any] = {k: _number(cell(k), k, line, source, obj) for k in _COLUMNS[1:5]}
    pod["creation_time"] = _number(cell("creation_time"), "creation_time", line, source, obj)
    pod["end"] = _number(cell("deletion_time"), "deletion_time", line, source, obj)
    scheduled = cell("scheduled_time")
    pod["scheduled"] = (_number(scheduled, "scheduled_time", line, source, obj) if scheduled
                        else pod["creation_time"])
    pod.update(name=name, spec=cell("gpu_spec"), qos=cell("qos"))
    return pod


@lru_cache(maxsize=4)
def _pods(path: str | Path | None) -> list[dict[str, Any]]:
    """The pods of an openb pod list, each checked; names unique (a replay keys jobs by name)."""
    if path is None:
        path, source = TRACE_DIR / PODS_CSV, PODS_CSV
        if not path.exists():
            raise InputError("Alibaba trace data missing; restore instances/data", file=str(path))
    else:
        source = str(path)
    rows = read_rows(path, source)
    _, header = next(rows, (1, []))
    index = {column.strip(): k for k, column in enumerate(header)}
    missing = [c for c in _COLUMNS if c not in index]
    if missing:
        raise InputError(f"missing column {missing[0]!r}", file=source, field="header")
    pods: list[dict[str, Any]] = []
    first: dict[str, int] = {}  # name -> line
    with gc_paused():
        for line, cells in rows:
            pod = _pod(cells, index, line, source)
            if pod["name"] in first:
                raise InputError(f"duplicate pod name (first on line {first[pod['name']]})",
                                 file=source, obj=f"Pod/{pod['name']}", field=f"line {line}: name")
            first[pod["name"]] = line
            pods.append(pod)
    return pods


def _gpu_milli(pod: dict[str, Any], sharing: str) -> int:
    if pod["num_gpu"] == 0:
        return 0
    if sharing == "milli" and pod["num_gpu"] == 1:
        return min(pod["gpu_milli"], 1000)
    if sharing == "device":
        return pod["num_gpu"] * min(pod["gpu_milli"], 1000)
    return pod["num_gpu"] * 1000


@cache
def _share(milli: int, count: int) -> DeviceShare:
    """One shared (never mutated) share object per shape."""
    return DeviceShare(resource=GPU, milli=milli, count=count)


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
    shared = sharing == "device" and pod["num_gpu"] > 0 and 0 < pod["gpu_milli"] < 1000
    share = _share(pod["gpu_milli"], pod["num_gpu"]) if shared else None
    task = make_task(name="worker", replicas=len(gang), requests=requests, constraints=constraints,
                     device_share=share)
    priority = QOS_CLASS.get(pod["qos"]) if qos_priority else None
    return make_job(name=name, min_available=len(gang), priority_class=priority, tasks=[task])


def _tune(units: list[Any], demand: Sequence[int], target: float,
          rng: np.random.Generator) -> list[int]:
    """Indices into ``units`` after FGD's tuning to ``target`` requested milli-GPUs."""
    chosen = list(range(len(units)))
    total = sum(demand)
    if total < target:
        _check_growth(len(units), total, target)
    while total > target and chosen:
        total -= demand[chosen.pop(int(rng.integers(len(chosen))))]
    while total < target:
        if len(chosen) >= MAX_TRACE_JOBS:
            raise _too_many(target)
        k = int(rng.integers(len(units)))
        if total + demand[k] > target:
            break  # FGD stops at the first draw that would overshoot
        chosen.append(k)
        total += demand[k]
    return chosen


def _check_growth(count: int, total: int, target: float) -> None:
    """Refuse at once an inflation to more jobs than a trace may hold (about, on average)."""
    if not total:
        raise InputError("no pod of the trace asks for a GPU: nothing to inflate",
                         obj="openb trace", field="inflate")
    if count + (target - total) / (total / count) > MAX_TRACE_JOBS:
        raise _too_many(target)


def _too_many(target: float) -> InputError:
    return InputError(f"inflating to {target / 1000:,.0f} GPUs would make more than "
                      f"{MAX_TRACE_JOBS:,} jobs (the limit)", obj="openb trace", field="inflate")


def _check_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options of :func:`openb_trace`, each checked (one line naming it)."""
    obj = "openb trace"
    for name, allowed in (("gpu_sharing", ("whole", "milli", "device")),
                          ("gangs", ("single", "window")), ("timing", ("trace", "sequence")),
                          ("order", ("trace", "shuffle"))):
        choice(options[name], name, obj, allowed)
    checked = dict(options)
    checked["gang_window"] = number(options["gang_window"], "gang_window", obj, 0, MAX_INTEGER)
    checked["max_gang"] = integer(options["max_gang"], "max_gang", obj, 1, MAX_PODS_PER_JOB)
    checked["seed"] = integer(options["seed"], "seed", obj, 0, MAX_SEED)
    if not isinstance(options["qos_priority"], bool):
        raise InputError(f"expected true or false, got {options['qos_priority']!r}"[:200],
                         obj=obj, field="qos_priority")
    if options["inflate"] is not None:
        checked["inflate"] = number(options["inflate"], "inflate", obj, 0, MAX_TRACE_LOAD,
                                    above_low=True)
        if not options["capacity"]:
            raise InputError("inflating needs the cluster's GPU capacity", obj=obj,
                             field="capacity")
        checked["capacity"] = number(options["capacity"], "capacity", obj, 0, MAX_QUANTITY,
                                     above_low=True)
    return checked


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
    o = _check_options(dict(gpu_sharing=gpu_sharing, gangs=gangs, gang_window=gang_window,
                            max_gang=max_gang, timing=timing, inflate=inflate, capacity=capacity,
                            order=order, qos_priority=qos_priority, seed=seed))
    gang_window, max_gang, inflate, capacity, seed = (
        o["gang_window"], o["max_gang"], o["inflate"], o["capacity"], o["seed"])
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
        if len(name) > MAX_NAME_LENGTH:
            raise InputError(f"job name {name[:40]!r}… is longer than {MAX_NAME_LENGTH}",
                             file=str(path or PODS_CSV), obj=f"Pod/{gang[0]['name'][:60]}")
        seen.add(k)
        job = _job(gang, name, gpu_sharing, qos_priority)
        if timing == "sequence":
            jobs.append(TraceJob(job, float(position), None))
        else:
            duration = max(max(p["end"] - p["scheduled"], 1) for p in gang)
            jobs.append(TraceJob(job, float(gang[0]["creation_time"]), float(duration)))
    classes = [PriorityClass(**pc) for pc in PRIORITY_CLASSES] if qos_priority else []
    trace = Trace(jobs, str(path or PODS_CSV), priority_classes=classes)
    trace.check_unique()  # a gang's name (``-x2``, ``-tuned-7``) may be another pod's
    return trace.sorted()

"""Synthetic traces on any cluster: Poisson arrivals of gangs with topology constraints.

* **Sizes**: drawn from a job mix of :mod:`toposolve.generate.jobs` (``mix="superpod"``,
  ``"nvl72"`` or ``"lingjun"``); pods take a whole node's accelerators (the cluster's most
  common accelerator count per node), except some one-pod jobs that take part of one. A pod asks
  for 80 % of its share of that node shape's CPU and memory.
* **Constraints and priorities**: per job, partitioned / hard / soft / none with the
  probabilities ``partitioned``, ``hard``, ``soft`` at the job's *tight* tier (the lowest tier
  one of whose HyperNodes holds it, read from the cluster's real tree — irregular trees too);
  priorities high / normal / low with probabilities 0.15 / 0.6 / 0.25.
* **Durations**: log-normal with median ``duration`` and shape ``sigma``.
* **Arrivals**: a Poisson process whose rate makes the offered load — accelerator-seconds asked
  for per second over the cluster's accelerators — equal ``load``: rate = ``load`` × accelerators
  / mean(accelerators × duration) of the drawn jobs. The first job arrives at 0.

Everything is drawn from ``numpy.random.default_rng(seed)``: same arguments, same trace.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.limits import MAX_SEED, MAX_TRACE_JOBS, MAX_TRACE_LOAD
from toposolve.core.parallelism import is_accelerator
from toposolve.core.topology import build_topology
from toposolve.formats.native.reader import API_VERSION
from toposolve.formats.trace.model import Trace, parse_duration
from toposolve.formats.trace.native import KIND as TRACE_KIND
from toposolve.formats.trace.native import load_trace_documents
from toposolve.formats.trace.options import choice, integer, number
from toposolve.generate.jobs import (
    NVL72_MIX,
    PRIORITY_CLASSES,
    SUPERPOD_MIX,
    ConstraintMix,
    draw_one,
    pending_jobs,
)
from toposolve.generate.lingjun import LINGJUN_MIX
from toposolve.generate.tree import TierSizes

MIXES = {"superpod": SUPERPOD_MIX, "nvl72": NVL72_MIX, "lingjun": LINGJUN_MIX}
SHARE = 0.8  # of a node's CPU and memory per accelerator that a pod asks for
MAX_SIGMA = 10.0  # a log-normal shape beyond this draws durations past any float
OBJ = "synthetic trace"


def _node_shape(cluster: Instance) -> tuple[str, int, int, int]:
    """(accelerator resource, per node, cpu milli, memory milli) of the commonest GPU node."""
    shapes = Counter()
    for node in cluster.nodes:
        acc = [(r, v) for r, v in node.allocatable.items()
               if is_accelerator(r) and v > 0]
        if acc:
            resource, amount = acc[0]
            shapes[(resource, amount // 1000, node.allocatable.get("cpu", 0),
                    node.allocatable.get("memory", 0))] += 1
    if not shapes:
        raise InputError("the cluster has no accelerator nodes to draw a trace for",
                         file=cluster.source, obj=OBJ)
    return shapes.most_common(1)[0][0]


def _tiers(cluster: Instance) -> TierSizes:
    topo = build_topology(cluster.nodes, cluster.hypernodes, source=cluster.source)
    real = [t for t in sorted(set(topo.tier.tolist())) if t < topo.max_tier] or [topo.max_tier]
    largest = tuple(int(topo.node_count[topo.tier == t].max()) for t in real)
    return TierSizes(largest, base_tier=real[0])


def synthetic_trace(
    cluster: Instance,
    *,
    jobs: int = 200,
    load: float = 0.9,
    duration: float | str = "2h",
    sigma: float = 1.0,
    mix: str = "superpod",
    partitioned: float = 0.2,
    hard: float = 0.4,
    soft: float = 0.25,
    seed: int = 0,
) -> Trace:
    """A seeded trace for ``cluster`` (see the module docstring)."""
    choice(mix, "mix", OBJ, tuple(MIXES))
    jobs = integer(jobs, "jobs", OBJ, 1, MAX_TRACE_JOBS)
    load = number(load, "load", OBJ, 0, MAX_TRACE_LOAD, above_low=True)
    sigma = number(sigma, "sigma", OBJ, 0, MAX_SIGMA)
    partitioned, hard, soft = (number(value, name, OBJ, 0, 1) for name, value in (
        ("partitioned", partitioned), ("hard", hard), ("soft", soft)))
    seed = integer(seed, "seed", OBJ, 0, MAX_SEED)
    try:
        median = parse_duration(duration)
    except ValueError as exc:
        raise InputError(str(exc), obj=OBJ, field="duration") from None
    rng = np.random.default_rng(seed)
    resource, full, cpu, memory = _node_shape(cluster)

    def requests(gpus: int) -> dict[str, Any]:
        return {resource: gpus, "cpu": f"{int(cpu * SHARE * gpus / full)}m",
                "memory": f"{int(memory * SHARE * gpus / full) // 1000}"}

    tiers = _tiers(cluster)
    draws = [draw_one(rng, MIXES[mix], full=full,
                      max_pods=max(1, len(cluster.nodes) // 2)) for _ in range(jobs)]
    entries = pending_jobs(rng, draws, tree=tiers, full=full, pod_requests=requests, mix=MIXES[mix],  # type: ignore[arg-type]
                           constraints=ConstraintMix(partitioned, hard, soft))
    with np.errstate(over="ignore"):  # an overflow is refused below, in one line
        durations = np.exp(rng.normal(math.log(max(median, 1e-9)), sigma, size=jobs))
        work = np.array([d.pods * d.gpus for d in draws]) * durations
    capacity = sum(1 for n in cluster.nodes if n.allocatable.get(resource, 0)) * full
    rate = load * capacity / float(work.mean())
    if not 0 < rate < math.inf:  # durations past any float
        raise InputError(f"durations of median {median:g} s and shape {sigma:g} overflow",
                         obj=OBJ, field="duration")
    arrivals = np.concatenate([[0.0], np.cumsum(rng.exponential(1 / rate, size=jobs - 1))])
    for entry, arrival, seconds in zip(entries, arrivals, durations, strict=True):
        entry["arrival"] = round(float(arrival), 3)
        entry["duration"] = round(float(seconds), 3)
    doc = {"apiVersion": API_VERSION, "kind": TRACE_KIND,
           "priorityClasses": [dict(pc) for pc in PRIORITY_CLASSES], "jobs": entries}
    return load_trace_documents([doc], f"<synthetic {mix} jobs={jobs} load={load} seed={seed}>")

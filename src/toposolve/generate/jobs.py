"""Pending gang jobs drawn from a documented size mix, fitted to a GPU demand target.

**Size mix** (:class:`JobMix`): a job's class is drawn by probability, then its pod count from
the class's choices by weight. Pods take a whole node's accelerators, except that a share of
one-pod jobs asks for 1, 2 or 4 (``partial_gpus``). Pod counts are capped at ``max_pods``.

**Demand fitting**: the target band is ``target × (1 ± tolerance)`` GPUs. Without a fixed number
of jobs, jobs are drawn until the total reaches the band (a draw that would overshoot it is
redrawn). With ``n_jobs``, sizes are drawn from the mix truncated at the largest pod count whose
truncated mean demand fits ``target / n_jobs`` (:func:`truncation`); then, while the total is
above the band, a random multi-pod job is halved, and while it is below, a random job that
still fits the band is doubled.

**Constraints**: a job's *tight* tier is the lowest tier whose HyperNodes can hold its nodes.
Per job (probabilities in :class:`ConstraintMix`): *partitioned* (jobs of at least two
partitions: partitions of ``partition_sizes`` pods, hard at the partition's tight tier; the job
hard or soft at its tight tier), *hard* at the tight tier or, one time in three, the tier above,
*soft* at the tight tier, or *none*. A job whose tight tier is the top gets soft or none.
**Priorities**: ``high`` / ``normal`` / ``low`` with probabilities 0.15 / 0.6 / 0.25.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from toposolve.core.instance import PRIORITY_CLASSES
from toposolve.generate.tree import Tree

PRIORITY_WEIGHTS = (0.15, 0.6, 0.25)


@dataclass(frozen=True)
class SizeClass:
    probability: float
    pods: tuple[int, ...]
    weights: tuple[float, ...]


@dataclass(frozen=True)
class JobMix:
    classes: tuple[SizeClass, ...]
    partition_sizes: tuple[int, ...]  # largest first
    partial_share: float = 0.3  # of one-pod jobs, which ask for part of a node
    partial_gpus: tuple[int, ...] = (1, 2, 4)


# DGX-like 8-GPU nodes: many small jobs, a third mid-size, a few large ones
SUPERPOD_MIX = JobMix(
    classes=(
        SizeClass(0.55, (1, 2, 4, 8), (0.4, 0.25, 0.2, 0.15)),
        SizeClass(0.38, (16, 32, 64, 128), (0.4, 0.3, 0.2, 0.1)),
        SizeClass(0.07, (256, 512), (0.7, 0.3)),
    ),
    partition_sizes=(16, 8),
)

# GB200 NVL72: sizes in multiples of an 18-node NVLink rack
NVL72_MIX = JobMix(
    classes=(
        SizeClass(0.55, (1, 2, 4, 9), (0.4, 0.25, 0.2, 0.15)),
        SizeClass(0.38, (18, 36, 72, 144), (0.4, 0.3, 0.2, 0.1)),
        SizeClass(0.07, (288, 576), (0.7, 0.3)),
    ),
    partition_sizes=(18, 9),
)


@dataclass(frozen=True)
class ConstraintMix:
    partitioned: float = 0.2
    hard: float = 0.4
    soft: float = 0.25  # the rest has no network topology


DEFAULT_CONSTRAINTS = ConstraintMix()


@dataclass(frozen=True)
class Draw:
    pods: int
    gpus: int  # per pod


def draw_one(rng: np.random.Generator, mix: JobMix, *, full: int, max_pods: int) -> Draw:
    """One job size from the mix: a class by probability, its pod count by weight."""
    c = mix.classes[rng.choice(len(mix.classes),
                               p=_normalised([k.probability for k in mix.classes]))]
    pods = min(int(rng.choice(c.pods, p=_normalised(c.weights))), max_pods)
    gpus = full
    if pods == 1 and rng.random() < mix.partial_share:
        gpus = int(rng.choice([g for g in mix.partial_gpus if g < full] or [full]))
    return Draw(max(pods, 1), gpus)


def draw_sizes(rng: np.random.Generator, mix: JobMix, *, full: int, target: float, max_pods: int,
               n_jobs: int | None, tolerance: float = 0.03) -> list[Draw]:
    """Job sizes whose total GPUs lie near ``target`` (see the module docstring)."""

    def one() -> Draw:
        return draw_one(rng, mix, full=full, max_pods=max_pods)

    lo, hi = target * (1 - tolerance), target * (1 + tolerance)
    if n_jobs is None:
        draws: list[Draw] = []
        total = 0
        misses = 0
        while total < lo and misses < 200:
            d = one()
            if total + d.pods * d.gpus > hi:
                misses += 1
                continue
            draws.append(d)
            total += d.pods * d.gpus
        return draws

    # fixed count: the mix truncated so that its mean fits the per-job share of the target
    cap = truncation(mix, full, target / max(n_jobs, 1))
    draws = []
    while len(draws) < n_jobs:
        d = one()
        if d.pods <= cap:
            draws.append(d)
    total = sum(d.pods * d.gpus for d in draws)
    while total > hi:
        halvable = [i for i, d in enumerate(draws) if d.pods > 1]
        if not halvable:
            break
        k = int(rng.choice(halvable))
        d = draws[k]
        draws[k] = Draw(math.ceil(d.pods / 2), d.gpus)
        total -= (d.pods - draws[k].pods) * d.gpus
    while total < lo:
        growable = [i for i, d in enumerate(draws) if 2 * d.pods <= max_pods
                    and total + d.pods * d.gpus <= hi]
        if not growable:
            break
        k = int(rng.choice(growable))
        total += draws[k].pods * draws[k].gpus
        draws[k] = Draw(draws[k].pods * 2, draws[k].gpus)
    return draws


def truncation(mix: JobMix, full: int, share: float) -> int:
    """The largest pod count ``c`` such that the mix restricted to sizes ≤ ``c`` has a mean GPU
    demand of at most ``share`` (the smallest size if none does)."""
    sizes = sorted({p for c in mix.classes for p in c.pods})
    partial = [g for g in mix.partial_gpus if g < full] or [full]
    one_pod = (1 - mix.partial_share) * full + mix.partial_share * float(np.mean(partial))
    best = sizes[0]
    for cap in sizes:
        mass = demand = 0.0
        for c in mix.classes:
            w = _normalised(c.weights)
            for pods, weight in zip(c.pods, w, strict=True):
                if pods <= cap:
                    mass += c.probability * weight
                    demand += c.probability * weight * (one_pod if pods == 1 else pods * full)
        if mass and demand / mass <= share:
            best = cap
    return best


def pending_jobs(
    rng: np.random.Generator,
    draws: list[Draw],
    *,
    tree: Tree,
    full: int,
    pod_requests: Callable[[int], dict[str, Any]],
    mix: JobMix,
    constraints: ConstraintMix = DEFAULT_CONSTRAINTS,
    prefix: str = "job",
) -> list[dict[str, Any]]:
    """Native job entries for ``draws``: constraints and priorities drawn per job."""
    width = max(3, len(str(len(draws) - 1)))
    jobs = []
    for k, d in enumerate(draws):
        job: dict[str, Any] = {
            "name": f"{prefix}-{k:0{width}d}",
            "priorityClass": PRIORITY_CLASSES[rng.choice(3, p=PRIORITY_WEIGHTS)]["name"],
        }
        task: dict[str, Any] = {"name": "worker", "replicas": d.pods,
                                "requests": pod_requests(d.gpus)}
        nodes = math.ceil(d.pods * d.gpus / full)
        tight = tree.tightest_tier(nodes)
        r = rng.random()
        psize = next((p for p in mix.partition_sizes if d.pods % p == 0 and d.pods >= 2 * p), None)
        if r < constraints.partitioned and psize is not None:
            ptier = tree.tightest_tier(math.ceil(psize * d.gpus / full))
            task["partition"] = {"partitionSize": psize, "networkTopology": _spec("hard", ptier)}
            job["networkTopology"] = _spec("hard" if rng.random() < 0.5 else "soft",
                                           max(tight, ptier))
        elif tight == tree.top_tier:
            if r < constraints.partitioned + constraints.hard + constraints.soft:
                job["networkTopology"] = _spec("soft", tight)
        elif r < constraints.partitioned + constraints.hard:
            tier = tight if rng.random() < 2 / 3 else min(tight + 1, tree.top_tier)
            job["networkTopology"] = _spec("hard", tier)
        elif r < constraints.partitioned + constraints.hard + constraints.soft:
            job["networkTopology"] = _spec("soft", tight)
        job["tasks"] = [task]
        jobs.append(job)
    return jobs


def with_leaders(jobs: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """LeaderWorkerSet-style jobs: the first ``count`` jobs of at least two pods with a network
    topology and no partitions get a one-pod ``leader`` task of the same pod shape, listed first,
    beside ``pods − 1`` workers (Kueue writes them as a podset group). Demand is unchanged and no
    random number is drawn, so every other job stays as drawn."""
    out = []
    for job in jobs:
        task = job["tasks"][0]
        single = len(job["tasks"]) == 1 and "partition" not in task
        if count and single and "networkTopology" in job and task["replicas"] >= 2:
            leader = {"name": "leader", "replicas": 1, "requests": dict(task["requests"])}
            job = {**job, "tasks": [leader, {**task, "replicas": task["replicas"] - 1}]}
            count -= 1
        out.append(job)
    return out


def _spec(mode: str, tier: int) -> dict[str, Any]:
    return {"mode": mode, "highestTierAllowed": int(tier)}


def _normalised(weights) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return w / w.sum()

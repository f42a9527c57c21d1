"""One replay's figures in a flat mapping (what a sweep table row and the CLI table show).

* ``final_allocation_ratio`` / ``final_arrived_load``: the last timeline sample (0 % allocated
  once every job has ended); ``allocation_at_fgd_point``: the allocation ratio when the arrived
  load first reaches :data:`FGD_POINT` (130 %, FGD's headline figure), None if it never does.
* ``mean_utilisation``: accelerators in use / capacity, averaged over time from the first sample
  to ``end`` (a step function between samples).
* ``wait_*``: queueing delay (first start − arrival) of the jobs that started: mean, p50, p95,
  p99, overall and per priority (``wait_p95_by_priority``); ``jct_*`` the same for completion
  time (end − arrival) of finished jobs.
* ``cycles_cut_short``: engine calls the time limit cut short (any phrase of CP-SAT's
  ``stats.cut_short``); ``cycles_wall_clock``: those stopped by the wall clock rather than their
  deterministic budget — the only cycles whose plan may differ between runs on a loaded machine.
* ``cycle_seconds_*``: time per engine call (compile + engine + checker + apply); ``_after_first``
  leaves the first cycle out (CP-SAT's first cycle sees the whole initial queue).
* ``defrag_*``, ``moved_*``, ``moves_per_day``, ``lost_gpu_hours_moves``: the defrag policy's
  calls and what they moved (:func:`defrag_figures`; 0 without ``--defrag``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

FGD_POINT = 1.3  # arrived load (× the cluster's accelerators) where FGD reads its allocation ratio


def _by_wall(phrase: str) -> bool:
    """A cut-short phrase saying the wall-clock deadline stopped the work
    (engines/cpsat/solve/budget.py:
    a search stopped by the wall clock, or model building past the deadline, noted "(at N s)")."""
    return "wall clock" in phrase or phrase.endswith(" s)")


def _stats(values: list[float], prefix: str) -> dict[str, float | None]:
    if not values:
        return {f"{prefix}_mean": None, f"{prefix}_p50": None, f"{prefix}_p95": None,
                f"{prefix}_p99": None}
    a = np.asarray(values, dtype=float)
    return {
        f"{prefix}_mean": float(a.mean()),
        f"{prefix}_p50": float(np.percentile(a, 50)),
        f"{prefix}_p95": float(np.percentile(a, 95)),
        f"{prefix}_p99": float(np.percentile(a, 99)),
    }


def _time_mean(timeline: list[dict[str, Any]], key: str, end: float) -> float | None:
    if not timeline:
        return None
    times = [s["t"] for s in timeline] + [max(end, timeline[-1]["t"])]
    span = times[-1] - times[0]
    if span <= 0:
        return float(timeline[-1][key])
    return float(sum(s[key] * (times[k + 1] - times[k]) for k, s in enumerate(timeline)) / span)


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def defrag_figures(jobs: list[dict[str, Any]], cycles: list[dict[str, Any]], *,
                   end: float) -> dict[str, Any]:
    """The defrag policy's figures: calls, calls skipped (``retry=changed``), targets admitted,
    job moves (a job moved in two calls counts twice), distinct jobs moved, pods moved, job
    moves per day of replay (``end`` seconds) and the GPU-hours of work the moves threw away."""
    calls = [c["defrag"] for c in cycles if "defrag" in c]
    moved = sum(len(d["moved_jobs"]) for d in calls)
    return {
        "defrag_calls": len(calls),
        "defrag_calls_skipped": sum(1 for c in cycles if "defrag_skipped" in c),
        "defrag_admitted": sum(len(d["admitted"]) for d in calls),
        "defrag_seconds_total": float(sum(d["seconds"] for d in calls)),
        "moved_jobs": moved,
        "moved_jobs_distinct": sum(1 for j in jobs if j.get("moves")),
        "moved_pods": sum(d["moved_pods"] for d in calls),
        "moves_per_day": moved / (end / 86400) if end > 0 else 0.0,
        "lost_gpu_hours_moves": float(sum(j.get("move_lost_gpu_seconds", 0.0)
                                          for j in jobs)) / 3600,
    }


def summarise(jobs: list[dict[str, Any]], timeline: list[dict[str, Any]],
              cycles: list[dict[str, Any]], *, end: float) -> dict[str, Any]:
    statuses = Counter(j["status"] for j in jobs)
    started = [j for j in jobs if j["start"] is not None]
    last = timeline[-1] if timeline else {}
    seconds = [c["seconds"] for c in cycles]
    multi = [j for j in started if j["pods"] > 1]
    out: dict[str, Any] = {
        "jobs": len(jobs),
        "jobs_started": len(started),
        "jobs_done": statuses.get("done", 0),
        "jobs_dropped": statuses.get("dropped", 0),
        "jobs_pending_at_end": statuses.get("pending", 0),
        "end_time": end,
        "final_allocation_ratio": last.get("allocation_ratio"),
        "final_arrived_load": last.get("arrived_load"),
        "peak_allocation_ratio": max((s["allocation_ratio"] for s in timeline), default=None),
        "allocation_at_fgd_point": next((s["allocation_ratio"] for s in timeline
                                         if s["arrived_load"] >= FGD_POINT), None),
        "mean_utilisation": _time_mean(timeline, "allocation_ratio", end),
        "mean_pending_jobs": _time_mean(timeline, "pending_jobs", end),
        "accelerators_started": float(sum(j["accelerators"] for j in started)),
        **_stats([j["wait"] for j in started], "wait"),
        **_stats([j["completion"] for j in jobs if j["completion"] is not None], "jct"),
        "wait_p95_by_priority": {
            str(p): _stats([j["wait"] for j in started if j["priority"] == p], "wait")["wait_p95"]
            for p in sorted({j["priority"] for j in started}, reverse=True)
        },
        "wait_mean_by_priority": {
            str(p): _stats([j["wait"] for j in started if j["priority"] == p], "wait")["wait_mean"]
            for p in sorted({j["priority"] for j in started}, reverse=True)
        },
        "evicted_pods": int(sum(j["evicted_pods"] for j in jobs)),
        "restarts": int(sum(max(0, j["starts"] - 1) for j in jobs)),
        "lost_gpu_hours": float(sum(j["lost_gpu_seconds"] for j in jobs)) / 3600,
        "mean_domain_tier": _mean([j["domain_tier"] for j in multi]),
        "mean_pair_lca_tier": _mean([j["pair_lca_tier"] for j in multi]),
        "cycles": len(cycles),
        "cycle_statuses": dict(Counter(c["status"] for c in cycles)),
        "cycles_cut_short": sum(1 for c in cycles if c.get("cut_short")),
        "cycles_wall_clock": sum(1 for c in cycles
                                 if any(_by_wall(p) for p in c.get("cut_short") or [])),
        "cycle_seconds_total": float(sum(seconds)),
        "cycle_seconds_median": float(np.median(seconds)) if seconds else None,
        "cycle_seconds_median_after_first": float(np.median(seconds[1:])) if len(seconds) > 1
        else None,
        "cycle_seconds_max": float(max(seconds)) if seconds else None,
        **defrag_figures(jobs, cycles, end=end),
    }
    return out

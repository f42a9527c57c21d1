"""``plot_replay_timeline``: a replay metric over time, one line per engine (utilisation by
default)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toposolve.report.plots._figure import axes_or_new, percent_formatter, record_field

LABELS = {
    "allocation_ratio": "accelerators in use / capacity",
    "pending_jobs": "pending jobs",
    "running_jobs": "running jobs",
    "free_leaves": "idle lowest-tier domains",
    "largest_free_domain_nodes": "largest idle domain (nodes, tier ≤ 2)",
}


def plot_replay_timeline(records: Sequence[Any], ax: Any = None, *,
                         metric: str = "allocation_ratio", hours: bool = True) -> Any:
    """Step plot of ``metric`` from each record's timeline (a
    :class:`~toposolve.sim.replay.ReplayRecord`
    or its dict); returns the Axes."""
    ax = axes_or_new(ax, (8, 3.2))
    scale = 3600 if hours else 1
    for record in records:
        timeline = record_field(record, "timeline")
        times = [s["t"] / scale for s in timeline]
        values = [s[metric] for s in timeline]
        ax.step(times, values, where="post", label=record_field(record, "engine"), linewidth=1.2)
    ax.set_xlabel("time (h)" if hours else "time (s)")
    ax.set_ylabel(LABELS.get(metric, metric))
    if metric == "allocation_ratio":
        ax.set_ylim(0, 1.05)
        ax.yaxis.set_major_formatter(percent_formatter())
    ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    return ax



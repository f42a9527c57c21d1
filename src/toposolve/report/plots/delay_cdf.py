"""``plot_delay_cdf``: the distribution of queueing delay (first start − arrival) per engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toposolve.report.plots._figure import axes_or_new, record_field


def plot_delay_cdf(records: Sequence[Any], ax: Any = None, *, priority: int | None = None) -> Any:
    """Empirical CDF of the started jobs' waits (minutes, log scale), one line per engine; only
    jobs of ``priority`` when given. Returns the Axes."""
    ax = axes_or_new(ax, (5, 3.2))
    for record in records:
        waits = sorted(
            j["wait"] / 60 for j in record_field(record, "jobs")
            if j["wait"] is not None and (priority is None or j["priority"] == priority)
        )
        if not waits:
            continue
        share = np.arange(1, len(waits) + 1) / len(waits)
        ax.step(np.maximum(waits, 1e-2), share, where="post", label=record_field(record, "engine"))
    ax.set_xscale("log")
    ax.set_xlabel("queueing delay (min, log; 0 drawn at 0.01)")
    ax.set_ylabel("share of started jobs")
    ax.set_ylim(0, 1.02)
    ax.set_title("delay CDF" + ("" if priority is None else f", priority {priority}"),
                 fontsize="medium")
    ax.legend(loc="lower right", fontsize="small")
    ax.grid(alpha=0.3)
    return ax

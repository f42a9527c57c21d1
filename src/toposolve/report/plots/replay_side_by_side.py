"""``plot_replay``: replays of several engines side by side in one figure."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toposolve.core.paths import replacing
from toposolve.report.plots._figure import pyplot
from toposolve.report.plots.allocation_curve import plot_allocation_curve
from toposolve.report.plots.delay_cdf import plot_delay_cdf
from toposolve.report.plots.replay_timeline import plot_replay_timeline


def plot_replay(records: Sequence[Any], path: str | Path | None = None) -> Any:
    """Four panels: utilisation over time, pending jobs over time, the queueing-delay CDF and the
    allocation ratio against arrived load; returns the Figure and writes a PNG to ``path`` if
    given (``toposolve replay --plot``)."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), layout="constrained")
    plot_replay_timeline(records, axes[0][0])
    plot_replay_timeline(records, axes[1][0], metric="pending_jobs")
    plot_delay_cdf(records, axes[0][1])
    plot_allocation_curve(records, axes[1][1])
    if path is not None:
        with replacing(path, "wb") as out:  # format from the name, which keeps path's suffix
            fig.savefig(out.name, dpi=110)
    return fig

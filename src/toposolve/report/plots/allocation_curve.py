"""``plot_allocation_curve``: GPU allocation ratio against arrived load (FGD's figure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toposolve.report.plots._figure import axes_or_new, percent_formatter, record_field


def plot_allocation_curve(records: Sequence[Any], ax: Any = None, *,
                          reference: Mapping[str, float] | None = None) -> Any:
    """Allocation ratio (accelerators in use / capacity) over arrived load (accelerators asked
    for by arrived jobs / capacity), one line per engine, with the ideal ``min(load, 1)``.
    ``reference``: published figures at the final load (e.g. FGD's table), drawn as ticks.
    Returns the Axes."""
    ax = axes_or_new(ax, (5, 3.6))
    top = 1.0
    for record in records:
        timeline = record_field(record, "timeline")
        loads = [s["arrived_load"] for s in timeline]
        ax.plot(loads,
                [s["allocation_ratio"] for s in timeline], label=record_field(record,
                        "engine"), linewidth=1.2)
        top = max(top, max(loads, default=1.0))
    ax.plot([0, 1, top], [0, 1, 1], color="#999999", linestyle=":", linewidth=1, label="ideal")
    for name, value in (reference or {}).items():
        ax.plot([top], [value], marker="_", markersize=14, color="#555555")
        ax.annotate(f"{name} {value:.1%}", (top, value), xytext=(-4, 0), textcoords="offset points",
                    ha="right", va="center", fontsize="x-small", color="#555555")
    ax.set_xlabel("arrived load (requested / capacity)")
    ax.set_ylabel("allocation ratio")
    ax.xaxis.set_major_formatter(percent_formatter())
    ax.yaxis.set_major_formatter(percent_formatter())
    ax.legend(loc="upper left", fontsize="small")
    ax.grid(alpha=0.3)
    return ax

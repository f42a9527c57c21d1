"""Private: the colours of jobs and states, shared so side-by-side panels agree.

Rule: the ``DISTINCT`` largest jobs (accelerator units placed, ties by name) get distinct
colours from matplotlib's ``tab20`` without its two greys (grey means idle/running here); the
other jobs cycle through four tan tones (``OTHER_TONES``), so neighbouring small jobs stay
distinguishable while reading as "other" in the legend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

IDLE = "#e3e3e3"
RUNNING = "#5a5a5a"
EVICTED = "#d62728"
OTHER_TONES = ("#b9a27a", "#d6c6a2", "#a08a62", "#c9b48a")
OTHER_JOBS = OTHER_TONES[0]
EDGE = "#333333"
# idle capacity no new pod may use: (face, hatch colour, hatch) of unschedulable and tainted nodes
UNSCHEDULABLE = ("#d0d0d0", "#3a3a3a", "xxxx")
TAINTED = ("#f3e7c9", "#9a6a00", "\\\\\\\\")
UNAVAILABLE_LABELS = ("unschedulable (cordoned / NotReady)", "tainted: no pending pod tolerates it")
DISTINCT = 18


def _palette() -> list[tuple[float, ...]]:
    from matplotlib import colormaps

    colours = list(colormaps["tab20"].colors)
    return [c for i, c in enumerate(colours) if i not in (14, 15)]  # 14/15 are the greys


def job_colors(sizes: Mapping[str, int]) -> dict[str, object]:
    """Colour per job key; ``sizes`` is accelerator units placed per job (any plans merged)."""
    order = sorted(sizes, key=lambda key: (-sizes[key], key))
    palette = _palette()
    return {
        key: palette[i] if i < DISTINCT else OTHER_TONES[(i - DISTINCT) % len(OTHER_TONES)]
        for i, key in enumerate(order)
    }


def legend_handles(colors: Mapping[str, object], shown: Iterable[str], *, max_jobs: int,
                   evicted: bool, unavailable: tuple[bool, bool] = (False, False)) -> list:
    """Patches for the legend: up to ``max_jobs`` of ``shown`` (in order), then the states
    (``unavailable``: whether unschedulable, and tainted-away, nodes are drawn)."""
    from matplotlib.patches import Patch

    shown = [key for key in shown if key in colors]
    named = [key for key in shown if colors[key] not in OTHER_TONES][:max_jobs]
    handles = [Patch(facecolor=colors[key], label=key) for key in named]
    rest = len(shown) - len(named)
    if rest:
        label = f"{rest} other job{'s' if rest > 1 else ''}" + (" (tan tones)" if rest > 1 else "")
        handles.append(Patch(facecolor=OTHER_JOBS, label=label))
    handles.append(Patch(facecolor=RUNNING, label="running before the plan"))
    if evicted:
        handles.append(Patch(facecolor="white", edgecolor=EVICTED, hatch="////",
                             label="freed by evictions"))
    for shown_kind, (face, edge, hatch), label in zip(unavailable, (UNSCHEDULABLE, TAINTED),
                                                      UNAVAILABLE_LABELS,
                                                       strict=True):
        if shown_kind:
            handles.append(Patch(facecolor=face, edgecolor=edge, hatch=hatch, linewidth=0,
                                 label=label))
    handles.append(Patch(facecolor=IDLE, label="idle"))
    return handles

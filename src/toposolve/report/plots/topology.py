"""``plot_topology``: the HyperNode tree as an icicle chart, with a plan's placements coloured."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from toposolve.core.assignment import from_plan
from toposolve.core.footprint import Footprint
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.report.plots import _colors
from toposolve.report.plots._figure import axes_or_new, axes_width_points
from toposolve.report.plots._layout import Icicle, icicle_layout
from toposolve.report.plots._names import short_names
from toposolve.report.plots._usage import NodeOccupancy, node_occupancy, unavailable_nodes

STRIP_HEIGHT = 2.0  # the placement row is twice as tall as a tier row
ROW_HEIGHT = 1.0
GAP = 0.15
FONT = 7
MAX_BANDS = 5  # job bands drawn inside one HyperNode box


def _rects(x0: np.ndarray, width: np.ndarray, y0: np.ndarray, height: np.ndarray) -> np.ndarray:
    """[K, 4, 2] rectangle corners for a PolyCollection."""
    x1, y1 = x0 + width, y0 + height
    return np.stack([np.stack([x0, y0], -1), np.stack([x1, y0], -1), np.stack([x1, y1], -1),
                     np.stack([x0, y1], -1)], axis=1)


def _cell_shares(layout: Icicle, occ: NodeOccupancy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean running, evicted and per-job share of the nodes of each strip cell."""
    order = layout.node_order
    starts = np.array([c.x0 for c in layout.cells], dtype=np.int64)
    widths = np.array([c.width for c in layout.cells], dtype=float)
    running = np.add.reduceat(occ.running[order], starts) / widths
    evicted = np.add.reduceat(occ.evicted[order], starts) / widths
    if occ.jobs:
        jobs = np.add.reduceat(occ.job_share[:, order], starts, axis=1) / widths
    else:
        jobs = np.zeros((0, len(starts)))
    return running, evicted, jobs


def _unavailable_shares(problem: Problem, layout: Icicle, occ: NodeOccupancy) -> list[np.ndarray]:
    """Per strip cell: the idle share of its unschedulable nodes, then of its tainted-away ones."""
    order = layout.node_order
    starts = np.array([c.x0 for c in layout.cells], dtype=np.int64)
    widths = np.array([c.width for c in layout.cells], dtype=float)
    idle = np.clip(1 - occ.running - occ.job_share.sum(axis=0), 0, 1)
    return [np.add.reduceat((idle * mask)[order],
                            starts) / widths for mask in unavailable_nodes(problem)]


def _draw_unavailable(ax: Any, x0: np.ndarray, width: np.ndarray, bottom: np.ndarray,
                      shares: list[np.ndarray]) -> None:
    """Hatched layers over the idle part of each cell for capacity no new pod may take."""
    from matplotlib.collections import PolyCollection

    for share, (face, edge, hatch) in zip(shares, (_colors.UNSCHEDULABLE, _colors.TAINTED),
                                          strict=True):
        height = share * STRIP_HEIGHT
        used = height > 0
        if used.any():
            rects = _rects(x0[used], width[used], bottom[used], height[used])
            ax.add_collection(PolyCollection(rects, facecolors=face, edgecolors=edge, hatch=hatch,
                                             linewidths=0))
        bottom = bottom + height


def _tier_label(problem: Problem, tier: int) -> str:
    topo = problem.topology
    if tier == topo.max_tier:
        return "cluster\n(virtual root)"
    names = [name for name, t in topo.tier_name_to_tier.items() if t == tier]
    return f"tier {tier}" + (f"\n{names[0]}" if names else "")


def _draw_strip(ax: Any, problem: Problem, layout: Icicle, occ: NodeOccupancy,
                colors: Mapping[str, Any]) -> None:
    from matplotlib.collections import PolyCollection

    cells = layout.cells
    x0 = np.array([c.x0 for c in cells], dtype=float)
    width = np.array([c.width for c in cells], dtype=float)
    zero = np.zeros(len(cells))
    ax.add_collection(PolyCollection(_rects(x0, width, zero, zero + STRIP_HEIGHT),
                                     facecolors=_colors.IDLE, linewidths=0))
    running, evicted, jobs = _cell_shares(layout, occ)
    bottom = np.zeros(len(cells))
    layers: list[tuple[np.ndarray, dict[str, Any]]] = [(running, {"facecolors": _colors.RUNNING})]
    for k, j in enumerate(occ.jobs):
        layers.append((jobs[k], {"facecolors": colors[problem.jobs[j].key]}))
    for share, style in layers:
        height = share * STRIP_HEIGHT
        used = height > 0
        if used.any():
            style = {"linewidths": 0, **style}
            rects = _rects(x0[used], width[used], bottom[used], height[used])
            ax.add_collection(PolyCollection(rects, **style))
        bottom = bottom + height
    _draw_unavailable(ax, x0, width, bottom, _unavailable_shares(problem, layout, occ))
    # capacity freed by evictions: a hatched overlay just above the pods that stay, i.e. over
    # the new pods that reuse it (and over idle space where nothing does)
    freed = np.minimum(evicted, 1 - running) * STRIP_HEIGHT
    if (freed > 0).any():
        used = freed > 0
        rects = _rects(x0[used], width[used], running[used] * STRIP_HEIGHT, freed[used])
        ax.add_collection(PolyCollection(rects, facecolors="none", edgecolors=_colors.EVICTED,
                                         hatch="////", linewidths=0))
    # cell outlines, only while cells are wide enough for the line not to hide them
    per_cell = axes_width_points(ax) / max(1, layout.node_order.size) * width
    if per_cell.size and per_cell.min() >= 3:
        ax.add_collection(PolyCollection(_rects(x0, width, zero, zero + STRIP_HEIGHT),
                                         facecolors="none", edgecolors="white", linewidths=0.8))


def _job_domains(problem: Problem, plan: Plan | None, occ: NodeOccupancy) -> dict[int, list[str]]:
    """HyperNode → keys of the jobs (with new pods) whose domain after the plan it is
    (:mod:`toposolve.core.footprint`): where each placed job is spread."""
    if plan is None or not occ.jobs:
        return {}
    footprint = Footprint.of_jobs(problem, from_plan(problem, plan), occ.jobs)
    domains: dict[int, list[str]] = {}
    for j in occ.jobs:
        domains.setdefault(footprint.domain(problem.jobs[j].groups), []).append(problem.jobs[j].key)
    return domains


def _draw_bands(ax: Any, x0: float, width: float, y0: float, keys: list[str],
                colors: Mapping[str, Any]) -> None:
    """One thin band per job spread across this HyperNode, stacked from the box's bottom."""
    from matplotlib.collections import PolyCollection

    shown = keys[:MAX_BANDS]
    height = min(0.12, 0.55 / len(shown)) * ROW_HEIGHT
    ys = y0 + 0.04 + height * np.arange(len(shown))
    pad = width * 0.01
    rects = _rects(np.full(len(shown), x0 + pad), np.full(len(shown), width - 2 * pad), ys,
                   np.full(len(shown), height))
    ax.add_collection(PolyCollection(rects, facecolors=[colors[k] for k in shown], linewidths=0))


def _draw_rows(ax: Any, problem: Problem, layout: Icicle, domains: dict[int, list[str]],
               colors: Mapping[str, Any]) -> list[float]:
    """HyperNode boxes of the tiers above the strip (with the bands of the jobs spread across
    them); returns each row's centre."""
    from matplotlib.collections import PolyCollection

    topo = problem.topology
    points_per_slot = axes_width_points(ax) / max(1, layout.node_order.size)
    centres = []
    for i, tier in enumerate(layout.rows):
        y0 = STRIP_HEIGHT + GAP + i * (ROW_HEIGHT + GAP)
        centres.append(y0 + ROW_HEIGHT / 2)
        hns = np.flatnonzero((topo.tier == tier) & (topo.node_count > 0))
        x0 = layout.start[hns].astype(float)
        width = topo.node_count[hns].astype(float)
        ax.add_collection(
            PolyCollection(
                _rects(x0, width, np.full(hns.size, y0), np.full(hns.size, ROW_HEIGHT)),
                facecolors="#f4f4f4",
                edgecolors=_colors.EDGE,
                linewidths=0.6 if points_per_slot * width.min() >= 3 else 0.2,
            )
        )
        shown = short_names(["cluster" if h == topo.root else topo.names[h] for h in hns])
        for h, x, w, name in zip(hns.tolist(), x0.tolist(), width.tolist(), shown, strict=True):
            if h in domains:
                _draw_bands(ax, x, w, y0, domains[h], colors)
            if w * points_per_slot >= len(name) * FONT * 0.62 + 4:  # label only what fits
                y = y0 + (0.8 if h in domains else 0.5) * ROW_HEIGHT  # above the bands
                ax.text(x + w / 2, y, name, ha="center", va="center", fontsize=FONT)
    return centres


def _label_cells(ax: Any, problem: Problem, layout: Icicle) -> None:
    topo = problem.topology
    points_per_slot = axes_width_points(ax) / max(1, layout.node_order.size)
    widths = np.array([c.width for c in layout.cells]) * points_per_slot
    names = short_names(["(cluster)" if c.hypernode == topo.root else topo.names[c.hypernode]
                         for c in layout.cells])
    centres = [c.x0 + c.width / 2 for c in layout.cells]
    longest = max((len(n) for n in names), default=0)
    if widths.size and widths.min() >= longest * FONT * 0.62 + 2:
        ax.set_xticks(centres, names, fontsize=FONT)
    elif widths.size and widths.min() >= FONT * 1.3:
        ax.set_xticks(centres, names, fontsize=FONT, rotation=90)
    else:
        ax.set_xticks([])  # too many cells for names: the x label gives the count instead


def plot_topology(
    problem: Problem,
    plan: Plan | None = None,
    ax: Any = None,
    *,
    job_colors: Mapping[str, Any] | None = None,
    legend: bool = True,
    max_cells: int = 192,
    max_legend: int = _colors.DISTINCT,
    title: str | None = None,
) -> Any:
    """Icicle chart of the HyperNode tree with each job's new pods coloured; returns the Axes.

    Root on top, one row per tier, widths proportional to node counts. The bottom row (the
    lowest tier with at most ``max_cells`` HyperNodes; lower tiers are folded into it) is a
    stacked bar per HyperNode: the mean dominant share of its nodes taken by pods running before
    the plan that stay (dark grey), each job's new pods (one colour per job) and what stays idle
    (light grey); grey cross-hatching marks the idle part of unschedulable (cordoned, NotReady)
    nodes and brown hatching that of nodes whose taints no pending pod tolerates; red hatching
    marks capacity the plan frees by evictions. A job whose pods (running and new) span more
    than one bottom-row cell is also drawn as a thin band in the box of the lowest HyperNode
    holding them all — its domain — so spread is visible at a glance (at most 5 per box).
    ``job_colors`` (job key → colour) keeps colours equal across several plots; the legend
    names the ``max_legend`` largest jobs.
    """
    ax = axes_or_new(ax, (10, 4.2))
    topo = problem.topology
    layout = icicle_layout(topo, max_cells)
    occ = node_occupancy(problem, plan)
    keys = [problem.jobs[j].key for j in occ.jobs]
    colors = dict(job_colors) if job_colors is not None else _colors.job_colors(
        {problem.jobs[j].key: occ.job_units[j] for j in occ.jobs}
    )
    for key in keys:  # jobs the caller's mapping does not know share the "other" colour
        colors.setdefault(key, _colors.OTHER_JOBS)

    n_nodes = layout.node_order.size
    _draw_strip(ax, problem, layout, occ, colors)
    centres = _draw_rows(ax, problem, layout, _job_domains(problem, plan, occ), colors)
    _label_cells(ax, problem, layout)
    top = STRIP_HEIGHT + GAP + len(layout.rows) * (ROW_HEIGHT + GAP)
    ax.set_xlim(0, max(1, n_nodes))
    ax.set_ylim(0, top)
    ax.set_yticks(
        [STRIP_HEIGHT / 2, *centres],
        [_tier_label(problem, layout.strip_tier) + "\n(placements)",
         *(_tier_label(problem, t) for t in layout.rows)],
        fontsize=FONT,
    )
    ax.tick_params(length=0)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    cells = len(layout.cells)
    ax.set_xlabel(
        f"{n_nodes:,} nodes in {cells:,} tier-{layout.strip_tier} cells; width ∝ node count, "
        "bar height = mean dominant share of the cell's nodes\n"
        "a coloured band in a higher box: a job spread across that HyperNode",
        fontsize=FONT,
    )
    if title is None:
        title = "cluster before planning" if plan is None else f"{plan.engine} plan ({plan.status})"
    ax.set_title(title, fontsize=FONT + 2)
    if legend:
        unavailable = tuple(bool(mask.any()) for mask in unavailable_nodes(problem))
        handles = _colors.legend_handles(colors, keys, max_jobs=max_legend,
                                         evicted=bool(occ.evicted.any()), unavailable=unavailable)
        ax.legend(
            handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=FONT,
            frameon=False,
            ncol=1 if len(handles) <= 16 else 2,
            title="new pods" if keys else None, title_fontsize=FONT,
        )
    return ax

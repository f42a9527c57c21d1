"""``plot_comparison``: the engines' plans side by side, with the headline figures as bars."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from toposolve.core.paths import replacing
from toposolve.core.problem import Problem, compile_problem
from toposolve.report.plots import _colors
from toposolve.report.plots._figure import compact, pyplot
from toposolve.report.plots._usage import node_occupancy, unavailable_nodes
from toposolve.report.plots.topology import plot_topology

# (PlanMetrics attribute, panel title); the arrow says which way is better. BY_PRIORITY is the
# stacked panel of accelerators placed per job priority (what the priority weighting ranks).
BY_PRIORITY = "by priority"
HEADLINES: tuple[tuple[str, str], ...] = (
    ("jobs_placed", "jobs placed ↑"),
    (BY_PRIORITY, "accelerators placed ↑\n(by job priority)"),
    ("mean_domain_tier", "mean job domain tier ↓"),
    ("mean_pair_lca_tier", "mean pod-pair LCA tier ↓"),
    ("free_leaves", "free whole leaf domains ↑"),
)
ENGINE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")
PENDING_SHOWN = 6  # pending jobs listed per engine (the rest are counted)
PENDING_WRAP = 95  # characters per line of a reason
LINE_INCHES = 0.14


def instance_title(source: str) -> str:
    """The instance's name for a title: file (or directory) names without folders or suffixes."""
    names = [Path(p).name.split(".")[0] or p for p in str(source).split(", ") if p]
    return " + ".join(names) or str(source)


def pending_lines(plan: Any, *, shown: int = PENDING_SHOWN, wrap: int = PENDING_WRAP) -> list[str]:
    """The plan's pending jobs with their reasons, wrapped, for the figure's pending panel."""
    pending = [j for j in plan.jobs if not j.placed]
    if not pending:
        return ["no job pending"]
    lines = [f"pending ({len(pending)}):"]
    for entry in pending[:shown]:
        lines.extend(textwrap.wrap(f"{entry.job}: {entry.reason or 'no reason given'}", wrap,
                                   initial_indent="• ", subsequent_indent="   "))
    if len(pending) > shown:
        lines.append(f"… {len(pending) - shown} more (toposolve compare --json lists them)")
    return lines


def _problem_of(comparison: Any, problem: Problem | None) -> Problem:
    """The compiled instance: given, carried by the comparison, or reloaded from its source."""
    if problem is not None:
        return problem
    carried = getattr(comparison, "problem", None)
    if carried is not None:
        return carried
    from toposolve.formats.load import load_instance

    paths = [p for p in str(comparison.instance).split(", ") if p]
    if not paths or not all(Path(p).exists() for p in paths):
        raise ValueError(
            f"cannot reload instance {comparison.instance!r} to draw it; pass "
            f"problem=compile_problem(instance)"
        )
    return compile_problem(load_instance(paths))


def _subtitle(metrics: Any) -> str:
    gap = "" if metrics.gap is None else f", gap {metrics.gap:.1%}"
    return f"{metrics.engine}: {metrics.status}, {metrics.wall_time_s:.2f} s{gap}"


def _stacked_by_priority(ax: Any, engines: list[str], by_priority: dict[str, dict[int, int]],
                         colours: list[str]) -> list[int]:
    """Accelerators placed per engine, stacked by job priority (highest at the bottom, darkest);
    returns the totals."""
    from matplotlib.colors import to_rgba

    priorities = sorted({p for per in by_priority.values() for p in per}, reverse=True)
    tallest = max((sum(per.values()) for per in by_priority.values()), default=0)
    bottoms = [0] * len(engines)
    for level, priority in enumerate(priorities):
        alpha = 1.0 - 0.6 * level / max(1, len(priorities) - 1)  # lower priority, lighter
        heights = [by_priority[e].get(priority, 0) for e in engines]
        faces = [to_rgba(c, alpha) for c in colours]
        ax.bar(range(len(engines)), heights, bottom=bottoms, color=faces, width=0.6,
               edgecolor="white", linewidth=0.5)
        for x, (h, b) in enumerate(zip(heights, bottoms, strict=True)):
            if len(priorities) > 1 and h >= 0.12 * tallest:  # label segments tall enough to hold it
                ax.text(x, b + h / 2, f"prio {priority}", ha="center", va="center", fontsize=6,
                        color="white")
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    return bottoms


def plot_comparison(comparison: Any, path: str | Path | None = None, *,
                    problem: Problem | None = None) -> Any:
    """One topology icicle per engine above bar panels of the headline metrics; returns the Figure.

    Panels: jobs placed, accelerators placed stacked by job priority (the priority-weighted
    objective ranks these levels strictly, highest first), mean job domain tier, mean pod-pair
    LCA tier and free whole leaf (lowest-tier) domains; an arrow says which way is better.
    Between them, each engine's pending jobs with their reasons (the first six). The title is
    the instance's file name, without folders.

    ``comparison`` is what :func:`toposolve.analysis.compare` returns. Jobs keep one colour in every
    panel (the largest over all engines get distinct colours). The instance is drawn from
    ``problem`` if given, else from ``comparison.problem`` if present, else reloaded from the
    comparison's source files. Writes a PNG to ``path`` if given (``toposolve compare --plot``).
    """
    plt = pyplot()
    problem = _problem_of(comparison, problem)
    engines = [m.engine for m in comparison.metrics]
    sizes: dict[str, int] = {}
    by_priority: dict[str, dict[int, int]] = {}
    for engine in engines:
        occ = node_occupancy(problem, comparison.plans[engine])
        per = by_priority.setdefault(engine, {})
        for j in occ.jobs:
            key = problem.jobs[j].key
            sizes[key] = max(sizes.get(key, 0), occ.job_units[j])
            per[problem.jobs[j].priority] = per.get(problem.jobs[j].priority, 0) + occ.job_units[j]
    colors = _colors.job_colors(sizes)

    pending = [pending_lines(comparison.plans[e]) for e in engines]
    pending_inches = 0.25 + LINE_INCHES * max(len(lines) for lines in pending)
    fig = plt.figure(figsize=(max(10, 5.5 * len(engines) + 2), 7.6 + pending_inches),
                     layout="constrained")
    top, middle, bottom = fig.subfigures(3, 1, height_ratios=[5.56, pending_inches, 2.0])
    icicles = top.subplots(1, len(engines), squeeze=False)[0]
    for ax, metrics in zip(icicles, comparison.metrics, strict=True):
        plot_topology(problem, comparison.plans[metrics.engine], ax, job_colors=colors,
                      legend=False, title=_subtitle(metrics))
    shown = sorted(sizes, key=lambda key: (-sizes[key], key))
    evicted = any(comparison.plans[e].evictions for e in engines)
    unavailable = tuple(bool(mask.any()) for mask in unavailable_nodes(problem))
    handles = _colors.legend_handles(colors, shown, max_jobs=_colors.DISTINCT, evicted=evicted,
                                     unavailable=unavailable)
    top.legend(handles=handles, loc="outside right upper", fontsize=7, frameon=False,
               title="new pods", title_fontsize=7)
    for ax, lines in zip(middle.subplots(1, len(engines), squeeze=False)[0], pending, strict=True):
        ax.axis("off")
        ax.text(0, 1, "\n".join(lines), transform=ax.transAxes, ha="left", va="top", fontsize=7,
                linespacing=1.3)

    panels = bottom.subplots(1, len(HEADLINES))
    colours = [ENGINE_COLOURS[i % len(ENGINE_COLOURS)] for i in range(len(engines))]
    for ax, (attr, title) in zip(panels, HEADLINES, strict=True):
        if attr == BY_PRIORITY:
            values = _stacked_by_priority(ax, engines, by_priority, colours)
        else:
            values = [getattr(m, attr) for m in comparison.metrics]
            heights = [0 if v is None else v for v in values]
            ax.bar(range(len(engines)), heights, color=colours, width=0.6)
        for x, value in enumerate(values):
            ax.annotate(compact(value), (x, 0 if value is None else value), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(engines)), engines, fontsize=7)
        ax.set_title(title, fontsize=8)
        ax.set_yticks([])
        ax.margins(y=0.2)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    fig.suptitle(f"{instance_title(comparison.instance)}: {' vs '.join(engines)}", fontsize=10)
    if path is not None:
        with replacing(path, "wb") as out:  # format from the name, which keeps path's suffix
            fig.savefig(out.name, dpi=130)
    return fig

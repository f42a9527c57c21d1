"""``plot_defrag_moves``: the domains a defrag plan touches, before and after: who moved where."""

from __future__ import annotations

from typing import Any

import numpy as np

from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.report.plots import _colors
from toposolve.report.plots._figure import axes_or_new, axes_width_points
from toposolve.report.plots._names import short_names
from toposolve.report.plots._usage import counted_resources, dominant_share

MAX_NODES = 96  # above this, only the nodes a move or binding touches are drawn
BAR = 0.8  # node bar width (one node per x unit)
AFTER, BEFORE = 0.0, 1.4  # bottom of each row; a row is 1 high
FONT = 7


def _shown_nodes(problem: Problem, touched: list[int]) -> tuple[list[int], list[int]]:
    """Nodes to draw (grouped by leaf HyperNode, in node order) and each one's leaf (-1: none):
    every node of the touched leaves, or only the touched nodes when those leaves are large."""
    leaf = problem.topology.node_leaf
    leaves = sorted({int(leaf[n]) for n in touched})
    nodes = [n for n in range(problem.n_nodes) if int(leaf[n]) in leaves]
    if len(nodes) > MAX_NODES:
        nodes = sorted(set(touched))
    nodes.sort(key=lambda n: (leaves.index(int(leaf[n])), n))
    return nodes, [int(leaf[n]) for n in nodes]


def _amounts(problem: Problem, plan: Plan, jobs: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """[K, N, R] use of each highlighted job before and after the plan."""
    index = {j: k for k, j in enumerate(jobs)}
    shape = (len(jobs), problem.n_nodes, len(problem.resources))
    before, after = np.zeros(shape), np.zeros(shape)
    moved = {m.pod: problem.node_index[m.to] for m in plan.moves}
    for pod in problem.running:
        if pod.job in index and pod.node >= 0:
            request = problem.group_request[pod.group]
            before[index[pod.job], pod.node] += request
            after[index[pod.job], moved.get(pod.name, pod.node)] += request
    for b in plan.bindings:
        g = problem.pod_group[b.pod]
        after[index[int(problem.group_job[g])], problem.node_index[b.node]] += (
            problem.group_request[g])
    return before, after


def _draw_row(ax: Any, xs: np.ndarray, base: float, others: np.ndarray, shares: np.ndarray,
              colours: list) -> None:
    """One row of node bars: idle, other pods (grey) at the bottom, then each job's share."""
    ax.bar(xs, np.ones(len(xs)), BAR, bottom=base, color=_colors.IDLE, linewidth=0)
    ax.bar(xs, others, BAR, bottom=base, color=_colors.RUNNING, linewidth=0)
    bottom = base + others
    for k, colour in enumerate(colours):
        ax.bar(xs, shares[k], BAR, bottom=bottom, color=colour, linewidth=0)
        bottom = bottom + shares[k]


def _label_domains(ax: Any, problem: Problem, xs: np.ndarray, leaves: list[int]) -> None:
    """Each drawn leaf's name under its nodes, where the name fits its width."""
    groups = list(dict.fromkeys(leaves))
    names = short_names([problem.topology.names[d] if d >= 0 else "(no domain)" for d in groups])
    per_unit = axes_width_points(ax) / max(1.0, float(xs[-1] - xs[0] + 1))
    ticks, labels = [], []
    for d, name in zip(groups, names, strict=True):
        at = xs[[k for k, leaf in enumerate(leaves) if leaf == d]]
        if (at[-1] - at[0] + 1) * per_unit >= 0.65 * FONT * (len(name) + 1):
            ticks.append(float(at.mean()))
            labels.append(name)
    ax.set_xticks(ticks, labels, fontsize=FONT)


def _arrows(ax: Any, problem: Problem, plan: Plan, x_of: dict[int, float], colour_of: dict
            ) -> None:
    """One arrow per (job, from, to) from the node in the before row to the one in the after
    row, in the job's colour."""
    pairs = dict.fromkeys((int(problem.group_job[problem.pod_group[m.pod]]),
                           problem.node_index[m.source], problem.node_index[m.to])
                          for m in plan.moves)
    for j, a, b in pairs:
        ax.annotate("", xy=(x_of[b], AFTER + 1.02), xytext=(x_of[a], BEFORE - 0.02),
                    arrowprops={"arrowstyle": "->", "color": colour_of[j], "lw": 1.0,
                                "shrinkA": 0, "shrinkB": 0})


def plot_defrag_moves(problem: Problem, plan: Plan, ax: Any = None) -> Any:
    """The domains a defrag plan touches, before (top row) and after (bottom row); returns the Axes.

    One bar per node (its dominant share, as in :func:`plot_topology`): grey for pods that stay
    put, one colour per moved job and per admitted target, light grey idle. An arrow goes from
    each node a moved job leaves to each node it lands on. The nodes drawn are every node of the
    lowest-tier HyperNodes a move or binding touches, grouped and named under them; when those
    hold more than :data:`MAX_NODES` nodes, only the touched nodes. ``problem`` is the compiled
    instance the plan was made for (``toposolve defrag --plot``).
    """
    touched = ([problem.node_index[m.source] for m in plan.moves]
               + [problem.node_index[m.to] for m in plan.moves]
               + [problem.node_index[b.node] for b in plan.bindings])
    nodes, leaves = _shown_nodes(problem, touched)
    xs = np.array([k + sum(1 for a, b in zip(leaves, leaves[1:k + 1], strict=False) if a != b)
                   for k in range(len(nodes))], dtype=float)  # a gap between domains
    ax = axes_or_new(ax, (min(16.0, 5.0 + 0.1 * float(xs[-1] if len(xs) else 0)), 3.6))
    job_of = {pod: int(problem.group_job[g]) for pod, g in problem.pod_group.items()}
    moved = list(dict.fromkeys(job_of[m.pod] for m in plan.moves))
    admitted = list(dict.fromkeys(job_of[b.pod] for b in plan.bindings))
    jobs = [*moved, *(j for j in admitted if j not in moved)]
    keys = [problem.jobs[j].key for j in jobs]
    colours = _colors.job_colors({key: len(keys) - k for k, key in enumerate(keys)})
    title = (f"{plan.engine}: moves {len(moved)} job{'s' * (len(moved) != 1)} "
             f"({len(plan.moves)} pod{'s' * (len(plan.moves) != 1)}), admits {len(admitted)}")
    if not nodes:
        ax.text(0.5, 0.5, "the plan moves and binds nothing", ha="center", va="center",
                transform=ax.transAxes, fontsize=FONT + 1)
        ax.set_axis_off()
        ax.set_title(title, fontsize=FONT + 2)
        return ax
    alloc = problem.allocatable.astype(float)[nodes]
    counted = counted_resources(problem)
    before, after = _amounts(problem, plan, jobs)
    before, after = before[:, nodes], after[:, nodes]
    others = dominant_share(problem.used[nodes] - before.sum(axis=0), alloc, counted)
    for base, amounts in ((BEFORE, before), (AFTER, after)):
        shares = dominant_share(amounts, alloc[None], counted)
        total = others + shares.sum(axis=0)
        scale = np.where(total > 1, 1 / np.where(total > 0, total, 1), 1.0)  # as _usage does
        _draw_row(ax, xs, base, others * scale, shares * scale, [colours[k] for k in keys])
    _arrows(ax, problem, plan, dict(zip(nodes, xs.tolist(), strict=True)),
            {j: colours[k] for j, k in zip(jobs, keys, strict=True)})
    ax.set_xlim(xs[0] - 0.6, xs[-1] + 0.6)
    ax.set_ylim(AFTER - 0.05, BEFORE + 1.05)
    ax.set_yticks([BEFORE + 0.5, AFTER + 0.5], ["before", "after"], fontsize=FONT + 1)
    _label_domains(ax, problem, xs, leaves)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    _legend(ax, keys, {problem.jobs[j].key for j in admitted}, colours)
    ax.set_title(title, fontsize=FONT + 2)
    return ax


def _legend(ax: Any, keys: list[str], admitted: set[str], colours: dict) -> None:
    """Moved jobs and admitted targets (the first :data:`_colors.DISTINCT`), then the states."""
    from matplotlib.patches import Patch

    named = keys[:_colors.DISTINCT]
    handles = [Patch(facecolor=colours[key],
                     label=f"{key} ({'admitted' if key in admitted else 'moved'})")
               for key in named]
    if len(keys) > len(named):
        handles.append(Patch(facecolor=_colors.OTHER_JOBS, label=f"{len(keys) - len(named)} "
                             "more jobs"))
    handles += [Patch(facecolor=_colors.RUNNING, label="pods that stay"),
                Patch(facecolor=_colors.IDLE, label="idle")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT,
              frameon=False)

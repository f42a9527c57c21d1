"""``plot_tier_utilisation``: how full the HyperNodes of each tier are, before and after a plan."""

from __future__ import annotations

from typing import Any

import numpy as np

from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.core.topology import subtree_sums
from toposolve.report.plots._figure import axes_or_new
from toposolve.report.plots._usage import usage_after, utilisation_resources

MAX_POINTS = 300  # strip points per box; more are sampled (seeded), the box uses them all
BEFORE = "#9e9e9e"
AFTER = "#1f77b4"


def _hypernode_utilisation(problem: Problem, usage: np.ndarray, resources: list[int]) -> np.ndarray:
    """[H] used / allocatable of ``resources`` summed over each HyperNode's nodes (NaN if none)."""
    members = problem.topology.members.astype(np.float64)
    used = subtree_sums(members, usage[:, resources].sum(axis=1).astype(float))
    alloc = subtree_sums(members, problem.allocatable[:, resources].astype(float).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(alloc > 0, used / np.where(alloc > 0, alloc, 1), np.nan)


def plot_tier_utilisation(problem: Problem, plan: Plan | None, ax: Any = None) -> Any:
    """Per tier, the distribution of accelerator utilisation of its HyperNodes; returns the Axes.

    Utilisation of a HyperNode = accelerators in use on its nodes / their allocatable (cpu when
    the instance has no accelerator resource). Each tier shows a box (quartiles, whiskers at
    1.5 IQR) with the HyperNodes as jittered points — grey before the plan, blue after it (after
    only when ``plan`` is None: then the current state is shown). HyperNodes without any
    capacity of the resource are left out. The dashed line is the whole cluster after the plan.
    """
    ax = axes_or_new(ax, (7, 3.6))
    topo = problem.topology
    resources, what = utilisation_resources(problem)
    before = _hypernode_utilisation(problem, problem.used.astype(float), resources)
    after = _hypernode_utilisation(problem, usage_after(problem, plan), resources)
    tiers = sorted({int(t) for t in topo.tier[topo.node_count > 0]} - {topo.max_tier})
    if not tiers:  # no HyperNodes at all: the virtual root is the only domain
        tiers = [topo.max_tier]
    series = [("before", BEFORE, before),
              ("after", AFTER, after)] if plan is not None else [("now", AFTER, after)]
    rng = np.random.default_rng(0)
    width = 0.8 / len(series)
    labels = []
    for i, tier in enumerate(tiers):
        hns = np.flatnonzero((topo.tier == tier) & (topo.node_count > 0))
        names = [n for n, t in topo.tier_name_to_tier.items() if t == tier]
        if tier == topo.max_tier:
            labels.append("cluster\n(no HyperNodes)")
        else:
            labels.append(f"tier {tier}" + (f" · {names[0]}" if names else "")
                          + f"\n{hns.size:,} HyperNodes")
        for k, (_, colour, values) in enumerate(series):
            data = values[hns]
            data = data[~np.isnan(data)]
            if data.size == 0:
                continue
            x = i + (k - (len(series) - 1) / 2) * width
            ax.boxplot(
                data, positions=[x], widths=width * 0.8, showfliers=False, patch_artist=True,
                boxprops={"facecolor": colour, "alpha": 0.25, "edgecolor": colour},
                medianprops={"color": colour, "linewidth": 1.5},
                whiskerprops={"color": colour}, capprops={"color": colour},
            )
            shown = data if data.size <= MAX_POINTS else rng.choice(data, MAX_POINTS, replace=False)
            jitter = rng.uniform(-width * 0.3, width * 0.3, shown.size)
            ax.scatter(x + jitter, shown, s=8, color=colour, alpha=0.7, linewidths=0, zorder=3)
    cluster = after[topo.root]
    if not np.isnan(cluster):
        ax.axhline(cluster, color=AFTER, linestyle="--", linewidth=0.8, zorder=1)
        ax.text(len(tiers) - 0.5, cluster, f" cluster {cluster:.0%}", va="bottom", ha="right",
                fontsize=7, color=AFTER)
    from matplotlib.patches import Patch
    from matplotlib.ticker import PercentFormatter

    ax.set_xticks(range(len(tiers)), labels, fontsize=8)
    ax.set_xlim(-0.6, len(tiers) - 0.4)
    ax.set_ylim(-0.03, 1.08)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel(f"{what} utilisation per HyperNode", fontsize=8)
    ax.set_title("utilisation by tier" + ("" if plan is None else f" ({plan.engine} plan)"),
                 fontsize=9)
    ax.legend(
        handles=[Patch(facecolor=c, alpha=0.5, edgecolor=c,
                       label=f"{name} the plan" if plan else "now") for name, c, _ in series],
        fontsize=7, loc="lower right", frameon=False,
    )
    ax.grid(axis="y", alpha=0.3)
    return ax

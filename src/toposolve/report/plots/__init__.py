"""Plots of instances, plans and runs (matplotlib, the optional ``toposolve[plot]`` extra).

One public function per module, each drawing on a given Axes (``ax=None`` makes a figure):
:func:`plot_topology`, :func:`plot_tier_utilisation`, :func:`plot_comparison` (a whole figure),
:func:`plot_progress`, :func:`plot_hypernode_scores`, :func:`plot_defrag_moves`; replays:
:func:`plot_replay_timeline`, :func:`plot_delay_cdf`, :func:`plot_allocation_curve`,
:func:`plot_replay` (a whole figure).
"""

from toposolve.report.plots.allocation_curve import plot_allocation_curve
from toposolve.report.plots.defrag_moves import plot_defrag_moves
from toposolve.report.plots.delay_cdf import plot_delay_cdf
from toposolve.report.plots.progress import plot_progress
from toposolve.report.plots.replay_side_by_side import plot_replay
from toposolve.report.plots.replay_timeline import plot_replay_timeline
from toposolve.report.plots.scores import plot_hypernode_scores
from toposolve.report.plots.side_by_side import plot_comparison
from toposolve.report.plots.topology import plot_topology
from toposolve.report.plots.utilisation import plot_tier_utilisation

__all__ = [
    "plot_allocation_curve",
    "plot_comparison",
    "plot_defrag_moves",
    "plot_delay_cdf",
    "plot_hypernode_scores",
    "plot_progress",
    "plot_replay",
    "plot_replay_timeline",
    "plot_tier_utilisation",
    "plot_topology",
]

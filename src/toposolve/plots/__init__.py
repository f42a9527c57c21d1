"""Plots of instances, plans and runs (matplotlib, the optional ``toposolve[plot]`` extra).

One public function per module, each drawing on a given Axes (``ax=None`` makes a figure):
:func:`plot_topology`, :func:`plot_tier_utilisation`, :func:`plot_comparison` (a whole figure),
:func:`plot_progress`, :func:`plot_hypernode_scores`.
"""

from .progress import plot_progress
from .scores import plot_hypernode_scores
from .side_by_side import plot_comparison
from .topology import plot_topology
from .utilisation import plot_tier_utilisation

__all__ = [
    "plot_comparison",
    "plot_hypernode_scores",
    "plot_progress",
    "plot_tier_utilisation",
    "plot_topology",
]

"""The KAI mirror's entry point: the flat engine, or the tree engine for deeper SubGroup trees."""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.kai.engine import KaiEngine
from toposolve.engines.kai.tree import KaiTreeEngine


def run_kai(problem: Problem) -> Assignment:
    """Place the pending jobs as KAI-Scheduler's allocate action with the topology plugin would.

    Parameters
    ----------
    problem
        The compiled instance.

    Returns
    -------
    Assignment
        Pods per group and node; gang trees deeper than job → SubJob use
        :class:`~toposolve.engines.kai.tree.KaiTreeEngine`.
    """
    return (KaiTreeEngine if problem.gang_nodes else KaiEngine)(problem).run()

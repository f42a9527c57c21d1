"""Brute-force rank orders shared by the rank tests (every permutation of a job's pods)."""

from __future__ import annotations

import itertools

import numpy as np

from toposolve.policy.comm import measure


def capped_best(problem, chosen, edges, cap: int) -> int | None:
    """The fewest cross-leaf ring edges over every order of the pods on ``chosen`` (node
    indices) whose largest DP span is at most tier ``cap``; None when there is none."""
    best = None
    for order in itertools.permutations(chosen):
        m = measure(problem.topology, np.array(order), edges)
        if m.largest_dp_span <= cap:
            best = m.cross_leaf_edges if best is None else min(best, m.cross_leaf_edges)
    return best

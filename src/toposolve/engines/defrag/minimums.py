"""Which pods make an elastic target's gang minimum, for the greedy: a bounded search.

The greedy tries each candidate minimum of an elastic target (one whose CP-SAT minimum is
searched: :attr:`~toposolve.engines.defrag.common.Unit.upto`) and keeps the one that moves
least. Candidates are the pod counts per group that make the gang ready with every SubJob they
touch at its size (:func:`~toposolve.engines.defrag.common.is_minimum`), no other candidate
below them group by group (inclusion-minimal), cheapest first: by requested resources (each
resource scaled by the cluster's allocatable), then pods, then larger counts of earlier groups.
At most :data:`MAX_CANDIDATES` are tried, the fixed rule's minimum always among them; a target
with more than :data:`MAX_COMPOSITIONS` count vectors tries the fixed rule's only. Rationale:
``docs/defrag.md`` ("Elastic targets").
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.defrag.common import Level, Unit, is_minimum

MAX_COMPOSITIONS = 4096  # count vectors enumerated at most per target
MAX_CANDIDATES = 16  # minimums the greedy tries at most per target


def minimum_candidates(problem: Problem, unit: Unit) -> list[dict[int, int]]:
    """The candidate minimums of target ``unit`` (group -> pods), in the order tried; just
    ``unit.counts`` for a target whose minimum is not searched."""
    if not unit.upto:
        return [unit.counts]
    groups = sorted(unit.upto)
    if math.prod(unit.upto[g] + 1 for g in groups) > MAX_COMPOSITIONS:
        return [unit.counts]
    scale = np.maximum(problem.allocatable.sum(axis=0), 1)
    weight = {g: float((problem.group_request[g] / scale).sum()) for g in groups}
    valid = []
    for vector in itertools.product(*(range(unit.upto[g] + 1) for g in groups)):
        counts = {g: c for g, c in zip(groups, vector, strict=True) if c}
        if is_minimum(problem, unit.job, counts):
            key = (sum(weight[g] * c for g, c in counts.items()), sum(vector),
                   tuple(-c for c in vector))
            valid.append((key, vector, counts))
    kept: list[tuple] = []
    for _, vector, counts in sorted(valid, key=lambda item: item[0]):
        # a vector above a kept one sorts after it; one above a dropped one is above a kept one
        if any(all(a <= b for a, b in zip(low, vector, strict=True)) for low, _ in kept):
            continue
        kept.append((vector, counts))
        if len(kept) == MAX_CANDIDATES:
            break
    out = [counts for _, counts in kept]
    if unit.counts not in out:  # the fixed rule's: the greedy never does worse than before
        out = [unit.counts, *out[:MAX_CANDIDATES - 1]]
    return out


def candidate_units(problem: Problem, unit: Unit) -> list[Unit]:
    """``unit`` at each of its :func:`minimum_candidates`, its levels cut to the pods placed."""
    if not unit.upto:
        return [unit]
    out = []
    for counts in minimum_candidates(problem, unit):
        levels = [Level(tuple(g for g in lv.groups if g in counts), lv.tier) for lv in unit.wide]
        out.append(replace(unit, counts=counts, levels=[lv for lv in levels if lv.groups]))
    return out

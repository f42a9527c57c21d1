"""A lower bound of the ``fragmentation`` stage from the aggregated packing model of whole-node
gangs (:mod:`.spread_bound`) with the idle leaves it may touch.

Why: as for ``spread``, the exact model's bound can stay one below the optimum because refuting
a better value means refuting every assignment of interchangeable gangs to leaves
(docs/cpsat-formulation.md, section 8, "Sixth attempt"). The aggregated model counts units per
domain; one literal per initially idle leaf says whether it holds new pods, and a domain's
node-sized pods must fit its other nodes plus those of its touched idle leaves. The runner stops
the stage's search when a plan reaches the bound. Why it is valid:
:func:`fragmentation_lower_bound`.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.solve.spread_bound import (
    ALL,
    Aggregate,
    aggregate_model,
    least_value,
    node_sized_pods,
    spread_of,
)


def fragmentation_lower_bound(pm: PlacementModel, frozen: dict[str, int],
                              capped: dict[str, int], dtime: float,
                              seed: int = 0) -> tuple[int | None, float]:
    """A lower bound of ``fragmentation`` over the plans meeting the frozen ``placed`` stages
    (``frozen``: label -> value, ``placed ≥ value``) and the ``spread`` stage if it came first
    (``capped``: label -> value, ``stage ≤ value``), and the deterministic time spent;
    ``(None, 0.0)`` where the aggregated model is not built (:func:`.spread_bound.applies`, or
    no ``placed`` stage frozen).

    The model: :func:`.spread_bound.aggregate_model`, plus ``Σ tier·count ≤ spread`` when
    ``spread`` is capped, plus one literal ``t_h`` per leaf the exact model counts (initially
    idle, some group may use it); per node-sized resource and domain ``D`` of every level below
    the root (and the whole cluster) the units' node-sized pods inside ``D`` are at most the
    nodes of ``D`` with room for one outside those leaves plus ``Σ_{h ⊆ D} room(h)·t_h``.
    Objective: ``Σ t_h``.

    Valid: a plan of the exact model meeting the stages has, with every ``within`` literal true
    where its pods are inside a candidate domain, a ``spread`` no larger (the literals only lower
    it), and maps to a solution of the aggregated model of that ``spread``
    (:func:`.spread_bound.spread_lower_bound`); its node-sized pods sit one per node with room,
    and an idle leaf without new pods holds none, so ``t_h`` = the plan's touched leaves meets
    every row: the aggregated optimum, and CP-SAT's bound on it, is at most the stage's optimum.
    Checked against every plan of small instances (``tests/engines/cpsat/solve``).
    """
    touched = pm.vars.touched
    # without a level below the root (no tree) there is no leaf to count
    flat = pm.cands.levels.root_level == 0
    agg = aggregate_model(pm, frozen) if touched and not flat else None
    if agg is None:
        return None, 0.0
    if "spread" in capped:
        agg.model.add(spread_of(pm, agg) <= capped["spread"])
    t = {h: agg.model.new_bool_var(f"t_{h}") for h in touched}
    _touched_rows(pm, agg, t)
    agg.model.minimize(sum(t.values()))
    return least_value(agg.model, dtime, seed)


def _touched_rows(pm: PlacementModel, agg: Aggregate, t: dict[int, cp_model.IntVar]) -> None:
    """Per node-sized resource and domain: its pods fit its untouchable nodes with room plus the
    room of its touched leaves."""
    cands = pm.cands
    n_base = cands.classes.n_base
    domain = cands.class_domain[: cands.levels.root_level, :n_base]
    leaf = domain[0]
    countable = np.isin(leaf, list(t))
    for share in node_sized_pods(pm, agg):
        for (lvl, d), pods in share.pods.items():
            inside = np.ones(n_base, dtype=bool) if lvl == ALL else domain[lvl] == d
            fixed = int(share.room[inside & ~countable].sum())
            per_leaf: dict[int, int] = {}
            for c in np.flatnonzero(inside & countable).tolist():
                per_leaf[int(leaf[c])] = per_leaf.get(int(leaf[c]), 0) + int(share.room[c])
            agg.model.add(sum(pods) <= fixed + sum(room * t[h] for h, room in per_leaf.items()))

"""Turn an :class:`Assignment` into a complete CP-SAT hint, and check whether it is feasible.

Every variable gets a value: counts are summed per node class, and every indicator (placed,
SubJob, ready, domain use, within, touched) is derived from those counts the way the
constraints define it. Identical nodes split out of one class are relabelled by decreasing pod
count first, so the hint respects the symmetry-breaking order. A placement on a node the model
has no variable for (outside the candidates) makes the hint incomplete, and so infeasible; so
does a node given more than its idle resources (classes aggregate nodes, so the model alone
would not notice).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from ...problem import Problem
from ..assignment import Assignment
from .variables import UnitVars, Variables


@dataclass
class Hint:
    values: dict[int, int]  # proto variable index -> value
    complete: bool  # every placement had a variable
    dropped: int  # pods placed where the model has no variable
    fits_nodes: bool = True  # no node receives more than its idle resources


def class_counts(problem: Problem, xv: Variables, assignment: Assignment) -> tuple[dict[int, np.ndarray], int]:
    """Per group, new pods per allowed class (aligned with ``cands.allowed[g]``); pods dropped."""
    cands = xv.cands
    node_class = np.full(problem.n_nodes, -1, dtype=np.int64)
    for c, nodes in enumerate(cands.classes.nodes):
        node_class[nodes] = c
    twin_rank = _twin_relabel(problem, cands, assignment)
    out: dict[int, np.ndarray] = {}
    dropped = 0
    for g, allowed in cands.allowed.items():
        pos = {c: k for k, c in enumerate(allowed.tolist())}
        counts = np.zeros(len(allowed), dtype=np.int64)
        for n, cnt in assignment.counts.get(g, {}).items():
            if cnt <= 0:
                continue
            c = twin_rank.get(int(node_class[n]), int(node_class[n]))
            k = pos.get(c)
            if k is None:
                dropped += cnt
                continue
            counts[k] += cnt
        out[g] = counts
    for g, per in assignment.counts.items():
        if g not in cands.allowed:
            dropped += sum(c for c in per.values() if c > 0)
    return out, dropped


def _twin_relabel(problem: Problem, cands, assignment: Assignment) -> dict[int, int]:
    """Map each split-out class to the twin slot its pod count ranks it into."""
    load: dict[int, int] = {}
    node_class = {int(nodes[0]): c for c, nodes in enumerate(cands.classes.nodes) if len(nodes) == 1}
    for per in assignment.counts.values():
        for n, cnt in per.items():
            c = node_class.get(int(n))
            if c is not None:
                load[c] = load.get(c, 0) + cnt
    relabel: dict[int, int] = {}
    for twins in cands.classes.twins:
        ranked = sorted(twins, key=lambda c: (-load.get(c, 0), c))
        relabel.update({c: slot for c, slot in zip(ranked, twins, strict=True)})
    return relabel


def _unit_values(xv: Variables, uv: UnitVars, counts: dict[int, np.ndarray], has: int, put) -> None:
    cands, problem = xv.cands, xv.problem
    running_homes = [int(problem.topology.node_home[n]) for n in uv.unit.running_nodes]

    def domains_used(level: int) -> tuple[set[int], bool]:
        dom = cands.class_domain[level]
        used: set[int] = set()
        stray = False
        for g in uv.unit.groups:
            for c, cnt in zip(cands.allowed.get(g, np.zeros(0, np.int64)).tolist(), counts.get(g, []), strict=False):
                if cnt > 0:
                    h = int(dom[c])
                    stray |= h < 0
                    used.add(h)
        for home in running_homes:
            h = int(cands.levels.domain[level, home])
            stray |= h < 0
            used.add(h)
        return used, stray

    if uv.hard_domain:
        used, _ = domains_used(uv.unit.hard_level)
        only = next(iter(used)) if has and len(used) == 1 else None
        for h, var in uv.hard_domain.items():
            put(var, int(h == only))
    for lvl, w in uv.within.items():
        used, stray = domains_used(lvl)
        doms = set(uv.unit.spread_domains.get(lvl, []))
        ok = bool(has) and not stray and len(used) == 1 and used <= doms
        if not isinstance(w, int):
            put(w, int(ok))
        only = next(iter(used)) if ok else None
        for h, var in uv.in_domain.get(lvl, {}).items():
            put(var, int(h == only))


def hint_from_assignment(problem: Problem, xv: Variables, assignment: Assignment) -> Hint:
    """A value for every model variable, derived from ``assignment``."""
    counts, dropped = class_counts(problem, xv, assignment)
    values: dict[int, int] = {}

    def put(var, value: int) -> None:
        if not isinstance(var, int):
            values[var.index] = int(value)

    cands = xv.cands
    for g, xs in xv.x.items():
        for var, cnt in zip(xs, counts[g].tolist(), strict=True):
            put(var, cnt)  # a count above the variable's bound shows up as an infeasible hint
    new_of = {g: int(counts[g].sum()) for g in counts}
    for j, y in xv.y.items():
        put(y, int(any(new_of.get(g, 0) for g in cands.job_units[j].groups)))
    for s, v in xv.v.items():
        put(v, int(any(new_of.get(g, 0) for g in cands.subjob_units[s].groups)))
    for s, r in xv.ready.items():
        su = cands.subjob_units[s]
        total = su.running + sum(new_of.get(g, 0) for g in su.groups)
        put(r, int(total >= su.minimum))
    for uv in xv.units:
        has = uv.has if isinstance(uv.has, int) else values.get(uv.has.index, 0)
        _unit_values(xv, uv, counts, has, put)
    leaf = cands.class_domain[0]
    touched = {int(leaf[c]) for g, cs in counts.items() for c, n in zip(cands.allowed[g].tolist(), cs.tolist(), strict=True) if n > 0}
    for h, t in xv.touched.items():
        put(t, int(h in touched))
    # classes aggregate identical nodes, so check node capacity here (the model cannot)
    usage = assignment.usage(problem)
    fits_nodes = bool((usage <= np.maximum(cands.idle, 0)).all())
    return Hint(values=values, complete=dropped == 0, dropped=dropped, fits_nodes=fits_nodes)


def apply_hint(model: cp_model.CpModel, values: dict[int, int]) -> None:
    """Replace the model's hint by ``values``."""
    model.proto.clear_solution_hint()
    hint = model.proto.solution_hint
    keys = sorted(values)
    hint.vars.extend(keys)
    hint.values.extend(values[k] for k in keys)


def hint_is_feasible(
    model: cp_model.CpModel, values: dict[int, int], settings, budget: float, *, wall_cap: float | None = None
) -> bool:
    """Solve a copy with every hinted variable fixed (no objective): does it satisfy the model?"""
    trial = model.clone()
    proto = trial.proto
    proto.clear_objective()
    proto.clear_solution_hint()
    for index, value in values.items():
        domain = proto.variables[index].domain
        if not domain[0] <= value <= domain[len(domain) - 1]:
            return False
        domain.clear()
        domain.extend([value, value])
    solver = cp_model.CpSolver()
    settings.configure(solver, budget, workers=1, wall_cap=wall_cap)
    solver.parameters.log_search_progress = False
    status = solver.solve(trial)
    return status in (cp_model.OPTIMAL, cp_model.FEASIBLE)

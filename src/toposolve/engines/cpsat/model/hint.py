"""Turn an :class:`Assignment` into a complete CP-SAT hint, apply it, and check it.

Why one module: a hint must give every model variable the value the constraints define for the
plan, so its encoding mirrors :mod:`.variables`, :mod:`.constraints` and :mod:`.eviction` and is
written once, here (:func:`hint_from_assignment`); which plan to encode is :mod:`.warmstart`'s
choice.

Placement: counts are summed per node class, and every indicator (placed, SubJob, ready, domain
use, within, touched, comm cells, GPU fragmentation node states) is derived from those counts.
Identical nodes split out of one class are relabelled by decreasing pod count first, so the
hint respects the symmetry-breaking order.
Evictions (when modelled): evicted pods per slot (moved with the relabelled nodes), each
victim's evicted / broken / justification literals, its cost, the reclaim budgets' choices.

A placement on a node the model has no variable for (outside the candidates), or an evicted pod
without a slot, makes the hint incomplete, and so infeasible; so does a node given more than its
idle resources (classes aggregate nodes, so the model alone would not notice; with evictions,
the evicted pods' room counts as idle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.comm import comm_hint
from toposolve.engines.cpsat.model.crossing import crossing_hint
from toposolve.engines.cpsat.model.gang_tree import gang_hint
from toposolve.engines.cpsat.model.gpu_frag import gpu_frag_hint
from toposolve.engines.cpsat.model.variables import UnitVars, Variables
from toposolve.policy.rules import gang_ready, held_by

if TYPE_CHECKING:
    from toposolve.engines.cpsat.model.eviction import EvictionModel
    from toposolve.engines.cpsat.model.model import PlacementModel


@dataclass
class Hint:
    values: dict[int, int]  # proto variable index -> value
    complete: bool  # every placement had a variable
    dropped: int  # pods placed where the model has no variable
    fits_nodes: bool = True  # no node receives more than its idle resources


def class_counts(problem: Problem, xv: Variables,
                 assignment: Assignment) -> tuple[dict[int, np.ndarray], int]:
    """Per group, new pods per allowed class (aligned with ``cands.allowed[g]``); pods dropped."""
    cands = xv.cands
    node_class = np.full(problem.n_nodes, -1, dtype=np.int64)
    for c, nodes in enumerate(cands.classes.nodes[: cands.classes.n_base]):
        node_class[nodes] = c
    twin_rank = _twin_relabel(problem, cands, assignment)
    out: dict[int, np.ndarray] = {}
    dropped = 0
    for g, allowed in cands.allowed.items():
        pos = {c: k for k, c in enumerate(allowed.tolist())}
        lifted = cands.classes.of_base.get(cands.lift_level.get(g, 0))  # None: the base classes
        counts = np.zeros(len(allowed), dtype=np.int64)
        for n, cnt in assignment.counts.get(g, {}).items():
            if cnt <= 0:
                continue
            c = twin_rank.get(int(node_class[n]), int(node_class[n]))
            if lifted is not None and c >= 0:
                c = int(lifted[c])
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
    node_class = {int(nodes[0]): c
            for c,
            nodes in enumerate(cands.classes.nodes[: cands.classes.n_base]) if len(nodes) == 1}
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
            for c, cnt in zip(cands.allowed.get(g, np.zeros(0, np.int64)).tolist(),
                              counts.get(g, []), strict=False):
                if cnt > 0:
                    h = int(dom[c])
                    stray |= h < 0
                    used.add(h)
        for home in running_homes:
            h = int(cands.levels.domain[level, home])
            stray |= h < 0
            used.add(h)
        return used, stray

    crossing_hint(uv, counts, cands.allowed, put)
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


def hint_from_assignment(pm: PlacementModel, assignment: Assignment) -> Hint:
    """A value for every variable of ``pm`` (placement and, when modelled, eviction), derived
    from ``assignment``."""
    hint = _placement_hint(pm.problem, pm.vars, assignment)
    if pm.devices is not None:
        hint = _with_devices(pm, assignment, hint)
    if pm.evict is None:
        return hint
    values, stray = _eviction_values(pm.evict, assignment)
    return Hint(values={**hint.values, **values}, complete=hint.complete and stray == 0,
            dropped=hint.dropped + stray, fits_nodes=_fits_after_evictions(pm.problem, assignment))


def _with_devices(pm: PlacementModel, assignment: Assignment, hint: Hint) -> Hint:
    """``hint`` and the device variables' values: the plan's device picks, moved with the
    relabelled twin nodes; pods that do not fit the devices make it not fit."""
    cands = pm.cands
    relabel = _twin_relabel(pm.problem, cands, assignment)
    node_map = {int(cands.classes.nodes[c][0]): int(cands.classes.nodes[slot][0])
                for c, slot in relabel.items()}
    values = pm.devices.hint_values(assignment, node_map)
    if values is None:
        return Hint(values=hint.values, complete=hint.complete, dropped=hint.dropped,
                    fits_nodes=False)
    return Hint(values={**hint.values, **values}, complete=hint.complete,
                dropped=hint.dropped, fits_nodes=hint.fits_nodes)


def _placement_hint(problem: Problem, xv: Variables, assignment: Assignment) -> Hint:
    """Values of the placement variables (counts and their indicators)."""
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

    def gang_unit_values(uv: UnitVars) -> None:
        has = uv.has if isinstance(uv.has, int) else values.get(uv.has.index, 0)
        _unit_values(xv, uv, counts, has, put)

    gang_hint(problem, xv, new_of, put, gang_unit_values)
    leaf = cands.class_domain[0]
    touched = {int(leaf[c]) for g, cs in counts.items() for c, n in zip(cands.allowed[g].tolist(),
            cs.tolist(), strict=True) if n > 0}
    for h, t in xv.touched.items():
        put(t, int(h in touched))
    comm_hint(xv, counts, put)
    gpu_frag_hint(xv, counts, put)
    if xv.shared:  # nodes of each base class holding non-exclusive pods
        sharing = {n for g, per in assignment.counts.items() if g not in cands.exclusive
                   for n, c in per.items() if c > 0}
        for c, shared in xv.shared.items():
            put(shared, sum(1 for n in cands.classes.nodes[c].tolist() if n in sharing))
    # classes aggregate identical nodes, so check node capacity here (the model cannot)
    usage = assignment.usage(problem)
    fits_nodes = bool((usage <= np.maximum(cands.idle, 0)).all())
    return Hint(values=values, complete=dropped == 0, dropped=dropped, fits_nodes=fits_nodes)


def _fits_after_evictions(problem: Problem, assignment: Assignment) -> bool:
    """No node receiving new pods gets more than it has idle once the evicted pods are gone
    (checked node by node: the model's classes cannot see it)."""
    left = problem.allocatable - problem.used - assignment.usage(problem)
    for pod in assignment.evicted:
        if pod in problem.running_pods:
            left[problem.running_pods[pod]] += problem.group_request[problem.pod_group[pod]]
    touched = sorted({n for per in assignment.counts.values() for n, c in per.items() if c > 0})
    return bool((left[touched] >= 0).all()) if touched else True


def _eviction_values(em: EvictionModel, assignment: Assignment) -> tuple[dict[int, int], int]:
    """Values of the eviction variables for ``assignment``; and its evicted pods that have no
    slot (a hint with any is infeasible)."""
    values: dict[int, int] = {}

    def put(var, value) -> None:
        if not isinstance(var, int):
            values[var.index] = int(value)

    # identical slot nodes split from one class are ordered by new pods (symmetry breaking):
    # the hint's placements are relabelled that way, so its evictions must move with them
    classes = em.cands.classes.nodes
    node_map = {
        int(classes[c][0]): int(classes[t][0]) for c, t in _twin_relabel(em.problem, em.cands,
                                                                         assignment).items()
    }
    counts, stray = _slot_counts(em, assignment, node_map)
    for i, k in enumerate(counts):
        put(em.e[i], k)
        put(em.hit[i], k > 0)
    _gone_values(em, assignment, node_map, put)
    lost: dict[int, int] = {}
    for i, k in enumerate(counts):
        lost[em.spec.slots[i].group] = lost.get(em.spec.slots[i].group, 0) + k
    _victim_values(em, assignment, counts, lost, put)
    _reclaim_values(em, values, lost, put)
    back = {t: n for n, t in node_map.items()}
    for n, busy in em.busy.items():
        put(busy, any(per.get(back.get(n, n), 0) for per in assignment.counts.values()))
    return values, stray


def _slot_counts(em: EvictionModel, assignment: Assignment,
                 node_map: dict[int, int]) -> tuple[list[int], int]:
    """Evicted pods per slot (on the relabelled nodes) and the evicted pods with no slot."""
    problem = em.problem
    slot_at = {(s.group, s.node): i for i, s in enumerate(em.spec.slots)}
    counts = [0] * len(em.spec.slots)
    stray = 0
    for pod in set(assignment.evicted):
        n = problem.running_pods.get(pod)
        i = None if n is None else slot_at.get((problem.pod_group[pod], node_map.get(n, n)))
        if i is None:
            stray += 1
        else:
            counts[i] += 1
    return counts, stray


def _gone_values(em: EvictionModel, assignment: Assignment, node_map: dict[int, int],
                 put) -> None:
    """Which pods of each device-holding slot ``assignment`` evicts (a pod keeps its place in
    its slot's order when its node is relabelled: twins hold the same, pod by pod); among pods
    holding the same devices, the first ones in slot order (the model's symmetry rule)."""
    problem, slots = em.problem, em.spec.slots
    position = {p: (s.group, s.node, k) for s in slots for k, p in enumerate(s.pods)}
    slot_at = {(s.group, s.node): i for i, s in enumerate(slots)}
    chosen: dict[int, set[int]] = {}
    for pod in set(assignment.evicted):
        n = problem.running_pods.get(pod)
        if pod not in position or n is None:
            continue
        g, _, k = position[pod]
        i = slot_at.get((g, node_map.get(n, n)))
        if i is not None and i in em.gone:
            chosen.setdefault(i, set()).add(k)
    for i, gone in em.gone.items():
        held = em.spec.pod_devices[i]
        rows = [held[k].tobytes() for k in range(len(gone))]
        left = {r: sum(rows[k] == r for k in chosen.get(i, ())) for r in set(rows)}
        for k, var in enumerate(gone):
            put(var, left[rows[k]] > 0)
            left[rows[k]] -= left[rows[k]] > 0


def _victim_values(em: EvictionModel, assignment: Assignment, counts: list[int],
                   lost: dict[int, int], put) -> None:
    """Per victim: evicted, justified by preempt or reclaim, its ready SubJobs, broken, cost."""
    problem, spec = em.problem, em.spec
    placed = assignment.placed_jobs(problem)
    for v, ev in em.ev.items():
        hit = any(counts[i] for i in em.slots_of_job[v])
        put(ev, hit)
        by_preempt = hit and any(p in placed for p in spec.preempt_by.get(v, []))
        if v in em.pre and em.pre[v] is not ev:
            put(em.pre[v], by_preempt)
            put(em.rec[v], hit and not by_preempt)
        cj = problem.jobs[v]
        running = problem.running_per_group(cj.groups)
        kept = {g: running[g] - lost.get(g, 0) for g in cj.groups}
        for s in cj.subjobs:
            if s in em.sready:
                put(em.sready[s], sum(kept[g]
                        for g in problem.subjobs[s].groups) >= problem.subjobs[s].min_available)
        broken = em.ready_before.get(v, False) and hit and not gang_ready(problem, v, kept)
        if v in em.brk:
            put(em.brk[v], broken)
            lost_weight = held_by(problem, v, lost, em.weights)
            put(em.cost[v], held_by(problem, v, running, em.weights) if broken else lost_weight)


def _reclaim_values(em: EvictionModel, values: dict[int, int], lost: dict[int, int], put) -> None:
    """Pods counted against each victim queue's reclaim budget, and the budget each one meets."""
    problem = em.problem
    for g, var in em.reclaimed.items():
        v = int(problem.group_job[g])
        put(var, 0 if values.get(em.pre[v].index) else lost.get(g, 0))
    for queue, options in em.spec.budgets.items():
        taken = {r: _reclaimed(em, queue, r, values, lost) for r, _ in options}
        chosen = next((r for r, b in options if taken[r][0] - taken[r][1] <= b), None)
        for r, _ in options:
            if (queue, r) in em.choice:
                put(em.choice[(queue, r)], r == (options[0][0] if chosen is None else chosen))
            for level, z in em.largest.get((queue, r), []):
                put(z, taken[r][1] >= level)


def _reclaimed(em: EvictionModel, queue: str, res: int, values: dict[int, int],
               lost: dict[int, int]) -> tuple[int, int]:
    """Total and largest request (resource ``res``) of the pods taken from ``queue`` by
    reclaim in a hint."""
    total = largest = 0
    for g, k in lost.items():
        v = int(em.problem.group_job[g])
        if k == 0 or em.problem.jobs[v].queue != queue or v not in em.rec:
            continue
        if em.rec[v] is em.ev[v] or values.get(em.rec[v].index):
            request = int(em.problem.group_request[g, res])
            total += request * k
            largest = max(largest, request)
    return total, largest


def apply_hint(model: cp_model.CpModel, values: dict[int, int]) -> None:
    """Replace the model's hint by ``values``."""
    model.proto.clear_solution_hint()
    hint = model.proto.solution_hint
    keys = sorted(values)
    hint.vars.extend(keys)
    hint.values.extend(values[k] for k in keys)


def hint_is_feasible(model: cp_model.CpModel, values: dict[int, int], settings, budget: float, *,
                     wall_cap: float | None = None) -> bool | None:
    """Solve a copy with every hinted variable fixed (no objective): does it satisfy the model?
    None when the check ran out of time before it could tell."""
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
    if status == cp_model.UNKNOWN:
        return None
    return status in (cp_model.OPTIMAL, cp_model.FEASIBLE)

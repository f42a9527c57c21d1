"""CP-SAT model of gang trees deeper than job → SubJob (the Problem's GangNodes).

Per GangNode ``n`` of a modelled job (:class:`GangUnits` in the candidates, :class:`GangVars` in
the model):

* a unit like a SubJob's: its pods are those of every SubJob below it; with a hard limit tighter
  than what already contains it (its job's or an enclosing GangNode's), ``hard_domain[h]`` picks
  one candidate domain of that level and its pods' classes are restricted to the candidates —
  a child's candidates are taken inside its parent's, so a child's domain choice lies in its
  parent's (nested containment);
* ``has[n]``: it receives new pods (⇒ its job does); ``sat[n]``: it is satisfied, which forces at
  least ``min_members`` of its direct members satisfied — a GangNode through its ``sat``, a
  SubJob through ``ready[s]`` (it reaches its size: running + new ≥ min_available);
* the job placed ⇒ its top GangNodes satisfied; a GangNode with new pods ⇒ satisfied (the
  checker's rules, :mod:`toposolve.check.gang_tree`).

Spread objectives stay per job and SubJob (GangNodes add no objective term).
"""

from __future__ import annotations

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.crossing import add_crossing_domain
from toposolve.engines.cpsat.model.variables import GangVars, Variables


def min_pods(problem: Problem, n: int) -> int:
    """The fewest pods that satisfy GangNode ``n``: its ``min_members`` smallest member minimums."""
    node = problem.gang_nodes[n]
    sizes = sorted([min_pods(problem,
            c) for c in node.children] + [problem.subjobs[s].min_available for s in node.subjobs])
    return sum(sizes[: node.min_members])


def subjobs_below(problem: Problem, n: int) -> list[int]:
    node = problem.gang_nodes[n]
    return [s for c in node.children for s in subjobs_below(problem, c)] + list(node.subjobs)


def add_gang_constraints(cons) -> None:
    """``has`` ⇔ new pods, ⇒ the job and ``sat``; ``sat`` ⇒ enough satisfied members; the job
    placed ⇒ its top GangNodes satisfied; hard domains per GangNode."""
    model, problem, xv = cons.model, cons.problem, cons.xv
    gv: GangVars = xv.gang
    for s, r in gv.ready.items():
        su = cons.cands.subjob_units[s]
        new = sum(xv.new_of(g) for g in su.groups)
        if su.minimum - su.running > 0:
            model.add(new >= (su.minimum - su.running) * r)
    for n, has in gv.has.items():
        node, unit = problem.gang_nodes[n], cons.cands.gang_units[n]
        new = sum(xv.new_of(g) for g in unit.groups)
        pending = sum(len(problem.group_pending[g]) for g in unit.groups)
        model.add(new >= has)
        model.add(new <= pending * has)
        model.add_implication(has, xv.y[node.job])
        model.add_implication(has, gv.sat[n])
        if node.parent < 0:
            model.add_implication(xv.y[node.job], gv.sat[n])
        members = [gv.sat[c] for c in node.children] + [_ready(cons, gv, s) for s in node.subjobs]
        model.add(sum(members) >= node.min_members * gv.sat[n])
    for uv in gv.units:
        cons.add_hard_domain(uv)
        add_crossing_domain(cons, uv)


def _ready(cons, gv: GangVars, s: int):
    """SubJob ``s`` satisfied: its literal, or a constant when it has nothing to place."""
    if s in gv.ready:
        return gv.ready[s]
    sj = cons.problem.subjobs[s]
    return int(cons.problem.running_count(sj.groups) >= sj.min_available)


def gang_hint(problem: Problem, xv: Variables, new_of: dict[int, int], put, unit_values) -> None:
    """Hint values of the GangNode variables for an assignment's new pods per group."""
    gv: GangVars = xv.gang
    cands = xv.cands

    def total(groups: list[int], running: int) -> int:
        return running + sum(new_of.get(g, 0) for g in groups)

    ready = {s: total(cands.subjob_units[s].groups,
                      cands.subjob_units[s].running) >= cands.subjob_units[s].minimum
             for s in gv.ready}
    for s, r in gv.ready.items():
        put(r, int(ready[s]))
    sat: dict[int, bool] = {}
    for n in sorted(gv.sat, key=lambda k: -problem.gang_nodes[k].depth):  # deepest first
        node = problem.gang_nodes[n]
        count = sum(sat.get(c, False) for c in node.children)
        count += sum(
            ready.get(
                s,
                problem.running_count(problem.subjobs[s].groups)
                >= problem.subjobs[s].min_available,
            )
            for s in node.subjobs
        )
        sat[n] = count >= node.min_members
        put(gv.sat[n], int(sat[n]))
        put(gv.has[n], int(any(new_of.get(g, 0) for g in cands.gang_units[n].groups)))
    for uv in gv.units:
        unit_values(uv)

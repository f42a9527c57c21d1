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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ortools.sat.python import cp_model

from toposolve.core.problem import Problem

if TYPE_CHECKING:
    from toposolve.engines.cpsat.candidates import Candidates, Unit, _Builder
    from toposolve.engines.cpsat.variables import UnitVars, Variables


def min_pods(problem: Problem, n: int) -> int:
    """The fewest pods that satisfy GangNode ``n``: its ``min_members`` smallest member minimums."""
    node = problem.gang_nodes[n]
    sizes = sorted([min_pods(problem, c) for c in node.children] + [problem.subjobs[s].min_available for s in node.subjobs])
    return sum(sizes[: node.min_members])


def add_gang_units(builder: _Builder, cands: Candidates, j: int, job_unit: Unit, allowed_mask, fit_all) -> None:
    """Units of job ``j``'s GangNodes, parents first, restricting their groups' classes to their
    hard candidates (inside the parent's, as the mask already holds the parent's restriction)."""
    from toposolve.engines.cpsat.candidates import (  # candidates imports this module
        Unit,
        _running_nodes,
    )

    problem = builder.problem
    for n in problem.jobs[j].gang_nodes:
        node = problem.gang_nodes[n]
        all_groups = [g for s in subjobs_below(problem, n) for g in problem.subjobs[s].groups]
        groups = [g for g in all_groups if problem.group_pending[g]]
        unit = Unit(groups=groups, running=problem.running_count(all_groups), minimum=min_pods(problem, n),
                    running_nodes=_running_nodes(problem, all_groups))
        above = job_unit if node.parent < 0 else cands.gang_units[node.parent]
        unit.contained_level = above.contained_level
        cands.gang_units[n] = unit
        builder.confine(unit, groups, node.limit, allowed_mask, fit_all)


def subjobs_below(problem: Problem, n: int) -> list[int]:
    node = problem.gang_nodes[n]
    return [s for c in node.children for s in subjobs_below(problem, c)] + list(node.subjobs)


@dataclass
class GangVars:
    has: dict[int, cp_model.IntVar] = field(default_factory=dict)
    sat: dict[int, cp_model.IntVar] = field(default_factory=dict)
    ready: dict[int, cp_model.IntVar] = field(default_factory=dict)  # SubJobs below GangNodes
    units: list[UnitVars] = field(default_factory=list)

    def all_vars(self) -> list[cp_model.IntVar]:
        out = [*self.has.values(), *self.sat.values(), *self.ready.values()]
        return out + [v for uv in self.units for v in uv.hard_domain.values()]


def gang_vars(xv: Variables) -> GangVars:
    """The variables of every modelled GangNode (none without GangNodes)."""
    model, problem, cands = xv.model, xv.problem, xv.cands
    gv = GangVars()
    for n, unit in cands.gang_units.items():
        if problem.gang_nodes[n].job not in xv.y:
            continue  # its job is not modelled (nothing of it can be placed)
        gv.has[n] = model.new_bool_var(f"gang_has_{n}")
        gv.sat[n] = model.new_bool_var(f"gang_sat_{n}")
        has = xv.y[problem.gang_nodes[n].job] if unit.running else gv.has[n]
        gv.units.append(xv._unit_vars("gangnode", n, unit, has))
        for s in problem.gang_nodes[n].subjobs:
            if s in cands.subjob_units:
                gv.ready[s] = model.new_bool_var(f"gang_ready_{s}")
    return gv


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

    ready = {s: total(cands.subjob_units[s].groups, cands.subjob_units[s].running) >= cands.subjob_units[s].minimum
             for s in gv.ready}
    for s, r in gv.ready.items():
        put(r, int(ready[s]))
    sat: dict[int, bool] = {}
    for n in sorted(gv.sat, key=lambda k: -problem.gang_nodes[k].depth):  # deepest first
        node = problem.gang_nodes[n]
        count = sum(sat.get(c, False) for c in node.children)
        count += sum(ready.get(s, problem.running_count(problem.subjobs[s].groups) >= problem.subjobs[s].min_available)
                     for s in node.subjobs)
        sat[n] = count >= node.min_members
        put(gv.sat[n], int(sat[n]))
        put(gv.has[n], int(any(new_of.get(g, 0) for g in cands.gang_units[n].groups)))
    for uv in gv.units:
        unit_values(uv)

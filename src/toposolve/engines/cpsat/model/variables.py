"""The CP-SAT variables, created only where :mod:`.candidates` allows.

* ``x[g][k]``: new pods of group ``g`` on class ``cands.allowed[g][k]`` (integer, at most what
  fits on the class's nodes and at most the group's pending pods).
* ``y[j]``: job ``j`` receives new pods.
* ``v[s]``: policy SubJob ``s`` receives new pods; ``ready[s]``: ``s`` reaches subGroupSize
  (only for jobs with minSubGroups).
* Per job / SubJob (:class:`UnitVars`): ``has`` (it has pods after the plan and its job is
  placed), ``hard_domain[h]`` (all its pods in candidate ``h`` of its hard level), and for each
  spread level ``l`` below its contained level ``within[l]`` (all its pods under one level-``l``
  domain) with ``in_domain[l][h]`` (all its pods in candidate ``h``; only when there are
  several candidates). These domain choices are what the search branches on: a job → domain
  assignment, as in bin packing.
* ``touched[h]``: an initially idle leaf HyperNode receives new pods.
* Lifted model (:mod:`.lift`): ``shared[c]``, nodes of base class ``c`` given to non-exclusive
  pods, where exclusive pods may also go; ``lifted_touched``, the count variables of exclusive
  groups on lifted classes of idle one-node leaves (each pod touches one leaf). Trivial units
  (at most one pod) have no domain or ``within`` variables.
* ``comm`` (:class:`CommVars`): the ``comm`` stage's cell literals, built by :mod:`.comm`;
  ``frag`` (:class:`FragVars`): the ``gpu_fragmentation`` stage's, built by :mod:`.gpu_frag`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.classes import Candidates, Unit
from toposolve.policy.objective import initially_idle_leaves

Literal = cp_model.IntVar | int


@dataclass
class UnitVars:
    kind: str  # "job" | "subjob"
    index: int
    unit: Unit
    has: Literal
    hard_domain: dict[int, cp_model.IntVar] = field(default_factory=dict)
    within: dict[int, Literal] = field(default_factory=dict)
    in_domain: dict[int, dict[int, cp_model.IntVar]] = field(default_factory=dict)
    # a hard limit in a constraint tree: domain of that tree -> chosen (:mod:`.crossing`)
    crossing_domain: dict[int, cp_model.IntVar] = field(default_factory=dict)


@dataclass
class CommVars:
    """The ``comm`` stage's literals (:mod:`.comm`)."""

    # (job, level, cell key) -> literal, and the (group, class) count variables it covers
    uses: dict[tuple, cp_model.IntVar] = field(default_factory=dict)
    covers: dict[tuple, list[tuple[int, int]]] = field(default_factory=dict)
    # (job, level) -> (literal "in one cell", its cell keys, cells its running pods hold)
    single: dict[tuple[int, int], tuple[cp_model.IntVar, list[tuple], int]] = field(
        default_factory=dict)

    # (job, level, axis) -> (literal "every cell holds whole DP components / pipelines", their
    # size, and per cell its multiple-of-size variable, covered (group, class) pairs and running
    # pods there)
    aligned: dict[tuple[int, int, str], tuple[cp_model.IntVar, int, list[tuple]]] = field(
        default_factory=dict)

    # (job, level, "dp") -> per cell of ``aligned``'s, its count's remainder mod ``dp`` (where
    # :func:`.comm.span_floor_expr` makes the literal exact)
    remainders: dict[tuple[int, int, str], list[cp_model.IntVar]] = field(default_factory=dict)

    # (job, leaf cell key) -> (its pod count variable, the edge-floor variable, covered (group,
    # class) pairs, running pods there, the job's part_boundary table) (:func:`.comm.floor_expr`)
    floors: dict[tuple[int, tuple], tuple] = field(default_factory=dict)
    # job -> (its span-floor variable, the capped level's dp literal, (partial-leaf literal,
    # leaf count variable) pairs, the leaf floor variables, the capped level's use literals,
    # cells its running pods hold there, its split prices, dp, the leaf-floor and split-price
    # variables) (:func:`.comm.span_floor_expr`)
    span_floors: dict[int, tuple] = field(default_factory=dict)

    def all_vars(self) -> list[cp_model.IntVar]:
        out = [*self.uses.values(), *(one for one, _, _ in self.single.values())]
        out += [v for n, f, *_ in self.floors.values() for v in (n, f)]
        for v, _, partials, *_, floor, split in self.span_floors.values():
            out += [v, floor, split, *(p for p, _ in partials)]
        for lit, _, cells in self.aligned.values():
            out += [lit, *(q for q, _, _ in cells)]
        out += [r for rests in self.remainders.values() for r in rests]
        return out


@dataclass
class FragNode:
    """One node of the ``gpu_fragmentation`` stage (:mod:`.gpu_frag`)."""

    node: int
    start: tuple[int, int, int]  # free accelerator milli, CPU, memory before the plan
    # (group, count variable, upper bound, position among the group's allowed classes)
    entries: list[tuple[int, cp_model.IntVar, int, int]]
    use: list[tuple[int, int, int]] = field(default_factory=list)  # per entry, one pod's take
    final: dict[int, cp_model.IntVar] = field(default_factory=dict)  # resource -> free after
    q: cp_model.IntVar | None = None  # whole free devices after the plan (None: never changes)
    r: cp_model.IntVar | None = None  # milli free on the partly used one
    part: dict[int, tuple[cp_model.IntVar, cp_model.IntVar]] = field(default_factory=dict)
    lits: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    z: list[tuple[int, cp_model.IntVar]] = field(default_factory=list)  # (shape, usable if hosted)

    def all_vars(self) -> list[cp_model.IntVar]:
        out = [*self.final.values(), *(v for v in (self.q, self.r) if v is not None)]
        out += [v for pair in self.part.values() for v in pair]
        return out + list(self.lits.values()) + [z for _, z in self.z]


@dataclass
class FragVars:
    """The ``gpu_fragmentation`` stage's nodes and the target workload it was built for."""

    nodes: list[FragNode] = field(default_factory=list)
    target: Any = None  # :class:`toposolve.policy.fgd_measure.TargetWorkload`

    def all_vars(self) -> list[cp_model.IntVar]:
        return [v for node in self.nodes for v in node.all_vars()]


class Variables:
    def __init__(self, model: cp_model.CpModel, problem: Problem, cands: Candidates) -> None:
        self.model = model
        self.problem = problem
        self.cands = cands
        self.x: dict[int, list[cp_model.IntVar]] = {}
        self.y: dict[int, cp_model.IntVar] = {}
        self.v: dict[int, cp_model.IntVar] = {}
        self.ready: dict[int, Literal] = {}
        self.units: list[UnitVars] = []
        self.touched: dict[int, cp_model.IntVar] = {}
        self.shared: dict[int, cp_model.IntVar] = {}
        self.lifted_touched: list[tuple[cp_model.IntVar, int]] = []  # (count variable, upper bound)
        self.comm = CommVars()  # filled by :mod:`.comm` when the profile asks for the stage
        self.frag = FragVars()  # filled by :mod:`.gpu_frag` likewise
        self._create()
        self.gang = gang_vars(self)  # GangNodes (deeper gang trees), empty otherwise
        counted: set[int] = set()  # idle leaves whose touched count the lifted model gives
        if cands.lift_level:
            counted = self._create_lifted()
        if cands.scope.objective:
            leaf_of_class = cands.class_domain[0]
            used = {int(leaf_of_class[c]) for g in self.x for c in cands.allowed[g].tolist()}
            for h in sorted((initially_idle_leaves(problem) & used) - counted):
                self.touched[h] = self.model.new_bool_var(f"touched_{h}")

    # ---- creation ----------------------------------------------------------------------------
    def _create(self) -> None:
        model, problem, cands = self.model, self.problem, self.cands
        for j in cands.jobs:
            self.y[j] = model.new_bool_var(f"y_{j}")
            for g in cands.job_units[j].groups:
                if g in cands.allowed:
                    self.x[g] = [
                        model.new_int_var(0, int(ub), f"x_{g}_{c}")
                        for c,
                        ub in zip(cands.allowed[g].tolist(), cands.ub[g].tolist(), strict=True)
                    ]
        for j in cands.jobs:
            cj = problem.jobs[j]
            for s in cj.subjobs:
                su = cands.subjob_units.get(s)
                if su is None:
                    continue
                if su.groups:
                    self.v[s] = model.new_bool_var(f"v_{s}")
                if problem.subjobs[s].policy in cj.min_subjobs:
                    self.ready[s] = self._ready_literal(s, su)
            self.units.append(self._unit_vars("job", j, cands.job_units[j], self.y[j]))
            for s in cj.subjobs:
                su = cands.subjob_units.get(s)
                if su is None or (not su.groups and not su.running):
                    continue
                has = self.y[j] if su.running else self.v[s]
                self.units.append(self._unit_vars("subjob", s, su, has))

    def _create_lifted(self) -> set[int]:
        """``shared`` where exclusive pods may also go; what counts touched leaves: exclusive
        pods on lifted classes of idle one-node leaves and, on a base class that is an idle
        one-node leaf with ``shared``, its shared node and exclusive pods (no ``touched``
        literal there). Returns those base classes' leaves."""
        cands, classes = self.cands, self.cands.classes
        covered: set[int] = set()  # base classes some exclusive group may use
        hosts: set[int] = set()  # classes some non-exclusive group may use
        for g in self.x:
            for c in cands.allowed[g].tolist():
                if g in cands.exclusive:
                    covered.update(classes.base_of(c))
                else:
                    hosts.add(c)
        for c in sorted(hosts):
            if any(b in covered for b in classes.base_of(c)):
                self.shared[c] = self.model.new_int_var(0, int(classes.size[c]), f"shared_{c}")
        if not cands.scope.objective:
            return set()
        idle, count, leaf = (initially_idle_leaves(self.problem), self.problem.topology.node_count,
                             cands.class_domain[0])
        alone = {c for c in self.shared if int(leaf[c]) in idle and count[int(leaf[c])] == 1}
        # shared nodes of such a base class or of a lifted class of idle one-node leaves
        self.lifted_touched += [
            (var, int(classes.size[c]))
            for c, var in sorted(self.shared.items())
            if c in alone or classes.one_node_leaves[c]
        ]
        for g, xs in self.x.items():
            if g not in cands.exclusive:
                continue
            for c, var, ub in zip(cands.allowed[g].tolist(), xs, cands.ub[g].tolist(), strict=True):
                if classes.one_node_leaves[c] or c in alone:
                    self.lifted_touched.append((var, ub))
        return {int(leaf[c]) for c in alone}

    def _ready_literal(self, s: int, su: Unit) -> Literal:
        size = self.problem.subjobs[s].min_available
        if su.running >= size:
            return 1
        if not su.groups or s not in self.v:
            return 0
        return self.model.new_bool_var(f"ready_{s}")

    def _unit_vars(self, kind: str, index: int, unit: Unit, has: Literal) -> UnitVars:
        model = self.model
        uv = UnitVars(kind=kind, index=index, unit=unit, has=has)
        tag = f"{kind[0]}{index}"
        if unit.trivial:
            return uv  # one pod: within one domain of every level, nothing to choose
        if unit.hard_level is not None and len(unit.hard_domains) > 1 and unit.groups:
            uv.hard_domain = {h: model.new_bool_var(f"hard_{tag}_{h}") for h in unit.hard_domains}
        if self.cands.scope.objective:
            for lvl, doms in sorted(unit.spread_domains.items()):
                if not doms:
                    uv.within[lvl] = 0
                    continue
                uv.within[lvl] = model.new_bool_var(f"within_{tag}_l{lvl}")
                if len(doms) > 1:
                    uv.in_domain[lvl] = {
                        h: model.new_bool_var(f"use_{tag}_l{lvl}_{h}") for h in doms
                    }
        return uv

    # ---- views -------------------------------------------------------------------------------
    def new_of(self, g: int) -> cp_model.LinearExprT:
        return sum(self.x.get(g, []))

    def pods_of(self, groups: list[int]) -> list[tuple[int, int, cp_model.IntVar, int]]:
        """(group, class, var, upper bound) of every count variable of ``groups``."""
        out = []
        for g in groups:
            if g not in self.x:
                continue
            classes, ubs = self.cands.allowed[g].tolist(), self.cands.ub[g].tolist()
            out.extend(zip([g] * len(classes), classes, self.x[g], ubs, strict=True))
        return out

    def all_vars(self) -> list[cp_model.IntVar]:
        out: list[cp_model.IntVar] = [v for xs in self.x.values() for v in xs]
        out += list(self.y.values()) + list(self.v.values())
        out += [r for r in self.ready.values() if not isinstance(r, int)]
        for uv in self.units:
            out += list(uv.hard_domain.values()) + list(uv.crossing_domain.values())
            out += [w for w in uv.within.values() if not isinstance(w, int)]
            out += [u for d in uv.in_domain.values() for u in d.values()]
        out += list(self.touched.values()) + list(self.shared.values())
        return out + self.gang.all_vars() + self.comm.all_vars() + self.frag.all_vars()


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

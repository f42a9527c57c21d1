"""Where pods may go: classes of identical nodes, tier levels, candidate HyperNodes per job.

Rules chosen here (the model relies on them):

* **Node classes.** Nodes with the same home HyperNode, the same idle resources and the same
  predicate answer for every modelled pod group are interchangeable, so the model counts pods
  per (group, class) instead of per (group, node). Nodes in ``Scope.split_nodes`` form classes of
  their own (used when a class cannot be disaggregated, see :mod:`.disaggregate`).
* **Levels.** The distinct tiers ``T_0 < … < T_{L-1}`` (the root's tier last). The level-``l``
  domains ``D_l`` are the HyperNodes of tier ≤ ``T_l`` whose parent has a higher tier: pods are
  under one HyperNode of tier ≤ ``T_l`` iff they are under one member of ``D_l``. Members of
  ``D_l`` are disjoint.
* **Candidate domains** of a job (or SubJob) at level ``l``: members of ``D_l`` that hold all of
  its running pods and whose idle capacity, over the nodes some of its groups may use, covers
  the least it must add when it is placed (``max(1, min − running)`` pods, and a per-resource
  lower bound of their requests). Nothing else can hold the job at that level.
* **Hard limits.** A hard job's (SubJob's) pods may only use classes inside its candidate
  domains at the level of its limit (the highest level with ``T_l ≤ limit``). Soft limits
  constrain nothing.
* **Coarse model** (``Scope.aggregate_level = a > 0``, used when the exact model would be too
  large): classes group identical nodes of one level-``a`` domain, so nothing below level ``a``
  is visible. Hard limits below it are relaxed to level ``a``, spread below it counts as if
  within (``within_l = within_a``), and leaves below it have no fragmentation variables. Every
  change only relaxes, so the coarse model's optimum bounds the exact one; its counts are
  turned into a plan by :mod:`.repack`, which enforces the real limits.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.gang_tree import add_gang_units
from toposolve.engines.cpsat.lift import lift_candidates
from toposolve.policy.rules import task_minimums

UNLIMITED = 1 << 40  # fit of a pod that requests nothing


@dataclass(frozen=True)
class Scope:
    """What to model: the full problem by default; the reason finder narrows it."""

    jobs: tuple[int, ...] | None = None  # None: every job with pending pods
    used: np.ndarray | None = None  # [N, R] used resources instead of problem.used
    queue_used_extra: dict[str, np.ndarray] = field(default_factory=dict)
    ignore_limits: bool = False  # drop every hard limit (jobs and SubJobs)
    ignore_job_limits: bool = False  # drop only the jobs' own hard limits
    ignore_subjob_limits: bool = False  # drop only the SubJobs' hard limits
    ignore_queue: bool = False
    objective: bool = True  # build spread/fragmentation variables
    split_nodes: frozenset[int] = frozenset()
    # coarse model: nodes are grouped by their level-`aggregate_level` domain instead of their
    # home, and everything below that level is relaxed (see the module docstring)
    aggregate_level: int = 0
    # extra class key per node (eviction: the evictable pods it runs, see :mod:`.eviction`):
    # nodes with different keys are never identical
    node_keys: dict[int, tuple] = field(default_factory=dict)
    # exact aggregation of whole-node pods above the leaves (:mod:`.lift`); ignored in a coarse
    # model and with eviction keys
    lift: bool = False


@dataclass
class Levels:
    tiers: np.ndarray  # [L] ascending, root's tier last
    domain: np.ndarray  # [L, H] member of D_l holding HyperNode h (itself or an ancestor), -1 if none
    _members: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def root_level(self) -> int:
        return len(self.tiers) - 1

    def level_of_limit(self, tier: int) -> int:
        """Highest level whose tier is ≤ ``tier`` (-1 if none: nothing is allowed)."""
        return int(np.searchsorted(self.tiers, tier, side="right")) - 1

    def members(self, level: int) -> np.ndarray:
        cached = self._members.get(level)
        if cached is None:  # the repacking asks once per unit placed
            cached = self._members[level] = np.unique(self.domain[level][self.domain[level] >= 0])
        return cached


_LEVELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def build_levels(problem: Problem) -> Levels:
    """Levels of the problem's tree (cached per topology: the reason finder builds many models)."""
    cached = _LEVELS.get(problem.topology)
    if cached is None:
        cached = _LEVELS[problem.topology] = _compute_levels(problem)
    return cached


def _compute_levels(problem: Problem) -> Levels:
    topo = problem.topology
    tiers = np.unique(topo.tier)
    domain = np.full((len(tiers), len(topo.names)), -1, dtype=np.int64)
    for h in range(len(topo.names)):
        chain = topo.ancestors(h)  # lowest first, tiers strictly increasing
        for lvl, t in enumerate(tiers.tolist()):
            best = -1
            for a in chain:
                if topo.tier[a] > t:
                    break
                best = a
            domain[lvl, h] = best
    return Levels(tiers=tiers, domain=domain)


@dataclass
class NodeClasses:
    nodes: list[np.ndarray]  # class -> node indices, ascending
    home: np.ndarray  # [C] home HyperNode
    idle: np.ndarray  # [C, R] idle of one node of the class (clamped at 0)
    twins: list[list[int]]  # classes split from one class of identical nodes
    keys: list[tuple] = field(default_factory=list, repr=False)  # per base class, its key less the home
    # lifted classes (:mod:`.lift`) follow the base ones: their level and base classes
    base_count: int = -1  # -1: every class is a base class
    level: np.ndarray | None = None  # [C]
    members: list[np.ndarray] = field(default_factory=list)  # per lifted class, its base classes
    one_node_leaves: np.ndarray | None = None  # [C] lifted class of idle one-node leaves
    of_base: dict[int, np.ndarray] = field(default_factory=dict)  # level -> [C_base] class holding each base class
    domains: dict[int, list[np.ndarray]] = field(default_factory=dict)  # domain class -> its domains' nodes

    @cached_property
    def size(self) -> np.ndarray:  # nodes are never reassigned after the classes are built
        return np.array([len(n) for n in self.nodes], dtype=np.int64)

    @property
    def n_base(self) -> int:
        return len(self.nodes) if self.base_count < 0 else self.base_count

    def base_of(self, c: int) -> list[int]:
        """The base classes making up class ``c`` (itself when it is one)."""
        return [c] if c < self.n_base else self.members[c - self.n_base].tolist()

    def __len__(self) -> int:
        return len(self.nodes)


def class_homes(problem: Problem, levels: Levels, aggregate_level: int) -> np.ndarray:
    """[N] the HyperNode a node's class belongs to: its home, or its level-``aggregate_level``
    domain in a coarse model (the home when that is already higher)."""
    home = problem.topology.node_home
    if aggregate_level <= 0:
        return home
    lifted = levels.domain[aggregate_level][home]
    return np.where(lifted >= 0, lifted, home)


def build_classes(
    problem: Problem, idle: np.ndarray, feasible: np.ndarray, split: frozenset[int], homes: np.ndarray,
    node_keys: dict[int, tuple] | None = None,
) -> NodeClasses:
    """Group usable nodes (some modelled group may use them) into classes of identical nodes."""
    usable = feasible.any(axis=0) if feasible.size else np.zeros(problem.n_nodes, dtype=bool)
    keys: dict[tuple, int] = {}
    nodes: list[list[int]] = []
    rest: list[tuple] = []  # per class, its key less the home (split nodes: their own)
    split_of: dict[tuple, list[int]] = {}
    node_keys = node_keys or {}
    for n in np.flatnonzero(usable).tolist():
        key = (int(homes[n]), idle[n].tobytes(), np.packbits(feasible[:, n]).tobytes(), node_keys.get(n))
        if n in split:
            nodes.append([n])
            rest.append(("split", n))
            split_of.setdefault(key, []).append(len(nodes) - 1)
            continue
        c = keys.get(key)
        if c is None:
            keys[key] = c = len(nodes)
            nodes.append([])
            rest.append(key[1:])
        nodes[c].append(n)
    arrays = [np.array(ns, dtype=np.int64) for ns in nodes]
    first = np.array([ns[0] for ns in nodes], dtype=np.int64)
    R = idle.shape[1]
    return NodeClasses(
        nodes=arrays,
        home=homes[first] if len(first) else np.zeros(0, dtype=np.int64),
        idle=idle[first] if len(first) else np.zeros((0, R), dtype=np.int64),
        twins=[cs for cs in split_of.values() if len(cs) > 1],
        keys=rest,
    )


def pods_that_fit(request: np.ndarray, idle: np.ndarray) -> np.ndarray:
    """[C] pods of one request that fit on one node of each class."""
    positive = request > 0
    if not positive.any():
        return np.full(idle.shape[0], UNLIMITED, dtype=np.int64)
    return (idle[:, positive] // request[positive]).min(axis=1)


@dataclass
class Unit:
    """A job or a SubJob as the model sees it: its groups and where it may be."""

    groups: list[int]  # pending groups (every one of its groups, for the running side)
    running: int  # running pods
    minimum: int  # gang size (minAvailable / subGroupSize)
    running_nodes: list[int]
    hard_level: int | None = None  # level of its own hard limit; None: none
    hard_domains: list[int] = field(default_factory=list)  # candidates at hard_level
    # lowest level at which its pods are surely under one domain (own or its job's hard limit)
    contained_level: int | None = None
    # level -> candidate domains, for levels below the hard level and the root (spread)
    spread_domains: dict[int, list[int]] = field(default_factory=dict)
    # at most one pod in all, inside a domain of every level: no domain choice (:mod:`.lift`)
    trivial: bool = False


@dataclass
class Candidates:
    scope: Scope
    levels: Levels
    classes: NodeClasses
    class_domain: np.ndarray  # [L, C]
    idle: np.ndarray  # [N, R] idle under the scope's used resources
    jobs: list[int]  # modelled jobs (pending pods, some allowed class)
    job_units: dict[int, Unit]
    subjob_units: dict[int, Unit]  # policy SubJobs of modelled jobs
    allowed: dict[int, np.ndarray]  # group -> allowed classes
    ub: dict[int, np.ndarray]  # group -> per allowed class upper bound of new pods
    fit: dict[int, np.ndarray]  # group -> pods per node of each allowed class
    unplaceable: dict[int, str] = field(default_factory=dict)  # job -> structural reason
    lift_level: dict[int, int] = field(default_factory=dict)  # lifted group -> its level (:mod:`.lift`)
    exclusive: frozenset[int] = frozenset()  # groups whose pods hold a node alone (lifted model)
    gang_units: dict[int, Unit] = field(default_factory=dict)  # GangNodes of modelled jobs (gang_tree.py)


def _running_nodes(problem: Problem, groups: list[int]) -> list[int]:
    return sorted({n for g in groups for n, c in problem.group_running[g].items() if c > 0})


class _Builder:
    def __init__(self, problem: Problem, scope: Scope) -> None:
        self.problem = problem
        self.scope = scope
        used = problem.used if scope.used is None else scope.used
        self.idle = np.maximum(problem.allocatable - used, 0)
        self.levels = build_levels(problem)

    def room_ok(
        self, level: int, classes: np.ndarray, pods_per_class: np.ndarray, need_pods: int, need_res: np.ndarray
    ) -> np.ndarray:
        """Domains of ``level`` (ids) whose room over ``classes`` covers the needs."""
        dom = self.class_domain[level][classes]
        keep = dom >= 0
        dom, cls, pods = dom[keep], classes[keep], pods_per_class[keep]
        if dom.size == 0:
            return np.zeros(0, dtype=np.int64)
        H = self.levels.domain.shape[1]
        ok = np.bincount(dom, weights=np.minimum(pods, UNLIMITED).astype(float), minlength=H) >= need_pods
        sizes = self.classes.size[cls]
        for r in np.flatnonzero(need_res > 0).tolist():
            # float: int64 products of class size and milli-byte memory can overflow
            room = np.bincount(dom, weights=sizes.astype(float) * self.classes.idle[cls, r].astype(float), minlength=H)
            ok &= room >= need_res[r]
        present = np.zeros(H, dtype=bool)
        present[dom] = True
        return np.flatnonzero(ok & present)

    def candidate_domains(
        self, unit: Unit, level: int, classes: np.ndarray, pods: np.ndarray, need_res: np.ndarray
    ) -> list[int]:
        need_pods = max(1, unit.minimum - unit.running)
        found = self.room_ok(level, classes, pods, need_pods, need_res)
        if unit.running_nodes:
            lca = self.problem.topology.lca_of_nodes(unit.running_nodes)
            held = int(self.levels.domain[level, lca])
            return [held] if held >= 0 and held in set(found.tolist()) else []
        return found.tolist()

    def build(self) -> Candidates:
        """Node classes, then job by job its units, hard domains and allowed classes."""
        problem, scope = self.problem, self.scope
        jobs = list(problem.pending_jobs) if scope.jobs is None else list(scope.jobs)
        groups = [g for j in jobs for g in problem.jobs[j].groups if problem.group_pending[g]]
        fit_all = self._group_fits(groups)
        allowed_mask = {g: fit_all[g] > 0 for g in groups}
        cands = Candidates(
            scope=scope, levels=self.levels, classes=self.classes, class_domain=self.class_domain,
            idle=self.idle, jobs=[], job_units={}, subjob_units={}, allowed={}, ub={}, fit={},
        )
        for j in jobs:
            self._add_job(cands, j, allowed_mask, fit_all)
        if scope.lift and scope.aggregate_level == 0 and not scope.node_keys:
            lift_candidates(problem, cands)
        return cands

    def _group_fits(self, groups: list[int]) -> dict[int, np.ndarray]:
        """Build the node classes; per pending group, pods that fit on one node of each class."""
        problem, scope = self.problem, self.scope
        feasible = problem.group_feasible[groups] & problem.schedulable[None, :]
        homes = class_homes(problem, self.levels, scope.aggregate_level)
        self.classes = build_classes(problem, self.idle, feasible, scope.split_nodes, homes, scope.node_keys)
        C = len(self.classes)
        self.class_domain = (
            self.levels.domain[:, self.classes.home] if C else np.zeros((len(self.levels.tiers), 0), dtype=np.int64)
        )
        rep = np.array([ns[0] for ns in self.classes.nodes], dtype=np.int64)
        fit_all: dict[int, np.ndarray] = {}
        for g in groups:
            fits = pods_that_fit(problem.group_request[g], self.classes.idle) if C else np.zeros(0, dtype=np.int64)
            ok = problem.group_feasible[g][rep] & (fits > 0) if C else np.zeros(0, dtype=bool)
            fit_all[g] = np.where(ok, fits, 0)
        return fit_all

    def _add_job(self, cands: Candidates, j: int, allowed_mask, fit_all) -> None:
        """Job ``j``'s unit and hard domain, its SubJobs', and its groups' allowed classes."""
        problem, scope = self.problem, self.scope
        cj = problem.jobs[j]
        mine = [g for g in cj.groups if problem.group_pending[g]]
        unit = Unit(
            groups=mine,
            running=problem.job_running_count(j),
            minimum=cj.min_available,
            running_nodes=_running_nodes(problem, cj.groups),
        )
        need_res = self.job_need(j, unit)
        if cj.limit is not None and cj.limit.hard and not (scope.ignore_limits or scope.ignore_job_limits):
            lvl = self.lift(self.levels.level_of_limit(cj.limit.tier))
            if lvl < 0:
                cands.unplaceable[j] = f"no HyperNode has tier ≤ {cj.limit.tier}"
                return
            if lvl < self.levels.root_level:
                unit.hard_level = unit.contained_level = lvl
                cls, pods = self._unit_classes(mine, allowed_mask, fit_all)
                unit.hard_domains = self.candidate_domains(unit, lvl, cls, pods, need_res)
                inside = np.isin(self.class_domain[lvl], unit.hard_domains)
                for g in mine:
                    allowed_mask[g] &= inside
        add_gang_units(self, cands, j, unit, allowed_mask, fit_all)  # deeper gang trees only
        for s in cj.subjobs:
            if problem.subjobs[s].policy >= 0:
                self._add_subjob(cands, s, unit, allowed_mask, fit_all)
        if not any(allowed_mask[g].any() for g in mine):
            cands.unplaceable.setdefault(j, "no allowed node")
            return
        cands.jobs.append(j)
        cands.job_units[j] = unit
        sizes = self.classes.size
        for g in mine:
            cls = np.flatnonzero(allowed_mask[g])
            cands.allowed[g] = cls
            cands.fit[g] = fit_all[g][cls]
            cands.ub[g] = np.minimum(fit_all[g][cls] * sizes[cls], len(problem.group_pending[g]))
        if scope.objective:
            self.spread_candidates(unit, mine, allowed_mask, fit_all, need_res)
            for s in cj.subjobs:
                su = cands.subjob_units.get(s)
                if su is not None and su.groups:
                    self.spread_candidates(su, su.groups, allowed_mask, fit_all, self.unit_need(su.groups, su))

    def _add_subjob(self, cands: Candidates, s: int, unit: Unit, allowed_mask, fit_all) -> None:
        """A policy SubJob's unit and, with a hard limit tighter than its job's, its domains."""
        problem = self.problem
        sj = problem.subjobs[s]
        sub_groups = [g for g in sj.groups if problem.group_pending[g]]
        sunit = Unit(
            groups=sub_groups,
            running=problem.running_count(sj.groups),
            minimum=sj.min_available,
            running_nodes=_running_nodes(problem, sj.groups),
        )
        sunit.contained_level = unit.contained_level
        cands.subjob_units[s] = sunit
        self.confine(sunit, sub_groups, sj.limit, allowed_mask, fit_all)

    def confine(self, unit: Unit, groups: list[int], limit, allowed_mask, fit_all) -> None:
        """A SubJob's or GangNode's hard ``limit`` tighter than what contains ``unit``: its
        candidate domains at that level, and its ``groups`` restricted to them (to nothing when
        no level has that tier)."""
        scope = self.scope
        if not groups or limit is None or not limit.hard or scope.ignore_limits or scope.ignore_subjob_limits:
            return
        lvl = self.lift(self.levels.level_of_limit(limit.tier))
        if lvl >= self.levels.root_level or (unit.contained_level is not None and lvl >= unit.contained_level):
            return  # no limit, or implied by what contains it
        if lvl < 0:
            for g in groups:
                allowed_mask[g][:] = False
            return
        unit.hard_level = unit.contained_level = lvl
        cls, pods = self._unit_classes(groups, allowed_mask, fit_all)
        unit.hard_domains = self.candidate_domains(unit, lvl, cls, pods, self.unit_need(groups, unit))
        inside = np.isin(self.class_domain[lvl], unit.hard_domains)
        for g in groups:
            allowed_mask[g] &= inside

    def _unit_classes(self, groups, allowed_mask, fit_all) -> tuple[np.ndarray, np.ndarray]:
        C = len(self.classes)
        any_ok = np.zeros(C, dtype=bool)
        for g in groups:
            any_ok |= allowed_mask[g]
        cls = np.flatnonzero(any_ok)
        if not len(cls):
            return cls, cls
        pods = np.max([fit_all[g][cls] * allowed_mask[g][cls] for g in groups], axis=0)
        return cls, pods * self.classes.size[cls]

    def lift(self, level: int) -> int:
        """A coarse model cannot see below its aggregation level: a limit there is relaxed to it."""
        return level if level < 0 else max(level, self.scope.aggregate_level)

    def spread_candidates(self, unit: Unit, groups, allowed_mask, fit_all, need_res) -> None:
        top = self.levels.root_level if unit.contained_level is None else unit.contained_level
        cls, pods = self._unit_classes(groups, allowed_mask, fit_all)
        for lvl in range(self.scope.aggregate_level, top):
            unit.spread_domains[lvl] = self.candidate_domains(unit, lvl, cls, pods, need_res)

    def unit_need(self, groups: list[int], unit: Unit) -> np.ndarray:
        need_pods = max(1, unit.minimum - unit.running)
        return need_pods * self.problem.group_request[groups].min(axis=0)

    def job_need(self, j: int, unit: Unit) -> np.ndarray:
        """Per-resource lower bound of what placing job ``j`` adds."""
        problem = self.problem
        need = self.unit_need(unit.groups, unit)
        by_task: dict[str, np.ndarray] = {}
        running_task: dict[str, int] = {}
        for g in problem.jobs[j].groups:
            t = problem.group_task[g]
            by_task[t] = problem.group_request[g]
            running_task[t] = running_task.get(t, 0) + problem.group_running_count(g)
        per_task = np.zeros_like(need)
        for t, m in task_minimums(problem.jobs[j]).items():
            if t in by_task:
                per_task = per_task + max(0, m - running_task.get(t, 0)) * by_task[t]
        return np.maximum(need, per_task)


def build_candidates(problem: Problem, scope: Scope | None = None) -> Candidates:
    return _Builder(problem, scope or Scope()).build()

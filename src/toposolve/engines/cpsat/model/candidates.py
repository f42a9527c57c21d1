"""The candidate builder: node classes, levels and candidate domains of every unit (rules in
:mod:`toposolve.engines.cpsat.model.classes`)."""

from __future__ import annotations

import numpy as np

from toposolve.core.instance import DEVICE_MILLI
from toposolve.core.limits import UNLIMITED
from toposolve.core.problem import Problem
from toposolve.engines.common.devices import DeviceRoom
from toposolve.engines.cpsat.model.classes import (
    Candidates,
    Scope,
    Unit,
    build_classes,
    build_levels,
    class_homes,
    pods_that_fit,
    running_nodes,
)
from toposolve.engines.cpsat.model.crossing import crossing_class_keys, tree_domains
from toposolve.engines.cpsat.model.gang_tree import min_pods, subjobs_below
from toposolve.engines.cpsat.model.lift import lift_candidates
from toposolve.policy.rules import task_minimums


def add_gang_units(builder: CandidateBuilder, cands: Candidates, j: int, job_unit: Unit,
                   allowed_mask, fit_all) -> None:
    """Units of job ``j``'s GangNodes, parents first, restricting their groups' classes to their
    hard candidates (inside the parent's, as the mask already holds the parent's restriction)."""
    problem = builder.problem
    for n in problem.jobs[j].gang_nodes:
        node = problem.gang_nodes[n]
        all_groups = [g for s in subjobs_below(problem, n) for g in problem.subjobs[s].groups]
        groups = [g for g in all_groups if problem.group_pending[g]]
        unit = Unit(groups=groups, running=problem.running_count(all_groups),
                    minimum=min_pods(problem, n),
                    running_nodes=running_nodes(problem, all_groups))
        above = job_unit if node.parent < 0 else cands.gang_units[node.parent]
        unit.contained_level = above.contained_level
        cands.gang_units[n] = unit
        builder.confine(unit, groups, node.limit, allowed_mask, fit_all)


class CandidateBuilder:
    """Builds the :class:`Candidates` of one scope of the problem."""

    def __init__(self, problem: Problem, scope: Scope) -> None:
        self.problem = problem
        self.scope = scope
        used = problem.used if scope.used is None else scope.used
        self.idle = np.maximum(problem.allocatable - used, 0)
        self.levels = build_levels(problem)
        self.device_room = DeviceRoom(problem) if problem.has_devices else None
        if self.device_room is not None and scope.device_used is not None:
            self.device_room.free = DEVICE_MILLI - scope.device_used

    def room_ok(self, level: int, classes: np.ndarray, pods_per_class: np.ndarray, need_pods: int,
                need_res: np.ndarray) -> np.ndarray:
        """Domains of ``level`` (ids) whose room over ``classes`` covers the needs."""
        dom = self.class_domain[level][classes]
        keep = dom >= 0
        dom, cls, pods = dom[keep], classes[keep], pods_per_class[keep]
        if dom.size == 0:
            return np.zeros(0, dtype=np.int64)
        H = self.levels.domain.shape[1]
        ok = np.bincount(dom, weights=np.minimum(pods, UNLIMITED).astype(float),
                         minlength=H) >= need_pods
        sizes = self.classes.size[cls]
        for r in np.flatnonzero(need_res > 0).tolist():
            # float: int64 products of class size and milli-byte memory can overflow
            room = np.bincount(dom,
                    weights=sizes.astype(float) * self.classes.idle[cls, r].astype(float),
                    minlength=H)
            ok &= room >= need_res[r]
        present = np.zeros(H, dtype=bool)
        present[dom] = True
        return np.flatnonzero(ok & present)

    def candidate_domains(self, unit: Unit, level: int, classes: np.ndarray, pods: np.ndarray,
                          need_res: np.ndarray) -> list[int]:
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
        device_used = (DEVICE_MILLI - self.device_room.free if self.device_room is not None
                       else None)
        self.classes = build_classes(problem, self.idle, feasible, scope.split_nodes, homes,
                                     crossing_class_keys(problem, scope.node_keys), device_used)
        C = len(self.classes)
        self.class_domain = (self.levels.domain[:,
                self.classes.home] if C else np.zeros((len(self.levels.tiers), 0), dtype=np.int64))
        rep = np.array([ns[0] for ns in self.classes.nodes], dtype=np.int64)
        fit_all: dict[int, np.ndarray] = {}
        for g in groups:
            fits = pods_that_fit(problem.group_request[g], self.classes.idle) if C else np.zeros(0,
                    dtype=np.int64)
            if C and problem.has_devices and problem.group_device_count[g] > 0:
                fits = np.minimum(fits, self.device_room.fit_counts(g, rep))
            ok = problem.group_feasible[g][rep] & (fits > 0) if C else np.zeros(0, dtype=bool)
            fit_all[g] = np.where(ok, fits, 0)
        return fit_all

    def _add_job(self, cands: Candidates, j: int, allowed_mask, fit_all) -> None:
        """Job ``j``'s unit and hard domain, its SubJobs', and its groups' allowed classes."""
        problem, scope = self.problem, self.scope
        cj = problem.jobs[j]
        mine = [g for g in cj.groups if problem.group_pending[g]]
        unit = Unit(groups=mine, running=problem.job_running_count(j), minimum=cj.min_available,
                    running_nodes=running_nodes(problem, cj.groups))
        need_res = self.job_need(j, unit)
        if cj.limit is not None and cj.limit.tree is not None:
            if not (scope.ignore_limits or scope.ignore_job_limits):
                self.cross(unit, mine, cj.limit, allowed_mask)
        elif cj.limit is not None and cj.limit.hard and not (scope.ignore_limits
                                                             or scope.ignore_job_limits):
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
                    self.spread_candidates(su, su.groups, allowed_mask, fit_all,
                                           self.unit_need(su.groups, su))

    def _add_subjob(self, cands: Candidates, s: int, unit: Unit, allowed_mask, fit_all) -> None:
        """A policy SubJob's unit and, with a hard limit tighter than its job's, its domains."""
        problem = self.problem
        sj = problem.subjobs[s]
        sub_groups = [g for g in sj.groups if problem.group_pending[g]]
        sunit = Unit(groups=sub_groups, running=problem.running_count(sj.groups),
                     minimum=sj.min_available, running_nodes=running_nodes(problem, sj.groups))
        sunit.contained_level = unit.contained_level
        cands.subjob_units[s] = sunit
        self.confine(sunit, sub_groups, sj.limit, allowed_mask, fit_all)

    def confine(self, unit: Unit, groups: list[int], limit, allowed_mask, fit_all) -> None:
        """A SubJob's or GangNode's hard ``limit`` tighter than what contains ``unit``: its
        candidate domains at that level, and its ``groups`` restricted to them (to nothing when
        no level has that tier)."""
        scope = self.scope
        if (not groups or limit is None or not limit.hard or scope.ignore_limits
            or scope.ignore_subjob_limits):
            return
        if limit.tree is not None:
            self.cross(unit, groups, limit, allowed_mask)
            return
        lvl = self.lift(self.levels.level_of_limit(limit.tier))
        if lvl >= self.levels.root_level or (
            unit.contained_level is not None and lvl >= unit.contained_level
        ):
            return  # no limit, or implied by what contains it
        if lvl < 0:
            for g in groups:
                allowed_mask[g][:] = False
            return
        unit.hard_level = unit.contained_level = lvl
        cls, pods = self._unit_classes(groups, allowed_mask, fit_all)
        unit.hard_domains = self.candidate_domains(unit, lvl, cls, pods,
                                                   self.unit_need(groups, unit))
        inside = np.isin(self.class_domain[lvl], unit.hard_domains)
        for g in groups:
            allowed_mask[g] &= inside

    def cross(self, unit: Unit, groups: list[int], limit, allowed_mask) -> None:
        """A hard ``limit`` in a constraint tree: each class the unit's ``groups`` may use
        mapped to its domain of that tree; classes in none (or outside the domain its running
        pods pin) dropped (:mod:`.crossing`)."""
        if not limit.hard:
            return
        dom = tree_domains(self.problem, limit, self.classes.nodes, unit.running_nodes)
        for g in groups:
            allowed_mask[g] &= dom >= 0
        unit.crossing = {c: int(d) for c, d in enumerate(dom.tolist()) if d >= 0}

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
        by_task: dict[str, np.ndarray] = {}  # per role: the least request of its groups
        running_task: dict[str, int] = {}
        for g in problem.jobs[j].groups:
            t = problem.group_role[g]
            request = problem.group_request[g]
            by_task[t] = np.minimum(by_task[t], request) if t in by_task else request
            running_task[t] = running_task.get(t, 0) + problem.group_running_count(g)
        per_task = np.zeros_like(need)
        for t, m in task_minimums(problem.jobs[j]).items():
            if t in by_task:
                per_task = per_task + max(0, m - running_task.get(t, 0)) * by_task[t]
        return np.maximum(need, per_task)


def build_candidates(problem: Problem, scope: Scope | None = None) -> Candidates:
    return CandidateBuilder(problem, scope or Scope()).build()

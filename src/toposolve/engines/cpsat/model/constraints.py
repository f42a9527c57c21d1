"""The CP-SAT constraints (rules in the module docstring of :mod:`toposolve.engines.cpsat`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.problem import Problem
from toposolve.engines.common.queues import capability_items
from toposolve.engines.cpsat.model.classes import Candidates
from toposolve.engines.cpsat.model.crossing import add_crossing_domain, crossing_knapsack_entries
from toposolve.engines.cpsat.model.gang_tree import add_gang_constraints
from toposolve.engines.cpsat.model.variables import UnitVars, Variables
from toposolve.policy.objective import accelerator_resources
from toposolve.policy.rules import task_minimums

EvictedSlots = Callable[[int], list[tuple[object, int]]]
"""Group → ``(variable, upper bound)`` of its running pods that the plan evicts, per slot."""

SAFE_SUM = 1 << 60  # CP-SAT rejects linear constraints whose worst-case sum may overflow int64


def node_sized_groups(problem: Problem) -> dict[int, np.ndarray]:
    """Per accelerator resource ``r``: [G] bool, the groups whose pod asks more than half of the
    largest ``r`` of any schedulable node, so two such pods (of any of these groups) never share
    a node; resources no schedulable node has are left out."""
    out: dict[int, np.ndarray] = {}
    if not problem.schedulable.any():
        return out
    schedulable = problem.allocatable[problem.schedulable]
    for r in accelerator_resources(problem):
        most = int(schedulable[:, r].max())
        if most > 0:
            out[r] = 2 * problem.group_request[:, r] > most
    return out


def scaled(terms: list[tuple[int, object, int]], cap: int) -> tuple[list[tuple[int, object]], int]:
    """``Σ a·x ≤ cap`` (``terms`` are ``(a, x, upper bound of x)``) with coefficients divided by
    their gcd (exact: the left side stays an integer). Resource amounts are milli-units, so
    memory requests are ~10^15 and would overflow. If the worst-case sum can still exceed 2^60,
    positive coefficients are rounded up, negative ones towards zero and the capacity down after
    dividing by a common factor: a safe restriction (it never admits an overfull node), the only
    place where the model is not exact; it needs requests of ~10^16 that share no factor."""
    g = 0
    for a, _, _ in terms:
        g = math.gcd(g, a)
    g = max(g, 1)
    out = [(a // g, x, ub) for a, x, ub in terms]
    cap = cap // g
    worst = sum(abs(a) * ub for a, _, ub in out) + abs(cap)
    if worst > SAFE_SUM:
        factor = -(-worst // SAFE_SUM)
        out = [(-(-a // factor) if a > 0 else -((-a) // factor), x, ub) for a, x, ub in out]
        cap = cap // factor
    return [(a, x) for a, x, _ in out if a != 0], cap


class Constraints:
    def __init__(self, model: cp_model.CpModel, problem: Problem, cands: Candidates, xv: Variables,
                 check: Callable[[str], None] | None = None) -> None:
        self.model = model
        self.problem = problem
        self.cands = cands
        self.xv = xv
        self.check = check or (lambda what: None)  # may raise to stop the build (deadline)

    def add_all(self) -> None:
        self.add_job_gangs()
        self.add_subjob_gangs()
        add_gang_constraints(self)  # deeper gang trees only
        self.add_capacity()
        self.check("model build (gangs and capacity)")
        for k, uv in enumerate(self.xv.units):
            self.add_hard_domain(uv)
            add_crossing_domain(self, uv)
            self.add_within(uv)
            if k % 16 == 15:
                self.check("model build (topology constraints)")
        self.add_domain_knapsacks()
        self.check("model build (knapsacks)")
        self.add_twin_symmetry()
        self.add_touched()

    # ---- gangs -------------------------------------------------------------------------------
    def add_job_gangs(self) -> None:
        """``y_j`` ⇔ new pods; placed ⇒ running + new ≥ minAvailable and each task minimum."""
        model, problem, xv = self.model, self.problem, self.xv
        for j in self.cands.jobs:
            unit = self.cands.job_units[j]
            y = xv.y[j]
            new = sum(xv.new_of(g) for g in unit.groups)
            pending = sum(len(problem.group_pending[g]) for g in unit.groups)
            model.add(new >= y)
            model.add(new <= pending * y)
            for g in unit.groups:  # no group gets more pods than it has pending
                model.add(xv.new_of(g) <= len(problem.group_pending[g]))
            if unit.minimum - unit.running > 0:
                model.add(new >= (unit.minimum - unit.running) * y)
            for task, minimum in task_minimums(problem.jobs[j]).items():
                groups = [g for g in problem.jobs[j].groups if problem.group_role[g] == task]
                running = problem.running_count(groups)
                if minimum > running:
                    model.add(sum(xv.new_of(g) for g in groups) >= (minimum - running) * y)

    def add_subjob_gangs(self) -> None:
        """A policy SubJob that gets pods ends ≥ subGroupSize; minSubGroups per policy."""
        model, problem, xv = self.model, self.problem, self.xv
        for s, v in xv.v.items():
            su = self.cands.subjob_units[s]
            new = sum(xv.new_of(g) for g in su.groups)
            pending = sum(len(problem.group_pending[g]) for g in su.groups)
            model.add(new >= v)
            model.add(new <= pending * v)
            if su.minimum - su.running > 0:
                model.add(new >= (su.minimum - su.running) * v)
            model.add_implication(v, xv.y[problem.subjobs[s].job])
        for j in self.cands.jobs:
            cj = problem.jobs[j]
            for policy, minimum in cj.min_subjobs.items():
                members = [s for s in cj.subjobs if problem.subjobs[s].policy == policy]
                ready = [xv.ready[s] for s in members if s in xv.ready]
                for s in members:
                    r = xv.ready.get(s)
                    if r is None or isinstance(r, int):
                        continue
                    su = self.cands.subjob_units[s]
                    new = sum(xv.new_of(g) for g in su.groups)
                    model.add(new >= (su.minimum - su.running) * r)
                model.add(sum(ready) >= minimum * xv.y[j])

    # ---- resources ---------------------------------------------------------------------------
    def add_capacity(self) -> None:
        """Per class and resource: new requests ≤ idle of its nodes (running pods are in idle).

        Lifted model (:mod:`.lift`): exclusive pods count nodes instead — per class ``K`` with
        exclusive pods of its own, those of every class inside ``K`` plus the ``shared`` nodes of
        every class inside it ≤ ``|K|`` — and non-exclusive pods fit the ``shared`` nodes."""
        cands = self.cands
        per_class: dict[int, list[tuple[int, cp_model.IntVar, int]]] = {}
        for g, xs in self.xv.x.items():
            for c, var, ub in zip(cands.allowed[g].tolist(), xs, cands.ub[g].tolist(), strict=True):
                per_class.setdefault(c, []).append((g, var, ub))
        if cands.lift_level:
            self._add_node_counts(per_class)
        for c, entries in per_class.items():
            entries = [e for e in entries
                       if e[0] not in cands.exclusive] if cands.lift_level else entries
            shared = self.xv.shared.get(c)
            if shared is not None:
                self._fits_shared(c, entries, shared)
            elif len(entries) > 1:  # one group: its upper bound already is what fits on these nodes
                self._fits_class(c, entries)

    def _fits_class(self, c: int, entries: list[tuple[int, cp_model.IntVar, int]]) -> None:
        problem, classes = self.problem, self.cands.classes
        for r in range(len(problem.resources)):
            cap = int(classes.size[c]) * int(classes.idle[c, r])  # Python ints: no overflow
            terms = [(int(problem.group_request[g, r]), var, ub) for g, var, ub in entries]
            terms = [t for t in terms if t[0] > 0]
            if sum(a * ub for a, _, ub in terms) <= cap:
                continue
            coefs, cap_scaled = scaled(terms, cap)
            self.model.add(sum(a * var for a, var in coefs) <= cap_scaled)

    def _fits_shared(self, c: int, entries: list[tuple[int, cp_model.IntVar, int]], shared) -> None:
        """Non-exclusive pods of class ``c`` on its ``shared`` nodes: per group at most what
        fits on them, together within their resources (one group: the first says it all)."""
        problem, cands = self.problem, self.cands
        size = int(cands.classes.size[c])
        for g, var, _ in entries:  # on one node the resource rows below imply these
            if len(entries) < 2 or size > 1 or not (problem.group_request[g] > 0).any():
                fit = int(cands.fit[g][int(np.searchsorted(cands.allowed[g], c))])
                self.model.add(var <= fit * shared)
        if len(entries) < 2:
            return
        for r in range(len(problem.resources)):
            terms = [(int(problem.group_request[g, r]), var, ub) for g, var, ub in entries]
            terms = [t for t in terms if t[0] > 0]
            if terms:
                coefs, cap = scaled([*terms, (-int(cands.classes.idle[c, r]), shared, size)], 0)
                self.model.add(sum(a * var for a, var in coefs) <= cap)

    def _add_node_counts(self,
                         per_class: dict[int, list[tuple[int, cp_model.IntVar, int]]]) -> None:
        """Per class with exclusive pods of its own: the exclusive pods of every class inside it
        and the shared nodes of every class inside it take at most its nodes (Hall's condition on
        the laminar family of classes)."""
        cands, classes = self.cands, self.cands.classes
        containing: dict[int, list[int]] = {}  # base class -> classes holding it (itself first)
        for c in range(classes.n_base):
            containing[c] = [c]
        for k, members in enumerate(classes.members):
            for b in members.tolist():
                containing[b].append(classes.n_base + k)
        own = {c: [(var, ub) for g, var, ub in entries if g in cands.exclusive]
               for c, entries in per_class.items()}
        own = {c: terms for c, terms in own.items() if terms}
        inside: dict[int, list[tuple[object, int]]] = {c: [] for c in own}
        sizes = classes.size
        for x, terms in own.items():
            for k in containing[classes.base_of(x)[0]]:
                if k in inside and sizes[k] >= sizes[x]:
                    inside[k] += terms
        for x, shared in self.xv.shared.items():
            for k in containing[classes.base_of(x)[0]]:
                if k in inside and sizes[k] >= sizes[x]:
                    inside[k].append((shared, int(sizes[x])))
        for k, terms in inside.items():
            if len(terms) > 1 and sum(ub for _, ub in terms) > sizes[k]:
                self.model.add(sum(var for var, _ in terms) <= int(sizes[k]))

    def add_queue_capability(self, evicted: EvictedSlots | None = None) -> None:
        """Per queue with a capability: running − evicted + new requests ≤ capability, per
        resource, where the queue receives new pods (the checker's rule).

        ``evicted`` gives, per group, ``(variable, upper bound)`` of its pods the plan evicts: an
        evicted pod no longer counts against its queue."""
        problem, cands = self.problem, self.cands
        if cands.scope.ignore_queue:
            return
        for queue in problem.queues.values():
            if not queue.capability:
                continue
            groups = sorted(
                g for g in self.xv.x if problem.jobs[int(problem.group_job[g])].queue == queue.name
            )
            if not groups:
                continue
            mine = [g for g in range(len(problem.group_running))
                    if problem.jobs[int(problem.group_job[g])].queue == queue.name]
            running = np.zeros(len(problem.resources), dtype=np.int64)
            for g in mine:
                running += problem.group_running_count(g) * problem.group_request[g]
            running += cands.scope.queue_used_extra.get(queue.name, 0)
            for r, cap in capability_items(problem, queue):
                self._queue_resource(groups, mine, r, int(cap - running[r]), evicted)

    def _queue_resource(self, groups: list[int], mine: list[int], r: int, left: int,
                        evicted: EvictedSlots | None) -> None:
        problem = self.problem
        new = [(int(problem.group_request[g, r]), self.xv.new_of(g), len(problem.group_pending[g]))
               for g in groups]
        new = [t for t in new if t[0] > 0]
        if sum(a * ub for a, _, ub in new) <= max(0, left):
            return
        freed = [(-int(problem.group_request[g, r]), var, ub)
                 for g in mine if problem.group_request[g, r] > 0
                 for var, ub in (evicted(g) if evicted else [])]
        coefs, bound = scaled(new + freed, left)
        ct = self.model.add(sum(a * e for a, e in coefs) <= bound)
        if left < 0:
            # over its capability before the plan: the rule binds only if the queue gets pods
            gets = self.model.new_bool_var(f"queue_gets_{r}_{groups[0]}")
            self.model.add(sum(e for _, e, _ in new) <= sum(ub for *_, ub in new) * gets)
            ct.only_enforce_if(gets)

    # ---- topology ----------------------------------------------------------------------------
    def _pods_in(self, uv: UnitVars, level: int) -> dict[int,
            list[tuple[int, int, cp_model.IntVar, int]]]:
        """The unit's count variables (group, class, var, ub) by level-``level`` domain (-1:
        none)."""
        dom = self.cands.class_domain[level]
        out: dict[int, list] = {}
        for entry in self.xv.pods_of(uv.unit.groups):
            out.setdefault(int(dom[entry[1]]), []).append(entry)
        return out

    def _need(self, uv: UnitVars) -> int:
        return max(1, uv.unit.minimum - uv.unit.running)

    def _room(self, h_entries) -> dict[int, int]:
        """Idle capacity per resource of the (base) classes the entries use."""
        classes = sorted({b for e in h_entries for b in self.cands.classes.base_of(e[1])})
        sizes, idle = self.cands.classes.size, self.cands.classes.idle
        return {r: sum(int(sizes[c]) * int(idle[c,
                                                r]) for c in classes) for r in range(idle.shape[1])}

    def _fits_room(self, terms: list[tuple[int, cp_model.IntVar, int]], room: int, switch) -> None:
        """``Σ a·x ≤ room·switch`` over the terms with a > 0 (nothing to add otherwise)."""
        terms = [t for t in terms if t[0] > 0]
        if not terms:
            return
        coefs, room = scaled(terms, room)
        self.model.add(sum(a * x for a, x in coefs) <= room * switch)

    def add_hard_domain(self, uv: UnitVars) -> None:
        """Its pods all in one candidate domain of the hard level when it has pods.

        ``x ≤ ub·hard_domain[d(x)]`` per count variable; at least its minimum inside the chosen
        domain; and the redundant cut: what it adds in the domain fits the domain's idle room.
        """
        if not uv.hard_domain:
            return
        model, problem = self.model, self.problem
        model.add(sum(uv.hard_domain.values()) == uv.has)
        by_dom = self._pods_in(uv, uv.unit.hard_level)
        fills = self._fills(uv)
        for h, choose in uv.hard_domain.items():
            entries = by_dom.get(h, [])
            if not entries:
                model.add(choose == 0)
                continue
            if not fills:
                self._switched(entries, choose)
            model.add(sum(e[2] for e in entries) >= self._need(uv) * choose)
            if all(g in self.cands.exclusive for g, *_ in entries):
                continue  # whole-node pods: the node counts already bound them (lifted model)
            room = self._room(entries)
            for r in range(len(problem.resources)):
                self._fits_room([(int(problem.group_request[g, r]), var,
                                  ub) for g, _, var, ub in entries], room[r], choose)

    def add_within(self, uv: UnitVars) -> None:
        """``within[l]`` ⇒ every pod of the unit in the one candidate domain it picks.

        Per count variable ``x`` in domain ``d``: ``x ≤ ub·(1 − within) + ub·in_domain[d]``
        (``d`` not a candidate: ``x ≤ ub·(1 − within)``), with ``Σ in_domain = within``.
        """
        model = self.model
        for lvl in sorted(uv.within):
            w = uv.within[lvl]
            if isinstance(w, int):
                continue
            model.add_implication(w, uv.has)
            nxt = uv.within.get(lvl + 1)
            if nxt is not None and not isinstance(nxt, int):
                model.add_implication(w, nxt)
            by_dom = self._pods_in(uv, lvl)
            doms = set(uv.unit.spread_domains[lvl])
            choices = uv.in_domain.get(lvl)
            for h, entries in by_dom.items():
                if h not in doms and not (choices and self._fills(uv)):
                    self._switched(entries, 1 - w)
            if not choices:
                continue  # one candidate: within only needs nothing outside it
            model.add(sum(choices.values()) == w)
            for h, choose in choices.items():
                entries = by_dom.get(h, [])
                if not entries:
                    model.add(choose == 0)
                    continue
                if not self._fills(uv):
                    self._switched(entries, 1 - w + choose)
                model.add(sum(e[2] for e in entries) >= self._need(uv) * choose)

    def _fills(self, uv: UnitVars) -> bool:
        """Lifted model: the unit's minimum is all its pending pods, so "at least the minimum in
        the chosen domain" already keeps every pod there (the per-domain rows are redundant)."""
        if not self.cands.lift_level:
            return False
        return self._need(uv) >= sum(len(self.problem.group_pending[g]) for g in uv.unit.groups)

    def _switched(self, entries, switch) -> None:
        """``x ≤ ub·switch`` per count variable (``switch``: a 0/1 expression). In a lifted model
        one row per domain, ``Σ x ≤ (Σ ub)·switch``: the same integer solutions (counts are
        non-negative), a weaker LP, far fewer rows."""
        if self.cands.lift_level and len(entries) > 1:
            self.model.add(sum(e[2] for e in entries) <= sum(e[3] for e in entries) * switch)
            return
        for _g, _c, var, ub in entries:
            self.model.add(var <= ub * switch)

    def add_domain_knapsacks(self) -> None:
        """Redundant: jobs wholly inside one domain together need at most its idle room.

        Per level and candidate domain ``h``: ``Σ_jobs need_j·min request_j,r·choice_j(h) ≤
        room_r(h)`` over the domain choices (hard or spread) of jobs whose candidates include h,
        and the placed literal of jobs confined to ``h`` (at the root: every job); likewise per
        domain of a constraint tree over the jobs choosing it (:mod:`.crossing`). On an
        overloaded cluster these knapsacks over whole gangs are what closes the ``placed``
        bound: the LP alone places a fraction of a gang that cannot fit
        (``docs/cpsat-formulation.md``). The same in whole nodes for jobs whose pods take more
        than half of any node's accelerators (two never share a node): ``Σ need_j·choice_j(h)
        ≤`` the nodes of ``h`` with room for one — free GPUs scattered over partly used nodes
        do not count there.
        """
        cands = self.cands
        n_base = cands.classes.n_base
        rows = [(np.flatnonzero(cands.class_domain[lvl][:n_base] == h).tolist(), entries)
                for (lvl, h), entries in self._knapsack_entries().items() if len(entries) >= 2]
        rows += [row for row in crossing_knapsack_entries(
            self.problem, cands.classes.nodes[:n_base], self.xv.units) if len(row[1]) >= 2]
        if not rows:
            return
        problem = self.problem
        n_res = len(problem.resources)
        sizes, idle = cands.classes.size, cands.classes.idle
        # Python ints: class size × milli-byte memory can overflow int64
        class_room = [[int(sizes[c]) * int(idle[c,
                r]) for r in range(n_res)] for c in range(len(sizes))]
        least = {  # per job and resource: the least its gang needs
            id(uv): [int(v) * self._need(uv)
                     for v in problem.group_request[uv.unit.groups].min(axis=0).tolist()]
            if uv.unit.groups else [0] * n_res
            for uv in self.xv.units if uv.kind == "job"
        }
        exclusive = self._exclusive_jobs()
        seen: set[tuple] = set()  # a domain and its only child hold the same classes
        for classes, entries in rows:
            key = (tuple(classes), tuple(sorted(choose.index for _, choose in entries)))
            if key in seen:
                continue
            seen.add(key)
            for r in range(n_res):
                room = sum(class_room[c][r] for c in classes)
                terms = [(least[id(uv)][r],
                          choose) for uv, choose in entries if least[id(uv)][r] > 0]
                self._knapsack(terms, room)
            for r, (smallest, jobs) in exclusive.items():
                slots = sum(int(sizes[c]) for c in classes if idle[c, r] >= smallest)
                self._knapsack([(self._need(uv),
                                 choose) for uv, choose in entries if id(uv) in jobs], slots)

    def _knapsack(self, terms: list[tuple[int, object]], room: int) -> None:
        """``Σ a·lit ≤ room`` when at least two terms could overflow it."""
        if len(terms) >= 2 and sum(a for a, _ in terms) > room:
            coefs, room = scaled([(a, v, 1) for a, v in terms], room)
            self.model.add(sum(a * v for a, v in coefs) <= room)

    def _knapsack_entries(self) -> dict[tuple[int, int], list[tuple[UnitVars, cp_model.IntVar]]]:
        """(level, domain) -> (job, literal of being wholly inside it) for every job that has
        one."""
        per_domain: dict[tuple[int, int], list[tuple[UnitVars, cp_model.IntVar]]] = {}
        for uv in self.xv.units:
            if uv.kind != "job":
                continue
            if uv.hard_domain:
                for h, choose in uv.hard_domain.items():
                    per_domain.setdefault((uv.unit.hard_level, h), []).append((uv, choose))
            for lvl, choices in uv.in_domain.items():
                for h, choose in choices.items():
                    per_domain.setdefault((lvl, h), []).append((uv, choose))
            for lvl, h in self._confined(uv):
                per_domain.setdefault((lvl, h), []).append((uv, uv.has))
        return per_domain

    def _exclusive_jobs(self) -> dict[int, tuple[int, set[int]]]:
        """Per accelerator resource ``r``: the smallest request of a pod that takes more than half
        of every schedulable node's ``r`` (two such pods never share a node), and the jobs (ids
        of their unit vars) whose pending pods all are such pods."""
        problem = self.problem
        out: dict[int, tuple[int, set[int]]] = {}
        for r, big in node_sized_groups(problem).items():
            jobs = {
                id(uv)
                for uv in self.xv.units
                if uv.kind == "job" and uv.unit.groups and big[uv.unit.groups].all()
            }
            if len(jobs) >= 2:
                smallest = int(
                    problem.group_request[
                        [g for uv in self.xv.units if id(uv) in jobs for g in uv.unit.groups], r
                    ].min()
                )
                out[r] = (smallest, jobs)
        return out

    def _confined(self, uv: UnitVars) -> list[tuple[int, int]]:
        """(level, domain) pairs holding every class the job may use, at levels where it has no
        domain choice (at the root: every job): there its ``has`` literal is the choice."""
        classes = [
            c
            for g in uv.unit.groups
            if g in self.cands.allowed
            for c in self.cands.allowed[g].tolist()
        ]
        if not classes:
            return []
        chosen = set(uv.in_domain)
        if uv.hard_domain:
            chosen.add(uv.unit.hard_level)
        out = []
        for lvl in range(len(self.cands.levels.tiers)):
            if lvl in chosen:
                continue
            domains = np.unique(self.cands.class_domain[lvl][classes])
            if len(domains) == 1 and domains[0] >= 0:
                out.append((lvl, int(domains[0])))
        return out

    # ---- symmetry and fragmentation ----------------------------------------------------------
    def add_twin_symmetry(self) -> None:
        """Identical nodes split out of one class: pod counts non-increasing in node order."""
        per_class: dict[int, list[cp_model.IntVar]] = {}
        for g, xs in self.xv.x.items():
            for c, var in zip(self.cands.allowed[g].tolist(), xs, strict=True):
                per_class.setdefault(c, []).append(var)
        for twins in self.cands.classes.twins:
            for a, b in zip(twins, twins[1:], strict=False):
                if per_class.get(b):  # else trivially true (and `0 >= 0` would add a constant)
                    self.model.add(sum(per_class.get(a, [])) >= sum(per_class[b]))

    def add_touched(self) -> None:
        """An initially idle leaf with new pods is touched: new requests ≤ its room × touched."""
        if not self.xv.touched:
            return
        problem, cands = self.problem, self.cands
        leaf = cands.class_domain[0]
        per_leaf: dict[int, list[tuple[int, int, cp_model.IntVar, int]]] = {}
        for g in self.xv.x:
            for entry in self.xv.pods_of([g]):
                h = int(leaf[entry[1]])
                if h in self.xv.touched:
                    per_leaf.setdefault(h, []).append(entry)
        for h, t in self.xv.touched.items():
            entries = per_leaf.get(h, [])
            if not entries:
                self.model.add(t == 0)
                continue
            self.model.add(sum(e[2] for e in entries) <= sum(e[3] for e in entries) * t)
            room = self._room(entries)
            for r in range(len(problem.resources)):
                self._fits_room([(int(problem.group_request[g, r]), var,
                                  ub) for g, _, var, ub in entries], room[r], t)

"""Evictions in the CP-SAT model: optimal gang-aware victim selection (seed 002).

Rules and rationale: ``docs/cpsat-formulation.md``, section
``toposolve.engines.cpsat.model.eviction``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

import numpy as np
from ortools.sat.python import cp_model

from toposolve.core.assignment import Assignment
from toposolve.core.instance import DEVICE_MILLI
from toposolve.core.problem import Problem
from toposolve.engines.common.devices import DeviceRoom
from toposolve.engines.cpsat.model.classes import Candidates, Scope
from toposolve.engines.cpsat.model.constraints import scaled
from toposolve.engines.cpsat.model.variables import Variables
from toposolve.policy.objective import eviction_pod_weights, gang_ready
from toposolve.policy.rules import (
    QueueQuotas,
    RunningPods,
    evict_actions,
    held_by,
    job_minimum_request,
    preempt_allows,
)

_EPS = 1e-6  # the heuristic's milli-unit tolerance when comparing with a deserved share


@dataclass
class Slot:
    """Running pods of one victim group on one node, in eviction order (youngest first)."""

    group: int
    job: int
    node: int
    pods: list[str]


@dataclass
class EvictionSpec:
    """Who may be evicted, where, and for whom (fixed before the model is built)."""

    mode: str
    slots: list[Slot]
    preempt_by: dict[int, list[int]]  # victim job -> jobs allowed to preempt it
    reclaim_by: dict[int, list[int]]  # victim job -> jobs allowed to reclaim from it
    # victim queue -> options (resource r, bound on Σ reclaimed requests_r − the largest one);
    # one must hold
    budgets: dict[str, list[tuple[int, int]]]
    used: np.ndarray  # [N, R] used by pods that stay whatever the plan does
    node_keys: dict[int, tuple] = field(default_factory=dict)
    # per-device sharing: [N, D] device use of the pods that stay whatever the plan does, and
    # per slot the [pods, D] thousandths each of its pods holds (what evicting it frees)
    device_used: np.ndarray | None = None
    pod_devices: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def victims(self) -> list[int]:
        return sorted({s.job for s in self.slots})

    @property
    def nodes(self) -> frozenset[int]:
        return frozenset(s.node for s in self.slots)

    def allowed(self, preemptor: int, victim: int) -> bool:
        return preemptor in self.preempt_by.get(victim,
                                                ()) or preemptor in self.reclaim_by.get(victim, ())

    def scope(self, scope: Scope | None) -> Scope:
        """``scope`` with evictable pods' room counted as idle and slot nodes modelled alone."""
        scope = scope or Scope()
        device_used = self.device_used if scope.device_used is None else scope.device_used
        return replace(scope, used=self.used, split_nodes=scope.split_nodes | self.nodes,
                       node_keys={**scope.node_keys, **self.node_keys}, device_used=device_used)


def starving_jobs(problem: Problem) -> list[int]:
    """Jobs with pending pods that are not ready with their running pods (possible preemptors)."""
    out = []
    for j in problem.pending_jobs:
        if not gang_ready(problem, j, problem.running_per_group(problem.jobs[j].groups)):
            out.append(j)
    return out


def build_eviction_spec(problem: Problem, mode: str) -> EvictionSpec:
    """The victims, slots and budgets of ``mode`` (see the module doc)."""
    actions = evict_actions(mode)
    preemptors = starving_jobs(problem)
    quotas = None
    reclaimers: list[int] = []
    if "reclaim" in actions:
        quotas = QueueQuotas(problem, problem.queue_usage())  # the cluster before the plan
        for p in preemptors:
            queue = problem.jobs[p].queue
            if not quotas.overused(queue) and quotas.preemptive(queue,
                                                                job_minimum_request(problem, p)):
                reclaimers.append(p)
    usable = {p: _usable_nodes(problem, p) for p in preemptors}
    pods = RunningPods(problem)
    preempt_by: dict[int, list[int]] = {}
    reclaim_by: dict[int, list[int]] = {}
    for v in sorted({p.job for p in pods.pods}):
        if "preempt" in actions:
            allowed = [p for p in preemptors if preempt_allows(problem, p, v)]
            if allowed:
                preempt_by[v] = allowed
        if quotas is not None:
            allowed = [p for p in reclaimers if p != v
                       and quotas.reclaim_allows(problem.jobs[p].queue, v)]
            if allowed:
                reclaim_by[v] = allowed
    by_slot: dict[tuple[int, int], list] = {}
    helps: dict[int, np.ndarray] = {}
    for pod in pods.pods:
        v = pod.job
        if v not in preempt_by and v not in reclaim_by:
            continue
        if v not in helps:
            mask = np.zeros(problem.n_nodes, dtype=bool)
            for p in {*preempt_by.get(v, ()), *reclaim_by.get(v, ())}:
                mask |= usable[p]
            if v in preempt_by and problem.queue(problem.jobs[v].queue).capability:
                mask[:] = True  # wherever it runs, a victim frees its queue's capability
            helps[v] = mask
        if helps[v][pod.node]:
            by_slot.setdefault((pod.group, pod.node), []).append(pod)
    slots = []
    used = problem.used.copy()
    for (g, n), members in sorted(by_slot.items()):
        members.sort(key=lambda p: (-p.index, p.name))  # the youngest pod goes first (seed 002)
        slots.append(Slot(group=g, job=int(problem.group_job[g]), node=n,
                          pods=[p.name for p in members]))
        used[n] -= len(members) * problem.group_request[g]
    device_used, pod_devices = _slot_devices(problem, slots)
    keys: dict[int, list[tuple]] = {}
    for i, s in enumerate(slots):
        key: tuple = (s.group, len(s.pods))
        if i in pod_devices:  # twins hold the same on each device, pod by pod
            key += (pod_devices[i].tobytes(),)
        keys.setdefault(s.node, []).append(key)
    budgets = _reclaim_budgets(problem, quotas, slots, reclaim_by) if quotas is not None else {}
    return EvictionSpec(mode=mode, slots=slots, preempt_by=preempt_by, reclaim_by=reclaim_by,
            budgets=budgets, used=used, node_keys={n: tuple(sorted(k)) for n, k in keys.items()},
            device_used=device_used, pod_devices=pod_devices)


def _slot_devices(problem: Problem, slots: list[Slot]
                  ) -> tuple[np.ndarray | None, dict[int, np.ndarray]]:
    """Per-device sharing: [N, D] device use without the slots' pods, and per slot holding
    devices the [pods, D] thousandths of each of its pods (``Problem.running_device_use``)."""
    if not problem.has_devices:
        return None, {}
    room = DeviceRoom(problem)
    out: dict[int, np.ndarray] = {}
    for i, s in enumerate(slots):
        held = room.held_by(s.pods)
        if held.any():
            out[i] = held
            room.release(np.full(len(s.pods), s.node), held)
    return DEVICE_MILLI - room.free, out


def _usable_nodes(problem: Problem, j: int) -> np.ndarray:
    mask = np.zeros(problem.n_nodes, dtype=bool)
    for g in problem.jobs[j].groups:
        if problem.group_pending[g]:
            mask |= problem.group_feasible[g]
    return mask & problem.schedulable


def _reclaim_budgets(problem: Problem, quotas: QueueQuotas, slots: list[Slot],
                     reclaim_by: dict[int, list[int]]) -> dict[str, list[tuple[int, int]]]:
    """Per victim queue, the resources whose surplus before the plan bounds what may be
    reclaimed (module doc): ``Σ reclaimed_r − max reclaimed_r < excess_r``, as the largest
    integer the left side may reach. A queue absent from the result needs no bound (a resource
    no candidate pod requests stays above its share whatever is reclaimed)."""
    by_queue: dict[str, set[int]] = {}
    for s in slots:
        if s.job in reclaim_by:
            by_queue.setdefault(problem.jobs[s.job].queue, set()).add(s.group)
    out: dict[str, list[tuple[int, int]]] = {}
    for queue, groups in sorted(by_queue.items()):
        alloc, deserved = quotas.allocated(queue), quotas.deserved_of(queue)
        dims = quotas.dims.get(queue, quotas.counted)
        options: list[tuple[int, int]] = []
        unbounded = False
        for r in np.flatnonzero(dims).tolist():
            excess = float(alloc[r] - deserved[r])
            if excess <= _EPS:
                continue
            if not any(problem.group_request[g, r] > 0 for g in groups):
                unbounded = True
                break
            options.append((r, math.ceil(excess - _EPS) - 1))
        if not unbounded:
            out[queue] = options
    return out


class EvictionModel:
    """Eviction variables and constraints on top of a placement model (see the module doc)."""

    def __init__(self, model: cp_model.CpModel, problem: Problem, cands: Candidates, xv: Variables,
                 spec: EvictionSpec) -> None:
        self.model, self.problem, self.cands, self.xv, self.spec = model, problem, cands, xv, spec
        self.weights = eviction_pod_weights(problem)
        self.e: list[cp_model.IntVar] = []
        self.hit: list[cp_model.IntVar] = []
        self.ev: dict[int, object] = {}  # victim -> literal (0 when nothing can justify it)
        self.pre: dict[int, object] = {}
        self.rec: dict[int, object] = {}
        self.brk: dict[int, cp_model.IntVar] = {}
        self.cost: dict[int, object] = {}  # victim -> cost variable or expression
        self.ready_before: dict[int, bool] = {}
        self.sready: dict[int, object] = {}
        self.reclaimed: dict[int, object] = {}  # group -> pods counted against its queue's budget
        self.choice: dict[tuple[str, int], cp_model.IntVar] = {}
        # (victim queue, resource) -> (request level, some reclaimed pod requests ≥ it)
        self.largest: dict[tuple[str, int], list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
        self.busy: dict[int, cp_model.IntVar] = {}
        self.closure_overflow: list[int] = []  # slot nodes given the strict rule (too many unions)
        self.slots_of_job: dict[int, list[int]] = {}
        self.slots_of_group: dict[int, list[int]] = {}
        self.slots_on_node: dict[int, list[int]] = {}
        for i, s in enumerate(spec.slots):
            self.slots_of_job.setdefault(s.job, []).append(i)
            self.slots_of_group.setdefault(s.group, []).append(i)
            self.slots_on_node.setdefault(s.node, []).append(i)
        self.class_of_node: dict[int, int] = {
            int(nodes[0]): c for c, nodes in enumerate(cands.classes.nodes) if len(nodes) == 1
        }
        self.x_on_class: dict[int, list[tuple[int, cp_model.IntVar, int]]] = {}
        for g, xs in xv.x.items():
            for c, var, ub in zip(cands.allowed[g].tolist(), xs, cands.ub[g].tolist(), strict=True):
                self.x_on_class.setdefault(c, []).append((g, var, ub))
        self.gone: dict[int, list[cp_model.IntVar]] = {}  # slot -> is each pod evicted
        self._create()
        self._device_pods()
        self._justify()
        self._capacity()
        self._freed_room()
        self._victim_gangs()
        self._budgets()

    # ---- variables ---------------------------------------------------------------------------
    def _lits(self, jobs: list[int]) -> list[cp_model.IntVar]:
        return [self.xv.y[p] for p in jobs if p in self.xv.y]

    def _create(self) -> None:
        model, spec = self.model, self.spec
        for v in spec.victims:
            justified = self._lits(spec.preempt_by.get(v, [])) or self._lits(spec.reclaim_by.get(v,
                    []))
            self.ev[v] = model.new_bool_var(f"ev_{v}") if justified else 0
        for i, s in enumerate(spec.slots):
            ub = len(s.pods) if not isinstance(self.ev[s.job], int) else 0
            self.e.append(model.new_int_var(0, ub, f"evict_{s.group}_{s.node}"))
            self.hit.append(model.new_bool_var(f"hit_{s.group}_{s.node}"))
            model.add(self.e[i] >= self.hit[i])
            model.add(self.e[i] <= len(s.pods) * self.hit[i])

    def _device_pods(self) -> None:
        """Slots whose pods hold devices: which pods go (``gone``), not only how many, since
        each frees its own devices; pods holding the same go in slot order (symmetry)."""
        for i, held in sorted(self.spec.pod_devices.items()):
            gone = [self.model.new_bool_var(f"gone_{i}_{k}") for k in range(len(held))]
            self.model.add(sum(gone) == self.e[i])
            for k in range(len(held) - 1):
                if np.array_equal(held[k], held[k + 1]):
                    self.model.add(gone[k] >= gone[k + 1])
            self.gone[i] = gone

    def freed_on_devices(self, n: int) -> dict[int, list[tuple[int, cp_model.IntVar]]]:
        """Device of node ``n`` -> ``(thousandths, pod evicted)`` of each evictable pod on it:
        what the plan's evictions free there."""
        out: dict[int, list[tuple[int, cp_model.IntVar]]] = {}
        for i in self.slots_on_node.get(n, []):
            held = self.spec.pod_devices.get(i)
            if held is None:
                continue
            for k, row in enumerate(held):
                for d in np.flatnonzero(row).tolist():
                    out.setdefault(d, []).append((int(row[d]), self.gone[i][k]))
        return out

    def evicted_of_group(self, g: int):
        return sum(self.e[i] for i in self.slots_of_group.get(g, []))

    def evicted_slots(self, g: int) -> list[tuple[cp_model.IntVar, int]]:
        """``(variable, upper bound)`` of group ``g``'s evicted pods, one per slot."""
        return [(self.e[i], len(self.spec.slots[i].pods)) for i in self.slots_of_group.get(g, [])]

    def _justify(self) -> None:
        """``ev[v]`` ⇔ v loses a pod; ⇒ an allowed preemptor gets bindings and v gets none."""
        model, spec, xv = self.model, self.spec, self.xv
        for v, ev in self.ev.items():
            if isinstance(ev, int):
                continue
            mine = self.slots_of_job[v]
            model.add(sum(self.e[i] for i in mine) >= ev)
            for i in mine:
                model.add_implication(self.hit[i], ev)
            if v in xv.y:
                model.add_implication(ev, xv.y[v].Not())
            pre, rec = self._lits(spec.preempt_by.get(v, [])), self._lits(spec.reclaim_by.get(v,
                                                                                              []))
            if pre and rec:
                self.pre[v], self.rec[v] = (model.new_bool_var(f"pre_{v}"),
                                            model.new_bool_var(f"rec_{v}"))
                model.add_bool_or([self.pre[v], self.rec[v]]).only_enforce_if(ev)
                model.add_bool_or(pre).only_enforce_if(self.pre[v])
                model.add_bool_or(rec).only_enforce_if(self.rec[v])
            else:
                model.add_bool_or(pre or rec).only_enforce_if(ev)
                if rec:
                    self.rec[v] = ev
                else:
                    self.pre[v] = ev

    # ---- resources ---------------------------------------------------------------------------
    def _new_pods_on(self, n: int) -> list[tuple[int, cp_model.IntVar, int]]:
        """``(group, x, upper bound)`` of the new pods slot node ``n`` (a class of its own) may
        get."""
        c = self.class_of_node.get(n)
        return self.x_on_class.get(c, []) if c is not None else []

    def _capacity(self) -> None:
        """New requests + kept victim requests ≤ allocatable − fixed pods, per slot node."""
        problem = self.problem
        for n, mine in sorted(self.slots_on_node.items()):
            xs = self._new_pods_on(n)
            if not xs:
                continue
            idle_now = problem.allocatable[n] - problem.used[n]  # with every victim pod kept
            enforce = None
            if (idle_now < 0).any():
                # overcommitted before the plan: the rule binds only if the node receives pods
                enforce = self.busy[n] = self.model.new_bool_var(f"busy_{n}")
                self.model.add(sum(var for _, var, _ in xs) <= sum(ub for _, _, ub in xs) * enforce)
            for r in range(len(problem.resources)):
                ct = self._room_at_most(xs, mine, r, int(idle_now[r]))
                if ct is not None and enforce is not None:
                    ct.only_enforce_if(enforce)

    def _freed_room(self) -> None:
        """Room freed by evicting pods of ``v`` goes only to jobs allowed to evict ``v`` (module
        doc).

        Hall's condition of the transport problem "new requests ← idle room or allowed freed
        room", per slot node and resource: for every union ``U`` of the candidate jobs' allowed
        victim sets, the jobs whose set lies in ``U`` request at most the idle room (clamped at
        0: an overcommitted node's deficit is paid by the full-set case, :meth:`_capacity`)
        plus the room freed by evicting the victims in ``U``."""
        problem, spec = self.problem, self.spec
        for n, mine in sorted(self.slots_on_node.items()):
            xs = self._new_pods_on(n)
            victims = frozenset(spec.slots[i].job for i in mine)
            allowed = {
                g: frozenset(v for v in victims if spec.allowed(int(problem.group_job[g]), v))
                for g, _, _ in xs
            }
            unions = _union_closure(set(allowed.values()) - {victims})
            if unions is None:
                self._strict_room(n, mine, xs)
                continue
            room = np.maximum(problem.allocatable[n] - problem.used[n], 0)
            for owned in unions:
                if owned == victims:
                    continue  # every job, every freed pod: the capacity rule
                takers = [(g, var, ub) for g, var, ub in xs if allowed[g] <= owned]
                freed = [i for i in mine if spec.slots[i].job in owned]
                for r in range(len(problem.resources)):
                    self._room_at_most(takers, freed, r, int(room[r]))

    def _strict_room(self, n: int, mine: list[int], xs: list) -> None:
        """Too many unions on node ``n``: where ``v`` loses pods, only jobs allowed to evict ``v``
        get new pods (stricter than the rule, so still sound)."""
        self.closure_overflow.append(n)
        for i in mine:
            for g, var, ub in xs:
                if not self.spec.allowed(int(self.problem.group_job[g]), self.spec.slots[i].job):
                    self.model.add(var + ub * self.hit[i] <= ub)

    def _room_at_most(self, takers: list, freed: list[int], r: int,
                      room: int) -> cp_model.Constraint | None:
        """Σ requests_r of ``takers`` ≤ ``room`` + requests_r freed by the slots ``freed``; the
        constraint, or None where the takers can never exceed ``room``."""
        problem, spec = self.problem, self.spec
        terms = [(int(problem.group_request[g, r]), var, ub) for g, var, ub in takers]
        terms = [t for t in terms if t[0] > 0]
        if not terms or sum(a * ub for a, _, ub in terms) <= room:
            return None
        terms += [
            (-int(problem.group_request[spec.slots[i].group, r]), self.e[i],
             len(spec.slots[i].pods))
            for i in freed
        ]
        coefs, cap = scaled(terms, room)
        return self.model.add(sum(a * x for a, x in coefs) <= cap)

    # ---- gangs of the victims ----------------------------------------------------------------
    def _victim_gangs(self) -> None:
        problem, model = self.problem, self.model
        for v, ev in self.ev.items():
            cj = problem.jobs[v]
            running = problem.running_per_group(cj.groups)
            held = held_by(problem, v, running, self.weights)
            lost = sum(self.weights[g] * self.evicted_of_group(g) for g in cj.groups)
            self.ready_before[v] = gang_ready(problem, v, running)
            if isinstance(ev, int) or not self.ready_before[v]:
                self.cost[v] = lost  # nothing to break (already below its minimum)
                continue
            brk = self.brk[v] = model.new_bool_var(f"broken_{v}")
            model.add_implication(brk, ev)

            def kept(groups: list[int], running=running):
                return sum(running[g] for g in groups) - sum(
                    self.evicted_of_group(g) for g in groups
                )

            model.add(kept(cj.groups) + cj.min_available * brk >= cj.min_available)
            if cj.min_available >= sum(cj.min_per_task.values()):
                for task, minimum in cj.min_per_task.items():
                    groups = [g for g in cj.groups if problem.group_role[g] == task]
                    model.add(kept(groups) + minimum * brk >= minimum)
            for policy, minimum in cj.min_subjobs.items():
                ready = []
                for s in cj.subjobs:
                    sj = problem.subjobs[s]
                    if sj.policy != policy:
                        continue
                    full = sum(running[g] for g in sj.groups) >= sj.min_available
                    if not full or not any(g in self.slots_of_group for g in sj.groups):
                        ready.append(int(full))
                        continue
                    r = self.sready[s] = model.new_bool_var(f"subjob_ready_{s}")
                    model.add(kept(sj.groups) >= sj.min_available * r)
                    ready.append(r)
                model.add(sum(ready) + minimum * brk >= minimum)
            cost = model.new_int_var(0, held, f"cost_{v}")
            model.add(cost >= lost)
            model.add(cost >= held * brk)
            self.cost[v] = cost

    def _budgets(self) -> None:
        """Proportion's cut-off per victim queue (module doc); one bounded resource must hold."""
        problem, model, spec = self.problem, self.model, self.spec
        for queue, options in spec.budgets.items():
            groups = sorted(
                {
                    s.group
                    for s in spec.slots
                    if problem.jobs[s.job].queue == queue and s.job in self.rec
                }
            )
            if not groups:
                continue
            terms_of: dict[int, tuple[object, int]] = {}
            for g in groups:
                v = int(problem.group_job[g])
                count = sum(len(spec.slots[i].pods) for i in self.slots_of_group[g])
                if self.rec[v] is self.ev[v]:
                    terms_of[g] = (self.evicted_of_group(g), count)
                    continue
                r = self.reclaimed[g] = model.new_int_var(0, count, f"reclaimed_{g}")
                model.add(r >= self.evicted_of_group(g) - count * self.pre[v])
                terms_of[g] = (r, count)
            if not options:
                model.add(sum(expr for expr, _ in terms_of.values()) == 0)
                continue
            picks = []
            for res, bound in options:
                d = self.choice[(queue, res)] = model.new_bool_var(f"budget_{queue}_{res}")
                picks.append(d)
                terms = [
                    (int(problem.group_request[g, res]), expr, ub)
                    for g, (expr, ub) in terms_of.items()
                ]
                terms = [t for t in terms if t[0] > 0] + self._largest(queue, res, terms_of)
                coefs, cap = scaled(terms, bound)
                if coefs:
                    model.add(sum(a * x for a, x in coefs) <= cap).only_enforce_if(d)
            model.add_bool_or(picks)

    def _largest(self, queue: str, res: int,
                 terms_of: dict[int, tuple[object, int]]) -> list[tuple[int, object, int]]:
        """Terms ``−(level_t − level_{t−1})·z_t`` that add up to at most the largest request
        (resource ``res``) of a pod reclaimed from ``queue``: ``z_t`` may be 1 only if a pod of a
        group requesting at least ``level_t`` is reclaimed (the last pod proportion's cut-off
        takes may be the largest)."""
        model, problem = self.model, self.problem
        levels = sorted({int(problem.group_request[g, res]) for g in terms_of} - {0})
        out: list[tuple[int, object, int]] = []
        below = 0
        for level in levels:
            z = model.new_bool_var(f"largest_{queue}_{res}_{level}")
            self.largest[(queue, res)].append((level, z))
            model.add(z <= sum(expr for g, (expr, _) in terms_of.items()
                               if problem.group_request[g, res] >= level))
            out.append((below - level, z, 1))
            below = level
        return out

    # ---- objective, decoding (the hint: :mod:`.hint`)
    # -----------------------------------------------------------
    def stage_terms(self) -> dict[str, tuple[object, int]]:
        """Expression and largest value of each eviction stage."""
        held = sum(held_by(self.problem, v, per_pod=self.weights) for v in self.ev)
        return {
            "broken_gangs": (sum(self.brk.values()), len(self.brk)),
            "eviction_cost": (sum(self.cost.values()), held),
            "evicted_pods": (sum(self.e), sum(len(s.pods) for s in self.spec.slots)),
        }

    def evicted(self, solution: list[int]) -> list[str]:
        """Names of the pods a solution evicts (the first ``e`` of each slot's order; those
        ``gone`` where pods hold devices)."""
        out: list[str] = []
        for i, (var, s) in enumerate(zip(self.e, self.spec.slots, strict=True)):
            if i in self.gone:
                out.extend(p for p, b in zip(s.pods, self.gone[i], strict=True)
                           if solution[b.index])
            else:
                out.extend(s.pods[: solution[var.index]])
        return sorted(out)


MAX_UNIONS = 256  # allowed-set unions per node before the strict rule is used instead


def _union_closure(sets: set[frozenset]) -> list[frozenset] | None:
    """Every union of some of ``sets`` (the empty union included), in a fixed order; None if
    there are more than :data:`MAX_UNIONS`."""
    out = {frozenset()}
    for s in sorted(sets, key=sorted):
        out |= {u | s for u in out}
        if len(out) > MAX_UNIONS:
            return None
    return sorted(out, key=lambda u: (len(u), sorted(u)))


def nominated_jobs(problem: Problem, assignment: Assignment) -> set[int]:
    """Jobs with new pods on a node that loses pods: their bindings wait for the evictions."""
    nodes = {problem.running_pods[p] for p in assignment.evicted}
    return {
        int(problem.group_job[g])
        for g, per in assignment.counts.items()
        if any(c > 0 and n in nodes for n, c in per.items())
    }


def disruption(values: dict[str, int]) -> dict[str, int]:
    return {k: int(values[k]) for k in ("broken_gangs", "evicted_pods", "eviction_cost")}

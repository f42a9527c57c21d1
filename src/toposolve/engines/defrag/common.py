"""What both defragmentation engines read: the targets, the jobs that may move, their domains.

A **unit** is a job the engines may place: a target (its pending pods at its gang minimum,
:func:`minimum_counts`; the rest are ``extra``, placed after the moves where they fit) or a
movable running job (all its running pods). A unit's **levels** are its all-in-one-domain
rules: the job's own, each GangGroup's (gang trees) and each SubJob's with a hard limit; for a
movable job also "no worse than now" (its effective tier is the lower of its hard limit and the
tier of its pods' lowest common HyperNode). Levels nest or are disjoint (a tree). A level of
tier ``t`` picks one of the highest HyperNodes of tier ≤ ``t``
(:func:`domain_of_nodes`); a tier at or above the root's is no rule. Rationale:
``docs/defrag.md``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from toposolve.core.gang import gang_ready, task_minimums
from toposolve.core.problem import Problem
from toposolve.core.status import SolveStatus
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.defrag.budgets import Budgets, compile_uses

#: ``full_model`` of :func:`.cpsat.run_cpsat`: "auto" (the master's plan kept where it may be;
#: in waves the full model places them when small enough), "waves" (the full model always
#: decides, its waves as variables), "one-wave" (it always decides, as one wave with the budgets
#: summed over the waves; the sequencer places them after) — the last two compare the wave model
FULL_MODEL_MODES = ("auto", "waves", "one-wave")


@dataclass(frozen=True)
class Level:
    """Pods of ``groups`` lie in one HyperNode of tier ≤ ``tier``."""

    groups: tuple[int, ...]
    tier: int


@dataclass
class Unit:
    job: int
    counts: dict[int, int]  # group -> pods to place
    current: dict[int, dict[int, int]]  # group -> node -> running pods (empty for a target)
    levels: list[Level]
    cost: int  # move cost: toposolve.io/move-cost, else its pod count
    priority: int
    repair: bool = False  # a job with pods on failed nodes: ``current`` holds its healthy pods
    pinned: bool = False  # its running pods may not move (PodDisruptionBudgets, movable: false)
    # group -> node -> running pods that keep their node even if the job moves (pods two
    # PodDisruptionBudgets cover: the eviction API refuses them)
    fixed: dict[int, dict[int, int]] = field(default_factory=dict)
    pin: dict[int, int] = field(default_factory=dict)  # level index -> the domain it must use
    extra: dict[int, int] = field(default_factory=dict)  # target: group -> pods past its minimum
    # an elastic target whose minimum CP-SAT searches: group -> pending pods, and its levels
    # over all of them (``counts`` and ``levels`` stay the fixed rule's: the greedy's choice)
    upto: dict[int, int] = field(default_factory=dict)
    wide: list[Level] = field(default_factory=list)

    @property
    def model_counts(self) -> dict[int, int]:
        """Pods per group CP-SAT may place: ``upto`` for a searched target, else ``counts``."""
        return self.upto or self.counts

    @property
    def model_levels(self) -> list[Level]:
        """The levels CP-SAT enforces: ``wide`` for a searched target, else ``levels``."""
        return self.wide if self.upto else self.levels

    @property
    def healthy(self) -> int:
        """Running pods on nodes that have not failed."""
        return sum(sum(per.values()) for per in self.current.values())

    @property
    def groups(self) -> list[int]:
        return list(self.counts)

    def fixed_at(self, g: int, n: int) -> int:
        """Pods of group ``g`` on node ``n`` that keep their node (:attr:`fixed`)."""
        return self.fixed.get(g, {}).get(n, 0)

    @property
    def pods(self) -> int:
        return sum(self.counts.values())


Placement = dict[int, dict[int, int]]  # group -> node -> pods


@dataclass
class DefragResult:
    """An engine's answer: final placements of admitted targets and moved jobs."""

    status: SolveStatus
    placements: dict[int, Placement]  # job -> its placement (admitted targets, moved jobs)
    admitted: list[int]
    moved: list[int]
    bound: float | None = None  # lower bound on the move cost (stage 2)
    stats: dict = field(default_factory=dict)
    freed: list[int] = field(default_factory=list)  # HyperNodes left idle for ``free``
    repaired: list[int] = field(default_factory=list)  # repair jobs placed whole again
    # moves per wave where the engine chose the waves (CP-SAT's wave model): group -> wave ->
    # {"out": {node: pods}, "in": {node: pods}, "charged": {node: pods}, "failed": pods}
    waved: dict[int, dict[int, dict]] | None = None


def domain_of_nodes(problem: Problem, tier: int) -> np.ndarray:
    """[N] the highest HyperNode of tier ≤ ``tier`` holding each node, -1 where none."""
    at = problem.topology.node_at_tier[:, : tier + 1]
    out = np.full(problem.n_nodes, -1, dtype=np.int64)
    for column in range(at.shape[1]):  # higher tiers last: they win
        out = np.where(at[:, column] >= 0, at[:, column], out)
    return out


def _hard_tier(limit) -> int | None:
    return limit.tier if limit is not None and limit.hard else None


def _span_tier(problem: Problem, nodes: list[int]) -> int:
    return int(problem.topology.tier[problem.topology.lca_of_nodes(nodes)])


def gang_node_groups(problem: Problem, k: int) -> tuple[int, ...]:
    """The pod groups of every SubJob below GangNode ``k`` of a gang tree, in group order."""
    below, stack = [], [k]
    while stack:  # iterative: trees may be deep (core.limits.MAX_GANG_DEPTH)
        node = problem.gang_nodes[stack.pop()]
        stack += node.children
        below += [g for s in node.subjobs for g in problem.subjobs[s].groups]
    return tuple(sorted(below))


def _levels(problem: Problem, j: int, current: dict[int, dict[int, int]] | None) -> list[Level]:
    """The unit's levels (``current``: a running job's pods, whose span may not get worse)."""
    job, top = problem.jobs[j], problem.topology.max_tier
    out: list[Level] = []
    spans = [(tuple(job.groups), _hard_tier(job.limit))]
    spans += [(gang_node_groups(problem, k), _hard_tier(problem.gang_nodes[k].limit))
              for k in job.gang_nodes]
    spans += [(tuple(problem.subjobs[s].groups), _hard_tier(problem.subjobs[s].limit))
              for s in job.subjobs if problem.subjobs[s].policy >= 0]
    for k, (groups, tier) in enumerate(spans):
        if current is not None and k == 0:
            nodes = [n for g in groups for n in current.get(g, {})]
            span = _span_tier(problem, nodes)
            tier = span if tier is None else min(tier, span)
        if tier is not None and tier < top and groups:
            out.append(Level(groups, tier))
    return out


def eligible_to_move(problem: Problem, j: int, *, repair: bool = False) -> bool:
    """A job the engines may move: not marked ``toposolve.io/movable: "false"`` (unless
    ``repair``: such a job's failed pods are still re-placed), it runs, has no pending pod and
    no pod on an unknown node, and no limit in a constraint tree (a crossing Topology, whose
    domains the engines do not see). Gang trees of any depth move: every level with a hard tier
    is a :class:`Level`."""
    job = problem.jobs[j]
    return ((job.movable or repair) and not problem.has_pending(j)
            and j not in problem.crossing_jobs
            and any(problem.group_running[g] for g in job.groups)
            and not any(problem.group_running_absent[g] for g in job.groups))


@dataclass
class DefragInput:
    """The engines' view of one defragmentation: targets, movable jobs and free room."""

    problem: Problem
    targets: list[Unit]
    movable: list[Unit]
    base_free: np.ndarray  # [N, R] free room with every movable job gone
    free: dict[int, int] = field(default_factory=dict)  # tier -> domains to leave idle
    repairs: list[Unit] = field(default_factory=list)  # jobs with pods on failed nodes
    failed: np.ndarray | None = None  # [N] nodes gone (``--fail``)
    budgets: Budgets = field(default_factory=lambda: Budgets([], frozenset(), frozenset()))
    waves: int = 1  # the plan may be carried out in this many waves (``--max-waves``)

    @cached_property
    def units(self) -> list[Unit]:
        return [*self.targets, *self.repairs, *self.movable]

    def budget_use(self, placements: dict[int, Placement]) -> list[int]:
        """Per PodDisruptionBudget, the charged pods the jobs of ``placements`` (job -> final
        placement) move off their nodes (:mod:`.budgets`)."""
        return self.budgets.use(placements)

    def domains(self, tier: int) -> np.ndarray:
        """[N] the domain of each node at ``tier`` (cached)."""
        cache = self.__dict__.setdefault("_domains", {})
        if tier not in cache:
            cache[tier] = domain_of_nodes(self.problem, tier)
        return cache[tier]

    def allowed(self, unit: Unit, g: int) -> np.ndarray:
        """[N] nodes a pod of group ``g`` may go to: predicates, room with every movable job
        gone, and a domain at each of the unit's levels holding ``g``."""
        p = self.problem
        mask = p.group_feasible[g] & (fit_in(self.base_free, p.group_request[g]) > 0)
        for k, level in enumerate(unit.levels):
            if g in level.groups:
                dom = self.domains(level.tier)
                mask &= (dom == unit.pin[k]) if k in unit.pin else dom >= 0
        if self.failed is not None:
            mask &= ~self.failed
        return mask

    def current_free(self) -> np.ndarray:
        """[N, R] free room before the plan."""
        return self.problem.allocatable - self.problem.used

    def fixed_nodes(self) -> np.ndarray:
        """[N] nodes holding something that stays: a pod of a job that may not move, or any
        use of their resources that no movable job accounts for."""
        cache = self.__dict__.setdefault("_fixed", {})
        if "mask" not in cache:
            p = self.problem
            mask = ((p.allocatable - self.base_free) > 0).any(axis=1)
            movable = {u.job for u in self.movable}
            for pod in p.running:
                if pod.job not in movable and pod.node >= 0:
                    mask[pod.node] = True
            for unit in self.movable:
                mask |= anchor_nodes(unit, p.n_nodes)
            cache["mask"] = mask
        return cache["mask"]

    def free_candidates(self, tier: int) -> list[int]:
        """The domains of ``tier`` that may be left idle: no node of theirs is fixed
        (:meth:`fixed_nodes`), in HyperNode order."""
        dom, fixed = self.domains(tier), self.fixed_nodes()
        ids = sorted(set(dom[dom >= 0].tolist()))
        return [d for d in ids if not fixed[dom == d].any()]

    def top_level(self, unit: Unit) -> Level | None:
        """The unit's job-wide level, if it has one."""
        groups = set(unit.counts)
        return next((lv for lv in unit.levels if set(lv.groups) == groups), None)


def _take(counts: dict[int, int], pending: dict[int, int], groups: list[int], need: int) -> None:
    """Add pods of ``groups`` (in order) to ``counts`` until they hold ``need`` (in place)."""
    for g in groups:
        short = need - sum(counts.get(h, 0) for h in groups)
        if short <= 0:
            return
        add = min(short, pending.get(g, 0) - counts.get(g, 0))
        if add > 0:
            counts[g] = counts.get(g, 0) + add


def minimum_counts(problem: Problem, j: int) -> dict[int, int]:
    """The pending pods of job ``j`` (none running) that make its gang ready, by a fixed rule.

    Each subGroupPolicy's first ``minSubGroups`` SubJobs (creation order) at their
    ``subGroupSize``, then each task minimum, then the job's ``minAvailable``, each topped up
    from the job's own groups first, then groups already taken, then the rest, in group order.
    Returns every pending pod when the rule does not make a ready gang with each SubJob it
    touches at its size (a gang tree, or minimums that cross), as before elastic targets.
    """
    cj = problem.jobs[j]
    pending = {g: problem.group_pending_count(g) for g in cj.groups
               if problem.group_pending_count(g)}
    if cj.gang_nodes or cj.min_available >= sum(pending.values()):
        return pending
    counts: dict[int, int] = {}
    for policy, need in sorted(cj.min_subjobs.items()):
        subjobs = [s for s in cj.subjobs if problem.subjobs[s].policy == policy]
        for s in subjobs[:need]:
            sj = problem.subjobs[s]
            _take(counts, pending, [g for g in sj.groups if g in pending], sj.min_available)
    own = [g for g in pending if problem.subjobs[problem.group_subjob[g]].policy < 0]

    def order(groups: list[int]) -> list[int]:
        return sorted(groups, key=lambda g: (g not in own, g not in counts, g))

    for task, need in task_minimums(cj).items():
        _take(counts, pending, order([g for g in pending if problem.group_role[g] == task]),
              need)
    _take(counts, pending, order(list(pending)), cj.min_available)
    if not is_minimum(problem, j, counts):
        return pending
    return {g: c for g, c in counts.items() if c}


def is_minimum(problem: Problem, j: int, counts: dict[int, int]) -> bool:
    """Whether ``counts`` (group -> pods) make job ``j``'s gang ready
    (:func:`~toposolve.core.gang.gang_ready`) with every SubJob it touches at its size."""
    sizes = [(sum(counts.get(g, 0) for g in sj.groups), sj.min_available)
             for sj in (problem.subjobs[s] for s in problem.jobs[j].subjobs) if sj.policy >= 0]
    return not any(0 < have < size for have, size in sizes) and gang_ready(problem, j, counts)


def _unit(problem: Problem, j: int, *, target: bool,
          failed: np.ndarray | None = None) -> Unit:
    """A target (its pending pods: :func:`minimum_counts`, the rest ``extra``), a movable job or,
    when some of its pods run on ``failed`` nodes, a repair job (all its running pods to place,
    its healthy ones in ``current``)."""
    job = problem.jobs[j]
    extra: dict[int, int] = {}
    if target:
        counts = minimum_counts(problem, j)
        extra = {g: problem.group_pending_count(g) - counts.get(g, 0) for g in job.groups}
        extra = {g: c for g, c in extra.items() if c}
        current: dict[int, dict[int, int]] = {}
    else:
        counts = {g: sum(problem.group_running[g].values()) for g in job.groups
                  if problem.group_running[g]}
        current = {g: dict(problem.group_running[g]) for g in counts}
    every = _levels(problem, j, None if target else current)
    levels = [Level(tuple(g for g in lv.groups if g in counts), lv.tier) for lv in every]
    levels = [lv for lv in levels if lv.groups]  # a target's SubJobs left out of its minimum
    upto: dict[int, int] = {}
    if extra and not job.gang_nodes:  # elastic: CP-SAT may choose another minimum
        upto = {g: problem.group_pending_count(g) for g in job.groups
                if problem.group_pending_count(g)}
    cost = job.move_cost if job.move_cost is not None and not target else sum(counts.values())
    repair = failed is not None and any(failed[n] for per in current.values() for n in per)
    if repair:
        current = {g: {n: c for n, c in per.items() if not failed[n]}
                   for g, per in current.items()}
    return Unit(job=j, counts=counts, current=current, levels=levels, cost=cost,
                priority=job.priority, repair=repair, pinned=not job.movable, extra=extra,
                upto=upto, wide=[w for w in (Level(tuple(g for g in lv.groups if g in upto),
                                                   lv.tier) for lv in every) if w.groups])


def anchor_nodes(unit: Unit, n_nodes: int) -> np.ndarray:
    """[N] the nodes holding ``unit``'s :attr:`~Unit.fixed` pods."""
    mask = np.zeros(n_nodes, dtype=bool)
    for per in unit.fixed.values():
        mask[list(per)] = True
    return mask


def _with_refused(units: list[Unit], budgets: Budgets, stuck: Collection[int]) -> list[Unit]:
    """``units`` with the pods two budgets cover fixed in place (:attr:`Unit.fixed`); a repair
    job, a job all of whose pods are so covered, or a job in ``stuck`` (a fixed pod's node out
    of its own rules) is pinned whole."""
    out = []
    for unit in units:
        cells = budgets.refused.get(unit.job)
        if cells and (unit.repair or unit.job in stuck or sum(cells.values()) == unit.healthy):
            unit = replace(unit, pinned=True)
        elif cells:
            fixed: dict[int, dict[int, int]] = {}
            for (g, n), count in cells.items():
                fixed.setdefault(g, {})[n] = count
            unit = replace(unit, fixed=fixed)
        out.append(unit)
    return out


def build_input(problem: Problem, targets: list[int], free: dict[int, int] | None = None,
                failed: np.ndarray | None = None, waves: int = 1,
                stuck: frozenset[int] = frozenset()) -> DefragInput:
    """The targets, the repair jobs, the running jobs with pods in a domain a target may use,
    and free room.

    A running job is movable when :func:`eligible_to_move` and one of its pods lies in a
    HyperNode of tier ≤ a target's hard limit (anywhere when a target has none, or when
    ``free``, tier → domains to leave idle, or ``failed``, [N] nodes gone, asks for any). A job
    with a pod on a failed node is a repair job (when eligible, movable or not). ``waves``: the
    plan may be carried out in that many waves (each renews the budgets' allowance). A pod two
    budgets cover keeps its node (:attr:`Unit.fixed`); the rest of its job may move, unless a
    fixed pod's node is outside what the job may use (then the job is pinned: ``stuck``).
    """
    target_units = [_unit(problem, j, target=True) for j in targets]
    eligible = [cj.index for cj in problem.jobs
                if cj.index not in targets and eligible_to_move(problem, cj.index, repair=True)]
    budgets = compile_uses(problem, failed, waves)
    units = [_unit(problem, j, target=False, failed=failed) for j in eligible]
    units = _with_refused(units, budgets, stuck)
    repairs = [u for u in units if u.repair]
    reach = np.full(problem.n_nodes, bool(free) or failed is not None, dtype=bool)
    for unit in target_units:
        level = next((lv for lv in unit.levels if set(lv.groups) == set(unit.counts)), None)
        if level is None:
            reach[:] = True
        else:
            reach |= domain_of_nodes(problem, level.tier) >= 0
    movable = [u for u in units if not u.repair and not u.pinned
               and any(reach[n] for per in u.current.values() for n in per)]
    room = problem.allocatable - problem.used
    for unit in [*movable, *repairs]:
        for g, per_node in unit.current.items():
            for n, count in per_node.items():
                room[n] += count * problem.group_request[g]
    if failed is not None:
        room[failed] = 0
    di = DefragInput(problem, target_units, movable, room, dict(free or {}), repairs, failed,
                     budgets, waves)
    more = {u.job for u in movable
            if any(not di.allowed(u, g)[n] for g, per in u.fixed.items() for n in per)}
    return build_input(problem, targets, free, failed, waves, stuck | more) if more else di


def freed_nodes(di: DefragInput, freed: list[int]) -> np.ndarray:
    """[N] the nodes of the HyperNodes ``freed`` (domains left idle)."""
    mask = np.zeros(di.problem.n_nodes, dtype=bool)
    for tier in di.free:
        mask |= np.isin(di.domains(tier), freed)
    return mask


def final_free(di: DefragInput, result: DefragResult) -> np.ndarray:
    """[N, R] free room once ``result`` is carried out: the jobs it places where it places them,
    the other movable and repair jobs where they run."""
    p, free = di.problem, di.base_free.copy()
    for unit in [*di.movable, *di.repairs]:
        if unit.job not in result.placements:
            for g, per_node in unit.current.items():
                for n, here in per_node.items():
                    free[n] -= here * p.group_request[g]
    for placement in result.placements.values():
        for g, per_node in placement.items():
            for n, count in per_node.items():
                free[n] -= count * p.group_request[g]
    return free


def place_extras(di: DefragInput, result: DefragResult) -> None:
    """Add to each admitted target's placement (in place) its ``extra`` pods that fit first-fit
    in the room the plan leaves, no move added: each within the domain its level's placed pods
    hold, outside idle domains and failed nodes. Targets by priority then job order, groups in
    order. Pods of a SubJob left out of the minimum, or of a level none of whose pods is placed,
    stay pending (placing part of a SubJob could break its gang)."""
    p, free = di.problem, final_free(di, result)
    blocked = freed_nodes(di, result.freed)
    if di.failed is not None:
        blocked |= di.failed
    for unit in sorted(di.targets, key=lambda u: (-u.priority, u.job)):
        if unit.job not in result.admitted or not (unit.extra or unit.upto):
            continue
        placement = result.placements[unit.job]
        for g in p.jobs[unit.job].groups:
            want = p.group_pending_count(g) - sum(placement.get(g, {}).values())
            mask = p.group_feasible[g] & ~blocked
            if want <= 0 or (p.subjobs[p.group_subjob[g]].policy >= 0 and not any(
                    placement.get(h) for h in p.subjobs[p.group_subjob[g]].groups)):
                continue
            for level in _levels(p, unit.job, None):
                if g in level.groups:
                    nodes = [n for h in level.groups for n in placement.get(h, {})]
                    dom = di.domains(level.tier)
                    mask &= dom == dom[nodes[0]] if nodes else False
            fits = fit_in(free, p.group_request[g], mask)
            for n in np.flatnonzero(fits).tolist():
                take = min(want, int(fits[n]))
                per = placement.setdefault(g, {})
                per[n] = per.get(n, 0) + take
                free[n] -= take * p.group_request[g]
                want -= take
                if not want:
                    break


def priority_weights(units: list[Unit]) -> dict[int, int]:
    """Weights by job so that one more target of a higher priority outweighs every target of
    lower priorities (lexicographic by priority)."""
    weights: dict[int, int] = {}
    total = 0
    for priority in sorted({u.priority for u in units}):
        same = [u for u in units if u.priority == priority]
        weight = total + 1
        for u in same:
            weights[u.job] = weight
        total += weight * len(same)
    return weights


def pod_changes(problem: Problem, unit: Unit, final: Placement, keep_first: Collection[str] = (),
                refused: Collection[str] = ()
                ) -> tuple[list[tuple[str, int, int]], list[tuple[str, int]]]:
    """Moves ``(pod, from, to)`` and bindings ``(pod, node)`` that take ``unit`` to ``final``.

    A moved job's pods stay where the final placement keeps at least as many of its group
    (the pods of ``refused`` first, those two PodDisruptionBudgets cover, then those of
    ``keep_first``, i.e. those a budget charges, then lowest pod names); the others move to
    the nodes that gain pods, in node order. A
    target's pending pods are bound in pod order to its nodes in node order (its minimum and
    extra pods alike; those that find no node stay pending).
    """
    moves: list[tuple[str, int, int]] = []
    bindings: list[tuple[str, int]] = []
    if not unit.current:
        for g, per_node in final.items():
            slots = [n for n, c in sorted(per_node.items()) for _ in range(c)]
            bindings += list(zip(problem.group_pending[g][:len(slots)], slots, strict=True))
        return moves, bindings
    for g, count in unit.counts.items():
        slots = [n for n, c in sorted(final.get(g, {}).items()) for _ in range(c)]
        pods = [p for p in problem.running if p.group == g]
        keep = dict(final.get(g, {}))
        leaving = []
        for pod in sorted(pods, key=lambda p: (p.name not in refused, p.name not in keep_first,
                                               p.name)):
            if keep.get(pod.node, 0) > 0:
                keep[pod.node] -= 1
            else:
                leaving.append(pod)
        arriving = [n for n, c in sorted(keep.items()) for _ in range(c)]
        moves += [(p.name, p.node, n) for p, n in zip(leaving, arriving, strict=True)]
        assert len(slots) == count
    return moves, bindings


def plan_changes(di: DefragInput, result: DefragResult
                 ) -> tuple[list[tuple[str, int, int]], list[tuple[str, int]]]:
    """The plan's moves ``(pod, from, to)`` and bindings ``(pod, node)``, in unit order
    (:func:`pod_changes` per placed unit)."""
    moves, bindings = [], []
    for unit in di.units:
        if unit.job in result.placements:
            moved, bound = pod_changes(di.problem, unit, result.placements[unit.job],
                                       di.budgets.charged_pods, di.budgets.refused_pods)
            moves += moved
            bindings += bound
    return moves, bindings


def blocked_reason(di: DefragInput, unit: Unit) -> str:
    """Why no number of moves admits ``unit``, in one line: the domain that comes closest and
    what blocks it."""
    p = di.problem
    top = di.top_level(unit)
    dom = di.domains(top.tier) if top is not None else np.zeros(p.n_nodes, dtype=np.int64)
    ids = sorted(set(dom[dom >= 0].tolist()))
    best, held = None, -1
    for d in ids:
        mask = dom == d
        fits = sum(min(count, int(fit_in(di.base_free, p.group_request[g],
                                         di.allowed(unit, g) & mask).sum()))
                   for g, count in unit.counts.items())
        if fits > held:
            best, held = d, fits
    where = (f"tier-{top.tier} HyperNode" if top is not None else "placement in the cluster")
    name = p.topology.names[best] if best is not None and top is not None else "the cluster"
    if best is None or held < unit.pods:
        nodes = int((dom == best).sum()) if best is not None else 0
        return (f"no {where} can hold {unit.pods} pods even if emptied of movable jobs: the "
                f"closest, {name} ({nodes} nodes), holds {max(held, 0)}")
    return (f"{name} could hold its {unit.pods} pods if emptied, but the jobs in it find no "
            "room elsewhere within their constraints (or the move limit or time ran out)")


def repair_reason(di: DefragInput, unit: Unit) -> str:
    """Why repair job ``unit`` could not be repaired, in one line: the domain its healthy pods
    hold, its spare room there even with every movable job gone, and what else was tried."""
    p, top = di.problem, None
    failed = unit.pods - unit.healthy
    for level in unit.levels:
        nodes = [n for g in level.groups for n in unit.current.get(g, {})]
        if nodes and (top is None or level.tier > top[0]):
            top = (level.tier, int(di.domains(level.tier)[nodes[0]]))
    mask = np.ones(p.n_nodes, dtype=bool) if top is None else di.domains(top[0]) == top[1]
    where = "the cluster" if top is None else f"{p.topology.names[top[1]]} (tier {top[0]})"
    spare, free = 0, di.base_free.copy()
    for g, per_node in unit.current.items():  # its healthy pods stay
        for n, count in per_node.items():
            free[n] -= count * p.group_request[g]
    for g, count in unit.counts.items():
        need = count - sum(unit.current.get(g, {}).values())
        if need:
            room = fit_in(free, p.group_request[g], p.group_feasible[g] & mask)
            spare += min(need, int(room[~di.failed].sum()) if di.failed is not None
                         else int(room.sum()))
    whole = ("its running pods may not move (movable: false or PodDisruptionBudgets)"
             if unit.pinned else "nor does the whole job fit in another domain")
    if spare < failed:
        return (f"no spare in {where}: room for {spare} of its {failed} failed pod(s) even with "
                f"every movable job moved out, and {whole}")
    return (f"{where} could take its {failed} failed pod(s) if emptied, but the jobs there find no "
            f"room elsewhere or a PodDisruptionBudget or the move limit forbids it, and {whole}")

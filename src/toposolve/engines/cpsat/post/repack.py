"""Primal helper: re-place the same pods tier-first, best fit (a better warm start).

CP-SAT proves spread/fragmentation bounds quickly but finds tight packings slowly (it is bin
packing). The jobs of a plan are placed again with exactly the same number of new pods per
group: jobs with running pods first, then the largest first; each goes to a domain of the lowest
level that can hold it (among those, the one left fullest: best fit), never above its hard
limit and always in the domain holding its running pods; its policy SubJobs go likewise inside
it, largest first; pods take the fullest feasible nodes first. The result is used only if it is
lexicographically better (:func:`toposolve.policy.objective.evaluate`); gangs, queues and SubJob
sizes are unchanged because the counts are. It also turns the counts of the coarse model (see
:mod:`.coarse`) into a plan.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.assignment import Assignment
from toposolve.core.footprint import occupied_domain
from toposolve.core.problem import Problem
from toposolve.core.topology import subtree_sums
from toposolve.engines.cpsat.model.classes import Levels, build_levels, pods_that_fit


class _State:
    def __init__(self, problem: Problem, idle: np.ndarray) -> None:
        topo = problem.topology
        self.problem = problem
        self.idle = idle.copy()
        self.members = topo.members.astype(np.int64).tocsr()
        self.hn_idle = subtree_sums(self.members, self.idle.astype(float))
        self.chain = {h: topo.ancestors(h) for h in set(topo.node_home.tolist())}
        self.home = topo.node_home
        self.log: list[tuple[int, int, int]] = []
        self.scale = np.maximum(problem.allocatable.max(axis=0, initial=0), 1).astype(float)

    def nodes_of(self, h: int) -> np.ndarray:
        return self.problem.nodes_in(h)

    def place(self, g: int, n: int, count: int) -> None:
        amount = count * self.problem.group_request[g]
        self.idle[n] -= amount
        self.hn_idle[self.chain[int(self.home[n])]] -= amount.astype(float)
        self.log.append((g, n, count))

    def undo_to(self, mark: int) -> None:
        while len(self.log) > mark:
            g, n, count = self.log.pop()
            amount = count * self.problem.group_request[g]
            self.idle[n] += amount
            self.hn_idle[self.chain[int(self.home[n])]] += amount.astype(float)

    def fill(self, g: int, count: int, h: int) -> bool:
        """Put ``count`` pods of group ``g`` on nodes of ``h``, fullest nodes first."""
        problem = self.problem
        nodes = self.nodes_of(h)
        nodes = nodes[problem.group_feasible[g][nodes] & problem.schedulable[nodes]]
        if nodes.size == 0:
            return False
        fits = pods_that_fit(problem.group_request[g], self.idle[nodes])
        keep = fits > 0
        nodes, fits = nodes[keep], fits[keep]
        if fits.sum() < count:
            return False
        room = (self.idle[nodes] / self.scale).sum(axis=1)
        for k in np.lexsort((nodes, room)).tolist():
            take = int(min(count, fits[k]))
            self.place(g, int(nodes[k]), take)
            count -= take
            if count == 0:
                return True
        return count == 0


def _demand(problem: Problem, per_group: dict[int, int]) -> np.ndarray:
    total = np.zeros(len(problem.resources), dtype=float)
    for g, c in per_group.items():
        total += c * problem.group_request[g].astype(float)
    return total


def _running_lca(problem: Problem, groups: list[int]) -> int | None:
    """The domain the running pods of ``groups`` occupy (None when none runs)."""
    return occupied_domain(problem,
            (n for g in groups for n, c in problem.group_running[g].items() if c > 0))


class _Repacker:
    def __init__(self, problem: Problem, idle: np.ndarray) -> None:
        self.problem = problem
        self.levels: Levels = build_levels(problem)
        self.state = _State(problem, idle)

    def hard_level(self, limit) -> int:
        if limit is None or not limit.hard:
            return self.levels.root_level
        return min(self.levels.level_of_limit(limit.tier), self.levels.root_level)

    def place_unit(self, per_group: dict[int, int], top: int, inside: tuple[int, int] | None,
                   pinned: int | None, inner) -> bool:
        """Lowest level ≤ ``top``, best-fit domain (inside ``inside`` = (domain, level), holding
        HyperNode ``pinned``) where ``inner(domain, level)`` succeeds."""
        need = _demand(self.problem, per_group)
        st = self.state
        for lvl in range(top + 1):
            if pinned is not None:
                held = int(self.levels.domain[lvl][pinned])
                doms = np.array([held] if held >= 0 else [], dtype=np.int64)
            else:
                doms = self.levels.members(lvl)
            if inside is not None and doms.size:
                doms = doms[self.levels.domain[inside[1]][doms] == inside[0]]
            if doms.size == 0:
                continue
            room = st.hn_idle[doms]
            ok = (room >= need * (1 - 1e-12)).all(axis=1)  # float sums: tolerate rounding
            doms, room = doms[ok], room[ok]
            if doms.size == 0:
                continue
            left = ((room - need) / st.scale).sum(axis=1)
            for h in doms[np.lexsort((doms, left))].tolist():
                mark = len(st.log)
                if inner(h, lvl):
                    return True
                st.undo_to(mark)
        return False

    def place_job(self, j: int, per_group: dict[int, int], guide: int | None = None) -> bool:
        """Place job ``j``; inside HyperNode ``guide`` if that works, else anywhere allowed."""
        if guide is not None:
            level = int(np.searchsorted(self.levels.tiers, self.problem.topology.tier[guide]))
            if self._place_job(j, per_group, (guide, level)):
                return True
        return self._place_job(j, per_group, None)

    def _place_job(self, j: int, per_group: dict[int, int], inside: tuple[int, int] | None) -> bool:
        problem = self.problem
        cj = problem.jobs[j]
        subjobs = []
        loose: dict[int, int] = {}
        for s in cj.subjobs:
            mine = {g: per_group[g] for g in problem.subjobs[s].groups if per_group.get(g)}
            if not mine:
                continue
            if problem.subjobs[s].policy < 0:
                loose.update(mine)
            else:
                subjobs.append((s, mine))
        subjobs.sort(key=lambda e: (-float((_demand(problem, e[1]) / self.state.scale).sum()),
                                    e[0]))

        def inner(h: int, lvl: int) -> bool:
            for s, mine in subjobs:
                sj = problem.subjobs[s]
                top = min(self.hard_level(sj.limit), lvl)
                pinned = _running_lca(problem, sj.groups)
                if not self.place_unit(mine, top, (h, lvl), pinned,
                                       lambda d, _l, m=mine: self.fill_all(m, d)):
                    return False
            return self.fill_all(loose, h)

        return self.place_unit(per_group, self.hard_level(cj.limit), inside,
                               _running_lca(problem, cj.groups), inner)

    def fill_all(self, per_group: dict[int, int], h: int) -> bool:
        return all(self.state.fill(g, c, h) for g, c in sorted(per_group.items()))


def repack(problem: Problem, assignment: Assignment, idle: np.ndarray | None = None,
           guide: dict[int, int] | None = None,
           optional: list[tuple[int, dict[int, int]]] | None = None) -> Assignment | None:
    """The same new pods per group placed tier-first and best fit; None if some job does not fit.

    ``idle``: idle resources to start from (default: allocatable minus running pods).
    ``guide``: job -> HyperNode to try first (e.g. where a coarse model put the job).
    ``optional``: (job, group -> new pods) placed afterwards in this order, each where it fits
    and left out where it does not (jobs not in ``assignment``).
    None also when a job with pods to repack has a limit in a constraint tree (a crossing
    Topology): repacking knows the main tree only.
    """
    extra = optional or []
    if any(int(problem.group_job[g]) in problem.crossing_jobs for g in assignment.counts) or any(
            j in problem.crossing_jobs for j, _ in extra):
        return None
    start = np.maximum(problem.allocatable - problem.used, 0) if idle is None else idle
    rp = _Repacker(problem, start)
    per_job: dict[int, dict[int, int]] = {}
    for g, per in assignment.counts.items():
        total = sum(c for c in per.values() if c > 0)
        if total:
            per_job.setdefault(int(problem.group_job[g]), {})[g] = total
    scale = rp.state.scale

    def order(j: int) -> tuple:
        pinned = problem.job_running_count(j) > 0
        return (not pinned, -float((_demand(problem, per_job[j]) / scale).sum()), j)

    for j in sorted(per_job, key=order):
        if not rp.place_job(j, per_job[j], (guide or {}).get(j)):
            return None
    for j, per_group in extra:
        rp.place_job(j, per_group)  # a job that does not fit leaves the state as it was
    out = Assignment()
    for g, n, c in rp.state.log:
        out.add(g, n, c)
    return out

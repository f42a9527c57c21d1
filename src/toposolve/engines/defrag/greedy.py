"""The descheduler-style baseline: empty one domain job by job until the target fits.

For each target (higher priority first, then job order), each domain it may use is tried in
order of fewest running pods (ties: HyperNode order): its movable jobs are moved out, fewest pods
first (ties: job order), each first-fit onto nodes outside the domain within its own rules,
until the target fits first-fit inside the domain; a job that finds no room stays. The domain
that needs the least move cost (then fewest jobs, then the order tried) wins; an elastic
target tries each of its candidate minimums so (:mod:`.minimums`). Not minimal in
general: it never moves a job out of another domain to make room, nor chooses which jobs of a
domain are enough.

With ``free`` (tier → N), first: the candidate domains of each tier (no pod that stays, see
:meth:`~toposolve.engines.defrag.common.DefragInput.free_candidates`) in order of fewest movable
running pods (ties: HyperNode order); each one's movable jobs are moved out first-fit (fewest
pods first) outside it and the domains already freed; a domain some job of which finds no room
stays as it is, and the next is tried, until N are idle. The targets then avoid the idle domains.
Repairs (``fail``) come before both (:func:`_repair_one`); a job moves only where, once placed,
the charged pods it moves keep every PodDisruptionBudget
(:meth:`~toposolve.engines.defrag.common.DefragInput.budget_use`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from toposolve.core.status import SolveStatus
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.defrag.common import (
    DefragInput,
    DefragResult,
    Level,
    Placement,
    Unit,
    anchor_nodes,
    freed_nodes,
)
from toposolve.engines.defrag.minimums import candidate_units


@dataclass
class _Trial:
    free: np.ndarray
    target: Placement
    moved: dict[int, Placement]
    used: list[int]  # per PodDisruptionBudget, charged pods moved so far

    @property
    def key(self) -> tuple[int, int]:
        return (sum(sum(sum(p.values()) for p in pl.values()) for pl in self.moved.values()),
                len(self.moved))


def first_fit(di: DefragInput, unit: Unit, groups: list[int], free: np.ndarray,
              mask: np.ndarray, *, stay: bool = False,
              only_fixed: np.ndarray | None = None) -> Placement | None:
    """Place ``groups`` of ``unit`` first-fit on ``mask`` nodes, taking room from ``free`` (in
    place); None (``free`` then partly taken) when they do not all fit. The unit's fixed pods
    (:attr:`~toposolve.engines.defrag.common.Unit.fixed`) take their nodes first; no other pod
    goes to an ``only_fixed`` node. ``stay``: then as many pods as fit back on each node they
    run on now (node order), then first-fit."""
    p, out = di.problem, {}
    for g in groups:
        need, request = unit.counts[g], p.group_request[g]
        fits = fit_in(free, request, di.allowed(unit, g) & mask)
        out[g] = {}
        fixed = unit.fixed.get(g, {})
        if any(fits[n] < c for n, c in fixed.items()):
            return None
        if only_fixed is not None:
            for n in np.flatnonzero(only_fixed).tolist():
                fits[n] = min(int(fits[n]), fixed.get(n, 0))
        here = unit.current.get(g, {}) if stay else {}
        passes = [(n, c) for n, c in sorted(fixed.items())]
        passes += [(n, here[n] - unit.fixed_at(g, n)) for n in sorted(here)]
        passes += [(n, need) for n in np.flatnonzero(fits).tolist()]
        for n, most in passes:
            take = min(need, int(fits[n]), most)
            if take <= 0:
                continue
            out[g][n] = out[g].get(n, 0) + take
            fits[n] -= take
            free[n] -= take * request
            need -= take
            if not need:
                break
        if need:
            return None
    return out


def _choices(di: DefragInput, level, mask: np.ndarray,
             here: dict[int, int] | None = None) -> list[np.ndarray]:
    """The level's domains within ``mask`` as node masks, in HyperNode order (``here``, node ->
    pods of the level running there: the domains holding most of them first)."""
    if level is None:
        return [mask]
    dom = di.domains(level.tier)
    ids = list(dict.fromkeys(dom[mask & (dom >= 0)].tolist()))
    if here:
        held: dict[int, int] = {}
        for n, count in here.items():
            held[int(dom[n])] = held.get(int(dom[n]), 0) + count
        ids.sort(key=lambda d: -held.get(d, 0))  # stable: HyperNode order among equals
    return [mask & (dom == d) for d in ids]


def _outermost(levels: list[Level]) -> Level:
    """The first level (in order) inside no other; of levels with the same pods, the widest."""
    first = next(lv for lv in levels
                 if not any(set(lv.groups) < set(o.groups) for o in levels))
    return max((lv for lv in levels if set(lv.groups) == set(first.groups)),
               key=lambda lv: lv.tier)


def _place_nested(di: DefragInput, unit: Unit, levels: list[Level], groups: list[int],
                  free: np.ndarray, mask: np.ndarray, stay: bool,
                  only_fixed: np.ndarray | None = None) -> Placement | None:
    """First-fit ``groups`` of ``unit`` on ``mask`` within ``levels`` (nested or disjoint):
    the outermost level takes the first of its domains that holds its pods (recursively), then
    the rest; takes the room from ``free`` on success. A level's domain, once it fits, is kept:
    a later sibling that finds no room fails the whole (no backtracking). ``stay``: see
    :func:`place_unit`; ``only_fixed``: see :func:`first_fit`."""
    if not levels:
        trial = free.copy()
        got = first_fit(di, unit, groups, trial, mask, stay=stay, only_fixed=only_fixed)
        if got is not None:
            free[...] = trial
        return got
    top = _outermost(levels)
    inside = [lv for lv in levels if lv is not top and set(lv.groups) <= set(top.groups)]
    outside = [lv for lv in levels if lv is not top and lv not in inside]
    rest = [g for g in groups if g not in top.groups]
    here: dict[int, int] = {}
    for g in top.groups if stay else ():
        for n, count in unit.current.get(g, {}).items():
            here[n] = here.get(n, 0) + count
    for sub in _choices(di, top, mask, here):
        trial = free.copy()
        got = _place_nested(di, unit, inside, list(top.groups), trial, sub, stay, only_fixed)
        if got is None:
            continue
        more = _place_nested(di, unit, outside, rest, trial, mask, stay, only_fixed)
        if more is None:
            return None
        free[...] = trial
        return {**got, **more}
    return None


def place_unit(di: DefragInput, unit: Unit, free: np.ndarray, region: np.ndarray, *,
               stay: bool = False) -> Placement | None:
    """A first-fit placement of all ``unit``'s pods inside ``region`` within its levels (per
    level, the first domain that holds its pods, in HyperNode order, outer levels first); takes
    the room from ``free`` on success. ``stay``: a running unit's pods keep their nodes where
    room is left (its domains holding most of its pods tried first, then each node it runs on
    refilled up to its pods there before first-fit). The unit's fixed pods keep their nodes,
    inside ``region`` or not; its other pods go inside."""
    outside = anchor_nodes(unit, di.problem.n_nodes) & ~region
    return _place_nested(di, unit, list(unit.levels), list(unit.counts), free,
                         region | outside, stay, outside if outside.any() else None)


def _release(di: DefragInput, unit: Unit, free: np.ndarray) -> None:
    for g, per_node in unit.current.items():
        for n, count in per_node.items():
            free[n] += count * di.problem.group_request[g]


def _budget_ok(di: DefragInput, unit: Unit, placed: Placement, used: list[int]) -> bool:
    """Add ``unit``'s budget use at ``placed`` to ``used`` (in place) if every budget still
    holds; else leave ``used`` as it is."""
    more = [a + b for a, b in zip(used, di.budget_use({unit.job: placed}), strict=True)]
    if not di.budgets.fits(more):
        return False
    used[:] = more
    return True


def _try_domain(di: DefragInput, target: Unit, region: np.ndarray, free: np.ndarray,
                taken: set[int], idle: np.ndarray, used: list[int]) -> _Trial | None:
    free, region, used = free.copy(), region & ~idle, list(used)
    inside = [u for u in di.movable if u.job not in taken
              and any(region[n] for per in u.current.values() for n in per)]
    inside.sort(key=lambda u: (u.pods, u.job))
    moved: dict[int, Placement] = {}
    for unit in [None, *inside]:
        if unit is not None:
            trial = free.copy()
            _release(di, unit, trial)
            placed = place_unit(di, unit, trial, ~region & ~idle)
            if placed is None or not _budget_ok(di, unit, placed, used):
                continue  # no room elsewhere, or a PodDisruptionBudget forbids it: it stays
            free, moved[unit.job] = trial, placed
        attempt = free.copy()
        placed = place_unit(di, target, attempt, region)
        if placed is not None:
            return _Trial(attempt, placed, moved, used)
    return None


def _regions(di: DefragInput, target: Unit) -> list[np.ndarray]:
    """The target's domains as node masks, fewest running pods first: those of its job-wide
    level, else of its outermost level (a SubJob or GangGroup: the whole target goes there)."""
    top = di.top_level(target) or (_outermost(target.levels) if target.levels else None)
    if top is None:
        return [np.ones(di.problem.n_nodes, dtype=bool)]
    dom = di.domains(top.tier)
    pods = np.zeros(di.problem.n_nodes, dtype=np.int64)
    for pod in di.problem.running:
        pods[pod.node] += 1
    ids = sorted(set(dom[dom >= 0].tolist()), key=lambda d: (int(pods[dom == d].sum()), d))
    return [dom == d for d in ids]


def _free_domains(di: DefragInput, free: np.ndarray, placements: dict[int, Placement],
                  max_moves: int | None, moved_before: list[int], used: list[int]) -> list[int]:
    """Leave ``di.free`` domains idle (see the module docstring), taking room from ``free``
    and recording the moved jobs in ``placements``, ``moved_before`` (the jobs moved so far:
    ``max_moves`` counts them) and ``used`` (budget use), all in place; returns the idle
    domains."""
    freed: list[int] = []
    pods = np.zeros(di.problem.n_nodes, dtype=np.int64)
    for unit in di.movable:
        for per_node in unit.current.values():
            for n, count in per_node.items():
                pods[n] += count
    for tier, count in sorted(di.free.items()):
        dom, done = di.domains(tier), 0
        order = sorted(di.free_candidates(tier), key=lambda d: (int(pods[dom == d].sum()), d))
        for d in order:
            if done == count:
                break
            region = (dom == d) | freed_nodes(di, freed)
            if any(region[n] for pl in placements.values() for per in pl.values() for n in per):
                continue  # a job moved for an earlier domain landed here
            inside = sorted((u for u in di.movable if u.job not in placements
                             and any(dom[n] == d for per in u.current.values() for n in per)),
                            key=lambda u: (u.pods, u.job))
            trial, moved, trial_used = free.copy(), {}, list(used)
            for unit in inside:
                _release(di, unit, trial)
                placed = place_unit(di, unit, trial, ~region)
                if placed is None or not _budget_ok(di, unit, placed, trial_used):
                    break
                moved[unit.job] = placed
            if len(moved) < len(inside) or (
                    max_moves is not None and len(moved_before) + len(moved) > max_moves):
                continue
            free[...] = trial
            used[:] = trial_used
            placements.update(moved)
            moved_before += list(moved)
            freed.append(d)
            done += 1
    return freed


def run_greedy(di: DefragInput, max_moves: int | None = None) -> DefragResult:
    """The greedy baseline's plan for ``di`` (see the module docstring); a target whose best
    domain would take the jobs moved past ``max_moves`` is left out."""
    start = time.perf_counter()
    free = di.current_free()
    if di.failed is not None:
        free[di.failed] = 0
    placements: dict[int, Placement] = {}
    used = [0] * len(di.budgets.uses)
    repaired, moved = _repair_all(di, free, placements, max_moves, used)
    freed = _free_domains(di, free, placements, max_moves, moved, used)
    idle = freed_nodes(di, freed)
    admitted = []
    moved += [j for j in placements if j not in moved and j not in repaired]
    taken = set(moved)
    for target in sorted(di.targets, key=lambda u: (-u.priority, u.job)):
        best = None
        for minimum in candidate_units(di.problem, target):  # elastic: which pods (.minimums)
            for region in _regions(di, minimum):
                trial = _try_domain(di, minimum, region, free, taken, idle, used)
                if trial is not None and (best is None or trial.key < best.key):
                    best = trial
                if best is not None and best.key == (0, 0):
                    break  # no move: nothing later beats it (ties keep the first)
            if best is not None and best.key == (0, 0):
                break
        if best is None or (max_moves is not None
                            and len(moved) + len(best.moved) > max_moves):
            continue
        free, used = best.free, best.used
        placements[target.job] = best.target
        placements.update(best.moved)
        admitted.append(target.job)
        moved += list(best.moved)
        taken |= set(best.moved)
    status = SolveStatus.FEASIBLE
    return DefragResult(status, placements, admitted, moved, freed=freed, repaired=repaired,
                        stats={"wall_time_s": time.perf_counter() - start})


def keep_unit(di: DefragInput, unit: Unit) -> Unit:
    """The failed pods of repair job ``unit`` as a unit of their own, each of its levels pinned
    to the domain its healthy pods hold (the job's other pods stay where they run)."""
    counts = {g: c - sum(unit.current.get(g, {}).values()) for g, c in unit.counts.items()}
    counts = {g: c for g, c in counts.items() if c}
    levels, pin = [], {}
    for level in unit.levels:
        groups = tuple(g for g in level.groups if g in counts)
        if not groups:
            continue
        nodes = [n for g in level.groups for n in unit.current.get(g, {})]
        if nodes:
            pin[len(levels)] = int(di.domains(level.tier)[nodes[0]])
        levels.append(Level(groups, level.tier))
    return Unit(unit.job, counts, {}, levels, unit.cost, unit.priority, pin=pin)


def _pinned_region(di: DefragInput, unit: Unit) -> np.ndarray:
    """Nodes of the widest pinned domain of ``unit`` (every node when none is pinned)."""
    region = np.ones(di.problem.n_nodes, dtype=bool)
    if unit.pin:
        k = max(unit.pin, key=lambda k: unit.levels[k].tier)
        region = di.domains(unit.levels[k].tier) == unit.pin[k]
    return region if di.failed is None else region & ~di.failed


def _repair_one(di: DefragInput, unit: Unit, free: np.ndarray, taken: set[int],
                idle: np.ndarray, used: list[int]
                ) -> tuple[Placement, dict[int, Placement], bool] | None:
    """Re-place ``unit``'s failed pods: beside its healthy pods first-fit, else after moving
    other jobs out of its domain, else (when its pods may move) the whole job first-fit where
    there is room now (no other job moves for it). Returns (its final placement, other jobs
    moved, whether its healthy pods moved); ``used`` (budget use) is updated in place."""
    keep = keep_unit(di, unit)
    trial = _try_domain(di, keep, _pinned_region(di, keep), free, taken, idle, used)
    if trial is not None:
        final = {g: dict(per) for g, per in unit.current.items()}
        for g, per in trial.target.items():
            for n, c in per.items():
                final.setdefault(g, {})[n] = final.get(g, {}).get(n, 0) + c
        free[...] = trial.free
        used[:] = trial.used
        return final, trial.moved, False
    if unit.pinned:
        return None
    whole, released = replace(unit, current={}), free.copy()
    _release(di, unit, released)
    placed = place_unit(di, whole, released, ~di.failed)
    if placed is None or not _budget_ok(di, unit, placed, used):
        return None
    free[...] = released
    return placed, {}, True


def _repair_all(di: DefragInput, free: np.ndarray, placements: dict[int, Placement],
                max_moves: int | None, used: list[int]) -> tuple[list[int], list[int]]:
    """Repair jobs by priority (then job order), each as :func:`_repair_one`; returns the
    repaired jobs and the jobs moved (repair jobs whose healthy pods moved included); ``used``
    (budget use) is updated in place."""
    repaired, moved = [], []
    idle = np.zeros(di.problem.n_nodes, dtype=bool)
    for unit in sorted(di.repairs, key=lambda u: (-u.priority, u.job)):
        trial, trial_used = free.copy(), list(used)
        got = _repair_one(di, unit, trial, set(moved), idle, trial_used)
        if got is None:
            continue
        final, others, self_moved = got
        count = len(moved) + len(others) + self_moved
        if max_moves is not None and count > max_moves:
            continue
        free[...] = trial
        used[:] = trial_used
        placements[unit.job] = final
        placements.update(others)
        repaired.append(unit.job)
        moved += [*others, *([unit.job] if self_moved else [])]
    return repaired, moved

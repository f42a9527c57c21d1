"""Exact aggregation of whole-node pods above the leaves (``Scope.lift``).

Rules and rationale: ``docs/cpsat-formulation.md``, section ``toposolve.engines.cpsat.model.lift``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.classes import Candidates, NodeClasses, Unit
from toposolve.policy.objective import initially_idle_leaves

BUSY, IDLE_SINGLE = -2, -1  # fragmentation kinds; an idle multi-node leaf is its id (>= 0)


@dataclass
class Lifted:
    """Classes beyond the base ones (indices continue after them) and where they lie."""

    nodes: list[np.ndarray]
    home: list[int]  # the level-``a`` domain (or the base home when it has none)
    level: list[int]
    members: list[np.ndarray]  # base classes inside
    one_node_leaves: list[bool]  # every node an idle one-node leaf: pods count as touched leaves
    # level -> [C_base] class (base or lifted) holding each base class
    of_base: dict[int, np.ndarray]


def exclusive_groups(groups: list[int], requests: np.ndarray, allowed: dict[int, np.ndarray],
                     idle: np.ndarray) -> set[int]:
    """Groups whose pods hold a node alone on every base class they may use.

    ``allowed[g]``: [C] bool; ``idle``: [C, R] of one node of each class. Per distinct idle
    vector, ``fits_beside[g, h]`` says a pod of ``g`` and one of ``h`` fit together; ``g`` is
    exclusive when no class it may use admits a group that fits beside it."""
    if not groups:
        return set()
    req = requests[groups]  # [G, R]
    mask = np.array([allowed[g] for g in groups], dtype=bool)  # [G, C]
    spoiled = np.zeros(len(groups), dtype=bool)
    shapes, which = np.unique(idle, axis=0, return_inverse=True)
    for k, shape in enumerate(shapes):
        cols = np.flatnonzero(which.ravel() == k)
        both = req[:, None, :] + req[None, :, :]  # [G, G, R]
        fits_beside = (both <= shape[None, None, :]).all(axis=2).astype(np.float32)
        partners = fits_beside @ mask[:, cols].astype(np.float32)  # [G, C_k]
        spoiled |= ((partners > 0) & mask[:, cols]).any(axis=1)
    return {g for g, bad in zip(groups, spoiled.tolist(), strict=True) if not bad}


def fragmentation_kind(problem: Problem, leaf_of_node: np.ndarray) -> np.ndarray:
    """[N] per node: ``BUSY`` (no idle leaf), ``IDLE_SINGLE`` (an idle leaf of one node) or the
    id of the idle leaf of several nodes it is in."""
    idle_leaves = initially_idle_leaves(problem)
    count = problem.topology.node_count
    kind = np.full(problem.n_nodes, BUSY, dtype=np.int64)
    for n, h in enumerate(leaf_of_node.tolist()):
        if h >= 0 and h in idle_leaves:
            kind[n] = IDLE_SINGLE if count[h] == 1 else h
    return kind


def lift_classes(
    base_nodes: list[np.ndarray], base_keys: list[tuple], base_domain: np.ndarray,
    levels_used: set[int],
    kind: np.ndarray, first_new: int, remap: dict[int, dict[int, int]] | None = None,
) -> Lifted:
    """Lifted classes for each level in ``levels_used`` (>= 1).

    ``base_keys[c]``: the base class's key without its home; ``base_domain``: [L, C] domain of
    each base class (-1: none, the class then stays its own at that level); ``kind``: [N]
    fragmentation kind per node; ``remap``: per level, domains merged into one domain class
    (:func:`_domain_classes`). Classes are numbered from ``first_new``, level by level, in order
    of their first base class."""
    remap = remap or {}
    out = Lifted(nodes=[], home=[], level=[], members=[], one_node_leaves=[], of_base={})
    C = len(base_nodes)
    by_nodes: dict[tuple, int] = {}
    for c, ns in enumerate(base_nodes):
        by_nodes[(int(ns[0]), len(ns))] = c
    for lvl in sorted(levels_used):
        groups: dict[tuple, list[int]] = {}
        for c in range(C):
            dom = remap.get(lvl, {}).get(int(base_domain[lvl, c]), int(base_domain[lvl, c]))
            place = ("dom", dom) if dom >= 0 else ("own", c)
            groups.setdefault((place, base_keys[c], int(kind[base_nodes[c][0]])), []).append(c)
        of_base = np.empty(C, dtype=np.int64)
        for (place, _key, k), members in groups.items():
            if len(members) == 1:
                of_base[members[0]] = members[0]
                continue
            nodes = np.sort(np.concatenate([base_nodes[c] for c in members]))
            same = by_nodes.get((int(nodes[0]), len(nodes)))
            if same is None:
                same = first_new + len(out.nodes)
                by_nodes[(int(nodes[0]), len(nodes))] = same
                out.nodes.append(nodes)
                out.home.append(place[1] if place[0] == "dom" else -1)
                out.level.append(lvl)
                out.members.append(np.array(members, dtype=np.int64))
                out.one_node_leaves.append(k == IDLE_SINGLE)
            of_base[members] = same
        out.of_base[lvl] = of_base
    return out


def lift_candidates(problem: Problem, cands: Candidates) -> None:
    """Mark trivial units, add the lifted classes and move each group onto the classes of its
    lift level (in place; see the module docstring)."""
    classes, levels = cands.classes, cands.levels
    C = len(classes)
    masks = {}
    for g, allowed in cands.allowed.items():
        masks[g] = np.zeros(C, dtype=bool)
        masks[g][allowed] = True
    need = _group_needs(problem, cands)
    exclusive = exclusive_groups(sorted(cands.allowed), problem.group_request, masks, classes.idle)
    cands.exclusive = frozenset(exclusive)
    # non-exclusive pods of two groups may share a node: every such group on the same classes,
    # so that one ``shared`` count per class sees them all
    sharing = [g for g in sorted(cands.allowed) if g not in exclusive]
    common = min((need[g] for g in sharing), default=0)
    level_of = {g: (need[g] if g in exclusive else common) for g in sorted(cands.allowed)}
    level_of = {g: lvl for g, lvl in level_of.items() if lvl >= 1}
    if not level_of:
        return
    kind = fragmentation_kind(problem, levels.domain[0][problem.topology.node_home])
    remap = _domain_classes(problem, cands, level_of, kind)
    lifted, settled = _settle(cands, level_of, sharing, kind, remap)
    if remap and settled != level_of:  # a group stayed lower than domain classes assumed
        remap = {}
        lifted, settled = _settle(cands, level_of, sharing, kind, remap)
    firsts = [int(m[0]) for m in lifted.members]
    home = np.concatenate([classes.home, np.array(lifted.home, dtype=np.int64)])
    cands.classes = NodeClasses(
        nodes=classes.nodes + lifted.nodes, home=home,
        idle=np.concatenate([classes.idle, classes.idle[firsts]]) if firsts else classes.idle,
        twins=classes.twins, keys=classes.keys, base_count=C,
        level=np.array([0] * C + lifted.level, dtype=np.int64), members=lifted.members,
        one_node_leaves=np.array([False] * C + lifted.one_node_leaves, dtype=bool),
        of_base=lifted.of_base,
    )
    cands.class_domain = levels.domain[:, home]
    _apply_domain_classes(problem, cands, remap)
    sizes = cands.classes.size
    for g, lvl in settled.items():
        allowed, first = np.unique(lifted.of_base[lvl][cands.allowed[g]], return_index=True)
        fit = cands.fit[g][first]  # the same on every node of a lifted class (one key)
        cands.allowed[g], cands.fit[g] = allowed, fit
        cands.ub[g] = np.minimum(fit * sizes[allowed], len(problem.group_pending[g]))
    cands.lift_level = settled


def _settle(cands: Candidates, level_of: dict[int, int], sharing: list[int], kind: np.ndarray,
            remap) -> tuple[Lifted, dict[int, int]]:
    """The lifted classes, and each group's level once it may use every class of that level
    wholly (:func:`_uniform_level`; the non-exclusive groups all at one level or none lifted)."""
    classes = cands.classes
    lifted = lift_classes(classes.nodes, classes.keys, cands.class_domain, set(level_of.values()),
                          kind, len(classes), remap)
    settled = {g: _uniform_level(lifted.of_base, cands.allowed[g],
                                 lvl) for g, lvl in level_of.items()}
    if len({settled.get(g, 0) for g in sharing}) > 1 or any(settled.get(g, 0) != level_of.get(g,
            0) for g in sharing):
        # one could not lift: none does
        settled = {g: lvl for g, lvl in settled.items() if g not in sharing}
    return lifted, {g: lvl for g, lvl in settled.items() if lvl > 0}


def all_units(cands: Candidates) -> list[Unit]:
    """Every unit the model has: jobs, SubJobs and GangNodes (:mod:`.gang_tree`)."""
    return [*cands.job_units.values(), *cands.subjob_units.values(), *cands.gang_units.values()]


def _group_needs(problem: Problem, cands: Candidates) -> dict[int, int]:
    """Per modelled group, the lowest level its job's, SubJob's or GangNode's constraints refer
    to."""
    root = cands.levels.root_level
    need: dict[int, int] = {g: root for g in cands.allowed}
    for unit in all_units(cands):
        unit.trivial = _is_trivial(problem, cands, unit)
        lvl = _unit_need(unit, root)
        for g in unit.groups:
            if g in need:
                need[g] = min(need[g], lvl)
    return need


def _is_trivial(problem: Problem, cands: Candidates, unit: Unit) -> bool:
    """One pending pod and nothing running, every class it may use inside a domain of every
    level: that pod is always "within", and inside one domain of its hard level."""
    pending = sum(len(problem.group_pending[g]) for g in unit.groups)
    if unit.running or pending != 1:
        return False
    used = np.concatenate([cands.allowed[g] for g in unit.groups if g in cands.allowed]
                          or [np.zeros(0, np.int64)])
    return bool((cands.class_domain[:, used] >= 0).all())


def _unit_need(unit: Unit, root: int) -> int:
    """Trivial: none (its hard domains hold every class its pod fits, see
    :func:`_uniform_level`)."""
    if unit.trivial:
        return root
    lvl = root if unit.hard_level is None else unit.hard_level
    spread = [level for level, doms in unit.spread_domains.items() if doms]
    return min([lvl, *spread])


def _uniform_level(of_base: dict[int, np.ndarray], allowed: np.ndarray, level: int) -> int:
    """The highest level ≤ ``level`` whose classes the group may use wholly or not at all (a
    hard limit may exclude part of a class of a higher level); 0: the base classes."""
    for lvl in range(level, 0, -1):
        owner = of_base.get(lvl)
        if owner is None:
            continue
        mine = np.bincount(owner[allowed], minlength=owner.max() + 1)
        whole = np.bincount(owner, minlength=owner.max() + 1)
        used = np.flatnonzero(mine)
        if (mine[used] == whole[used]).all():
            return lvl
    return 0


def _domain_classes(problem: Problem, cands: Candidates, level_of: dict[int, int],
                    kind: np.ndarray) -> dict[int, dict[int, int]]:
    """Per level ``l``: identical level-``l`` domains of one level-``l+1`` domain merged into one
    *domain class* (each mapped to its lowest id, the class's representative).

    Exact when (checked here): every group at level ``l`` belongs to a *filler* — a non-trivial
    unit of one exclusive group whose minimum is all its pending pods, ``n`` of them, choosing a
    domain at ``l`` (hard limit or ``within``); a merged domain holds ``n`` nodes, all free of
    running pods, of one key and fragmentation kind, used by no group below ``l``. A filler's
    pods then take one whole domain of the class (:mod:`.disaggregate` gives whole domains
    first), and node counts say the rest (every domain holds as many nodes as a filler pods)."""
    levels, classes, topo = cands.levels, cands.classes, problem.topology
    node_key = np.full(problem.n_nodes, -1, dtype=np.int64)  # base class per node
    for c, ns in enumerate(classes.nodes):
        node_key[ns] = c
    below_or_busy = np.zeros(problem.n_nodes, dtype=bool)
    below_or_busy[list(problem.running_pods.values())] = True
    out: dict[int, dict[int, int]] = {}
    for lvl in sorted({v for v in level_of.values() if 0 < v < levels.root_level}):
        fillers = _fillers(problem, cands, level_of, lvl)
        if fillers is None:
            continue
        low = below_or_busy.copy()
        for g in cands.allowed:
            if level_of.get(g, 0) < lvl:
                for c in cands.allowed[g].tolist():
                    low[classes.nodes[c]] = True
        merged: dict[tuple, list[int]] = {}
        for h in levels.members(lvl).tolist():
            ns = topo.members[h].indices
            if len(ns) not in fillers or low[ns].any() or (node_key[ns] < 0).any():
                continue
            keys = {(classes.keys[int(node_key[n])], int(kind[n])) for n in ns}
            if len(keys) == 1:
                merged.setdefault((int(levels.domain[lvl + 1, h]), len(ns), *keys), []).append(h)
        out[lvl] = {h: min(hs) for hs in merged.values() if len(hs) > 1 for h in hs}
    return {lvl: m for lvl, m in out.items() if m}


def _fillers(problem: Problem, cands: Candidates, level_of: dict[int, int],
             lvl: int) -> set[int] | None:
    """Pod counts of the units choosing a domain at ``lvl``, or None unless every group at
    ``lvl`` belongs to a filler (see :func:`_domain_classes`)."""
    choosing = [u for u in all_units(cands) if not u.trivial
                and (u.hard_level == lvl or u.spread_domains.get(lvl))]
    sizes, theirs = set(), set()
    for u in choosing:
        pending = sum(len(problem.group_pending[g]) for g in u.groups)
        if (len(u.groups) != 1 or u.groups[0] not in cands.exclusive or u.running
            or u.minimum < pending):
            return None
        sizes.add(pending)
        theirs.add(u.groups[0])
    if any(lv == lvl and g not in theirs for g, lv in level_of.items()):
        return None
    return sizes


def _apply_domain_classes(problem: Problem, cands: Candidates,
                          remap: dict[int, dict[int, int]]) -> None:
    """Domain classes seen by the model: each class's level-``l`` domain and every unit's
    candidate domains at ``l`` read as the representative; the merged domains' nodes kept per
    class (whole domains go first when pods are placed)."""
    for lvl, rep in remap.items():
        row = cands.class_domain[lvl]
        cands.class_domain[lvl] = np.array([rep.get(int(h),
                                                    int(h)) for h in row.tolist()], dtype=np.int64)
        for u in all_units(cands):
            if u.hard_level == lvl:
                u.hard_domains = sorted({rep.get(h, h) for h in u.hard_domains})
            if lvl in u.spread_domains:
                u.spread_domains[lvl] = sorted({rep.get(h, h) for h in u.spread_domains[lvl]})
        members = cands.levels.members(lvl).tolist()
        for k in range(cands.classes.n_base, len(cands.classes)):
            if cands.classes.level[k] == lvl and int(cands.classes.home[k]) in rep.values():
                r = int(cands.classes.home[k])
                cands.classes.domains[k] = [
                    problem.topology.members[h].indices for h in members if rep.get(h) == r
                ]

"""Kueue's TAS assignment of one podset (``FindTopologyAssignment``), re-expressed.

Phase 1 — counts: each leaf holds ``podCount`` pods of the request (free capacity; pooled leaves
sum their nodes first); a domain's ``podCount`` is the sum of its children's. ``sliceCount`` is
``podCount // sliceSize`` at the slice level, the sum of the children's above it and 0 below it
(without slices: ``sliceCount = podCount`` everywhere).

Phase 2a — the level: domains of the requested level sorted (BestFit: sliceCount desc, podCount
asc, label values asc; LeastFreeCapacity: sliceCount asc, then the same). BestFit takes the first
domain if it fits, swapped for the tightest fitting one; LeastFreeCapacity the first that fits.
Nothing fits: required fails; preferred climbs one level; at the top level (or unconstrained)
domains are taken greedily in sorted order, the last one swapped for the tightest that fits.

Phase 2b — descent: above the slice level the children of **all** chosen domains are pooled and
trimmed again to the total count (counts chosen higher up are not kept); at and below the slice
level each domain's count is split among its own children (below the slice level sliceCount is 0,
so children sort by podCount ascending). Trimming takes domains in order until the count is
met, swapping the last one for the tightest that still fits (BestFit only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..capacity import fit_in
from .tree import DomainTree


@dataclass
class PodSetRequest:
    """What Kueue places at once: ``count`` pods of one shape (a podset, or a SubJob of it)."""

    request: np.ndarray  # [R] one pod
    feasible: np.ndarray  # [N] predicates
    count: int
    level: int  # requested level (tier)
    required: bool
    unconstrained: bool  # LeastFreeCapacity in the default "mixed" profile
    slice_level: int  # tier of the slice level (tree.lowest without slices)
    slice_size: int = 1


class Counts:
    """Per-domain podCount and sliceCount of one request (phase 1), trimmed in phase 2."""

    def __init__(self, tree: DomainTree, free: np.ndarray, req: PodSetRequest) -> None:
        topo = tree.problem.topology
        H = tree.n_hypernodes
        self.tree = tree
        leaf_fit = fit_in(free, req.request, req.feasible & tree.usable)
        pc = np.zeros(H + len(leaf_fit), dtype=np.int64)
        pc[H:] = leaf_fit
        if tree.pooled:  # a tier-1 leaf holds what its nodes' summed free capacity holds
            tier1 = np.array(tree.levels.get(tree.bottom, []), dtype=np.int64)
            pooled = np.asarray(topo.members[tier1] @ (free * tree.usable[:, None]).astype(np.float64)) if tier1.size else np.zeros((0, free.shape[1]))
            pc[tier1] = fit_in(pooled, req.request)
            for t in range(tree.bottom + 1, tree.top + 1):
                ds = np.array(tree.levels.get(t - 1, []), dtype=np.int64)
                if ds.size:
                    np.add.at(pc, topo.parent[ds], pc[ds])
        else:
            pc[:H] = np.asarray(topo.members @ leaf_fit).ravel()
        if req.slice_size == 1 and req.slice_level == tree.lowest:
            sc = pc.copy()
        else:
            sc = np.zeros_like(pc)
            at = np.array(tree.levels.get(req.slice_level, []), dtype=np.int64)
            sc[at] = pc[at] // req.slice_size
            for t in range(req.slice_level, tree.top):
                ds = np.array(tree.levels.get(t, []), dtype=np.int64)
                ds = ds[ds < H]
                if ds.size:
                    np.add.at(sc, topo.parent[ds], sc[ds])
        self.pc, self.sc = pc, sc

    def sorted(self, domains: list[int], least_free: bool) -> list[int]:
        keys = self.tree.keys
        sign = 1 if least_free else -1
        return sorted(domains, key=lambda d: (sign * int(self.sc[d]), int(self.pc[d]), keys[d]))


def _best_fit(counts: np.ndarray, domains: list[int], needed: int) -> int:
    """The first domain with the smallest count >= needed (``domains[0]`` if none fits)."""
    best, best_count = domains[0], None
    for d in domains:
        c = int(counts[d])
        if c >= needed and (best_count is None or c < best_count):
            best, best_count = d, c
    return best


def trim(c: Counts, domains: list[int], count: int, size: int, best_fit: bool, slices: bool) -> list[int] | None:
    """``updateCountsToMinimum``: take domains in order until ``count`` pods are covered."""
    units = c.sc if slices else c.pc
    remaining = count // size if slices else count
    result: list[int] = []
    for i, d in enumerate(domains):
        if best_fit and units[d] >= remaining:
            d = _best_fit(units, domains[i:], remaining)
        if units[d] >= remaining:
            c.pc[d] = remaining * (size if slices else 1)
            if slices:
                c.sc[d] = remaining
            result.append(d)
            return result
        c.pc[d] = units[d] * (size if slices else 1)
        remaining -= int(units[d])
        result.append(d)
    return None


def find_level(c: Counts, req: PodSetRequest, level: int) -> tuple[int, list[int]] | str:
    """Phase 2a: the fit level and its chosen domains, or why nothing fits."""
    tree = c.tree
    best_fit = not req.unconstrained
    domains = tree.levels.get(level, [])
    if not domains:
        return f"no topology domains at level: {tree.level_name(level)}"
    ordered = c.sorted(domains, least_free=req.unconstrained)
    needed = req.count // req.slice_size
    top = ordered[0]
    if best_fit and c.sc[top] >= needed:
        top = _best_fit(c.sc, ordered, needed)
    if req.unconstrained:
        for d in ordered:
            if c.sc[d] >= needed:
                return level, [d]
        if req.required:
            return _no_fit(c, ordered[-1], needed, req)
    if c.sc[top] >= needed:
        return level, [top]
    if req.required:
        return _no_fit(c, top, needed, req)
    if level < tree.top and not req.unconstrained:
        return find_level(c, req, next(t for t in range(level + 1, tree.top + 1) if tree.levels.get(t)))
    chosen: list[int] = []
    remaining = needed
    for i, d in enumerate(ordered):
        if remaining <= 0:
            break
        if best_fit and c.sc[d] >= remaining:
            d = _best_fit(c.sc, ordered[i:], remaining)
        chosen.append(d)
        remaining -= int(c.sc[d])
    if remaining > 0:
        return _no_fit(c, None, needed - remaining, req, fit_total=True)
    return level, chosen


def _no_fit(c: Counts, domain: int | None, needed: int, req: PodSetRequest, fit_total: bool = False) -> str:
    unit = "pod" if req.slice_size == 1 else "slice"
    fits = needed if fit_total else int(c.sc[domain]) if domain is not None else 0
    wanted = req.count // req.slice_size
    if fits == 0:
        return f"topology doesn't allow to fit any of {wanted} {unit}(s)"
    return f"topology allows to fit only {fits} out of {wanted} {unit}(s)"


def place(tree: DomainTree, free: np.ndarray, req: PodSetRequest) -> list[tuple[int, int]] | str:
    """Leaf domains and pod counts (in Kueue's assignment order), or why the podset does not fit."""
    if req.count == 0:
        return []
    c = Counts(tree, free, req)
    found = find_level(c, req, req.level)
    if isinstance(found, str):
        return found
    _, fit = found
    best_fit = not req.unconstrained
    current = trim(c, fit, req.count, req.slice_size, best_fit, slices=True)
    while current and tree.level[current[0]] > req.slice_level:
        kids = [k for d in current for k in tree.children[d]]
        if not kids:
            break
        current = trim(c, c.sorted(kids, req.unconstrained), req.count, req.slice_size, best_fit, slices=True)
    while current and any(tree.children[d] for d in current):
        below: list[int] = []
        for d in current:
            kids = c.sorted(tree.children[d], req.unconstrained)
            got = trim(c, kids, int(c.pc[d]), 1, best_fit, slices=False) if kids else [d]
            if got is None:
                return "code assumptions violated: a domain's count does not fit its children"
            below += got
        current = below
    if current is None:
        return "code assumptions violated: chosen domains do not hold the count"
    keys = tree.keys
    leaves = sorted((d for d in current if c.pc[d] > 0), key=lambda d: keys[d])
    return [(d, int(c.pc[d])) for d in leaves]

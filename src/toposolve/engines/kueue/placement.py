"""Kueue's TAS assignment of one podset or podset group (``findTopologyAssignment``), re-expressed.

Rules and rationale: ``docs/kueue-fidelity.md``, section ``toposolve.engines.kueue.placement``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.engines.kueue.balanced import balanced_domains
from toposolve.engines.kueue.counts import DomainState, PodSetRequest, fill_counts
from toposolve.engines.kueue.fit import (
    Order,
    best_fit_domain,
    prioritize_leader_domain,
    update_counts_to_minimum,
)
from toposolve.engines.kueue.tree import DomainTree


@dataclass
class Placed:
    """Leaf domains and pod counts in Kueue's assignment order: the workers', the leader's."""

    workers: list[tuple[int, int]]
    leader: list[tuple[int, int]]


def _no_fit(fits: int, req: PodSetRequest, st: DomainState | None = None,
            tree: DomainTree | None = None, level: int = 0) -> str:
    if req.inner and st is not None and tree is not None:
        return multi_layer_no_fit(st, tree, req, level)
    unit = "pod" if req.slice_size == 1 else "slice"
    wanted = req.count // req.slice_size
    if fits <= 0:
        return f"topology doesn't allow to fit any of {wanted} {unit}(s)"
    return f"topology allows to fit only {fits} out of {wanted} {unit}(s)"


def multi_layer_no_fit(st: DomainState, tree: DomainTree, req: PodSetRequest, level: int) -> str:
    """Kueue's ``multiLayerNotFitMessage`` (without the topology name and statistics).

    Parameters
    ----------
    st
        Phase-1 counts.
    tree
        The domains.
    req
        The request (its ``layers``, outermost first, and ``count``).
    level
        The searched level.

    Returns
    -------
    str
        ``topology doesn't allow to fit; a/A slice(s) fit on level <l0>; …``: per layer, the
        slices the best domain of ``level`` (the most slices, then the smallest label path)
        holds out of those needed.
    """
    domains = tree.levels.get(level, [])
    text = "topology doesn't allow to fit"
    if not domains:
        return text
    keys = tree.keys
    best = min(domains, key=lambda d: (-int(st.sc[d]), ",".join(keys[d])))
    below = tree.subtree([best])
    for tier, size in req.layers:
        at = np.flatnonzero(below & (tree.level == tier))
        fits = int((st.pc[at] // size).sum())
        text += f"; {fits}/{req.count // size} slice(s) fit on level {tree.level_name(tier)}"
    return text


def find_level(st: DomainState, order: Order, req: PodSetRequest, level: int) -> tuple[int,
        list[int]] | str:
    """Phase 2a: the fit level and its chosen domains, or why nothing fits."""
    tree = order.tree
    domains = tree.levels.get(level, [])
    if not domains:
        return f"no topology domains at level: {tree.level_name(level)}"
    ordered = order.with_leader(st, domains)
    needed, leaders = req.count // req.slice_size, req.leaders
    top = ordered[0]
    if order.best_fit and st.scl[top] >= needed and st.lc[top] >= leaders:
        top = best_fit_domain(st, ordered, needed, leaders, slices=True)
    if not order.best_fit:
        for d in ordered:
            if leaders and st.lc[d] < leaders:
                continue
            if (st.scl[d] if leaders else st.sc[d]) >= needed:
                return level, [d]
        if req.required:
            return _no_fit(int(st.pc[ordered[-1]]), req, st, tree, level)
    if st.scl[top] >= needed and st.lc[top] >= leaders:
        return level, [top]
    if req.required:
        if st.aff is not None:  # a lower-scored domain that fits beats failing (affinity gate)
            for i, d in enumerate(ordered[1:], start=1):
                if st.scl[d] >= needed and st.lc[d] >= leaders:
                    return level, [best_fit_domain(st, ordered[i:], needed, leaders, slices=True)]
        return _no_fit(int(st.sc[top]), req, st, tree, level)
    if level < tree.top and not req.unconstrained:
        return find_level(st, order, req,
                          next(t for t in range(level + 1, tree.top + 1) if tree.levels.get(t)))
    return _greedy(st, order, req, level, ordered)


def _greedy(st: DomainState, order: Order, req: PodSetRequest, level: int,
            ordered: list[int]) -> tuple[int, list[int]] | str:
    """Several domains of the top level: the leader's first, then the workers' by capacity."""
    needed = left = req.count // req.slice_size
    leaders = req.leaders
    ordered = prioritize_leader_domain(st, ordered, req.count, leaders, req.slice_size, slices=True)
    chosen: list[int] = []
    i = 0
    while leaders > 0 and i < len(ordered) and st.lc[ordered[i]] > 0:
        d = ordered[i]
        if order.best_fit and st.scl[d] >= left:
            d = best_fit_domain(st, ordered[i:], left, leaders, slices=True)
        chosen.append(d)
        leaders -= int(st.lc[d])
        left -= int(st.scl[d])
        i += 1
    if leaders > 0:
        return _no_fit(req.leaders - leaders, req, st, order.tree, level)
    rest = order.domains(st, ordered[i:])
    for k, d in enumerate(rest):
        if left <= 0:
            break
        if order.best_fit and st.sc[d] >= left:
            d = best_fit_domain(st, rest[k:], left, 0, slices=True)
        chosen.append(d)
        left -= int(st.sc[d])
    if left > 0:
        return _no_fit(needed - left, req, st, order.tree, level)
    return level, chosen


def _descend(st: DomainState, order: Order, req: PodSetRequest, current: list[int],
             pooled_above_slices: bool) -> list[int] | str:
    """Phase 2b from the fit domains down to the leaves."""
    tree, best_fit = order.tree, order.best_fit
    children = tree.children
    while pooled_above_slices and current and tree.level[current[0]] > req.slice_level:
        kids = [k for d in current for k in children[d]]
        if not kids:
            break
        got = update_counts_to_minimum(st, order.domains(st, kids), req.count, req.leaders,
                                       req.slice_size, best_fit, True)
        if got is None:
            return "code assumptions violated: chosen domains do not hold the count"
        current = got
    while current and any(children[d] for d in current):
        below: list[int] = []
        for d in current:
            kids = order.domains(st, children[d])
            size = _split_size(tree, req, d, kids)
            if size > 1:  # Kueue recounts the children's slices at this size
                st.sc[kids], st.scl[kids] = st.pc[kids] // size, st.pcl[kids] // size
            got = update_counts_to_minimum(st, kids, int(st.pc[d]), int(st.lc[d]), size, best_fit,
                                           size > 1) if kids else [d]
            if got is None:
                return "code assumptions violated: a domain's count does not fit its children"
            below += got
        current = below
    return current


def _split_size(tree: DomainTree, req: PodSetRequest, d: int, kids: list[int]) -> int:
    """The unit domain ``d``'s count is split in among its children: the slice size above the
    slice level; below it an inner layer's size at the children's level (multi-layer), else 1."""
    if tree.level[d] > req.slice_level:
        return req.slice_size
    return req.inner.get(int(tree.level[kids[0]]), 1) if kids else 1


def place(tree: DomainTree, free: np.ndarray, req: PodSetRequest) -> Placed | str:
    """The leaves and pod counts of the request, or why it does not fit."""
    if req.count == 0:
        return Placed([], [])
    st = fill_counts(tree, free, req)
    order = Order(tree, best_fit=not req.least_free)
    balanced = None
    if req.balanced and not req.required and not req.unconstrained:
        balanced = balanced_domains(st, order, req)
    if balanced is not None:
        st, fit = balanced
    else:
        found = find_level(st, order, req, req.level)
        if isinstance(found, str):
            return found
        fit = found[1]
    current = update_counts_to_minimum(st, fit, req.count, req.leaders, req.slice_size,
                                       order.best_fit, True)
    if current is None:
        return "code assumptions violated: chosen domains do not hold the count"
    leaves = _descend(st, order, req, current, pooled_above_slices=balanced is None)
    if isinstance(leaves, str):
        return leaves
    keys = tree.keys
    leaves = sorted(leaves, key=lambda d: keys[d])
    return Placed(workers=[(d, int(st.pc[d])) for d in leaves if st.pc[d] > 0], leader=[(d,
            int(st.lc[d])) for d in leaves if st.lc[d] > 0])

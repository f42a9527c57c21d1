"""Hard limits in a constraint tree (a KAI Topology crossing the main tree over the same nodes).

The main tree's levels, classes and domains know nothing of such a tree, so a unit (job, SubJob
or GangNode) limited in one gets its own choice: classes never straddle the tree's domains
(:func:`crossing_class_keys` splits them by their nodes' leaf in each tree), each allowed class
lies in one domain of the tree at the limit (:func:`tree_domains`), and the model picks one
domain for all the unit's new pods (:func:`add_crossing_domain`): ``Σ choose = has`` and
``x ≤ ub·choose[d(x)]``. Running pods pin the domain. The whole-gang knapsacks of the main
tree's domains get their counterpart in each tree domain jobs choose
(:func:`crossing_knapsack_entries`). Lifting, coarse models and repacking are not used on
problems with constraint trees (they reason in the main tree only).
"""

from __future__ import annotations

import numpy as np

from toposolve.core.problem import Limit, Problem
from toposolve.core.topology import Topology


def crossing_class_keys(problem: Problem, node_keys: dict[int, tuple]) -> dict[int, tuple]:
    """``node_keys`` with each node's leaf in every constraint tree added (the same dict when
    the problem has none): nodes in different domains of a tree are never one class."""
    if not problem.trees:
        return node_keys
    leaves = np.stack([tree.node_home for tree in problem.trees.values()], axis=1)
    return {n: (node_keys.get(n), tuple(leaves[n].tolist())) for n in range(problem.n_nodes)}


def domain_at(tree: Topology, node: int, tier: int) -> int:
    """The widest HyperNode of ``tree`` holding ``node`` with tier ≤ ``tier`` (-1: none, the
    node being in no domain of the tree)."""
    h, best = int(tree.node_home[node]), -1
    while h >= 0 and int(tree.tier[h]) <= tier and h != tree.root:
        best, h = h, int(tree.parent[h])
    return best


def tree_domains(problem: Problem, limit: Limit, class_nodes: list[np.ndarray],
                 running: list[int]) -> np.ndarray:
    """[C] the domain of ``limit``'s tree at its tier holding each class (-1: not allowed —
    outside every domain, or outside the one its running pods pin)."""
    tree = problem.topology_of(limit)
    dom = np.array([domain_at(tree, int(nodes[0]), limit.tier) for nodes in class_nodes],
                   dtype=np.int64)
    pinned = {domain_at(tree, n, limit.tier) for n in running}
    if pinned:
        only = next(iter(pinned)) if len(pinned) == 1 else -1
        dom = np.where(dom == only, dom, -1) if only >= 0 else np.full_like(dom, -1)
    return dom


def add_crossing_domain(cons, uv) -> None:
    """One domain of the unit's constraint tree holds all its new pods when it has any."""
    crossing = uv.unit.crossing
    if crossing is None or uv.unit.trivial:
        return
    model = cons.model
    by_dom: dict[int, list] = {}
    for entry in cons.xv.pods_of(uv.unit.groups):
        by_dom.setdefault(crossing.get(entry[1], -1), []).append(entry)
    for _, _, var, _ in by_dom.pop(-1, []):
        model.add(var == 0)
    if not by_dom:
        return
    choose = {d: model.new_bool_var(f"cross_{uv.kind[0]}{uv.index}_{d}") for d in sorted(by_dom)}
    uv.crossing_domain = choose
    model.add(sum(choose.values()) == uv.has)
    for d, entries in by_dom.items():
        for _, _, var, ub in entries:
            model.add(var <= int(ub) * choose[d])


def crossing_hint(uv, counts: dict[int, np.ndarray], allowed: dict[int, np.ndarray], put) -> None:
    """Hint values of the unit's domain choice: the one domain its hinted new pods use."""
    if not uv.crossing_domain:
        return
    used = {uv.unit.crossing.get(c, -1)
            for g in uv.unit.groups
            for c, cnt in zip(allowed.get(g, np.zeros(0, np.int64)).tolist(), counts.get(g, []),
                              strict=False) if cnt > 0}
    only = next(iter(used)) if len(used) == 1 else None
    for d, var in uv.crossing_domain.items():
        put(var, int(d == only))


def crossing_knapsack_entries(problem: Problem, class_nodes: list[np.ndarray],
                              units) -> list[tuple[list[int], list]]:
    """Per domain of a constraint tree that jobs choose (``crossing_domain``): the classes in it
    and each such job with its literal of choosing it — the rows of the redundant whole-gang
    knapsacks (``Constraints.add_domain_knapsacks``), in tree, domain order.

    Parameters
    ----------
    problem
        The compiled problem.
    class_nodes
        The node indices of each (base) class: a class lies in one leaf of every tree.
    units
        The model's unit variables (:class:`~toposolve.engines.cpsat.model.variables.UnitVars`);
        only jobs count (a SubJob lies inside its job: counting both would count pods twice).

    Returns
    -------
    list of (list of int, list of (UnitVars, literal))
    """
    per_domain: dict[tuple[str, int], list] = {}
    for uv in units:
        limit = problem.jobs[uv.index].limit if uv.kind == "job" else None
        if limit is None or limit.tree is None or not uv.crossing_domain:
            continue
        for d, choose in uv.crossing_domain.items():
            per_domain.setdefault((limit.tree, d), []).append((uv, choose))
    reps = np.array([int(nodes[0]) for nodes in class_nodes], dtype=np.int64)
    out = []
    for (tree, d), entries in sorted(per_domain.items()):
        members = problem.trees[tree].members
        inside = members.indices[members.indptr[d] : members.indptr[d + 1]]
        out.append((np.flatnonzero(np.isin(reps, inside)).tolist(), entries))
    return out

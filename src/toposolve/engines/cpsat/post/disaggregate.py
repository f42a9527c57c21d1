"""From pods per node class back to pods per node.

Rule (deterministic): base classes first, in index order. Inside each, groups go exclusive
first (lifted model, :mod:`.lift`), then largest pod first (largest share of a node's idle
resources, then group index), and each group fills the class's nodes in ascending node index,
as many pods per node as still fit. For whole-node or equal-size pods this always succeeds;
with mixed pod sizes the class's aggregated capacity can admit counts that no per-node packing
realises. Such classes are returned, and the engine re-solves with their nodes modelled one by
one (per-node variables are exact).

Lifted classes follow, lowest level first (a class before any class holding it), groups in
index order: on a domain class (:func:`.lift._domain_classes`) each group first takes whole
free domains; each remaining exclusive pod takes the next node of the class that has no new pod
yet, then non-exclusive pods pack onto the nodes still free as above. The model's node counts are
Hall's condition for this laminar family, so that only fails when non-exclusive pods took more nodes
than the model gave them (``shared``): those classes are returned for refinement.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.classes import Candidates, pods_that_fit


def disaggregate(problem: Problem, cands: Candidates,
                 counts: dict[int, np.ndarray]) -> tuple[dict[int, dict[int, int]], list[int]]:
    """Per group, node -> new pods; and the classes whose counts could not be packed."""
    per_class: dict[int, list[tuple[int, int]]] = {}
    for g, row in counts.items():
        for c, n in zip(cands.allowed[g].tolist(), row.tolist(), strict=True):
            if n > 0:
                per_class.setdefault(c, []).append((g, n))
    out: dict[int, dict[int, int]] = {}
    failed: list[int] = []
    taken = np.zeros(problem.n_nodes, dtype=bool)  # nodes given new pods so far
    classes = cands.classes
    for c in sorted(k for k in per_class if k < classes.n_base):
        if not _pack(problem, cands, c, classes.nodes[c], per_class[c], out, taken):
            failed.append(c)
    lifted = sorted((k for k in per_class
                     if k >= classes.n_base), key=lambda k: (int(classes.level[k]), k))
    for k in lifted:
        whole = sorted(e for e in per_class[k] if e[0] in cands.exclusive)
        if k in classes.domains:  # a domain class: whole domains first (see .lift._domain_classes)
            whole = _whole_domains(classes.domains[k], whole, out, taken)
        free = [n for n in classes.nodes[k].tolist() if not taken[n]]
        for g, n in whole:
            for node in free[:n]:
                out.setdefault(g, {})[node] = 1
                taken[node] = True
            if len(free) < n:
                failed += _culprits(cands, k, per_class)
            free = free[n:]
        sharing = [e for e in per_class[k] if e[0] not in cands.exclusive]
        if sharing and not _pack(problem, cands, k, np.array(free, dtype=np.int64), sharing, out,
                                 taken):
            failed += cands.classes.base_of(k)  # modelled node by node next round
    return out, sorted(set(failed))


def _whole_domains(domains: list[np.ndarray], entries, out,
                   taken: np.ndarray) -> list[tuple[int, int]]:
    """Each group's pods by whole free domains of a domain class (a filler's ``n`` pods are one
    domain); returns what is left per group, for single free nodes."""
    free = [d for d in domains if not taken[d].any()]
    size = len(domains[0])
    rest = []
    for g, n in entries:
        k = min(n // size, len(free))
        for d in free[:k]:
            for node in d.tolist():
                out.setdefault(g, {})[node] = 1
            taken[d] = True
        free = free[k:]
        rest.append((g, n - k * size))
    return [(g, n) for g, n in rest if n > 0]


def _pack(problem: Problem, cands: Candidates, c: int, nodes: np.ndarray, entries, out,
          taken: np.ndarray) -> bool:
    """Pack counts of class ``c`` on ``nodes`` (its nodes, or those still free) node by node;
    False if some pods do not fit."""
    idle = np.repeat(cands.classes.idle[c][None, :], len(nodes), axis=0)
    scale = np.maximum(cands.classes.idle[c], 1)
    order = sorted(
        entries,
        key=lambda e,
        s=scale: (e[0] not in cands.exclusive, -float((problem.group_request[e[0]] / s).max()),
                  e[0]),
    )
    ok = True
    for g, n in order:
        left = n
        request = problem.group_request[g]
        fits = pods_that_fit(request, idle)
        for k, node in enumerate(nodes.tolist()):
            if left == 0:
                break
            take = int(min(left, fits[k]))
            if take <= 0:
                continue
            idle[k] -= take * request
            out.setdefault(g, {})[node] = out.get(g, {}).get(node, 0) + take
            taken[node] = True
            left -= take
        ok &= left == 0
    return ok


def _culprits(cands: Candidates, k: int, per_class) -> list[int]:
    """Base classes of lifted class ``k`` whose non-exclusive pods may have taken too many
    nodes (every base class of ``k`` if none has such pods)."""
    members = cands.classes.base_of(k)
    hosts = [b for b in members if any(g not in cands.exclusive for g, _ in per_class.get(b, []))]
    return hosts or members

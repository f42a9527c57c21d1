"""From pods per node class back to pods per node.

Rule (deterministic): inside each class, groups go largest pod first (largest share of a node's
idle resources, then group index), and each group fills the class's nodes in ascending node
index, as many pods per node as still fit. For whole-node or equal-size pods this always
succeeds; with mixed pod sizes the class's aggregated capacity can admit counts that no
per-node packing realises. Such classes are returned, and the engine re-solves with their
nodes modelled one by one (per-node variables are exact).
"""

from __future__ import annotations

import numpy as np

from ...problem import Problem
from .candidates import Candidates, pods_that_fit


def disaggregate(
    problem: Problem, cands: Candidates, counts: dict[int, np.ndarray]
) -> tuple[dict[int, dict[int, int]], list[int]]:
    """Per group, node -> new pods; and the classes whose counts could not be packed."""
    per_class: dict[int, list[tuple[int, int]]] = {}
    for g, row in counts.items():
        for c, n in zip(cands.allowed[g].tolist(), row.tolist(), strict=True):
            if n > 0:
                per_class.setdefault(c, []).append((g, n))
    out: dict[int, dict[int, int]] = {}
    failed: list[int] = []
    for c in sorted(per_class):
        nodes = cands.classes.nodes[c]
        idle = np.repeat(cands.classes.idle[c][None, :], len(nodes), axis=0)
        scale = np.maximum(cands.classes.idle[c], 1)
        largest_first = sorted(
            per_class[c], key=lambda e, s=scale: (-float((problem.group_request[e[0]] / s).max()), e[0])
        )
        ok = True
        for g, n in largest_first:
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
                left -= take
            if left:
                ok = False
        if not ok:
            failed.append(c)
    return out, failed

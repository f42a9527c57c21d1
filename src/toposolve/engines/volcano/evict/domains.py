"""Candidate domains of a preemptor: where victims are sought and the gang is re-simulated.

Rule (Volcano's ``HyperNodeGradientForJobFn`` with ``PurposeEvict`` and
``reverseAndCapEvictionGradients``; seed 002 §2.1 "Top-K"):

* The job's gradients as for allocation — the search root (the cluster root, or the highest
  allowed ancestor of the job's allocated HyperNode when it already runs pods), every HyperNode
  below it with tier ≤ the job's limit — except that eligibility is "its gang minimum fits the
  HyperNode's *allocatable*" (free or not: evictions can free it), skipped when the job already
  has an allocated HyperNode.
* Tiers are visited widest first (highest tier first); inside a tier, the tie rank (by name in
  deterministic mode; Volcano's order is a set iteration).
* At most ``K = hypernode.gradient.evict.max-hypernodes`` domains; a tier that only partly fits
  keeps its **last** entries, as Volcano's code does.
* A job without a topology limit has one domain, the cluster root.

DOC vs CODE: the seed sorts domains by a feasibility score; Volcano's code does not sort inside
a tier. We follow the code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from toposolve.engines.volcano.gradients import hypernode_gradients, search_root

if TYPE_CHECKING:
    from toposolve.engines.volcano.engine import HeuristicEngine


def cap_widest_first(gradients: list[list[int]], limit: int) -> list[int]:
    """Reverse the tier order and keep at most ``limit`` HyperNodes (a partial tier keeps its
    tail)."""
    out: list[int] = []
    for gradient in reversed(gradients):
        room = limit - len(out)
        if room <= 0:
            break
        out.extend(gradient if len(gradient) <= room else gradient[len(gradient) - room :])
    return out


def candidate_domains(engine: HeuristicEngine, j: int) -> list[int]:
    """The domains to try for job ``j``, in order (empty: no HyperNode could ever hold it)."""
    problem = engine.problem
    topo = problem.topology
    state = engine.state
    limit = engine.job_limit[j]
    if limit is None:
        return [topo.root]
    allocated = engine.job_alloc.get(j)
    root = search_root(topo, state.hn_ancestors, topo.root, allocated, limit)
    if root is None:
        return []
    subtree = state.subtree(root)
    if allocated is not None:
        eligible = np.ones(subtree.size, dtype=bool)
    else:
        demand = engine.minimum_request(j)
        eligible = (state.hn_alloc[subtree] >= demand).all(axis=1)
    gradients = hypernode_gradients(topo, subtree, limit, eligible, state.hypernode_rank)
    return cap_widest_first(gradients, engine.args.evict_max_hypernodes)

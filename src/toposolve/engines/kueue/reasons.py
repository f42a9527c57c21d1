"""Kueue's own wording of a TAS failure: the topology name and the node exclusion statistics.

Re-expressed from ``notFitMessage`` and ``tasExclusionStats`` (kueue
``pkg/cache/scheduler/tas_flavor_snapshot.go``), ``FindFeasibleNodes``
(``scheduling_simulator_default.go``) and ``Assignment.Message``
(``pkg/scheduler/flavorassigner/flavorassigner.go``). Rules and citations:
``docs/kueue-fidelity.md``, section "Reasons in Kueue's words".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.problem import Problem, node_exclusion
from toposolve.engines.common.capacity import fits_per_resource
from toposolve.engines.kueue.counts import PodSetRequest
from toposolve.engines.kueue.tree import DomainTree

NOT_FIT = "topology "  # the start of toposolve's wording of Kueue's not-fit message


@dataclass
class Exclusions:
    """Kueue's ``tasExclusionStats``: candidate leaves and why some held no pod."""

    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # "nodeSelector", 'resource "cpu"', …

    def add(self, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1

    def text(self) -> str:
        """``formatReasons``: ``<reason>: <n>`` sorted as strings, joined by ", "."""
        return ", ".join(sorted(f"{k}: {v}" for k, v in self.counts.items()))


def _quoted(text: str) -> str:
    """Go's ``%q`` of a plain label, taint or resource name."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _limiting(tree: DomainTree, free: np.ndarray, leaves: list[int],
              request: np.ndarray) -> list[str]:
    """``CountInWithLimitingResource`` per leaf holding no pod: the requested resource giving
    the fewest pods (0), the first by name on a tie."""
    names = tree.problem.resources
    used = sorted(np.flatnonzero(request > 0).tolist(), key=lambda r: names[r])
    if not leaves or not used:
        return []
    if tree.pooled:
        rows = np.array([free[tree.nodes_of(d)].sum(axis=0) for d in leaves])
    else:
        rows = free[tree.first_node[leaves]]
    empty = fits_per_resource(rows, request, used) == 0
    first = np.argmax(empty, axis=1)[empty.any(axis=1)]  # the first resource by name
    return [names[used[int(r)]] for r in first]


def exclusions(tree: DomainTree, full: DomainTree, free: np.ndarray, req: PodSetRequest,
               task: str, job: int) -> Exclusions:
    """The statistics of one podset's placement.

    Parameters
    ----------
    tree, full
        The domains the podset was placed in, and those of the job's whole node pool (they
        differ when a node replacement confines the podset to one domain).
    free
        [N, R] free capacity the podset saw.
    req
        The podset request (its worker pod's request and feasibility).
    task, job
        The workers' task name and the job index (their node constraints).

    Returns
    -------
    Exclusions
        Leaves counted (``Total nodes``) and the reasons some were excluded.
    """
    problem: Problem = tree.problem
    out = Exclusions(total=len(full.levels.get(full.lowest, [])))
    inside = set(tree.levels.get(tree.lowest, []))
    constraints = next(t.constraints for t in problem.instance.jobs[job].tasks if t.name == task)
    nodes = {n.name: n for n in problem.instance.nodes}
    held: list[int] = []  # leaves whose capacity decides
    for d in full.levels.get(full.lowest, []):
        if not full.pooled:  # one node per leaf: Kueue's simulator checks its predicates
            n = int(full.first_node[d])
            if not req.feasible[n]:  # a predicate, else outside the replacement domain
                why = node_exclusion(nodes[problem.topology.node_names[n]], constraints)
                if why is not None and why.startswith("taint "):
                    why = f"taint {_quoted(why[6:])}"
                out.add(why or "topologyDomain")
                continue
        if d not in inside:
            out.add("topologyDomain")
            continue
        held.append(d)
    for resource in _limiting(tree, free, held, req.request):
        out.add(f"resource {_quoted(resource)}")
    return out


def kueue_message(reason: str, podset: str, topology: str | None, stats: Exclusions) -> str:
    """The pending workload's message as Kueue prints it (``Assignment.Message``).

    Parameters
    ----------
    reason
        toposolve's reason for the podset (``topology doesn't allow to fit …`` or another).
    podset, topology
        The podset's name and the Kueue Topology's name (None: unknown, left out).
    stats
        The podset's exclusion statistics, appended to a not-fit message when some exist.

    Returns
    -------
    str
        ``couldn't assign flavors to pod set <podset>: <Kueue's reason>``.
    """
    text = reason
    if reason.startswith(NOT_FIT):
        if topology is not None:
            text = f"topology {_quoted(topology)} {reason[len(NOT_FIT):]}"
        if stats.counts:
            text += f". Total nodes: {stats.total}; excluded: {stats.text()}"
    return f"couldn't assign flavors to pod set {podset}: {text}"

"""Kueue's own wording of a pending Workload: a TAS failure (the topology name and the node
exclusion statistics), a quota refusal, an elastic Workload's refused topology request.

Re-expressed from ``notFitMessage`` and ``tasExclusionStats`` (kueue
``pkg/cache/scheduler/tas_flavor_snapshot.go``), ``FindFeasibleNodes``
(``scheduling_simulator_default.go``), ``Assignment.Message`` and ``fitsResourceQuota``
(``pkg/scheduler/flavorassigner/flavorassigner.go``), ``ResourceFormatter``
(``pkg/resources/resource_formatter.go``). Rules and citations: ``docs/kueue-fidelity.md``,
section "Reasons in Kueue's words".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.instance import Job
from toposolve.core.podset_groups import ELASTIC_LABEL
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


_DECIMAL = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"))
_BINARY = ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"))
_BYTES = ("memory", "ephemeral-storage")


def _decimal(n: int) -> str:
    """A whole amount as Kubernetes' canonical DecimalSI string (``3k``, ``1500``)."""
    for power, suffix in _DECIMAL:
        if n and n % 10**power == 0:
            return f"{n // 10**power}{suffix}"
    return str(n)


def kueue_quantity(resource: str, milli: int) -> str:
    """``ResourceFormatter.ResourceQuantityString``: cpu in DecimalSI milli-units (``1500m``,
    ``3``), memory-like resources in canonical BinarySI (``10Mi``; a byte count no power of 1024
    divides is re-read as DecimalSI: ``3M``), the others in DecimalSI units."""
    if resource == "cpu":
        return _decimal(milli // 1000) if milli % 1000 == 0 else f"{milli}m"
    units = -(-milli // 1000)  # Kueue's Amount is whole units
    if (resource in _BYTES or resource.startswith("hugepages-")) and abs(units) >= 1024:
        for bits, suffix in _BINARY:
            if units % (1 << bits) == 0:
                return f"{units >> bits}{suffix}"
    return _decimal(units)


def quota_reason(resource: str, flavor: str, previous: int, request: int, capacity: int,
                 used: int) -> str | None:
    """``fitsResourceQuota``'s reason for one resource of a podset (milli-units; ``previous``:
    the workload's earlier podsets in this flavor; ``capacity``: the nominal quota, what Kueue's
    ``PotentialAvailable`` is without a cohort; ``used``: the ClusterQueue's usage), None when
    it fits."""
    val = previous + request
    if val > capacity:
        return (f"insufficient quota for {resource} in flavor {flavor}, previously considered "
                f"podsets requests ({kueue_quantity(resource, previous)}) + current podset "
                f"request ({kueue_quantity(resource, request)}) > maximum capacity "
                f"({kueue_quantity(resource, capacity)})")
    available = max(0, capacity - used)
    if val > available:
        return (f"insufficient unused quota for {resource} in flavor {flavor}, "
                f"{kueue_quantity(resource, val - available)} more needed")
    return None


def quota_message(resources: list[str], flavor: str, podsets: list[tuple[str, np.ndarray]],
                  capacity: np.ndarray, used: np.ndarray) -> str | None:
    """The flavor assigner's message for the first podset (``(name, total request)``, in the
    Workload's order) that its ClusterQueue's one flavor cannot take: every failing resource's
    reason, sorted, joined by ``, ``; None when every podset fits. ``capacity`` is -1 where the
    ClusterQueue declares no quota (not checked)."""
    previous = np.zeros_like(used)
    for name, request in podsets:
        reasons = sorted(
            why for r in np.flatnonzero((request > 0) & (capacity >= 0)).tolist()
            if (why := quota_reason(resources[r], flavor, int(previous[r]), int(request[r]),
                                    int(capacity[r]), int(used[r]))) is not None)
        if reasons:
            return f"couldn't assign flavors to pod set {name}: {', '.join(reasons)}"
        previous = previous + request
    return None


def elastic_hold(job: Job) -> tuple[str, str] | None:
    """(podset, Kueue's error) for the first podset of an elastic Workload with a required or
    preferred topology, which Kueue refuses with ``ElasticJobsViaWorkloadSlicesWithTAS`` on
    (``tas_flavorassigner.go:60-68``); None when every podset is unconstrained or the Workload
    is not elastic."""
    for task in job.tasks:
        kind = task.labels.get(ELASTIC_LABEL)
        if kind in ("required", "preferred"):
            return task.name, f"{kind} topology is not supported with ElasticJobsViaWorkloadSlices"
    return None

"""A pending Workload whose flavor's Topology holds no node with every level label.

Kueue's TAS snapshot of such a flavor has no domain at any level, so the first podset (group)
that uses TAS fails with ``no topology domains at level: <its level>`` (kueue@ff69552
``findLevelWithFitDomains``, ``tas_flavor_snapshot.go:1340-1342``), after the request checks
that need no domain (``findTopologyAssignment``, ``:930-955``). toposolve's tree of that Topology
is empty too, and with it the names of its levels, so the reader words the failure here and
marks that podset ``never_placed`` (``docs/kueue-fidelity.md``, "A Topology without a domain").
"""

from __future__ import annotations

from toposolve.core.instance import Job
from toposolve.core.podset_groups import group_roles
from toposolve.formats.kueue.reader import KueueCluster
from toposolve.formats.kueue.request import TopologyRequest


def _explicit(request: TopologyRequest) -> bool:
    """Kueue's ``IsExplicitlyRequestingTAS`` (a slice size alone is refused at reading)."""
    return request.has_level or request.unconstrained or bool(request.slices)


def _tas_only(cluster: KueueCluster, queue: str) -> bool:
    """Whether every flavor of the ClusterQueue is a TAS flavor (Kueue's ``IsTASOnly``): its
    podsets without a topology request use TAS too (``isTASImplied``)."""
    record = cluster.cluster_queues.get(queue)
    flavors = [cluster.flavors.get(name) for name in (record.flavors if record else ())]
    return bool(flavors) and all(f is not None and f.topology is not None for f in flavors)


def search_failure(request: TopologyRequest, levels: list[str]) -> str | None:
    """Kueue's reason for a podset request in a Topology of ``levels`` (top first) without any
    domain: the slice level above the podset's, else the slice layers' own fault
    (``request.never_placed``), else no domain at the level searched (required, preferred,
    the highest level for slices only, the lowest otherwise: ``levelKeyWithImpliedFallback``)."""
    level = request.required or request.preferred or (
        levels[0] if request.slices else levels[-1])
    if request.slices and levels.index(request.slices[0].level) < levels.index(level):
        return (f"podset slice topology {request.slices[0].level} is above the podset "
                f"topology {level}")
    return request.never_placed or f"no topology domains at level: {level}"


def mark_no_domain(job: Job, requests: list[TopologyRequest],
                   cluster: KueueCluster) -> tuple[str, str] | None:
    """Mark the first podset (group) using TAS of a workload whose Topology holds no domain.

    Parameters
    ----------
    job
        The pending workload's job (its tasks, queue and Topology read).
    requests
        Its podsets' requests, in podset order; the workers' request of the failing unit gets
        ``never_placed`` (none of them names a missing level: the flavor assigner fails first).
    cluster
        The Kueue objects read.

    Returns
    -------
    tuple or None
        (podset, Kueue's reason) when a podset was marked; None when the Topology has domains
        or no podset uses TAS.
    """
    if job.topology_name not in cluster.empty:
        return None
    implied = _tas_only(cluster, job.queue or "")
    units: dict[str, list[int]] = {}
    for i, request in enumerate(requests):
        units.setdefault(request.group or f"#{i}", []).append(i)
    levels = cluster.levels_of(job.topology_name)[1]
    for members in units.values():
        counts = [job.tasks[i].replicas for i in members]
        if not any(counts) or not (implied or any(_explicit(requests[i]) for i in members)):
            continue  # Kueue skips count-0 podsets and those not using TAS
        lead = members[group_roles(counts)[0]] if len(members) == 2 else members[0]
        why = search_failure(requests[lead], levels)
        requests[lead].never_placed = why
        return job.tasks[lead].name, why
    return None

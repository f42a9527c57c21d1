"""Kueue's wording of a workload whose podsets name a level their flavor's Topology lacks.

Kueue's flavor assigner skips a TAS flavor whose Topology lacks a requested level
(``checkPodSetAndFlavorMatchForTAS``, kueue@ff69552
``pkg/scheduler/flavorassigner/tas_flavorassigner.go:192-195``); with no flavor left the
workload stays pending (``NoMatchingFlavor``) with ``Assignment.Message``
(``flavorassigner.go:229-247``): one ``couldn't assign flavors to pod set <podset>: <reason>``
per failing podset, in podset order, joined by ``; ``. Asserted at
``pkg/scheduler/scheduler_tas_test.go:2053``; the case is ported in
``tests/fidelity/kueue/data/missing_level.yaml``.
"""

from __future__ import annotations

from toposolve.core.instance import Job, NetworkTopology
from toposolve.core.topology import selector_matches

# tas_flavorassigner.go:194, the reason of one flavor
NO_LEVEL = 'Flavor "{flavor}" does not contain the requested level'


def failing_podsets(job: Job, never_placed: bool = False) -> list[str]:
    """The podsets (tasks) under a constraint naming a missing level (``never_placed``: one
    Kueue's TAS never places), in task order: every task when it is the job's own, else those
    its SubGroupPolicies naming one select."""
    def failing(spec: NetworkTopology | None) -> bool:
        return spec is not None and (spec.never_placed if never_placed
                                     else spec.missing_level) is not None

    if failing(job.network_topology):
        return [t.name for t in job.tasks]
    selectors = [p.label_selector for p in job.subgroup_policies if failing(p.network_topology)]
    return [t.name for t in job.tasks
            if any(selector_matches(s, t.labels) for s in selectors)]


def no_matching_flavor(job: Job) -> str | None:
    """Kueue's message for ``job`` (a missing level in ``Problem.refused_jobs``), or None when
    the reader recorded no flavor (``Job.flavor``)."""
    podsets = failing_podsets(job)
    if job.flavor is None or not podsets:
        return None
    reason = NO_LEVEL.format(flavor=job.flavor)
    return "; ".join(f"couldn't assign flavors to pod set {p}: {reason}" for p in podsets)

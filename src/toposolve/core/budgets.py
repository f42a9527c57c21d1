"""The instance's PodDisruptionBudgets resolved to the pods they cover (engines' view).

A budget covers the pods of its namespace its selector matches (None: no pod; empty: all).
Its expected scale is the summed pod count (``replicas``) of the covered pods' jobs, which
stand for the pods' controllers; healthy pods are the covered pods running on a node of the
instance. Arithmetic: :mod:`toposolve.core.disruption`; rationale: ``docs/defrag.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from toposolve.core.disruption import disruptions_allowed
from toposolve.core.instance import Instance, PodDisruptionBudget
from toposolve.core.topology import selector_matches


@dataclass(frozen=True)
class CompiledBudget:
    """One budget: its spec and the pods it covers."""

    spec: PodDisruptionBudget
    selected: int  # pods the selector matches, pending ones included
    expected_scale: int  # summed replicas of their jobs
    running: frozenset[str]  # covered pods running on a node of the instance (full names)

    @property
    def key(self) -> str:
        return self.spec.key

    def allowed(self, unhealthy: Iterable[str] = ()) -> int:
        """Disruptions allowed with the ``unhealthy`` pods (e.g. on failed nodes) not counted
        as healthy."""
        healthy = len(self.running - set(unhealthy))
        return disruptions_allowed(self.spec.min_available, self.spec.max_unavailable,
                                   selected=self.selected, expected_scale=self.expected_scale,
                                   healthy=healthy)

    def charged(self, gone: Iterable[str] = ()) -> frozenset[str]:
        """Covered running pods (not ``gone``: e.g. on failed nodes) whose eviction takes one of
        the allowed disruptions."""
        return self.running - set(gone)

    def refusing(self, gone: Iterable[str] = ()) -> frozenset[str]:
        """Covered running pods (not ``gone``) whose eviction looks at budgets at all: the
        eviction API refuses one that two budgets cover."""
        return self.running - set(gone)


def compile_budgets(instance: Instance, running: Mapping[str, int]) -> list[CompiledBudget]:
    """Every budget of ``instance`` with its covered pods; ``running``: full pod name → node
    of the pods running on a known node."""
    out = []
    for pdb in instance.disruption_budgets:
        selected, scale, covered = 0, 0, set()
        for job in instance.jobs:
            if job.namespace != pdb.namespace or pdb.selector is None:
                continue
            hits = [job.namespace + "/" + task.pod_name(job.name, i)
                    for task in job.tasks for i in range(task.replicas)
                    if selector_matches(pdb.selector, task.labels_of(i))]
            if hits:
                selected += len(hits)
                scale += job.replicas
                covered |= {name for name in hits if name in running}
        out.append(CompiledBudget(pdb, selected, scale, frozenset(covered)))
    return out

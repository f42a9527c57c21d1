"""The instance's PodDisruptionBudgets resolved to the pods they cover (engines' view).

A budget covers the pods of its namespace its selector matches (None: no pod; empty: all).
Its expected scale is the summed pod count (``replicas``) of the covered pods' jobs, which
stand for the pods' controllers; healthy pods are the covered pods running Ready on a node of
the instance (``Task.unready``). Arithmetic: :mod:`toposolve.core.disruption`; rationale:
``docs/defrag.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from toposolve.core.disruption import NOT_READY, READY, STARTING, WaveLedger
from toposolve.core.instance import Instance, PodDisruptionBudget
from toposolve.core.topology import selector_matches


@dataclass(frozen=True)
class CompiledBudget:
    """One budget: its spec and the pods it covers."""

    spec: PodDisruptionBudget
    selected: int  # pods the selector matches, pending ones included
    expected_scale: int  # summed replicas of their jobs
    running: frozenset[str]  # covered pods running on a node of the instance (full names)
    # covered running pods by health (``core.disruption``): not Ready, and still starting
    not_ready: frozenset[str] = frozenset()
    starting: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        return self.spec.key

    def health(self, name: str) -> str:
        """``ready``, ``not-ready`` or ``starting`` for covered running pod ``name``."""
        return NOT_READY if name in self.not_ready else STARTING if name in self.starting else READY

    def ledger(self, gone: Iterable[str] = ()) -> WaveLedger:
        """The budget as the controller sees it now, the ``gone`` pods (e.g. on failed nodes)
        not healthy."""
        healthy = len(self.running - self.not_ready - self.starting - set(gone))
        return WaveLedger(self.spec.min_available, self.spec.max_unavailable,
                          self.spec.unhealthy_pod_eviction_policy, self.selected,
                          self.expected_scale, healthy)

    def allowed(self, gone: Iterable[str] = ()) -> int:
        """Disruptions allowed with the ``gone`` pods not counted as healthy."""
        return self.ledger(gone).allowed()

    def charged(self, gone: Iterable[str] = ()) -> frozenset[str]:
        """Covered running pods (not ``gone``) whose eviction takes one of the allowed
        disruptions."""
        ledger, gone = self.ledger(gone), set(gone)
        return frozenset(n for n in self.running - gone if ledger.charged(self.health(n)))

    def refusing(self, gone: Iterable[str] = ()) -> frozenset[str]:
        """Covered running pods (not ``gone``) whose eviction looks at budgets at all: the
        eviction API refuses one that two budgets cover (a starting pod is evicted first)."""
        return self.running - self.starting - set(gone)


def compile_budgets(instance: Instance, running: Mapping[str, int]) -> list[CompiledBudget]:
    """Every budget of ``instance`` with its covered pods; ``running``: full pod name → node
    of the pods running on a known node."""
    out = []
    for pdb in instance.disruption_budgets:
        selected, scale, covered = 0, 0, set()
        health: dict[str, str] = {}
        for job in instance.jobs:
            if job.namespace != pdb.namespace or pdb.selector is None:
                continue
            hits = [(job.namespace + "/" + task.pod_name(job.name, i), task.health_of(i))
                    for task in job.tasks for i in range(task.replicas)
                    if selector_matches(pdb.selector, task.labels_of(i))]
            if hits:
                selected += len(hits)
                scale += job.replicas
                covered |= {name for name, _ in hits if name in running}
                health.update(hits)
        out.append(CompiledBudget(
            pdb, selected, scale, frozenset(covered),
            frozenset(n for n in covered if health[n] == NOT_READY),
            frozenset(n for n in covered if health[n] == STARTING)))
    return out

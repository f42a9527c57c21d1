"""PodDisruptionBudget arithmetic, as Kubernetes' disruption controller does it.

``minAvailable`` / ``maxUnavailable`` are an integer or a percentage; a percentage is scaled
against the expected pod count and rounded **up** in both cases; allowed disruptions are
``currentHealthy - desiredHealthy`` (0 when negative or when no pod is expected). Which
evictions count against a budget follows the Eviction API (:func:`takes_disruption`); a plan
in waves re-derives the budget after each (:class:`WaveLedger`). Sources and the choices made
for toposolve's model: ``docs/defrag.md`` ("PodDisruptionBudgets").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PERCENT = re.compile(r"^(0|[1-9][0-9]*)%$")


def int_or_percent(value: object) -> int | str:
    """``value`` checked as Kubernetes' ``IntOrString`` for a budget: an integer ≥ 0 or a
    percentage ``"N%"`` with 0 ≤ N ≤ 100 (``ValueError`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"expected an integer or a percentage, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"must be at least 0, got {value}")
        return value
    match = _PERCENT.match(value)
    if match is None:
        raise ValueError(f"expected an integer or a percentage like '50%', got {value!r}")
    if int(match.group(1)) > 100:
        raise ValueError(f"must not be more than 100%, got {value!r}")
    return value


def scaled(value: int | str, total: int) -> int:
    """An integer as is; a percentage of ``total`` rounded up (``GetScaledValueFromIntOrPercent``
    with ``roundUp=true``, as the controller calls it for both fields)."""
    if isinstance(value, int):
        return value
    percent = int(value[:-1])
    return -(-percent * total // 100)


def desired_healthy(min_available: int | str | None, max_unavailable: int | str | None, *,
                    selected: int, expected_scale: int) -> tuple[int, int]:
    """(expected pods, desired healthy pods) of a budget, as the controller derives them.

    Parameters
    ----------
    min_available, max_unavailable
        The budget's spec (at most one is set).
    selected
        Pods the selector matches (the expected count of an integer ``minAvailable``).
    expected_scale
        The summed scale of the selected pods' controllers (the expected count otherwise).
    """
    if max_unavailable is not None:
        expected = expected_scale
        return expected, max(0, expected - scaled(max_unavailable, expected))
    if isinstance(min_available, int):
        return selected, min_available
    if min_available is not None:
        return expected_scale, scaled(min_available, expected_scale)
    return 0, 0  # neither: the controller leaves the expected count at 0, so nothing may go


def disruptions_allowed(min_available: int | str | None, max_unavailable: int | str | None, *,
                        selected: int, expected_scale: int, healthy: int) -> int:
    """How many more pods the budget lets go: ``healthy`` (selected pods running and ready)
    minus the desired healthy pods (:func:`desired_healthy`), 0 when negative or when no pod
    is expected."""
    expected, desired = desired_healthy(min_available, max_unavailable, selected=selected,
                                        expected_scale=expected_scale)
    allowed = healthy - desired
    return allowed if expected > 0 and allowed > 0 else 0


READY, NOT_READY, STARTING = "ready", "not-ready", "starting"  # a running pod's health
UNREADY_STATES = (NOT_READY, STARTING)


def takes_disruption(state: str, policy: str | None, *, healthy: int, desired: int) -> bool:
    """Whether the Eviction API counts evicting a covered pod in ``state`` against the budget
    (``eviction.go``): a pod still ``starting`` (phase Pending) is evicted without looking at
    budgets; a ``not-ready`` one without touching the budget when ``unhealthyPodEvictionPolicy``
    (``policy``) is ``AlwaysAllow``, or (``IfHealthyBudget``, the default) while the budget is
    met (``healthy ≥ desired > 0``); any other eviction takes one allowed disruption."""
    if state == STARTING:
        return False
    if state == NOT_READY:
        return policy != "AlwaysAllow" and not (healthy >= desired > 0)
    return True


@dataclass
class WaveLedger:
    """One budget through the waves of a plan: each wave waits for the previous wave's
    replacements to be Ready, so the controller then counts them healthy (pods that were not
    healthy before their move add to ``healthy``)."""

    min_available: int | str | None
    max_unavailable: int | str | None
    policy: str | None  # unhealthyPodEvictionPolicy
    selected: int
    expected_scale: int
    healthy: int

    @property
    def desired(self) -> int:
        return desired_healthy(self.min_available, self.max_unavailable, selected=self.selected,
                               expected_scale=self.expected_scale)[1]

    def allowed(self) -> int:
        """Disruptions allowed now."""
        return disruptions_allowed(self.min_available, self.max_unavailable,
                                   selected=self.selected, expected_scale=self.expected_scale,
                                   healthy=self.healthy)

    def charged(self, state: str) -> bool:
        """Whether evicting a covered pod in ``state`` now takes an allowed disruption."""
        return takes_disruption(state, self.policy, healthy=self.healthy, desired=self.desired)

    def wave_done(self, recovered: int) -> None:
        """A wave's replacements are Ready: ``recovered`` of them replace pods that were not
        healthy (not Ready, starting, or on failed nodes)."""
        self.healthy += recovered

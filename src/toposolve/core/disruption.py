"""PodDisruptionBudget arithmetic, as Kubernetes' disruption controller does it.

``minAvailable`` / ``maxUnavailable`` are an integer or a percentage; a percentage is scaled
against the expected pod count and rounded **up** in both cases; allowed disruptions are
``currentHealthy - desiredHealthy`` (0 when negative or when no pod is expected). Source and
the choices made for toposolve's model: ``docs/defrag.md`` ("PodDisruptionBudgets").
"""

from __future__ import annotations

import re

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


def disruptions_allowed(min_available: int | str | None, max_unavailable: int | str | None, *,
                        selected: int, expected_scale: int, healthy: int) -> int:
    """How many more pods the budget lets go.

    Parameters
    ----------
    min_available, max_unavailable
        The budget's spec (at most one is set).
    selected
        Pods the selector matches (the expected count of an integer ``minAvailable``).
    expected_scale
        The summed scale of the selected pods' controllers (the expected count otherwise).
    healthy
        Selected pods running and ready.
    """
    if max_unavailable is not None:
        expected = expected_scale
        desired = max(0, expected - scaled(max_unavailable, expected))
    elif isinstance(min_available, int):
        expected, desired = selected, min_available
    elif min_available is not None:
        expected = expected_scale
        desired = scaled(min_available, expected)
    else:  # neither: the controller leaves the expected count at 0, so nothing may go
        expected, desired = 0, 0
    allowed = healthy - desired
    return allowed if expected > 0 and allowed > 0 else 0

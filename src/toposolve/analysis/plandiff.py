"""``toposolve.diff(plan_a, plan_b)``: what changes from one plan to another.

Works on the plans alone (no instance needed), so two plans of one instance — two engines, two
profiles, a plan before and after a change — compare directly. Jobs are matched by key, pods by
name. The human metrics (``plan.metrics``) are compared where both plans carry them; the
objective's scalar is not, since its priority weights make it incomparable across instances.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from toposolve.core.errors import require_type
from toposolve.core.plan import Plan


@dataclass
class JobChange:
    """A job placed by one plan only, or placed by both in different HyperNodes."""

    job: str
    a: str | None  # its HyperNode in plan a ("placed" without one), or None when pending
    b: str | None
    reason_a: str | None = None  # why it is pending in a
    reason_b: str | None = None


@dataclass
class PlanDiff:
    """The differences ``b − a`` (see :func:`diff`)."""

    placed_only_in_a: list[JobChange] = field(default_factory=list)
    placed_only_in_b: list[JobChange] = field(default_factory=list)
    moved: list[JobChange] = field(default_factory=list)  # placed by both, other HyperNode
    pods_moved: int = 0  # bound by both plans, to different nodes
    pods_only_in_a: int = 0
    pods_only_in_b: int = 0
    evictions_only_in_a: list[str] = field(default_factory=list)
    evictions_only_in_b: list[str] = field(default_factory=list)
    # name -> b − a (numbers and per-priority maps)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        """No job, pod or eviction differs."""
        return not (
            self.placed_only_in_a or self.placed_only_in_b or self.moved or self.pods_moved
            or self.pods_only_in_a or self.pods_only_in_b or self.evictions_only_in_a
            or self.evictions_only_in_b
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        if self.same:
            return "same placements and evictions"
        lines = []
        for title, changes in (("placed only in a", self.placed_only_in_a),
                               ("placed only in b", self.placed_only_in_b), ("moved", self.moved)):
            if changes:
                lines.append(f"{title} ({len(changes)}): "
                             + ", ".join(_describe(c) for c in changes))
        lines.append(
            f"pods: {self.pods_moved} moved, {self.pods_only_in_a} bound only in a, "
            f"{self.pods_only_in_b} only in b"
        )
        if self.evictions_only_in_a or self.evictions_only_in_b:
            lines.append(
                f"evictions: {len(self.evictions_only_in_a)} only in a, "
                f"{len(self.evictions_only_in_b)} only in b"
            )
        changed = {k: v for k, v in self.metrics.items() if v not in (0, 0.0, {}) and v is not None}
        if changed:
            lines.append("metrics (b − a): "
                         + ", ".join(f"{k} {_signed(v)}" for k, v in changed.items()))
        return "\n".join(lines)


def _describe(change: JobChange) -> str:
    if change.a is not None and change.b is not None:
        return f"{change.job} {change.a} → {change.b}"
    return change.job


def _signed(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_signed(v)}" for k, v in value.items()) + "}"
    return f"{value:+.4g}" if isinstance(value, float) else f"{value:+d}"


def _placed(plan: Plan) -> dict[str, str]:
    return {j.job: j.hypernode or "placed" for j in plan.jobs if j.placed}


def _metric_delta(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in a.keys() & b.keys():
        x, y = a[key], b[key]
        if isinstance(x, dict) and isinstance(y, dict):
            out[key] = {p: y.get(p, 0) - x.get(p, 0) for p in sorted(x.keys() | y.keys(),
                                                                     key=_priority_order)}
        elif isinstance(x, int | float) and isinstance(y, int | float):
            out[key] = y - x
    return {k: out[k] for k in a if k in out}  # plan a's order


def _priority_order(text: str) -> tuple:
    try:
        return (0, -int(text))
    except ValueError:
        return (1, text)


def diff(a: Plan, b: Plan) -> PlanDiff:
    """What changes from plan ``a`` to plan ``b``: jobs placed by one only (with the other's
    pending reason), jobs in another HyperNode, pods bound elsewhere or by one only, evictions
    of one only, and ``b − a`` of every human metric both carry.

    Parameters
    ----------
    a, b
        Two plans of the same instance.

    Returns
    -------
    PlanDiff
        The differences; ``str()`` gives them as text.
    """
    require_type(a, Plan, "a")
    require_type(b, Plan, "b")
    placed_a, placed_b = _placed(a), _placed(b)
    reason_a = {j.job: j.reason for j in a.jobs if not j.placed}
    reason_b = {j.job: j.reason for j in b.jobs if not j.placed}
    out = PlanDiff(metrics=_metric_delta(a.metrics, b.metrics))
    for job in sorted(placed_a.keys() - placed_b.keys()):
        out.placed_only_in_a.append(JobChange(job, placed_a[job], None, reason_b=reason_b.get(job)))
    for job in sorted(placed_b.keys() - placed_a.keys()):
        out.placed_only_in_b.append(JobChange(job, None, placed_b[job], reason_a=reason_a.get(job)))
    for job in sorted(placed_a.keys() & placed_b.keys()):
        if placed_a[job] != placed_b[job]:
            out.moved.append(JobChange(job, placed_a[job], placed_b[job]))
    node_a = {x.pod: x.node for x in a.bindings}
    node_b = {x.pod: x.node for x in b.bindings}
    out.pods_moved = sum(1 for pod in node_a.keys() & node_b.keys() if node_a[pod] != node_b[pod])
    out.pods_only_in_a = len(node_a.keys() - node_b.keys())
    out.pods_only_in_b = len(node_b.keys() - node_a.keys())
    evicted_a, evicted_b = {e.pod for e in a.evictions}, {e.pod for e in b.evictions}
    out.evictions_only_in_a = sorted(evicted_a - evicted_b)
    out.evictions_only_in_b = sorted(evicted_b - evicted_a)
    return out

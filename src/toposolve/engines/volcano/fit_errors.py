"""Why a job is pending, in Volcano's words (the PodGroup's Unschedulable condition message).

The gang plugin writes ``<unready>/<tasks> tasks in gang unschedulable: <JobInfo.FitError>``;
``FitError`` is the job's task-status histogram with ``minAvailable``, the pending tasks' reasons
(``Schedulable`` for a task placed and then discarded with its gang, else ``Unschedulable``) and
the first failed task's ``FitErrors``: ``0/<n> nodes are unavailable: <reason histogram>.``.
Message shapes and the commit they were read at: docs/volcano-fidelity.md "Reasons in Volcano's
words".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

POD_NUMBER_EXCEEDED = "node(s) pod number exceeded"  # api.NodePodNumberExceeded
NOT_READY = "pod group is not ready"  # scheduling.PodGroupNotReady
# LessEqualWithResourcesName checks cpu and memory first, then the scalar resources
FIRST_RESOURCES = ("cpu", "memory")


def _histogram(counts: Counter[str]) -> list[str]:
    """Volcano's ``sortReasonsHistogram``: ``"<count> <reason>"``, sorted as strings."""
    return sorted(f"{n} {reason}" for reason, n in counts.items())


def resource_rank(name: str) -> tuple[bool, int, str]:
    """The order the resource check reports short resources in: cpu and memory first, then the
    scalars (Go's map order, random: toposolve takes them by name)."""
    first = name in FIRST_RESOURCES
    return (not first, FIRST_RESOURCES.index(name) if first else 0, name)


def nodes_unavailable(reasons: list[str], hypernode: str | None = None,
                      base: str | None = None, nodes: int | None = None) -> str:
    """``FitErrors.Error()`` for the failed nodes' reasons (``hypernode``: the HyperNode the
    nodes were taken from, None for the whole cluster; ``base``: the error set with
    ``SetError``, by default ``0/<n> nodes are unavailable``; ``nodes``: how many nodes failed,
    by default one per reason — a node may give several)."""
    text = base or f"0/{len(reasons) if nodes is None else nodes} nodes are unavailable"
    if not reasons:
        return text
    text += f": {', '.join(_histogram(Counter(reasons)))}."
    return f"In hyperNode {hypernode}: {text}" if hypernode else text


@dataclass(frozen=True)
class JobTasks:
    """The job's tasks as Volcano counts them after the discarded allocation."""

    statuses: Counter[str]  # task status ("Pending", "Running") -> tasks
    min_available: int
    schedulable: int  # pending tasks placed and then discarded with the gang
    origin: tuple[str, str] | None = None  # (task name, its FitErrors text), None: no fit error

    @property
    def tasks(self) -> int:
        return sum(self.statuses.values())


def fit_error(job: JobTasks) -> str:
    """``JobInfo.FitError()`` for a job that is not ready."""
    counts = Counter(job.statuses)
    counts["minAvailable"] = job.min_available
    text = f"{NOT_READY}, {', '.join(_histogram(counts))}"
    pending = Counter({"Schedulable": job.schedulable,
                       "Unschedulable": job.statuses["Pending"] - job.schedulable})
    pending = Counter({k: v for k, v in pending.items() if v > 0})
    if pending:
        text += f"; Pending: {', '.join(_histogram(pending))}"
    if job.origin is not None:
        text += f". Origin reason is {job.origin[0]}: {job.origin[1]}"
    return text


def gang_condition(job: JobTasks) -> str:
    """The gang plugin's PodGroup condition message."""
    ready = job.tasks - job.statuses["Pending"]
    unready = job.min_available - (job.schedulable + ready)
    return f"{unready}/{job.tasks} tasks in gang unschedulable: {fit_error(job)}"

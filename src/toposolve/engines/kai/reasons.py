"""Why a job is pending, in KAI's words (the PodGroup's unschedulable message).

KAI's topology plugin adds job fit errors; the PodGroup's message joins them as
``JobFitErrorsToDetailedMessage`` does: a newline, the reason (the one error's, else
``Unable to schedule podgroup``) and a period, then each error's detailed message on its own
line with a period, sorted. Message shapes and the commit they were read at:
docs/kai-fidelity.md "Reasons in KAI's words".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

POD_SCHEDULING_ERRORS = "PodSchedulingErrors"  # the reason of a simple job fit error
NOT_ENOUGH_FOR_WORKLOAD = "Not enough resources for the workload"  # a topology fit error's
DEFAULT_PODGROUP_ERROR = "Unable to schedule podgroup"  # the reason of several errors
DEFAULT_SUBGROUP = "default"
GPU = "nvidia.com/gpu"
MILLI = 1000.0  # toposolve holds every quantity in milli-units
BYTES_PER_GB = 1e9  # KAI's MemoryToGB


@dataclass(frozen=True)
class FitError:
    """One job fit error: its reason and its detailed message (as KAI's ``DetailedMessage``)."""

    reason: str
    detail: str


def _trimmed(value: float) -> str:
    """go-humanize's ``FtoaWithDigits(value, 3)``: three decimals, trailing zeros dropped."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def insufficient_resources(domain: str, names: list[str], requested: np.ndarray,
                           available: np.ndarray) -> list[str]:
    """The detailed lines of ``NewTopologyInsufficientResourcesError``: one per resource whose
    request (milli-units) exceeds the domain's free amount, in ``names`` order."""
    lines = []
    for name, want, have in zip(names, requested.tolist(), available.tolist(), strict=True):
        if want <= have:
            continue
        if name == "cpu":
            lines.append(f"{domain} didn't have enough resources: CPU cores, requested: "
                         f"{_trimmed(want / MILLI)}, available: {_trimmed(have / MILLI)}")
        elif name == "memory":
            lines.append(f"{domain} didn't have enough resources: memory, requested: "
                         f"{_trimmed(want / MILLI / BYTES_PER_GB)}, available: "
                         f"{_trimmed(have / MILLI / BYTES_PER_GB)}")
        elif name == GPU:
            lines.append(f"{domain} didn't have enough resource: GPUs, requested: "
                         f"{want / MILLI:.3g}, available: {have / MILLI:.3g}")
        else:
            lines.append(f"{domain} didn't have enough resource: {name}, requested: "
                         f"{int(want / MILLI)}, available: {int(have / MILLI)}")
    return lines


def pods_short(domain: str, allocatable: int, count: int) -> str:
    """``checkJobDomainFit`` with representative-pod accounting."""
    return f"node-group {domain} can allocate only {allocatable} of {count} required pods"


def domain_error(domain: str, subgroup: str, lines: list[str]) -> FitError:
    """A ``TopologyFitError``: ``<domain>: [subgroup S: ]lines``."""
    text = ", ".join(lines)
    if subgroup and subgroup != DEFAULT_SUBGROUP:
        text = f"subgroup {subgroup}: {text}"
    return FitError(NOT_ENOUGH_FOR_WORKLOAD, f"<{domain}>: {text}")


def no_topology_match(topology: str, required: str, job: str, subgroup: str,
                      suffix: str | None = None) -> FitError:
    """``getNoTopologyMatchError`` as a simple job fit error; ``job`` is ``namespace/name``."""
    what = f"job <{job}>"
    if subgroup and subgroup != DEFAULT_SUBGROUP:
        what += f", subgroup {subgroup}"
    tail = f": {suffix}" if suffix else ""
    return FitError(POD_SCHEDULING_ERRORS,
                    f"topology {topology}, requirement {required} couldn't be satisfied for "
                    f"{what}{tail}")


def not_enough_in(domain: str | None) -> str:
    """The suffix when the lowest common domain cannot hold the job (None: the cluster's root)."""
    return f"not enough resources in {domain if domain else 'the cluster'} to allocate the job"


def detailed_message(errors: list[FitError]) -> str:
    """``JobFitErrorsToDetailedMessage``: the PodGroup's unschedulable message."""
    reason = errors[0].reason if len(errors) == 1 else DEFAULT_PODGROUP_ERROR
    return "\n" + reason + "." + "".join(sorted(f"\n{e.detail}." for e in errors))

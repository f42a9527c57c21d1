"""Why a job is pending, in KAI's words (the PodGroup's unschedulable message).

KAI's topology plugin and its allocate action (a pod no node takes: ``TasksFitErrors``, the
nodes' reasons counted) add job fit errors; the PodGroup's message joins them as
``JobFitErrorsToDetailedMessage`` does: a newline, the reason (the one error's, else
``Unable to schedule podgroup``) and a period, then each error's detailed message on its own
line with a period, sorted. Message shapes and the commit they were read at:
docs/kai-fidelity.md "Reasons in KAI's words".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.engines.common.filter_reasons import filter_reason

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


RESOURCES_NOT_FOUND = "no nodes with enough resources were found"  # ResourcesWereNotFoundMsg
DEFAULT_POD_ERROR = "Unable to schedule pod"  # a pod no node gave a fit error for
NODE_UNSCHEDULABLE = "node is unschedulable"  # CheckNodeConditionPredicate
POD_NUMBER_EXCEEDED = "node(s) pod number exceeded"  # api.NodePodNumberExceeded
GPU_MEMORY = "GPU memory"  # a pod asking more memory of each GPU than the node's GPUs have
# KAI's order: GPUs, GPU memory, CPU cores, memory
SHORT_NAMES = {GPU: "GPUs", GPU_MEMORY: "GPU memory", "cpu": "CPU cores", "memory": "memory"}


def short_resources(names: list[str], request: np.ndarray, free: np.ndarray,
                    gpu_memory: tuple[int, int] | None = None) -> list[str]:
    """``NewFitErrorInsufficientResource``'s short reasons: one per requested resource the
    node's free amount (milli-units, ``names`` order, no pod count) cannot give; GPUs, GPU
    memory (``gpu_memory``: the MiB a pod asks of each GPU and the node's memory of each GPU,
    short when the first is larger), CPU cores, memory, then the others in ``names`` order."""
    short = [n for n, want, have in zip(names, request.tolist(), free.tolist(), strict=True)
             if want > 0 and want > have]
    if gpu_memory is not None and gpu_memory[0] > gpu_memory[1]:
        short.append(GPU_MEMORY)
    first = [n for n in SHORT_NAMES if n in short]
    return [f"node(s) didn't have enough resources: {SHORT_NAMES.get(n, n)}"
            for n in first + [n for n in short if n not in SHORT_NAMES]]


def predicate_reason(exclusion: str) -> str:
    """KAI's words for toposolve's node exclusion (``node_exclusion``): the node condition
    check, else the kube-scheduler Filter text (taints before node affinity: KAI ranges over a
    map of predicates, toposolve takes kube-scheduler's default Filter order)."""
    if exclusion == "unschedulable":
        return NODE_UNSCHEDULABLE
    return filter_reason(exclusion)  # kube-scheduler's Filter texts, passed on by KAI


def tasks_fit_errors(counts: dict[str, int], base: str | None = None) -> str:
    """``TasksFitErrors.Error``: the base (``no nodes with enough resources were found``), then
    ``: <n> <reason>`` per reason, sorted as strings, joined by ``". \\n"``, and a period."""
    text = base or RESOURCES_NOT_FOUND
    if counts:
        text += ": " + ". \n".join(sorted(f"{n} {r}" for r, n in counts.items())) + "."
    return text


def pod_fit_error(found: int, required: int, gang: bool, pod: str, errors: str,
                  subgroup: str | None = None) -> FitError:
    """``handleFailedTaskAllocation``: ``found`` pods of the attempt placed before pod ``pod``
    (``namespace/name``) failed; ``gang``: some PodSet of the job needs more than one pod and
    the pod's own (needing ``required``) is not yet met; ``subgroup``: the pod's SubGroup, None
    for a job of the default PodSet alone."""
    if not gang:
        return FitError(POD_SCHEDULING_ERRORS,
                        f"Resources were not found for pod {pod} due to: {errors}")
    if subgroup is None:
        return FitError(POD_SCHEDULING_ERRORS,
                        f"Resources were found for {found} pods while {required} are required "
                        f"for gang scheduling. Additional pods cannot be scheduled due to: "
                        f"{errors}")
    return FitError(POD_SCHEDULING_ERRORS,
                    f"Resources were found for {found} pods from all sub-groups while sub-group "
                    f"{subgroup} requires {required} pods for gang scheduling. Additional pods "
                    f"cannot be scheduled in this sub-group due to: {errors}")

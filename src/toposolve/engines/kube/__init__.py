"""Engine mirroring kube-scheduler's Topology-Aware Workload Scheduling (KEP-5732; see
``docs/kube-fidelity.md``).

:func:`run_kube` runs the workload scheduling cycle per pending pod group: one candidate
placement per domain of the group's topology key, the pod-by-pod run in each, the placement
scores, the best placement's pods bound (:mod:`toposolve.engines.kube.cycle`).
"""

from toposolve.engines.kube.cycle import run_kube

__all__ = ["run_kube"]


def solve(problem, profile, options, hint=None):
    """The engine contract (:mod:`toposolve.engines.contract`): :func:`run_kube` with the
    input's KubeSchedulerConfiguration (``Problem.kube_scoring``), upstream's defaults without
    one (``MostAllocated`` placement strategy, weights 1 and 1).

    kube-scheduler takes no warm start (``hint`` is ignored) and TAS triggers no preemption."""
    from toposolve.engines.common.mirror import mirror_result

    return mirror_result(problem, profile, options, run_kube, "kube")

"""Engine mirroring Kueue's Topology-Aware Scheduling (see ``docs/kueue-fidelity.md``).

:func:`run_kueue` admits pending workloads in Kueue's order within ClusterQueue nominal quotas
and places each podset with TAS's BestFit / LeastFreeCapacity algorithm
(:mod:`toposolve.engines.kueue.placement`).
"""

from toposolve.engines.kueue.engine import run_kueue

__all__ = ["run_kueue"]


def solve(problem, profile, options, hint=None):
    """The engine contract (:mod:`toposolve.engines.contract`): :func:`run_kueue`.

    Kueue takes no warm start (``hint`` is ignored) and does not mirror preemption here. The
    profile's ``kueue.feature_gates`` set ``TASProfileMixed``, ``TASBalancedPlacement``,
    ``TASRespectNodeAffinityPreferred`` and ``ElasticJobsViaWorkloadSlicesWithTAS``. A workload
    whose flavor's Topology crosses the main tree is placed in that constraint tree."""
    from toposolve.engines.common.mirror import mirror_result

    gates = profile.kueue
    return mirror_result(
        problem, profile, options,
        lambda p: run_kueue(
            p,
            least_free_capacity=gates.gate("TASProfileMixed"),
            balanced_placement=gates.gate("TASBalancedPlacement"),
            node_affinity_preferred=gates.gate("TASRespectNodeAffinityPreferred"),
            elastic_slices=gates.gate("ElasticJobsViaWorkloadSlicesWithTAS"),
        ),
        "kueue",
        crossing=True,
    )

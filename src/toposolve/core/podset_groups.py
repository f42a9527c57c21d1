"""Kueue podset groups (a leader podset beside its workers), elastic Workloads' podsets and
inactive ClusterQueues, as the reader and the mirror see them."""

from __future__ import annotations

GROUP_LABEL = "toposolve.io/podset-group"  # tasks of one podset group carry the same value
# the podsets of an elastic Workload (``kueue.x-k8s.io/elastic-job: "true"``) carry their
# topology request's kind: "required", "preferred" or "unconstrained"
ELASTIC_LABEL = "toposolve.io/kueue-elastic"
# a podset whose topology request sets ``unconstrained`` beside a required or preferred level
# (a Workload object): Kueue's TAS keeps the level and runs its unconstrained algorithm
UNCONSTRAINED_LABEL = "toposolve.io/kueue-unconstrained"
# + the unit's name: the GangGroup of a podset with its own level and slices in a workload of
# several podsets (its slices below it); the mirror reads its level as the podset's, not a layer
PODSET_GANG_PREFIX = "podset-"


def group_roles(counts: list[int]) -> tuple[int, int]:
    """(workers, leader) positions in a podset group of two podsets in spec order.

    As Kueue's ``findLeaderAndWorkers``: the second podset leads unless it has more pods than the
    first.
    """
    return (1, 0) if counts[1] > counts[0] else (0, 1)


def is_group(counts: list[int]) -> bool:
    """Whether podsets of these pod counts form a Kueue podset group: two, one with a single pod."""
    return len(counts) == 2 and 1 in counts


def inactive_message(cluster_queue: str) -> str:
    """Kueue's message on a workload of an inactive ClusterQueue (kueue@ff69552
    ``pkg/scheduler/scheduler.go:680``)."""
    return f"ClusterQueue {cluster_queue} is inactive"

"""A slice that already runs some pods (issue 19 §1): its missing pods go only into the
slice-level domain holding its running pods (Kueue's requiredReplacementDomain), or wait.

Cluster: seed 000's Example-1 tree (racks s0..s3 of two 8-GPU nodes; s0 = node0, node1). Job
``w``: 2 partitions (slices) of 2 one-GPU-node pods, each partition hard in one rack; partition
0 runs on node2, node3 (s1) and partition 1's first pod on node0 (s0)."""

from __future__ import annotations

import pytest
from builders import GPU, example1_tree, gang, hard, nodes, partitioned

import toposolve
from toposolve.core.instance import Instance, Job, NetworkTopology


def partly_running(job_topology: NetworkTopology | None) -> Job:
    job = partitioned("w", partitions=2, size=2, job_topology=job_topology,
                      partition_topology=hard(1), min_available=4, requests={GPU: 8})
    job.tasks[0].running = {0: "node2", 1: "node3", 2: "node0"}
    return job


@pytest.mark.parametrize("job_topology", [None, hard(2), hard(3)])
def test_a_slice_in_a_full_rack_waits(job_topology):
    """node1, the only other node of s0, is full: the missing pod may not go to another rack
    (the mirror used to bind it in s2, and the checker refused the plan)."""
    filler = gang("filler", 1, gpus=8, running={0: "node1"})
    inst = Instance(nodes=nodes(8), hypernodes=example1_tree(),
                    jobs=[partly_running(job_topology), filler])
    plan = toposolve.solve(inst, "kueue")
    assert plan.bindings == []
    assert not plan.job("default/w").placed


@pytest.mark.parametrize("job_topology", [None, hard(2), hard(3)])
def test_a_slice_with_room_in_its_rack_is_completed_there(job_topology):
    inst = Instance(nodes=nodes(8), hypernodes=example1_tree(),
                    jobs=[partly_running(job_topology)])
    plan = toposolve.solve(inst, "kueue")
    assert [(b.pod, b.node) for b in plan.bindings] == [("default/w-t0-3", "node1")]

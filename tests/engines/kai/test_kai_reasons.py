"""KAI's pending reasons name real domains (issue 23 §2: one leaked the internal root name)."""

from __future__ import annotations

from builders import gang, leaf, nodes

import toposolve
from toposolve.core.instance import Instance, NetworkTopology


def test_a_job_the_whole_cluster_cannot_hold_names_the_cluster():
    inst = Instance(nodes=nodes(4), hypernodes=[leaf("s0", ["node0", "node1"]),
                                                leaf("s1", ["node2", "node3"])],
                    jobs=[gang("big", 6, topology=NetworkTopology(mode="soft"))])
    (job,) = toposolve.solve(inst, "kai").jobs
    assert job.reason == "not enough resources in the cluster to allocate the job"
    assert "<" not in job.reason

"""Pending reasons name the limit that really blocks a job whose SubJobs have their own limit.

Cluster: two spines (tier 2) of two leaves (tier 1) each, under one top (tier 3); every node has
8 GPUs. The job: two partitions of 8 pods × 8 GPUs, each hard at tier 1, the job hard at tier 2.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import GPU, gang, hard, inner, instance, leaf, nodes, partitioned

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.common.blockers import subjob_room


def cluster(leaf_size: int, busy_per_leaf: tuple[int, int, int, int]):
    tree = [
        leaf(f"leaf{k}", [f"node{leaf_size * k + i}" for i in range(leaf_size)]) for k in range(4)
    ]
    tree += [
        inner("spine0", ["leaf0", "leaf1"], 2),
        inner("spine1", ["leaf2", "leaf3"], 2),
        inner("top", ["spine0", "spine1"], 3),
    ]
    busy = [
        gang(f"busy{k}", count, running={i: f"node{leaf_size * k + i}" for i in range(count)})
        for k, count in enumerate(busy_per_leaf)
        if count
    ]
    job = partitioned(
        "train",
        partitions=2,
        size=8,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=16,
        requests={GPU: 8},
    )
    return instance(nodes(4 * leaf_size), tree, [*busy, job])


# leaf0 and leaf2 are busy: the free leaves, leaf1 and leaf3, sit under different spines
SPLIT_FREE_LEAVES = cluster(8, (8, 0, 8, 0))
# one leaf has room for a partition (leaf0, 10 free nodes); spine0 has 17 free nodes, enough pods
ONE_ROOMY_LEAF = cluster(10, (0, 3, 3, 3))


def test_subjob_room_counts_whole_subjobs_per_domain():
    problem = compile_problem(SPLIT_FREE_LEAVES)
    free = np.array([0] * 8 + [1] * 8 + [0] * 8 + [1] * 8)  # one 8-GPU pod per free node
    in_cluster, in_best, best = subjob_room(problem.topology, free, 8, subjob_tier=1, job_tier=2)
    assert (in_cluster, in_best, problem.topology.names[best]) == (2, 1, "spine0")
    # without a job limit the whole cluster is one domain
    assert subjob_room(problem.topology, free, 8, subjob_tier=1, job_tier=None)[:2] == (2, 2)
    # SubJobs held to tier 2 and the job to tier 2 too: each spine holds one
    assert subjob_room(problem.topology, free, 8, subjob_tier=2, job_tier=2)[:2] == (2, 1)
    # pods of a SubJob may spread over a domain: 4 free nodes per leaf are half a SubJob each
    half = np.array(([1] * 4 + [0] * 4) * 4)
    assert subjob_room(problem.topology, half, 8, subjob_tier=1, job_tier=2)[:2] == (0, 0)
    assert subjob_room(problem.topology, half, 8, subjob_tier=2, job_tier=2)[:2] == (2, 1)


NEEDS_TWO = (
    "needs 2 SubJobs of 8 pods (8 nvidia.com/gpu each), each within one HyperNode of tier ≤ 1"
)
BLAMED = {
    "job limit": (
        SPLIT_FREE_LEAVES,
        f"{NEEDS_TWO}, all within one HyperNode of tier ≤ 2 (the job's limit); "
        "{when}the best, spine0, has room for 1 (the whole cluster for 2)",
    ),
    "subjob limit": (ONE_ROOMY_LEAF, f"{NEEDS_TWO}; {{when}}the cluster has room for 1"),
}
# the heuristic counts the room its queue left the job; CP-SAT, the room before the plan
WHEN = {"heuristic": "when its turn came, ", "cpsat": ""}


@pytest.mark.parametrize("engine", list(WHEN))
@pytest.mark.parametrize("blocker", list(BLAMED))
def test_both_engines_blame_the_limit_that_blocks(blocker, engine):
    """Two free leaves under different spines: the job's limit; one roomy leaf: the SubJobs'
    limit."""
    inst, reason = BLAMED[blocker]
    job = toposolve.solve(inst, engine=engine, time_limit=10).job("default/train")
    assert not job.placed and job.reason == reason.format(when=WHEN[engine])


def test_the_job_fits_once_its_spine_has_two_roomy_leaves():
    """Control: free leaf0 too and the same job is placed in spine0 (the count is not the
    blocker)."""
    plan = toposolve.solve(cluster(8, (0, 0, 8, 0)), engine="heuristic")
    assert plan.job("default/train").placed and plan.job("default/train").hypernode == "spine0"

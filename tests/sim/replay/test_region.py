"""``--defrag region``: candidate domains of a target, ordered by how close they are to holding
it, and none when no move can admit it."""

from __future__ import annotations

import numpy as np

from tests.builders import GPU, example1, gang, hard
from toposolve.core.problem import compile_problem
from toposolve.sim.replay.region import candidate_region, target_domains


def _problem():
    # 8 nodes of 8 GPUs in leaves s0..s3 of 2 nodes (tier 1); both jobs pending
    return compile_problem(example1([gang("leafy", 2, topology=hard(1)), gang("loose", 1)]))


def _gpus(problem, per_node):
    out = np.zeros((problem.n_nodes, len(problem.resources)), dtype=np.int64)
    out[:, problem.resources.index(GPU)] = np.array(per_node) * 1000
    return out


def _job(problem, name):
    return next(cj.index for cj in problem.jobs if cj.key == f"default/{name}")


def _request(problem, j, pods):
    return problem.group_request[problem.jobs[j].groups[0]] * pods


def test_leaf_domains_closest_first_and_too_small_ones_left_out():
    p = _problem()
    j = _job(p, "leafy")
    assert not target_domains(p, j)[1]  # domains at tier 1, not nodes
    idle = _gpus(p, [0, 4, 8, 0, 0, 0, 4, 4])
    emptied = _gpus(p, [8, 8, 8, 8, 8, 0, 8, 8])  # node5 holds a job that may not move
    request = _request(p, j, 2)
    every = candidate_region(p, j, request, idle, emptied, None)
    # s2 (nodes 4, 5) cannot hold 16 GPUs even emptied
    assert every.nonzero()[0].tolist() == [0, 1, 2, 3, 6, 7]
    # s1 and s3 miss half the target, s0 three quarters; s1 before s3 (domain order)
    assert candidate_region(p, j, request, idle, emptied, 1).nonzero()[0].tolist() == [2, 3]
    assert candidate_region(p, j, request, idle, emptied, 2).nonzero()[0].tolist() == [2, 3, 6, 7]
    assert candidate_region(p, j, request, idle, _gpus(p, [8, 4] * 4), None) is None


def test_node_domains_until_they_hold_the_target_then_k_more():
    p = _problem()
    j = _job(p, "loose")
    assert target_domains(p, j)[1]
    idle = _gpus(p, [0, 4, 2, 0, 0, 0, 4, 6])
    emptied = _gpus(p, [8, 8, 8, 8, 8, 0, 8, 8])
    request = _request(p, j, 1)
    # node 7 misses 2 GPUs of 8, nodes 1 and 6 four, node 2 six; node 5 can never hold it
    assert candidate_region(p, j, request, idle, emptied, 2).nonzero()[0].tolist() == [1, 6, 7]
    assert candidate_region(p, j, request, idle, emptied, None).nonzero()[0].tolist() == [
        0, 1, 2, 3, 4, 6, 7]
    assert candidate_region(p, j, request, idle, _gpus(p, [4] * 8), 2) is None

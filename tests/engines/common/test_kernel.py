"""The shared engine kernel: one fit count, one tree sum, one UNLIMITED, one queue vector."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from builders import example1_tree, gang, instance, nodes

from toposolve.core.instance import Queue
from toposolve.core.limits import MAX_NODES, UNLIMITED
from toposolve.core.problem import compile_problem
from toposolve.core.topology import subtree_sums
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.common.queues import capability_items, capability_vector


def test_fit_counts_compare_only_requested_resources():
    free = np.array([[8, 100], [3, 0], [16, 5]])
    assert fit_in(free, np.array([2, 0])).tolist() == [4, 1, 8]


def test_negative_free_fits_nothing_and_infeasible_nodes_take_nothing():
    free = np.array([[-4, 10], [9, 10]])
    assert fit_in(free, np.array([3, 1])).tolist() == [0, 3]
    assert fit_in(free, np.array([3, 1]), np.array([True, False])).tolist() == [0, 0]


def test_a_request_of_nothing_fits_unlimited_pods():
    counts = fit_in(np.array([[0, 0], [5, 1]]), np.array([0, 0]))
    assert counts.tolist() == [UNLIMITED, UNLIMITED]


def test_counts_are_clipped_so_the_tree_sum_cannot_overflow():
    members = sp.csr_matrix(np.ones((1, 3), dtype=np.int64))
    values = np.array([1 << 62, 5, 1 << 62], dtype=np.int64)
    assert subtree_sums(members, values).tolist() == [2 * UNLIMITED + 5]
    assert MAX_NODES * UNLIMITED < np.iinfo(np.int64).max


def test_amounts_are_summed_in_float_and_keep_their_columns():
    members = sp.csr_matrix(np.array([[1, 1, 0], [0, 1, 1]], dtype=np.int64))
    amounts = np.array([[2e18, 1.0], [2e18, 2.0], [0.0, 4.0]])
    sums = subtree_sums(members, amounts)
    assert sums.shape == (2, 2)
    assert sums[0].tolist() == [4e18, 3.0] and sums[1].tolist() == [2e18, 6.0]


def test_booleans_are_counted():
    members = sp.csr_matrix(np.array([[1, 1, 1]], dtype=np.int64))
    assert subtree_sums(members, np.array([True, False, True])).tolist() == [2]


def test_queue_capability_in_the_queues_own_order():
    inst = instance(nodes(8), example1_tree(), [gang("a", 1)])
    problem = compile_problem(inst)
    gpu, cpu = problem.resource_index["nvidia.com/gpu"], problem.resource_index["cpu"]
    queue = Queue(name="q", capability={"nvidia.com/gpu": "16", "cpu": "8", "unknown/x": "1"})
    assert capability_items(problem, queue) == [(gpu, 16_000), (cpu, 8_000)]
    vec = capability_vector(problem, queue)
    assert vec[gpu] == 16_000 and vec[cpu] == 8_000
    assert (np.delete(vec, [gpu, cpu]) == -1).all()
    assert capability_vector(problem, Queue(name="free")) is None

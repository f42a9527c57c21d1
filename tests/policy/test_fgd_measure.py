"""The shared FGD measure: the target-workload cut and the pooled reading of device states."""

from __future__ import annotations

import numpy as np

from toposolve.policy.fgd_measure import (
    TargetWorkload,
    device_parts,
    frag_from_parts,
    pooled_parts,
    popular_shapes,
)


def test_popular_shapes_cut_and_ties():
    # 10 pods: a (5) + b (3) = 80 % < 95 %, c and d tie at 1: the larger shape first
    kept = popular_shapes({"a": 5, "b": 3, "c": 1, "d": 1})
    assert kept == [("a", 5), ("b", 3), ("d", 1), ("c", 1)]
    assert popular_shapes({"a": 5, "b": 3, "c": 1, "d": 1}, threshold=80) == [("a", 5), ("b", 3)]


def test_pooled_parts_are_device_parts_of_the_pooled_state():
    rng = np.random.default_rng(1)
    free = rng.integers(0, 8001, 60)
    milli = np.array([0, 100, 250, 500, 999, 1000])
    devices = np.array([[1000] * (f // 1000) + [f % 1000] + [0] * (8 - f // 1000)
                        for f in free.tolist()])
    for ours, theirs in zip(pooled_parts(free, milli), device_parts(devices, milli),
                            strict=True):
        # CPU-only shapes (milli 0) count every device, empty ones included: never hosted
        np.testing.assert_array_equal(ours[:, 1:], theirs[:, 1:])


def test_memory_counts_only_when_given():
    target = TargetWorkload(cpu=np.array([0]), milli=np.array([500]), count=np.array([1]),
                            weight=np.array([1]), memory=np.array([10]))
    nfit, small = pooled_parts(np.array([700]), target.milli)
    access = target.model_access.T[np.zeros(1, dtype=np.int64)]
    cpu = np.array([0])
    assert frag_from_parts(nfit, small, np.array([700]), cpu, access, target,
                           np.array([5])).tolist() == [700]
    assert frag_from_parts(nfit, small, np.array([700]), cpu, access, target).tolist() == [0]

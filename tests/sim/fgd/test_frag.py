"""FGD's fragmentation measure, worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from toposolve.policy.fgd_measure import TargetWorkload, device_parts
from toposolve.sim.fgd.frag import frag_after_share, node_frag


def workload() -> TargetWorkload:
    """Half 0.5-GPU shares (1 CPU), a quarter whole GPUs (2 CPUs), a quarter CPU-only pods."""
    return TargetWorkload(cpu=np.array([1000, 2000, 500]), milli=np.array([500, 1000, 0]),
                       count=np.array([1, 1, 0]), access=np.array([[1, 1], [1, 1], [0, 0]], bool),
                       weight=np.array([0.5, 0.25, 0.25]))


def test_node_frag_by_hand():
    tp = workload()
    left = np.array([[300, 1000], [300, 1000], [300, 400], [0, 0]])
    cpu = np.array([4000, 1500, 4000, 4000])
    frag = node_frag(cpu, left, np.zeros(4, dtype=np.int64), tp)
    # node 0: shares and whole GPUs fit, only device 0's 300 is lost to them; CPU pods: all 1300
    # node 1: 1.5 CPUs: whole GPUs (2 CPUs) lack CPU, so all 1300 count for them
    # node 2: no device fits a share or a whole GPU: all 700 count for every shape
    assert frag.tolist() == pytest.approx([0.5 * 300 + 0.25 * 300 + 0.25 * 1300,
                                           0.5 * 300 + 0.25 * 1300 + 0.25 * 1300,
                                           0.5 * 700 + 0.25 * 700 + 0.25 * 700, 0.0])


def test_model_not_allowed_counts_everything():
    tp = workload()
    tp = TargetWorkload(cpu=tp.cpu, milli=tp.milli, count=tp.count, weight=tp.weight,
                        access=np.array([[1, 0], [1, 0], [0, 0]], bool))
    frag = node_frag(np.array([4000]), np.array([[300, 1000]]), np.array([1]), tp)
    assert frag.tolist() == [1300.0]


def test_incremental_after_share_equals_recount():
    tp = workload()
    rng = np.random.default_rng(0)
    left = rng.choice([0, 100, 250, 500, 700, 1000], size=(50, 4))
    cpu = rng.integers(0, 5000, size=50)
    model = np.zeros(50, dtype=np.int64)
    nfit, small = device_parts(left, tp.milli)
    after = frag_after_share(nfit, small, left.sum(axis=1).astype(float), cpu, left,
                             tp.access.T[model], 700, 250, tp)
    for d in range(4):
        moved = left.copy()
        moved[:, d] -= 250
        ok = left[:, d] >= 250
        expected = node_frag(cpu - 700, moved, model, tp)
        assert after[ok, d] == pytest.approx(expected[ok])

"""Seed 002 §3.4.3 ROI tables, computed by hand from the seed's formulas.

Vectors are (cpu, memory GB, gpu) in the seed's units; only ratios matter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from toposolve.engines.volcano.evict.roi import (
    ROI_THRESHOLD,
    compare_roi,
    global_cost,
    local_gain,
    requested,
    roi,
)


def v(cpu=0, mem=0, gpu=0):
    return np.array([cpu, mem, gpu], dtype=float)


def test_example1_distributed_job_loses_to_a_local_one():
    need = v(gpu=2)
    a = roi(v(gpu=2), v(gpu=4), need)  # 1.0 / 2.0
    b = roi(v(gpu=2), v(gpu=2), need)  # 1.0 / 1.0
    assert a == pytest.approx(0.5) and b == pytest.approx(1.0)
    assert compare_roi(b, a) == -1  # B wins


def test_example2_partial_fit_beats_a_wasteful_full_fit():
    need = v(cpu=10)
    assert local_gain(v(cpu=10), need) == pytest.approx(1.0)
    assert global_cost(v(cpu=20), need) == pytest.approx(2.0)
    c = roi(v(cpu=10), v(cpu=20), need)
    assert local_gain(v(cpu=2), need) == pytest.approx(0.2)
    assert global_cost(v(cpu=2), need) == pytest.approx(0.2)
    d = roi(v(cpu=2), v(cpu=2), need)
    assert (c, d) == (pytest.approx(0.5), pytest.approx(1.0))
    assert compare_roi(d, c) == -1


def test_example3_multi_resource_tie():
    need = v(cpu=4, mem=16)
    assert local_gain(v(cpu=4, mem=4), need) == pytest.approx(1.25)
    assert global_cost(v(cpu=4, mem=4), need) == pytest.approx(1.25)
    assert local_gain(v(cpu=2, mem=8), need) == pytest.approx(1.0)
    e = roi(v(cpu=4, mem=4), v(cpu=4, mem=4), need)
    f = roi(v(cpu=2, mem=8), v(cpu=2, mem=8), need)
    assert e == pytest.approx(1.0) and f == pytest.approx(1.0)
    assert compare_roi(e, f) == 0


def test_example4_unrequested_gpu_is_ignored():
    need = v(cpu=4)
    g = roi(v(cpu=4), v(cpu=4), need)
    h = roi(v(cpu=4, gpu=1), v(cpu=4, gpu=1), need)  # 4/4 + 1/0 (ignored)
    assert g == pytest.approx(1.0) and h == pytest.approx(1.0)
    assert compare_roi(g, h) == 0


def test_safe_bundle_has_infinite_roi_and_pods_do_not_count():
    need = np.array([4.0, 1000.0])  # (cpu, pods)
    mask = requested(need, ("cpu", "pods"))
    assert mask.tolist() == [True, False]
    assert math.isinf(roi(np.array([4.0, 1000.0]), np.zeros(2), need, mask))
    assert roi(np.array([2.0, 1000.0]), np.array([8.0, 4000.0]), need, mask) == pytest.approx(
        0.5 / 2.0
    )


def test_threshold_ignores_differences_up_to_five_percent():
    assert ROI_THRESHOLD == 0.05
    assert compare_roi(0.54, 0.5) == 0
    assert compare_roi(0.56, 0.5) == -1
    assert compare_roi(0.5, 0.56) == 1
    assert compare_roi(math.inf, 3.0) == -1
    assert compare_roi(math.inf, math.inf) == 0

"""Replay records: JSON round trip, DataFrames, summary figures."""

from __future__ import annotations

import pytest

from toposolve.generate import generate
from toposolve.sim.replay import read_records, replay, write_records
from toposolve.sim.replay.summary import summarise
from toposolve.sim.replay.synthetic import synthetic_trace


@pytest.fixture(scope="module")
def record():
    cluster = generate("superpod", nodes=32, load=0.0, leaf_size=8, fanout=(2,))
    return replay(
        cluster,
        synthetic_trace(cluster, jobs=12, load=1.3, duration="1h", seed=2),
        "volcano",
        cycle="5m",
    )


def test_json_round_trip(record, tmp_path):
    path = tmp_path / "r.json"
    write_records([record, record], path)
    again = read_records(path)
    assert len(again) == 2 and again[0].to_dict() == record.to_dict()


def test_frames_hold_timeline_cycles_and_jobs(record):
    frames = record.frames()
    assert set(frames) == {"timeline", "cycles", "jobs"}
    assert len(frames["jobs"]) == 12 and {"wait", "domain_tier", "pair_lca_tier"} <= set(
        frames["jobs"].columns
    )
    assert len(frames["cycles"]) == record.summary["cycles"]


def test_summary_by_hand():
    jobs = [
        {
            "status": "done",
            "start": 0.0,
            "wait": 0.0,
            "completion": 100.0,
            "pods": 2,
            "accelerators": 16.0,
            "priority": 10,
            "evicted_pods": 0,
            "starts": 1,
            "lost_gpu_seconds": 0.0,
            "domain_tier": 1,
            "pair_lca_tier": 0.0,
        },
        {
            "status": "done",
            "start": 50.0,
            "wait": 40.0,
            "completion": 90.0,
            "pods": 4,
            "accelerators": 32.0,
            "priority": 1000,
            "evicted_pods": 4,
            "starts": 2,
            "lost_gpu_seconds": 3600.0 * 8,
            "domain_tier": 2,
            "pair_lca_tier": 1.0,
        },
        {
            "status": "dropped",
            "start": None,
            "wait": None,
            "completion": None,
            "pods": 1,
            "accelerators": 8.0,
            "priority": 10,
            "evicted_pods": 0,
            "starts": 0,
            "lost_gpu_seconds": 0.0,
            "domain_tier": None,
            "pair_lca_tier": None,
        },
    ]
    timeline = [
        {"t": 0.0, "allocation_ratio": 0.5, "arrived_load": 0.5, "pending_jobs": 2},
        {"t": 50.0, "allocation_ratio": 1.0, "arrived_load": 1.2, "pending_jobs": 0},
    ]
    s = summarise(
        jobs,
        timeline,
        [{"seconds": 0.5, "status": "FEASIBLE"}, {"seconds": 0.1, "status": "FEASIBLE"}],
        end=100.0,
    )
    assert s["jobs_started"] == 2 and s["jobs_dropped"] == 1 and s["jobs_done"] == 2
    assert s["mean_utilisation"] == pytest.approx(0.75)  # 0.5 for 50 s, 1.0 for 50 s
    assert s["mean_pending_jobs"] == pytest.approx(1.0)
    assert s["wait_mean"] == 20.0 and s["wait_mean_by_priority"] == {"1000": 40.0, "10": 0.0}
    assert s["restarts"] == 1 and s["lost_gpu_hours"] == 8.0 and s["evicted_pods"] == 4
    assert s["mean_domain_tier"] == 1.5 and s["final_allocation_ratio"] == 1.0
    assert s["cycle_seconds_median_after_first"] == 0.1
    assert s["allocation_at_fgd_point"] is None  # arrived load never reached 130 %
    timeline.append({"t": 80.0, "allocation_ratio": 0.9, "arrived_load": 1.4, "pending_jobs": 0})
    timeline.append({"t": 90.0, "allocation_ratio": 0.0, "arrived_load": 1.6, "pending_jobs": 0})
    s = summarise(jobs, timeline, [{"seconds": 0.5, "status": "FEASIBLE"}], end=100.0)
    assert s["allocation_at_fgd_point"] == 0.9  # FGD's figure, not the last sample's 0 %
    assert s["peak_allocation_ratio"] == 1.0 and s["final_allocation_ratio"] == 0.0

"""The replay loop: every cycle checked, deterministic, folding changes nothing, events in time."""

from __future__ import annotations

import logging

import pytest

from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.formats.trace.model import Trace, TraceJob
from toposolve.formats.trace.native import load_trace_documents
from toposolve.generate import generate
from toposolve.sim.replay import Replay, ReplayOptions, replay
from toposolve.sim.replay.engine import cycle_solver

PRIORITIES = [{"name": "high", "value": 1000}, {"name": "low", "value": 10}]


@pytest.fixture(scope="module")
def cluster():
    # 32 nodes of 8 GPUs, leaves of 8 nodes under 2 spines
    return generate("superpod", nodes=32, load=0.0, seed=0, leaf_size=8, fanout=(2,))


def trace_of(*jobs):
    return load_trace_documents(
        [
            {
                "apiVersion": "toposolve/v1",
                "kind": "Trace",
                "priorityClasses": PRIORITIES,
                "jobs": list(jobs),
            }
        ],
        "t",
    )


def gang(
    name, pods, *, gpus=8, arrival=0, duration="5m", tier=None, count=1, every=0, priority="low"
):
    entry = {
        "name": name,
        "count": count,
        "arrival": arrival,
        "every": every,
        "priorityClass": priority,
        "tasks": [{"name": "w", "replicas": pods, "requests": {"nvidia.com/gpu": gpus}}],
    }
    if duration is not None:
        entry["duration"] = duration
    if tier is not None:
        entry["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
    return entry


MIXED = (
    gang("big-{i}", 8, tier=1, count=4, every=30, priority="high"),
    gang("small-{i}", 2, gpus=4, arrival=10, count=20, every=15, duration="2m"),
    gang("wide-{i}", 12, tier=2, arrival=40, count=3, every=60, duration="3m"),
)


def checked_solver(engine, checks, **kw):
    solve = cycle_solver(
        engine, None, time_limit=kw.pop("time_limit", None), seed=0, evict=kw.pop("evict", None)
    )

    def run(problem):
        plan = solve(problem)
        checks.append(
            check_plan(
                problem.instance,
                plan,
                eviction_mode=plan.stats.get("eviction", {}).get("mode", "both"),
            )
        )
        return plan

    return run


def without_times(record):
    data = record.to_dict()
    data["summary"] = {
        k: v for k, v in data["summary"].items() if "seconds" not in k and k != "wall_time_s"
    }
    data["cycles"] = [{k: v for k, v in c.items() if "seconds" not in k} for c in data["cycles"]]
    return data


@pytest.mark.parametrize("engine", ["volcano", "cpsat"])
def test_every_cycle_is_checked_and_valid(cluster, engine):
    checks = []
    record = Replay(
        cluster,
        trace_of(*MIXED),
        checked_solver(engine, checks, time_limit=1),
        ReplayOptions(cycle=10),
    ).run()
    assert len(checks) == record.summary["cycles"] > 5
    assert all(v == [] for v in checks)
    assert record.summary["jobs_done"] == 27


def test_the_same_trace_replays_to_the_same_record(cluster):
    first = replay(cluster, trace_of(*MIXED), "volcano", cycle=10)
    second = replay(cluster, trace_of(*MIXED), "volcano", cycle=10)
    assert without_times(first) == without_times(second)


def test_folding_running_jobs_changes_no_decision(cluster):
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None)
    folded = Replay(cluster, trace_of(*MIXED), solve, ReplayOptions(cycle=10, fold=True)).run()
    listed = Replay(cluster, trace_of(*MIXED), solve, ReplayOptions(cycle=10, fold=False)).run()
    assert [(j["job"], j["start"], j["domain_tier"]) for j in folded.jobs] == [
        (j["job"], j["start"], j["domain_tier"]) for j in listed.jobs
    ]
    assert folded.timeline == listed.timeline


def test_a_job_starts_at_the_first_cycle_after_room_frees_up(cluster):
    # the first gang fills the cluster for 95 s; the second waits for the cycle at 100 s
    record = replay(
        cluster,
        trace_of(gang("full", 32, duration=95), gang("next", 16, arrival=5)),
        "volcano",
        cycle=10,
    )
    rows = {j["job"]: j for j in record.jobs}
    assert rows["default/full"]["start"] == 0 and rows["default/full"]["end"] == 95
    assert rows["default/next"]["start"] == 100 and rows["default/next"]["wait"] == 95
    assert record.summary["jobs_done"] == 2 and record.summary["end_time"] == 400


def test_hard_tier_is_kept_and_reported(cluster):
    record = replay(cluster, trace_of(*MIXED), "volcano", cycle=10)
    for row in record.jobs:
        if row["job"].startswith("default/big"):
            assert row["domain_tier"] == 1 and row["leaves"] == 1


def test_max_wait_zero_gives_one_attempt(cluster):
    record = replay(
        cluster,
        trace_of(gang("full", 32, duration=None), gang("late", 1, arrival=20)),
        "volcano",
        cycle=10,
        max_wait=0,
    )
    rows = {j["job"]: j for j in record.jobs}
    assert rows["default/late"]["status"] == "dropped"
    assert record.summary["final_allocation_ratio"] == 1.0
    assert record.summary["final_arrived_load"] == pytest.approx(264 / 256)


def test_eviction_requeues_broken_gangs_and_counts_lost_work(cluster):
    trace = trace_of(
        gang("low-{i}", 8, count=4, duration="1h"),
        gang("urgent", 8, arrival=600, priority="high", duration="10m"),
    )
    record = replay(cluster, trace, "volcano", cycle=10, evict="preempt")
    rows = {j["job"]: j for j in record.jobs}
    assert rows["default/urgent"]["start"] == 600
    victims = [r for r in rows.values() if r["starts"] > 1]
    assert victims, "a low-priority gang was evicted and started again"
    assert record.summary["restarts"] == len(victims)
    assert record.summary["lost_gpu_hours"] == pytest.approx(
        sum(r["lost_gpu_seconds"] for r in victims) / 3600
    )
    assert all(r["lost_gpu_seconds"] == 600 * 64 for r in victims)
    assert record.summary["jobs_done"] == 5


def test_until_stops_the_replay(cluster):
    record = replay(
        cluster, trace_of(gang("a-{i}", 1, count=50, every=60)), "volcano", cycle=10, until="10m"
    )
    assert record.summary["end_time"] <= 600
    assert record.summary["jobs"] == 50 and record.summary["jobs_started"] == 11


@pytest.fixture(scope="module")
def busy():
    """A cluster file with running jobs (run-NNN) and pending ones (job-NNN)."""
    busy = generate("superpod", nodes=32, load=0.5, seed=2, leaf_size=8, fanout=(2,),
                    occupancy=0.3)
    assert any(not any(t.running for t in job.tasks) for job in busy.jobs)
    return busy


def test_the_clusters_pending_jobs_are_dropped_with_one_warning(busy, caplog):
    running = [job.key for job in busy.jobs if any(t.running for t in job.tasks)]
    pending = len(busy.jobs) - len(running)
    # a trace job named like a pending job of the cluster (the synthetic trace's job-000)
    trace = trace_of(gang("job-{i}", 2, count=2, duration="1m"))
    with caplog.at_level(logging.WARNING, logger="toposolve.sim.replay.loop"):
        record = replay(busy, trace, "volcano", cycle=10)
    assert [r.getMessage() for r in caplog.records] == [
        f"{busy.source}: {pending} pending job(s) of the cluster dropped (a replay's workload "
        f"is its trace; the {len(running)} with running pods stay)"
    ]
    assert [j["job"] for j in record.jobs] == ["default/job-0", "default/job-1"]
    assert record.summary["jobs_started"] == 2


def test_a_trace_job_named_like_a_running_cluster_job_is_refused(busy):
    name = next(job.name for job in busy.jobs if any(t.running for t in job.tasks))
    with pytest.raises(InputError, match=f"Job/default/{name}: name: a running job of the clu"):
        replay(busy, trace_of(gang(name, 1)), "volcano")


def test_two_trace_jobs_of_one_name_are_refused_not_replayed_forever(cluster):
    one = trace_of(gang("a", 1, duration="1h"))
    twin = TraceJob(one.jobs[0].job.model_copy(deep=True), 50.0, 1.0)
    with pytest.raises(InputError, match="Job/default/a: name: another job has the same name"):
        replay(cluster, Trace([*one.jobs, twin], "twins"), "volcano")

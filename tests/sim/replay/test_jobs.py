"""``JobRun`` run-time arithmetic: saved progress, checkpoint saves and restore time."""

from __future__ import annotations

from toposolve.formats.trace.native import load_trace_documents
from toposolve.sim.replay.jobs import JobRun


def one_job_run(duration="10h"):
    trace = load_trace_documents([{"apiVersion": "toposolve/v1", "kind": "Trace", "jobs": [
        {"name": "j", "arrival": 0, "duration": duration,
         "tasks": [{"name": "w", "replicas": 1, "requests": {"nvidia.com/gpu": 1}}]}]}], "t")
    return JobRun.of(0, trace.jobs[0], {})


def test_a_restored_run_makes_no_progress_until_its_restore_time_is_over():
    run = one_job_run()
    run.saved, run.restore, run.overhead, run.last_start = 3000.0, 300.0, 1380.0, 7200.0
    assert run.progress(7200.0) == run.progress(7500.0) == 3000.0
    assert run.progress(7600.0) == 3100.0
    # restore, then the 10 h of work and 23 saves, less the 3,000 s kept
    assert run.run_left() == 300 + 36000 + 1380 - 3000
    assert run.expected_end() == 7200 + 300 + 36000 + 1380 - 3000


def test_without_costs_the_arithmetic_is_the_plain_one():
    run = one_job_run("1h")
    run.saved, run.last_start = 600.0, 100.0
    assert run.progress(160.0) == 660.0 and run.expected_end() == 100 + 3600 - 600
    assert one_job_run(None).run_left() is None

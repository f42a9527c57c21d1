"""Replay a workload over time: ``toposolve.replay(cluster, trace, engine=...)``.

A discrete-event simulation (:mod:`.loop`): jobs of a :class:`Trace` arrive, every scheduling
cycle an engine places what it places on the running cluster, placed jobs run for their duration
and release their nodes. Every cycle's plan is checked. The result is a :class:`ReplayRecord`
(summary, timeline, cycles, jobs; JSON, or pandas DataFrames). Traces: the native YAML/CSV
formats (:func:`load_trace`), the Alibaba openb trace (:func:`openb_trace`), or a synthetic
one (:func:`synthetic_trace`). See ``docs/replay.md``.
"""

from __future__ import annotations

from typing import Any

from toposolve.core.errors import require_type
from toposolve.core.instance import Instance
from toposolve.formats.trace.model import Trace, TraceJob, parse_duration
from toposolve.policy.profiles import Profile
from toposolve.sim.replay.defrag import DefragPolicy, parse_defrag_policy
from toposolve.sim.replay.engine import cycle_solver, engine_name
from toposolve.sim.replay.failures import FailurePolicy, parse_failure_policy
from toposolve.sim.replay.loop import Replay, ReplayOptions
from toposolve.sim.replay.record import ReplayRecord, read_records, write_records


def replay(
    cluster: Instance,
    trace: Trace,
    engine: str = "volcano",
    *,
    profile: Profile | str | None = None,
    cycle: float | str = 10.0,
    time_limit: float | None = None,
    evict: str | None = None,
    max_wait: float | str | None = None,
    until: float | str | None = None,
    seed: int = 0,
    wall_factor: float = 1.0,
    defrag: DefragPolicy | str | None = None,
    failures: FailurePolicy | str | None = None,
) -> ReplayRecord:
    """Replay ``trace`` on ``cluster`` with ``engine``.

    Parameters
    ----------
    cluster
        The cluster: its nodes, topology and jobs with running pods, there from the start
        (their running pods keep their nodes); its pending jobs are dropped (one warning line).
    trace
        The jobs that arrive.
    engine, profile
        The engine (``volcano``/``heuristic``, ``kueue``, ``kai`` or ``cpsat``) and profile.
    cycle
        Seconds between scheduling cycles (or ``"10s"``).
    time_limit
        Each cycle's time limit (deterministic units: the replay is reproducible).
    evict
        ``preempt``, ``reclaim`` or ``both``.
    max_wait
        Drop a job still pending this long after it (re)joined the queue (0: one attempt).
    until
        Stop at this time.
    seed
        The engine's seed.
    wall_factor
        Each cycle's wall-clock cap in multiples of the time limit
        (:func:`.engine.cycle_solver`).
    defrag
        A :class:`DefragPolicy` or its text (``"every=1,max-moves=4"``): after every N-th
        engine call, :func:`toposolve.defrag` admits jobs blocked by fragmentation by moving
        running ones (``docs/replay.md``).
    failures
        A :class:`FailurePolicy` or its text (``"0.5,repair=defrag,down=1h"`` style:
        ``R[,repair=defrag|evict][,down=S][,scope=node|TIER[:RATE][+…]]``): nodes — or with
        ``scope`` the HyperNodes of a tier, all their nodes together — fail R (or that scope's
        RATE) times a day each (drawn from ``seed``); the jobs hit are repaired by
        :func:`toposolve.defrag` or evicted whole.

    Returns
    -------
    ReplayRecord
        Summary, timeline, cycles and jobs.
    """
    require_type(cluster, Instance, "cluster")
    require_type(trace, Trace, "trace")
    options = ReplayOptions(
        cycle=parse_duration(cycle),
        max_wait=None if max_wait is None else parse_duration(max_wait),
        until=None if until is None else parse_duration(until),
        evict=evict,
        defrag=parse_defrag_policy(defrag) if isinstance(defrag, str) else defrag,
        seed=seed,
        failures=parse_failure_policy(failures) if isinstance(failures, str) else failures,
    )
    solver = cycle_solver(engine, profile, time_limit=time_limit, seed=seed, evict=evict,
                          wall_factor=wall_factor)
    engine_name(engine)  # InputError for an unknown engine before any work
    return Replay(cluster, trace, solver, options, engine=engine).run()


def load_trace(path: Any) -> Trace:
    """Read a trace file: native YAML/JSON (``kind: Trace``), native CSV, or an openb CSV."""
    from toposolve.formats.trace.files import load_trace_file

    return load_trace_file(path)


__all__ = [
    "DefragPolicy",
    "FailurePolicy",
    "Replay",
    "ReplayOptions",
    "ReplayRecord",
    "Trace",
    "TraceJob",
    "load_trace",
    "read_records",
    "replay",
    "write_records",
]

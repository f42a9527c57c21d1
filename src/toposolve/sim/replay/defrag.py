"""The replay's defragmentation policy (``--defrag every=N,...``): which cycles, which targets.

On every N-th engine call of a replay, after the engine's plan is applied, the pending jobs
that are blocked by fragmentation only (the idle resources of the nodes they may use, summed,
would hold them) become :func:`toposolve.defrag` targets, highest priority first; its checked
plan moves running jobs and binds the admitted targets. What a move does to a job's progress
is ``restart``: ``lose`` (it restarts from scratch: lost work, like a broken gang), ``keep``, or
``checkpoint:INTERVAL`` (it loses the run since its last checkpoint: :mod:`.restart`).
Rationale and measurements: ``docs/replay.md`` and ``docs/defrag.md`` ("Over time").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.defrag import DEFRAG_ENGINES, defrag
from toposolve.formats.trace.model import parse_duration
from toposolve.sim.replay.cycle import CycleBuilder
from toposolve.sim.replay.jobs import JobRun
from toposolve.sim.replay.options import choice, number, option_values
from toposolve.sim.replay.reserve import RESERVE_MODES
from toposolve.sim.replay.restart import Restart, parse_restart

COST_MODES = ("work", "pods")
# named policies (docs/defrag.md, "Over time": a measured trade, fewer moves)
NAMED = {"waiting": "every=1,restart=keep,horizon=1h"}
SPEC = ("every=N[,max-moves=K][,engine=cpsat|greedy][,time-limit=S][,targets=T]"
        "[,restart=lose|keep|checkpoint:I[:save=S][:restore=R]][,cost=work|pods]"
        "[,max-lost=H]"
        "[,wall-factor=F][,horizon=S][,max-cost-per-gpu=C][,region=all|K]"
        "[,retry=always|changed][,reserve=none|head|ahead][,gain=F][,jump=yes|no], "
        "or a named policy: "
        f"{', '.join(NAMED)}")
OPTIONS = ("every", "max-moves", "engine", "time-limit", "targets", "restart", "cost",
           "max-lost", "wall-factor", "horizon", "max-cost-per-gpu", "region", "retry",
           "reserve", "gain", "jump")
RETRY_MODES = ("always", "changed")


@dataclass(frozen=True)
class DefragPolicy:
    """When and how a replay defragments (``docs/replay.md``, "Defragmentation over time")."""

    every: int = 1  # try on every N-th engine call
    max_moves: int | None = None  # jobs moved per defrag call; None: no limit
    engine: str = "cpsat"
    time_limit: float = 2.0  # seconds per defrag call (CP-SAT)
    targets: int = 1  # blocked pending jobs offered per call, from the head of the queue
    restart: str = "lose"  # what a moved job's progress becomes: lose | keep | checkpoint:I
    cost: str = "work"  # a job's move cost: pods + GPU-hours a restart loses (work) | pods
    max_lost: float | None = None  # GPU-hours a move may throw away; None: any
    wall_factor: float = 10.0  # CP-SAT's wall-clock cap in multiples of time_limit
    # only for a job the engine would not start within this many seconds with the running
    # jobs' projected departures; None: whenever it is blocked by fragmentation
    horizon: float | None = None
    # apply a plan only if its move cost per admitted accelerator is at most this; None: any
    max_cost_per_gpu: float | None = None
    # list only the movable jobs in the targets' candidate domains (0: all candidates, K: the K
    # closest to holding the target) and skip a target no move can admit; None: every job
    region: int | None = None
    # offer again targets no move admitted: at every call (always), or only once a pod left,
    # arrived or failed in their candidate domains since (changed: the call is skipped)
    retry: str = "always"
    # apply a plan only if it delays no projected start of the head of the queue (head) or of
    # any job queued ahead of its targets (ahead): :mod:`.reserve`; none: never checked
    reserve: str = "none"
    # only a target that would wait, without moves, at least this many times its run time (its
    # projected start: the first running job's end at which the engine would start it); None: any
    gain: float | None = None
    # with horizon: a blocked job projected to start within it is passed over, the ones behind
    # it offered (True), or it ends the targets, so that none jumps ahead of it (False)
    jump: bool = True

    def __post_init__(self) -> None:
        if self.every < 1 or self.targets < 1 or self.cost not in COST_MODES or (
                self.retry not in RETRY_MODES) or self.reserve not in RESERVE_MODES:
            raise _bad(f"every and targets must be ≥ 1, cost one of {COST_MODES}, retry one "
                       f"of {RETRY_MODES}, reserve one of {RESERVE_MODES}: {self}")
        parse_restart(self.restart, _bad)  # a bad restart is refused here, in one line

    @property
    def rule(self) -> Restart:
        """What a moved job's progress becomes (:mod:`.restart`)."""
        return parse_restart(self.restart, _bad)

    def move_cost(self, pods: int, progress: float, accelerators: float) -> int | None:
        """A running job's move cost: its pod count, plus (``cost=work``) the GPU-hours, rounded
        up, that moving it now would throw away (its ``progress`` run seconds since the last
        checkpoint, or all of them with ``restart=lose``, times its ``accelerators``); None (it
        may not move) when that is more than ``max_lost`` GPU-hours."""
        rule = self.rule
        if rule.mode == "keep":
            return pods
        lost = (progress - rule.kept(progress)) * accelerators / 3600
        if self.max_lost is not None and lost > self.max_lost:
            return None
        return pods if self.cost == "pods" else pods + math.ceil(lost - 1e-9)


def _bad(message: str) -> InputError:
    return InputError(message, obj="command line", field="--defrag")


def _positive_int(name: str, text: str, low: int) -> int:
    if not text.isdigit() or int(text) < low:
        raise _bad(f"{name} must be an integer ≥ {low}, not {text!r} ({SPEC})")
    return int(text)


def parse_defrag_policy(text: str) -> DefragPolicy:
    """``every=N[,max-moves=K][,engine=E][,time-limit=S][,targets=T][,restart=R]`` as a
    :class:`DefragPolicy`; a one-line :class:`InputError` (field ``--defrag``) if malformed."""
    text = NAMED.get(text.strip(), text)
    values = option_values((part.strip() for part in text.split(",")), OPTIONS,
                           lambda message: _bad(f"{message} ({SPEC})"))
    if "every" not in values:
        raise _bad(f"every=N is required ({SPEC})")
    engine = choice(values, "engine", DEFRAG_ENGINES, _bad)
    restart = values.get("restart", "lose")
    cost = choice(values, "cost", COST_MODES, _bad)
    try:
        limit = float(values.get("time-limit", "2"))
    except ValueError:
        limit = -1.0
    if not 0 < limit < 86400:
        raise _bad(f"time-limit must be seconds in (0, 86400), not {values['time-limit']!r}")
    moves, lost = values.get("max-moves"), values.get("max-lost")
    horizon, ratio = values.get("horizon"), values.get("max-cost-per-gpu")
    return DefragPolicy(
        every=_positive_int("every", values["every"], 1),
        max_moves=None if moves is None else _positive_int("max-moves", moves, 0),
        engine=engine, time_limit=limit,
        targets=_positive_int("targets", values.get("targets", "1"), 1), restart=restart,
        cost=cost, max_lost=None if lost is None else _hours(lost),
        wall_factor=_factor(values.get("wall-factor", "10")),
        horizon=None if horizon is None else _seconds(horizon),
        max_cost_per_gpu=None if ratio is None else number(
            ratio, 0, _bad, "max-cost-per-gpu must be a number ≥ 0"),
        region=_region(values.get("region")),
        retry=choice(values, "retry", RETRY_MODES, _bad),
        reserve=choice(values, "reserve", RESERVE_MODES, _bad),
        gain=None if values.get("gain") is None else number(
            values["gain"], 0, _bad, "gain must be a number ≥ 0"),
        jump=choice(values, "jump", ("yes", "no"), _bad) == "yes",
    )


def _region(text: str | None) -> int | None:
    if text is None or text == "all":
        return None if text is None else 0
    return _positive_int("region (all or K)", text, 1)


def _seconds(text: str) -> float:
    try:
        value = parse_duration(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < math.inf:
        raise _bad(f"horizon must be seconds ≥ 0 (or 30m, 4h…), not {text!r}")
    return value


def _factor(text: str) -> float:
    return number(text, 1, _bad, "wall-factor must be a number ≥ 1")


def _hours(text: str) -> float:
    return number(text, 0, _bad, "max-lost must be GPU-hours ≥ 0")


def blocked_targets(problem: Problem, plan: Plan, pending: list[JobRun], free: np.ndarray,
                    request: dict[int, np.ndarray], limit: int) -> list[JobRun]:
    """The pending jobs a defrag call tries to admit, at most ``limit``, in queue order
    (priority, highest first, then arrival).

    A job qualifies when the plan left it wholly pending, its summed requests fit in the idle
    resources ``free`` ([N, R] per node) summed over the nodes its pods may use (predicates and
    schedulability: so it is blocked by where the idle room lies, not by how much there is).
    Gang trees (nested gang groups) qualify too: defrag places every level of theirs.
    ``request`` maps a run's index to its [R] summed requests.
    """
    placed = {j.job for j in plan.jobs if j.placed}
    index = {cj.key: cj for cj in problem.jobs}
    out = []
    for run in pending:
        cj = index.get(run.key)
        if run.key in placed or cj is None or run.bound_count():
            continue
        usable = problem.group_feasible[list(cj.groups)].any(axis=0)
        if (request[run.index] <= free[usable].sum(axis=0)).all():
            out.append((-cj.priority, run.index, run))
    return [run for _, _, run in sorted(out, key=lambda item: item[:2])[:limit]]


def defrag_instance(builder: CycleBuilder, running: list[tuple[Job, int | None]],
                    targets: list[Job], *, source: str, fixed: list[Job] = ()) -> Instance:
    """The instance a defrag call sees: the replay's cluster, the running jobs listed as
    themselves (``running``: job and its move cost, None for a job that may not move — a cluster
    file's, or one over ``max-lost``), the targets; ``fixed`` jobs (folded usage) never move."""
    jobs = [job.model_copy(update={"movable": False} if cost is None else {"move_cost": cost})
            for job, cost in [*((job, None) for job in fixed), *running]]
    return Instance.model_construct(
        nodes=builder.nodes, hypernodes=builder.hypernodes,
        constraint_trees=builder.constraint_trees, jobs=[*jobs, *targets],
        queues=builder.queues, priority_classes=builder.priority_classes,
        source=f"{source} defrag")


def run_defrag(policy: DefragPolicy, instance: Instance, targets: list[str], seed: int) -> Plan:
    """:func:`toposolve.defrag` under ``policy``: a checked plan (moves and bindings)."""
    return defrag(instance, targets, max_moves=policy.max_moves, engine=policy.engine,
                  time_limit=policy.time_limit, seed=seed, wall_factor=policy.wall_factor)


def defrag_row(plan: Plan, targets: list[str], seconds: float) -> dict:
    """What a cycle's record keeps of its defrag call."""
    d = plan.stats["defrag"]
    return {"targets": targets, "admitted": list(d["admitted"]),
            "moved_jobs": list(d["moved_jobs"]), "moved_pods": d["moved_pods"],
            "move_cost": d["move_cost"], "status": d["status"],
            "proven_minimal": d["proven_minimal"], "seconds": seconds}

"""The discrete-event replay: arrivals, scheduling cycles, completions, evictions.

Time advances in scheduling cycles of ``cycle`` seconds (Volcano's ``schedulePeriod``). At a
cycle's time ``t``: jobs that finished by ``t`` release their nodes, jobs that arrived by ``t``
join the queue, then the engine gets the cycle's instance (:mod:`.cycle`) and its checked plan is
applied — evictions first (they take effect at once), then bindings. A job starts when the plan
places it and runs for its duration from ``t``. An evicted job whose gang breaks is stopped and
re-queued (its run so far is lost work, counted in GPU-seconds); one that keeps its gang keeps
running and its evicted pods wait again. A job still pending ``max_wait`` seconds after it
(re)joined the queue is dropped (``max_wait=0``: one attempt, as FGD's simulator does).

Cycles in which nothing can change are skipped: after a cycle that placed nothing, the next
cycle is the first one at or after the next arrival or completion. For a deterministic engine
this gives exactly the plans of running every cycle. The replay ends when no arrival or
completion is left (jobs without a duration run to the end), or at ``until``. With a
:class:`~.defrag.DefragPolicy`, every N-th engine call is followed by a defrag call (moves, then
the admitted jobs start). With a :class:`~.failures.FailurePolicy`, nodes fail and return at
times drawn from the seed (:mod:`.failures`); failures are handled at the first cycle at or
after them (:mod:`.repair`).
"""

from __future__ import annotations

import heapq
import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from toposolve.check.checker import fixed_cluster
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job, share_resources
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.formats.trace.model import Trace, TraceJob
from toposolve.sim.replay.cycle import CycleBuilder
from toposolve.sim.replay.defrag import (
    DefragPolicy,
    blocked_targets,
    defrag_instance,
    defrag_row,
    run_defrag,
)
from toposolve.sim.replay.engine import CycleSolver
from toposolve.sim.replay.failures import FailurePolicy, failure_clock
from toposolve.sim.replay.jobs import DONE, DROPPED, PENDING, RUNNING, JobRun
from toposolve.sim.replay.metrics import Recorder
from toposolve.sim.replay.record import ReplayRecord
from toposolve.sim.replay.region import candidate_region, regions
from toposolve.sim.replay.repair import repair_plan
from toposolve.sim.replay.reserve import queued_ahead
from toposolve.sim.replay.restart import Restart
from toposolve.sim.replay.vain import VainTargets

LOSE = Restart("lose")  # an evicted gang (--evict) starts over
LOG = logging.getLogger(__name__)


@dataclass
class ReplayOptions:
    """How to replay (see the module docstring)."""

    cycle: float = 10.0
    max_wait: float | None = None
    until: float | None = None
    evict: str | None = None
    fold: bool = True  # fold settled running jobs into usage pods (False: list every job)
    defrag: DefragPolicy | None = None  # defragment every N-th engine call
    seed: int = 0  # the defrag engine's seed, and the failures'
    failures: FailurePolicy | None = None  # inject node failures (--fail-rate)


def background_jobs(cluster: Instance) -> list[Job]:
    """The cluster's jobs a replay keeps: those with running pods.

    A replay's workload is its trace; the cluster's pending jobs are dropped with one warning
    line (logging) that counts them.
    """
    kept = [job for job in cluster.jobs if any(task.running for task in job.tasks)]
    if len(kept) < len(cluster.jobs):
        LOG.warning("%s: %d pending job(s) of the cluster dropped (a replay's workload is its "
                    "trace; the %d with running pods stay)", cluster.source,
                    len(cluster.jobs) - len(kept), len(kept))
    return kept


def _clash(runs: list[JobRun], source: str) -> InputError:
    """The first job key or pod name that two jobs of a replay share."""
    keys: dict[str, JobRun] = {}
    pods: dict[str, JobRun] = {}
    for run in runs:
        first = keys.setdefault(run.key, run)
        if first is not run:
            where = "a running job of the cluster" if first.background else "another job"
            return InputError(f"{where} has the same name", file=source, obj=f"Job/{run.key}",
                              field="name")
        for name in (n for names in run.pod_names for n in names):
            if name in pods:
                return InputError(f"pod {name!r} is also a pod of {pods[name].key}",
                                  file=source, obj=f"Job/{run.key}", field="tasks")
            pods[name] = run
    raise AssertionError("no clash")


def _checkpointing(options: ReplayOptions) -> Restart:
    """The checkpoint rule whose ``save`` cost every job pays: the failure policy's if it
    checkpoints, else the defrag policy's, else none (``lose``: no saves)."""
    for policy in (options.failures, options.defrag):
        if policy is not None and policy.rule.mode == "checkpoint":
            return policy.rule
    return LOSE


def _refuse_devices(cluster: Instance, trace: Trace, options: ReplayOptions) -> None:
    """Per-device sharing replays without defragmentation or node failures (one line)."""
    shared = cluster.device_resource or next(iter(share_resources(cluster)), None) or next(
        (t.device_share.resource for tj in trace.jobs for t in tj.job.tasks
         if t.device_share is not None), None)
    if shared is not None and (options.defrag is not None or options.failures is not None):
        raise InputError(f"per-device sharing of {shared} with defragmentation or node failures "
                         "is not supported yet", file=trace.source, obj="replay",
                         field="defrag" if options.defrag is not None else "failures")


class Replay:
    """One replay of ``trace`` on ``cluster`` with one engine; :meth:`run` returns the record."""

    def __init__(self, cluster: Instance, trace: Trace, solver: CycleSolver, options: ReplayOptions,
                 *, engine: str = "") -> None:
        if options.cycle <= 0:
            raise ValueError(f"cycle must be positive, got {options.cycle}")
        _refuse_devices(cluster, trace, options)
        self.options = options
        self.solver = solver
        self.builder = CycleBuilder(cluster, trace)
        index = self.builder.node_index
        background = [TraceJob(job, 0.0, None) for job in background_jobs(cluster)]
        self.runs = [JobRun.of(k, tj, index) for k, tj in enumerate([*background, *trace.jobs])]
        for run in self.runs[: len(background)]:
            run.background = True
        saves = _checkpointing(options)
        for run in self.runs:
            run.overhead = saves.overhead(run.trace_job.duration)
        self.by_key = {run.key: run for run in self.runs}
        self.pod_of = {
            name: (run.index, t, i) for run in self.runs for t, names in enumerate(run.pod_names)
            for i, name in enumerate(names)
        }
        if len(self.by_key) < len(self.runs) or len(self.pod_of) < sum(
                run.pod_count() for run in self.runs):
            raise _clash(self.runs, trace.source)  # one identity per job and pod, or no replay
        self.listed: dict[int, JobRun] = {}  # runs the cycle instance shows as themselves
        self.completions: list[tuple[float, int, int]] = []  # (end, epoch, run index)
        self.next_arrival = 0  # position in self.runs of the next job to arrive
        self.last_placed = False
        self.cycles = 0
        self.running = 0  # jobs running now
        self.clock = None if options.failures is None else failure_clock(
            self.builder.compiler.topology, options.failures, options.seed)
        self.recorder = Recorder(self.builder, engine=engine, options=options, trace=trace,
                                 cluster=cluster)
        self.vain = VainTargets(len(self.builder.node_names)) if (
            options.defrag is not None and options.defrag.retry == "changed") else None

    # ---- events ---------------------------------------------------------------------------
    def _arrive(self, t: float) -> bool:
        changed = False
        while (
            self.next_arrival < len(self.runs)
            and self.runs[self.next_arrival].trace_job.arrival <= t
        ):
            run = self.runs[self.next_arrival]
            self.next_arrival += 1
            run.queued_since = run.trace_job.arrival
            self.recorder.arrived(run)
            if run.bound_count():  # a cluster job already running at the start
                self._start(run, 0.0, None)
            else:
                run.status = PENDING
            self.listed[run.index] = run
            self._fold_if_settled(run)
            changed = True
        return changed

    def _complete(self, t: float) -> bool:
        changed = False
        while self.completions and self.completions[0][0] <= t:
            end, epoch, index = heapq.heappop(self.completions)
            run = self.runs[index]
            if run.epoch != epoch or run.status != RUNNING:
                continue  # the run was stopped by an eviction since
            self._release(run)
            run.status, run.end = DONE, end
            self.running -= 1
            changed = True
        return changed

    def _touch(self, nodes: np.ndarray | list[int]) -> None:
        """Pods changed on ``nodes``: a target offered in vain near them is offered again."""
        if self.vain is not None:
            self.vain.touch(nodes)

    def _release(self, run: JobRun) -> None:
        self._touch(run.bound_nodes())
        if run.index in self.listed:
            del self.listed[run.index]
        else:
            self.builder.fold(run, -1)
        run.unbind_all()

    def _start(self, run: JobRun, t: float, problem: Problem | None) -> None:
        run.status = RUNNING
        self.running += 1
        run.starts += 1
        run.epoch += 1
        run.last_start = t
        if run.start is None:
            run.start = t
            if problem is not None:
                run.quality = self.recorder.quality(problem, run)
        self._schedule_end(run)

    def _schedule_end(self, run: JobRun) -> None:
        end = run.expected_end()
        if end is not None:
            heapq.heappush(self.completions, (end, run.epoch, run.index))

    def _fold_if_settled(self, run: JobRun) -> None:
        """Fold a running, fully bound job into the usage pods when no engine may evict it."""
        if (
            self.options.fold
            and self.options.evict is None
            and run.status == RUNNING
            and run.fully_bound()
        ):
            del self.listed[run.index]
            self.builder.fold(run, +1)

    # ---- one cycle ------------------------------------------------------------------------
    def _has_pending_pods(self) -> bool:
        return any(not run.fully_bound() for run in self.listed.values())

    def _solve(self, t: float) -> Plan:
        names = self.builder.node_names
        jobs = [run.with_running(names) for run in self.listed.values()]
        started = time.perf_counter()
        problem = self.builder.compile(jobs, source=f"<replay cycle {self.cycles} t={t:g}s>")
        plan = self.solver(problem)
        self._apply(plan, problem, t)
        self.recorder.cycle(t, plan, problem, time.perf_counter() - started)
        policy = self.options.defrag
        if policy is not None and self.cycles % policy.every == 0:
            self._defrag(policy, plan, problem, t)
        self.cycles += 1
        return plan

    # ---- defragmentation ------------------------------------------------------------------
    def _defrag(self, policy: DefragPolicy, plan: Plan, problem: Problem, t: float) -> None:
        """Offer the jobs blocked by fragmentation to a defrag call; apply its checked plan."""
        running = [r for r in self.runs if r.status == RUNNING]
        usage = self.builder.usage([r for r in running if r.index in self.listed])
        free = self.builder.allocatable - usage
        pending = [r for r in self.listed.values() if r.status == PENDING]
        request = {r.index: self._request(r) for r in pending}
        targets = blocked_targets(problem, plan, pending, free, request, len(pending))
        if targets and policy.horizon is not None:
            starting = self._projected_starts(t + policy.horizon, t)
            # jump=no: the targets end at the first one expected to start (none jumps it)
            skipped = [r.key in starting for r in targets]
            targets = [r for r, skip in zip(targets, skipped, strict=True) if not skip] if (
                policy.jump) else targets[: skipped.index(True) if any(skipped) else None]
        costs = {r.index: None if r.background else policy.move_cost(
            r.pod_count(), r.progress(t), self.recorder.job_accelerators(r)) for r in running}
        region = None
        if targets and policy.region is not None:
            movable = self.builder.usage_of([r for r in running if costs[r.index] is not None])
            targets, region = regions(problem, targets, request, free, free + movable,
                                      policy.region, policy.targets)
        targets = self._worth_moving(targets, policy, t)
        if not targets:
            return
        if self.vain is not None and all(self.vain.unchanged(r.key) for r in targets):
            self.recorder.defrag_skipped([r.key for r in targets])
            return
        instance = self._defrag_instance(running, costs, targets, region, problem.source)
        started = time.perf_counter()
        result = run_defrag(policy, instance, [r.key for r in targets], self.options.seed)
        if self.vain is not None:
            movable = self.builder.usage_of([r for r in running if costs[r.index] is not None])
            self._remember_vain(problem, targets, result, request, free, free + movable)
        row = defrag_row(result, [r.key for r in targets], 0.0)
        rejected = self._too_dear(policy, result) or self._delays_ahead(
            policy, result, problem, pending, t)
        if rejected is not None:
            self.recorder.defrag({**row, **rejected, "seconds": time.perf_counter() - started})
            return
        self._apply_moves(result, policy, t)
        placed = self.last_placed
        self._apply(result, problem, t)
        # the next cycle runs when the engine or the moves changed the cluster
        self.last_placed = placed or bool(result.bindings or result.moves)
        self.recorder.defrag({**row, "seconds": time.perf_counter() - started})

    def _worth_moving(self, targets: list[JobRun], policy: DefragPolicy,
                      t: float) -> list[JobRun]:
        """The first ``policy.targets`` of ``targets`` that would wait, without moves, at least
        ``policy.gain`` times their run time (``gain=F``; all of them without it): the wait is
        from ``t`` to their projected start (:meth:`_projected_start_times`; never: forever);
        a job without a duration always qualifies."""
        if policy.gain is None:
            return targets[: policy.targets]
        kept: list[JobRun] = []
        for run in targets:
            left = run.run_left()
            start = self._projected_start_times({run.key}, t).get(run.key, math.inf)
            if left is None or start - t >= policy.gain * left:
                kept.append(run)
                if len(kept) == policy.targets:
                    break
        return kept

    def _remember_vain(self, problem: Problem, targets: list[JobRun], result: Plan,
                       request: dict[int, np.ndarray], idle: np.ndarray,
                       emptied: np.ndarray) -> None:
        """Remember the ``targets`` the defrag ``result`` did not admit, with their candidate
        domains (all the nodes their pods may use where they have none)."""
        assert self.vain is not None
        admitted = set(result.stats["defrag"]["admitted"])
        index = {cj.key: cj.index for cj in problem.jobs}
        for run in targets:
            if run.key in admitted:
                continue
            j = index[run.key]
            region = candidate_region(problem, j, request[run.index], idle, emptied, None)
            if region is None:
                region = problem.group_feasible[list(problem.jobs[j].groups)].any(axis=0)
            self.vain.remember(run.key, region)

    def _defrag_instance(self, running: list[JobRun], costs: dict[int, int | None],
                         targets: list[JobRun], region: np.ndarray | None,
                         source: str) -> Instance:
        """The defrag call's instance: every running job as itself (``region`` None), or only
        the movable ones with a pod in ``region`` and the listed ones, the rest as the folded
        usage pods (which do not move)."""
        names = self.builder.node_names
        if region is None:
            return defrag_instance(
                self.builder, [(r.with_running(names), costs[r.index]) for r in running],
                [r.with_running(names) for r in targets], source=source)
        inside = {r.index for r in running
                  if costs[r.index] is not None and region[r.bound_nodes()].any()}
        unfold = [r for r in running if r.index in inside and r.index not in self.listed]
        for run in unfold:
            self.builder.fold(run, -1)
        try:
            usage = [u.job for u in self.builder.usage_jobs()]
        finally:
            for run in unfold:
                self.builder.fold(run, +1)
        shown = [(r.with_running(names), costs[r.index] if r.index in inside else None)
                 for r in running if r.index in inside or r.index in self.listed]
        return defrag_instance(self.builder, shown, [r.with_running(names) for r in targets],
                               source=source, fixed=usage)

    def _projected_starts(self, until: float, t: float) -> set[str]:
        """Keys of the pending jobs the engine would start if every running job due to end by
        ``until`` had ended (the others where they run): the cycle at ``until`` with no new
        arrival, as this replay's engine would solve it."""
        gone = [r for r in self.runs if r.status == RUNNING and r.last_start is not None
                and (end := r.expected_end()) is not None and end <= until]
        folded = [r for r in gone if r.index not in self.listed]
        for run in folded:
            self.builder.fold(run, -1)
        try:
            names, leaving = self.builder.node_names, {r.index for r in gone}
            jobs = [r.with_running(names) for r in self.listed.values()
                    if r.index not in leaving]
            projected = self.solver(self.builder.compile(
                jobs, source=f"<replay projection t={t:g}s to {until:g}s>"))
        finally:
            for run in folded:
                self.builder.fold(run, +1)
        return {j.job for j in projected.jobs if j.placed}

    def _too_dear(self, policy: DefragPolicy, result: Plan) -> dict | None:
        """None when ``result`` may be applied; else what a rejected call records: nothing
        admitted or moved, and the rejected plan's cost per admitted accelerator."""
        if policy.max_cost_per_gpu is None or not result.moves:
            return None
        units = sum(self.recorder.job_accelerators(self.by_key[k])
                    for k in result.stats["defrag"]["admitted"])
        cost = result.stats["defrag"]["move_cost"]
        if units and cost <= policy.max_cost_per_gpu * units:
            return None
        return {"admitted": [], "moved_jobs": [], "moved_pods": 0, "move_cost": 0,
                "rejected": {"move_cost": cost, "accelerators": units}}

    def _delays_ahead(self, policy: DefragPolicy, result: Plan, problem: Problem,
                      pending: list[JobRun], t: float) -> dict | None:
        """None when ``result`` may be applied; else (``reserve=head|ahead``) what a rejected
        call records: the jobs queued ahead of its admitted targets (:mod:`.reserve`) whose
        projected start — the first running job's end at which the projected cycle starts
        them — the projected cycle at that time no longer gives them with the plan applied."""
        admitted = set(result.stats["defrag"]["admitted"])
        ahead = queued_ahead(problem, pending, admitted, policy.reserve)
        starts = self._projected_start_times(set(ahead), t) if ahead else {}
        delayed = {}
        for until in sorted(set(starts.values())):
            due = {key for key, at in starts.items() if at == until}
            with self._hypothetically(result, t, until):
                delayed.update(dict.fromkeys(due - self._projected_starts(until, t), until))
        if not delayed:
            return None
        return {"admitted": [], "moved_jobs": [], "moved_pods": 0, "move_cost": 0,
                "rejected": {"delays": dict(sorted(delayed.items()))}}

    def _projected_start_times(self, keys: set[str], t: float) -> dict[str, float]:
        """When the projected cycle (:meth:`_projected_starts`) first starts each of ``keys``,
        trying the running jobs' ends after ``t`` in order; keys it never starts are left out."""
        ends = sorted({end for r in self.runs if r.status == RUNNING and r.last_start is not None
                       and (end := r.expected_end()) is not None and end > t})
        found: dict[str, float] = {}
        for until in ends:
            found.update(dict.fromkeys(self._projected_starts(until, t) & keys - found.keys(),
                                       until))
            if len(found) == len(keys):
                break
        return found

    @contextmanager
    def _hypothetically(self, plan: Plan, t: float, until: float) -> Iterator[None]:
        """Within the block, ``plan``'s moves are made and its admitted jobs still running at
        ``until`` (their duration from now) hold their pods; undone on exit. The moved jobs
        keep their ends (exact for ``restart=keep``)."""
        saved = {r: [n.copy() for n in self.runs[r].nodes]
                 for r in {self.pod_of[m.pod][0] for m in plan.moves}}
        self._relocate(plan, touch=False)
        index = self.builder.node_index
        bound = set()
        for b in plan.bindings:
            r, task, pod = self.pod_of[b.pod]
            run = self.runs[r]
            left = run.run_left()
            if left is None or t + left > until:
                run.bind(task, pod, index[b.node], b.devices)
                bound.add(r)
        try:
            yield
        finally:
            for r in bound:
                self.runs[r].unbind_all()
            self._put_back(saved)

    def _put_back(self, saved: dict[int, list[np.ndarray]]) -> None:
        """Undo :meth:`_relocate`: each run in ``saved`` back on its nodes (folded usage too)."""
        folded = [self.runs[r] for r in saved if r not in self.listed]
        for run in folded:
            self.builder.fold(run, -1)
        for r, nodes in saved.items():
            self.runs[r].nodes = nodes
        for run in folded:
            self.builder.fold(run, +1)

    def _request(self, run: JobRun) -> np.ndarray:
        """[R] summed requests of every pod of ``run``."""
        return sum((task.replicas * self.builder.request(task) for task in run.job.tasks),
                   np.zeros(len(self.builder.resources), dtype=np.int64))

    def _apply_moves(self, plan: Plan, policy: DefragPolicy, t: float) -> None:
        """Re-place the moved pods; a moved job restarts as ``policy.restart`` says."""
        rule = policy.rule
        for run in self._relocate(plan):
            run.moves += 1
            run.move_lost_gpu_seconds += self._resume(run, t, rule)

    def _relocate(self, plan: Plan, *, touch: bool = True) -> list[JobRun]:
        """Put the pods ``plan`` moves on their new nodes; return the jobs moved. ``touch``:
        count the change on their nodes (``retry=changed``; not for a hypothetical move)."""
        moved = {self.pod_of[m.pod][0]: self.runs[self.pod_of[m.pod][0]] for m in plan.moves}
        folded = [run for run in moved.values() if run.index not in self.listed]
        for run in folded:
            self.builder.fold(run, -1)
        for m in plan.moves:
            r, task, pod = self.pod_of[m.pod]
            to = self.builder.node_index[m.to]
            if touch:
                self._touch([int(self.runs[r].nodes[task][pod]), to])
            self.runs[r].nodes[task][pod] = to
        for run in folded:
            self.builder.fold(run, +1)
        return list(moved.values())

    def _resume(self, run: JobRun, t: float, rule: Restart) -> float:
        """``run`` restarts at ``t`` from what ``rule`` keeps of its progress (``keep``: nothing
        changes); the rest is lost work. Return the GPU-seconds lost."""
        if rule.mode == "keep":
            return 0.0
        lost = self._lose_work(run, t, rule)
        run.starts += 1
        run.epoch += 1  # the old completion event is void
        run.last_start = t
        self._schedule_end(run)
        return lost

    def _apply(self, plan: Plan, problem: Problem, t: float) -> None:
        index = self.builder.node_index
        for e in plan.evictions:
            r, task, pod = self.pod_of[e.pod]
            self._touch([int(self.runs[r].nodes[task][pod])])
            self.runs[r].bind(task, pod, -1, None)
            self.runs[r].evicted_pods += 1
        for victim in plan.stats.get("victims", []):
            run = self.by_key[victim["job"]]
            if victim["broken"] and run.status == RUNNING:
                self._stop(run, t)
        if plan.bindings:
            self._touch([index[b.node] for b in plan.bindings])
        for b in plan.bindings:
            r, task, pod = self.pod_of[b.pod]
            self.runs[r].bind(task, pod, index[b.node], b.devices)
        for placement in plan.jobs:
            run = self.by_key.get(placement.job)
            if run is not None and placement.placed and run.status == PENDING:
                self._start(run, t, problem)
        for run in [r for r in self.listed.values() if r.status == RUNNING]:
            self._fold_if_settled(run)
        self.last_placed = bool(plan.bindings)

    def _stop(self, run: JobRun, t: float, rule: Restart = LOSE) -> None:
        """An evicted job whose gang broke: its work since what ``rule`` keeps (by default:
        all of it) is lost; it waits again."""
        self._lose_work(run, t, rule)
        self._touch(run.bound_nodes())
        run.unbind_all()
        run.status, run.queued_since = PENDING, t
        run.epoch += 1  # its completion event is void
        self.running -= 1

    def _lose_work(self, run: JobRun, t: float, rule: Restart) -> float:
        """Count the GPU-seconds of ``run``'s progress at ``t`` that ``rule`` does not keep as
        lost; the kept part is saved for its next run. Return the GPU-seconds lost."""
        progress = run.progress(t)
        run.saved = rule.kept(progress)
        # restoring costs time only where there is a checkpoint to restore
        run.restore = rule.restore if run.saved > 0 else 0.0
        lost = (progress - run.saved) * self.recorder.job_accelerators(run)
        run.lost_gpu_seconds += lost
        return lost

    # ---- node failures --------------------------------------------------------------------
    def _fail(self, t: float) -> bool:
        """Apply the node failures and returns due by ``t``; True if any happened."""
        if self.clock is None:
            return False
        before = self.clock.down
        failed, changed = self.clock.due(t)
        if failed:
            self._handle_failures(failed, t)
        if changed:
            self.builder.set_down(self.clock.down)
            self._touch(sorted(before ^ self.clock.down))
        return changed

    def _handle_failures(self, failed: list[int], t: float) -> None:
        """Repair (``repair=defrag``) or evict whole the running jobs with pods on ``failed``;
        the jobs repaired or moved restart as the policy's ``restart`` says."""
        assert self.options.failures is not None and self.clock is not None
        policy = self.options.failures
        rule = policy.rule
        hit = [r for r in self.runs
               if r.status == RUNNING and np.isin(r.bound_nodes(), failed).any()]
        started = time.perf_counter()
        repaired: list[str] = []
        why: dict[str, str] = {}
        repair_lost = 0.0
        if hit and policy.repair == "defrag":
            running = [r for r in self.runs if r.status == RUNNING]
            plan = repair_plan(self.builder, running, [self.builder.node_names[n] for n in failed],
                               policy, self.options.seed, source=f"<replay t={t:g}s>")
            repaired = list(plan.stats["defrag"]["repaired"])
            why = dict(plan.stats["defrag"]["unrepaired"])
            for run in self._relocate(plan):
                run.moves += run.key not in repaired  # jobs moved to make room
                repair_lost += self._resume(run, t, rule)
        done = set(repaired)
        evicted = [r for r in hit if r.key not in done]
        # an evicted job resumes from its last checkpoint, or (keep, lose) starts over
        kept = rule if rule.mode == "checkpoint" else LOSE
        lost = repair_lost + sum(self._evict_whole(run, t, kept) for run in evicted)
        self.last_placed = self.last_placed or bool(evicted)
        self.recorder.failures.append({
            "t": t, "failed": [self.builder.node_names[n] for n in failed],
            "hit": [r.key for r in hit], "repaired": repaired,
            "evicted": [r.key for r in evicted], "unrepaired": why, "lost_gpu_seconds": lost,
            "repair_lost_gpu_seconds": repair_lost, "scopes": dict(self.clock.failed_units),
            "seconds": time.perf_counter() - started})

    def _evict_whole(self, run: JobRun, t: float, rule: Restart) -> float:
        """Stop a running job (its pods gone, its work since what ``rule`` keeps lost) and
        re-queue it; return the GPU-seconds lost."""
        if run.index not in self.listed:
            self.builder.fold(run, -1)
            self.listed[run.index] = run
        run.evicted_pods += run.bound_count()
        before = run.lost_gpu_seconds
        self._stop(run, t, rule)
        return run.lost_gpu_seconds - before

    def _drop_expired(self, t: float) -> bool:
        if self.options.max_wait is None:
            return False
        expired = [
            r
            for r in self.listed.values()
            if r.status == PENDING and t - r.queued_since >= self.options.max_wait
        ]
        for run in expired:
            run.status = DROPPED
            del self.listed[run.index]
        return bool(expired)

    # ---- the loop -------------------------------------------------------------------------
    def _next_event(self) -> float | None:
        times = []
        if self.next_arrival < len(self.runs):
            times.append(self.runs[self.next_arrival].trace_job.arrival)
        if self.completions:
            times.append(self.completions[0][0])
        # failures alone never keep a replay going (jobs without a duration would run forever)
        if times and self.clock is not None and self.clock.next_time() is not None:
            times.append(self.clock.next_time())
        return min(times) if times else None

    def _boundary(self, at: float) -> float:
        cycle = self.options.cycle
        return math.ceil(at / cycle - 1e-9) * cycle

    def run(self) -> ReplayRecord:
        """Replay to the end and return the record."""
        started = time.perf_counter()
        # the checker's tree, built once
        with fixed_cluster(self.builder.nodes, self.builder.hypernodes):
            end = self._loop()
        return self.recorder.record(self.runs, wall_time_s=time.perf_counter() - started, end=end)

    def _loop(self) -> float:
        """Run the cycles; return the replay's end time."""
        first = self._next_event()
        t = self._boundary(first) if first is not None else 0.0
        while True:
            if self.options.until is not None and t > self.options.until:
                break
            changed = self._complete(t)
            changed = self._fail(t) or changed
            changed = self._arrive(t) or changed
            solved = False
            if (changed or self.last_placed) and self._has_pending_pods():
                self._solve(t)
                solved = True
            else:
                self.last_placed = False
            changed = self._drop_expired(t) or changed
            if changed or solved:
                self._sample(t)
            if solved and self.last_placed:
                t += self.options.cycle
                continue
            upcoming = self._next_event()
            if upcoming is None:
                break
            t = max(t + self.options.cycle, self._boundary(upcoming))
        return t if self.options.until is None else min(t, self.options.until)

    def _sample(self, t: float) -> None:
        listed = list(self.listed.values())
        pending = sum(1 for r in listed if r.status == PENDING)
        self.recorder.sample(t, pending, self.running, [r for r in listed if r.status == RUNNING])

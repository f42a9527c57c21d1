"""What a replay measures, while it runs and at the end.

Accelerators are the resources whose name contains ``gpu``, ``npu`` or ``ascend`` (as in the
objective); amounts are in accelerator units (``nvidia.com/gpu: 460m`` is 0.46).

* **timeline** (one sample per cycle in which something happened): time, pending and running
  jobs, accelerators in use, ``allocation_ratio`` = accelerators in use / the cluster's
  accelerators (FGD's *GPU allocation ratio*), ``arrived_load`` = accelerators asked for by all
  jobs arrived so far / the cluster's accelerators (FGD's *arrived workload*), and fragmentation:
  ``free_leaves`` (HyperNodes of the lowest tier whose nodes are all idle) and
  ``largest_free_domain_nodes`` (most idle nodes under one HyperNode of tier ≤ 2: the largest
  whole-node gang that still fits under a tier-2 switch).
* **cycles** (one per engine call): status, solve time (compile + engine + checker + apply),
  jobs placed, pods bound, evictions, gap; ``defrag`` where the defrag policy ran.
* **jobs**: arrival, first start, end, queueing delay (first start − arrival), completion time
  (end − arrival), starts, evicted pods, lost GPU-seconds, defrag ``moves`` (and
  ``move_lost_gpu_seconds``), the topology quality of the placement at first start:
  ``domain_tier`` (tier of the lowest HyperNode holding all its pods), ``pair_lca_tier`` (mean
  tier of the lowest common HyperNode over pod pairs, 0 on one node), ``leaves`` (lowest-tier
  HyperNodes touched).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from toposolve.core.instance import Instance
from toposolve.core.parallelism import is_accelerator
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.core.topology import subtree_sums
from toposolve.formats.trace.model import Trace
from toposolve.policy.metrics import topology_quality
from toposolve.sim.replay.cycle import CycleBuilder
from toposolve.sim.replay.jobs import JobRun
from toposolve.sim.replay.record import ReplayRecord
from toposolve.sim.replay.summary import summarise


class Recorder:
    """Collects the timeline, the cycles and the per-job figures of one replay."""

    def __init__(self, builder: CycleBuilder, *, engine: str, options: Any, trace: Trace,
                 cluster: Instance) -> None:
        self.builder = builder
        self.engine = engine
        self.options = options
        self.trace_source = trace.source
        self.cluster_name = cluster.source
        self.accelerators = [r for r, name in enumerate(builder.resources) if is_accelerator(name)]
        self.capacity = float(builder.allocatable[:, self.accelerators].sum()) / 1000
        self.topology = builder.compiler.topology
        self.members = self.topology.member_counts
        self.schedulable = np.array([not n.unschedulable for n in cluster.nodes], dtype=bool)
        self.arrived_units = 0.0
        self.arrived_jobs = 0
        self.timeline: list[dict[str, Any]] = []
        self.cycles: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []  # one row per step with node failures

    def job_accelerators(self, run: JobRun) -> float:
        """Accelerator units the whole job asks for."""
        total = 0
        for task in run.job.tasks:
            total += task.replicas * int(self.builder.request(task)[self.accelerators].sum())
        return total / 1000

    def arrived(self, run: JobRun) -> None:
        if not run.background:
            self.arrived_units += self.job_accelerators(run)
            self.arrived_jobs += 1

    def quality(self, problem: Problem, run: JobRun) -> dict[str, Any]:
        nodes = run.bound_nodes()
        if not len(nodes):
            return {}
        return topology_quality(problem, np.bincount(nodes, minlength=problem.n_nodes))

    def cycle(self, t: float, plan: Plan, problem: Problem, seconds: float) -> None:
        placed = sum(1 for j in plan.jobs if j.placed)
        self.cycles.append({
            "t": t, "status": plan.status, "seconds": seconds, "engine_seconds": plan.wall_time_s,
            "pending_jobs": len(plan.jobs), "placed_jobs": placed, "bound_pods": len(plan.bindings),
            "evicted_pods": len(plan.evictions), "gap": plan.gap, "nodes": problem.n_nodes,
            # what the time limit cut (CP-SAT)
            "cut_short": list(plan.stats.get("cut_short") or []),
        })

    def defrag(self, row: dict[str, Any]) -> None:
        """Attach a defrag call's figures to the cycle just recorded."""
        self.cycles[-1]["defrag"] = row

    def defrag_skipped(self, targets: list[str]) -> None:
        """The cycle just recorded skipped its defrag call: ``targets`` were offered in vain
        and nothing changed near them since (``retry=changed``)."""
        self.cycles[-1]["defrag_skipped"] = targets

    def sample(self, t: float, pending: int, running: int, listed_running: list[JobRun]) -> None:
        usage = self.builder.usage(listed_running)
        used = float(usage[:, self.accelerators].sum()) / 1000
        idle = (usage == 0).all(axis=1) & self.schedulable
        topo = self.topology
        idle_in = subtree_sums(self.members, idle)
        whole = idle_in == topo.node_count
        low = topo.tier <= 2
        self.timeline.append({
            "t": t, "pending_jobs": pending, "running_jobs": running, "accelerators_used": used,
            "allocation_ratio": used / self.capacity if self.capacity else 0.0,
            "arrived_load": self.arrived_units / self.capacity if self.capacity else 0.0,
            "free_leaves": int((whole & (topo.tier == topo.min_tier)).sum()),
            "largest_free_domain_nodes": int(idle_in[low].max()) if low.any() else 0,
        })

    def job_rows(self, runs: list[JobRun]) -> list[dict[str, Any]]:
        rows = []
        for run in runs:
            if run.background:
                continue
            arrival = run.trace_job.arrival
            rows.append({
                "job": run.key, "queue": run.job.queue, "priority": self.priority(run),
                "pods": run.pod_count(), "accelerators": self.job_accelerators(run),
                "status": run.status,
                "arrival": arrival, "start": run.start, "end": run.end,
                "wait": None if run.start is None else run.start - arrival,
                "completion": None if run.end is None else run.end - arrival,
                "starts": run.starts, "evicted_pods": run.evicted_pods,
                "lost_gpu_seconds": run.lost_gpu_seconds,
                "moves": run.moves, "move_lost_gpu_seconds": run.move_lost_gpu_seconds,
                "domain_tier": run.quality.get("domain_tier"),
                "pair_lca_tier": run.quality.get("pair_lca_tier"),
                "leaves": run.quality.get("leaves"),
            })
        return rows

    def priority(self, run: JobRun) -> int:
        values = {pc.name: pc.value for pc in self.builder.priority_classes}
        if run.job.priority_class is not None:
            return values.get(run.job.priority_class, 0)
        return next((pc.value for pc in self.builder.priority_classes if pc.global_default), 0)

    def record(self, runs: list[JobRun], *, wall_time_s: float, end: float) -> ReplayRecord:
        jobs = self.job_rows(runs)
        summary = summarise(jobs, self.timeline, self.cycles, end=end)
        summary.update(capacity_accelerators=self.capacity, wall_time_s=wall_time_s)
        if self.options.failures is not None:
            summary.update(failure_summary(self.failures))
        return ReplayRecord(
            engine=self.engine, cluster=self.cluster_name, trace=self.trace_source,
            options=dict(vars(self.options)), summary=summary, timeline=self.timeline,
            cycles=self.cycles, jobs=jobs, failures=self.failures,
        )


def failure_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals of the failure rows: node failures, jobs hit, repaired, evicted whole, the
    GPU-hours the failures' evictions and restarts lost, the part of them repaired or
    moved jobs lost (``restart=lose`` or ``checkpoint:I``), and per scope the units that
    failed."""
    scopes: Counter[str] = Counter()
    for row in rows:
        scopes.update(row["scopes"])
    return {
        "node_failures": sum(len(r["failed"]) for r in rows),
        "failure_jobs_hit": sum(len(r["hit"]) for r in rows),
        "failure_jobs_repaired": sum(len(r["repaired"]) for r in rows),
        "failure_jobs_evicted": sum(len(r["evicted"]) for r in rows),
        "failure_lost_gpu_hours": sum(r["lost_gpu_seconds"] for r in rows) / 3600,
        "failure_lost_gpu_hours_repairs": sum(r["repair_lost_gpu_seconds"] for r in rows) / 3600,
        "unit_failures_by_scope": dict(scopes),
    }

"""FGD's policies as replay engines (``fgd:FGD``, ``fgd:BalancedFGD``, ``fgd:BestFit``, …).

Each cycle offers the pending pods, in job order, one at a time to a policy of
:mod:`toposolve.sim.fgd` (its scoring code, not a copy): the nodes that admit the pod — its
predicates, every resource it asks for, and ``count`` devices with ``milli`` free — are scored
by the policy, which also picks the devices. The plan is checked like every engine's. The policy
(its per-node caches and Random's draws) lives for the whole replay. Nodes tie by a random
order drawn from the seed (FGD's simulator: random name prefixes). The target workload of FGD's
fragmentation is the bundled openb trace's (docs/replay.md, "FGD's policies inside the replay").
Per-device sharing is required; jobs of more than one pod are refused in one line.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.errors import InputError
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.engines.common.capacity import fit_in
from toposolve.formats.trace.openb import MIB_MILLI, MODEL_LABEL
from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.sim.fgd import POLICIES, Nodes, Pods, State, load_nodes, load_pods, make_policy
from toposolve.sim.fgd.frag import typical_pods
from toposolve.solve import EngineBug

PREFIX = "fgd:"
ENGINES = tuple(PREFIX + name for name in POLICIES)


def _openb_workload() -> tuple[tuple[str, ...], TargetWorkload]:
    """The GPU models and the target workload of the bundled openb trace, one column of
    access added for models it does not know (no typical pod runs there)."""
    models = load_nodes().models
    tp = typical_pods(load_pods(models))
    access = np.concatenate([tp.access, np.zeros((len(tp.weight), 1), dtype=bool)], axis=1)
    return models, TargetWorkload(cpu=tp.cpu, milli=tp.milli, count=tp.count, weight=tp.weight,
                                  access=access)


class PolicySolver:
    """A cycle solver running one :mod:`toposolve.sim.fgd` policy (see the module doc)."""

    def __init__(self, engine: str, seed: int) -> None:
        self.engine, self.name, self.seed = engine, engine.removeprefix(PREFIX), seed
        self.models, self.tp = _openb_workload()
        self.policy = None
        self.nodes: Nodes | None = None
        self.version = np.zeros(0, dtype=np.int64)
        self.last: tuple[np.ndarray, np.ndarray] | None = None

    def _cluster(self, problem: Problem) -> Nodes:
        index = {m: k for k, m in enumerate(self.models)}
        unknown = len(self.models)  # the added column
        labels = [n.labels.get(MODEL_LABEL) for n in problem.instance.nodes]
        cpu, mem = (problem.resource_index.get(r) for r in ("cpu", "memory"))
        alloc = problem.allocatable
        return Nodes(names=problem.topology.node_names,
                     cpu=alloc[:, cpu] if cpu is not None else np.zeros(problem.n_nodes, int),
                     mem=alloc[:, mem] // MIB_MILLI if mem is not None else np.zeros(
                         problem.n_nodes, int),
                     gpus=problem.node_devices,
                     model=np.array([index.get(m, unknown) for m in labels], dtype=np.int64),
                     models=(*self.models, "<other>"))

    def _state(self, problem: Problem) -> State:
        """The cycle's free room; nodes that changed since the last cycle get a new version."""
        if self.nodes is None:
            self.nodes = self._cluster(problem)
            self.version = np.zeros(problem.n_nodes, dtype=np.int64)
            rank = np.random.default_rng(self.seed).permutation(problem.n_nodes)
            self.policy = make_policy(self.name, rank, self.seed, self.tp)
        free = problem.allocatable - problem.used
        pick = [problem.resource_index.get(r) for r in ("cpu", "memory")]
        cpu = free[:, pick[0]] if pick[0] is not None else np.zeros(problem.n_nodes, int)
        mem = free[:, pick[1]] // MIB_MILLI if pick[1] is not None else np.zeros_like(cpu)
        valid = np.arange(problem.device_used.shape[1])[None, :] < problem.node_devices[:, None]
        gpu = np.where(valid, 1000 - problem.device_used, 0)
        if gpu.shape[1] == 0:
            gpu = np.zeros((problem.n_nodes, 1), dtype=np.int64)
        if self.last is not None:
            changed = (self.last[0] != cpu) | (self.last[1] != gpu).any(axis=1)
            self.version[changed] += 1
        return State(self.nodes, cpu.astype(np.int64), mem.astype(np.int64),
                     gpu.astype(np.int64), self.version)

    def __call__(self, problem: Problem) -> Plan:
        if not problem.has_devices:
            raise InputError(f"engine {self.engine!r} needs per-device sharing (openb: "
                             "gpu_sharing=device)", file=problem.source, obj="replay",
                             field="engine")
        state = self._state(problem)
        assignment = self._place(problem, state)
        self.last = (state.cpu_left.copy(), state.gpu_left.copy())
        plan = to_plan(problem, assignment, engine=self.engine, status="FEASIBLE")
        violations = check_plan(problem.instance, plan, eviction_mode="none")
        if violations:
            raise EngineBug(f"engine {self.engine!r} produced an invalid plan: {violations[0]}")
        return plan

    def _place(self, problem: Problem, state: State) -> Assignment:
        """Offer every pending pod once, in job order."""
        out = Assignment()
        free = problem.allocatable - problem.used
        for j in problem.pending_jobs:
            groups = [g for g in problem.jobs[j].groups if problem.group_pending[g]]
            if len(groups) != 1 or len(problem.group_pending[groups[0]]) != 1:
                raise InputError(f"engine {self.engine!r} places one-pod jobs only",
                                 file=problem.source, obj=f"Job/{problem.jobs[j].key}")
            g = groups[0]
            pods = self._pod(problem, g)
            ok = problem.group_feasible[g] & (fit_in(free, problem.group_request[g]) > 0)
            count, milli = int(pods.count[0]), int(pods.milli[0])
            if count:
                ok &= (state.gpu_left >= milli).sum(axis=1) >= count
            nodes = np.flatnonzero(ok)
            if not len(nodes):
                out.reasons[j] = "no node has room for the pod"
                continue
            node, devices = self.policy.choose(state, pods, 0, nodes)
            _take(state, pods, node, devices)
            free[node] -= problem.group_request[g]
            out.add(g, node, 1)
            if count:
                out.add_devices(g, node, [tuple(sorted(int(d) for d in devices))])
        return out

    def _pod(self, problem: Problem, g: int) -> Pods:
        request = problem.group_request[g]
        cpu, mem = (problem.resource_index.get(r) for r in ("cpu", "memory"))
        return Pods(names=(problem.group_pending[g][0],),
                    cpu=np.array([request[cpu] if cpu is not None else 0]),
                    mem=np.array([-(-request[mem] // MIB_MILLI) if mem is not None else 0]),
                    count=problem.group_device_count[g:g + 1],
                    milli=problem.group_device_milli[g:g + 1],
                    access=np.ones((1, len(self.models) + 1), dtype=bool))


def _take(state: State, pods: Pods, node: int, devices: tuple[int, ...]) -> None:
    """What :func:`toposolve.sim.fgd.place` does to the state (feasibility was checked here,
    predicates included, so its model check is not repeated)."""
    state.cpu_left[node] -= pods.cpu[0]
    state.mem_left[node] -= pods.mem[0]
    for d in devices:
        state.gpu_left[node, d] -= pods.milli[0]
    state.version[node] += 1


def policy_solver(engine: str, seed: int) -> Callable[[Problem], Plan]:
    """The cycle solver of ``engine`` (one of :data:`ENGINES`)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} (FGD policies: {', '.join(ENGINES)})",
                         field="engine")
    return PolicySolver(engine, seed)

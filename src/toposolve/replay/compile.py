"""One cycle's :class:`~toposolve.problem.Problem`, compiled without redoing the cluster's part.

:func:`toposolve.problem.compile_problem` builds the HyperNode tree, the node arrays and every
task's node predicates from scratch; across the cycles of a replay the nodes and HyperNodes never
change, so the tree, the arrays and the predicate results are built once and the cycle compiles
only its jobs, with the very same job compiler (``problem._Compiler``). Predicates are cached by
the identity of a task's constraints object (the replay's jobs keep theirs for the whole run),
so no cycle serialises constraints again. ``tests/replay/test_compile.py`` checks that the result
equals ``compile_problem`` of the same instance.
"""

from __future__ import annotations

import numpy as np

from ..model.instance import Instance, PodConstraints, Task
from ..problem import Problem, _Compiler, _node_arrays
from ..topology import build_topology


class _CycleCompiler(_Compiler):
    """The job compiler with a predicate cache that outlives one cycle."""

    shared: dict[int, tuple[PodConstraints, np.ndarray]]

    def task_feasible(self, task: Task) -> np.ndarray:
        hit = self.shared.get(id(task.constraints))
        if hit is None:
            hit = (task.constraints, super().task_feasible(task))  # keeps the object (and its id) alive
            self.shared[id(task.constraints)] = hit
        return hit[1]


class CycleCompiler:
    """Compiles cycle instances that share ``cluster``'s nodes and HyperNodes."""

    def __init__(self, cluster: Instance, resources: tuple[str, ...]) -> None:
        self.topology = build_topology(cluster.nodes, cluster.hypernodes, source=cluster.source)
        self.resources = resources
        self.allocatable, self.schedulable = _node_arrays(cluster, resources)
        self.shared: dict[int, tuple[PodConstraints, np.ndarray]] = {}

    def compile(self, instance: Instance) -> Problem:
        compiler = _CycleCompiler(instance, self.topology, self.resources)
        compiler.shared = self.shared
        for j, job in enumerate(instance.jobs):
            compiler.add_job(j, job)
        return compiler.problem(self.allocatable, self.schedulable)

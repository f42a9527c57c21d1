"""One cycle's :class:`~toposolve.core.problem.Problem`, compiled without redoing the cluster's
part.

Across the cycles of a replay the nodes and HyperNodes never change, so the tree, the node
arrays and the predicate results are built once (:func:`~toposolve.core.problem.compile_cluster`)
and each cycle compiles only its jobs (:func:`~toposolve.core.problem.compile_jobs`). The
replay's jobs keep their constraints objects for the whole run, so no cycle serialises
constraints again. The **usage jobs** (:mod:`.cycle`: one running pod per busy node and queue)
are compiled in bulk from their arrays. ``tests/sim/replay/test_compile.py`` checks that every
field of the result equals ``compile_problem`` of the same instance.
"""

from __future__ import annotations

from collections.abc import Sequence

from toposolve.core.instance import Instance
from toposolve.core.problem import Problem, RunningPodsJob, compile_cluster, compile_jobs

UsageJob = RunningPodsJob


class CycleCompiler:
    """Compiles cycle instances that share ``cluster``'s nodes and HyperNodes.

    Parameters
    ----------
    cluster
        The replay's cluster (its jobs are ignored).
    resources
        The resource names of every cycle, sorted.
    """

    def __init__(self, cluster: Instance, resources: tuple[str, ...]) -> None:
        self.cluster = compile_cluster(cluster, resources)
        self.topology = self.cluster.topology
        self.resources = resources
        self.allocatable, self.schedulable = self.cluster.allocatable, self.cluster.schedulable

    def compile(self, instance: Instance, usage: Sequence[UsageJob] = ()) -> Problem:
        """The problem of ``instance``, whose first jobs are the ``usage`` jobs.

        Parameters
        ----------
        instance
            The cycle's instance.
        usage
            Its first jobs, as arrays.

        Returns
        -------
        Problem
            Equal to ``compile_problem(instance)``.
        """
        return compile_jobs(self.cluster, instance, usage)

"""Where the pods of a job or SubJob stand after a plan, and the domain they occupy.

One rule for every report (:func:`occupied_domain`): a job's (SubJob's) *domain* is the lowest
HyperNode holding all of its pods after the plan — its running pods the plan does not evict
plus the pods the plan binds — and its tier is that HyperNode's tier (the virtual root's when
they span the cluster). Plans (:func:`toposolve.core.assignment.to_plan`), CP-SAT's reported
domains, the objective's spread stage, plan metrics, the replay's job quality and the topology
plot all read it here. The Volcano mirror reports its own AllocatedHyperNode where it has one
(the HyperNode its search chose, possibly above this one); the checker derives domains
independently of this module.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from toposolve.core.problem import Problem


def occupied_domain(problem: Problem, nodes: Iterable[int]) -> int | None:
    """The domain pods on ``nodes`` occupy: the lowest HyperNode holding every one of those
    nodes (the virtual root when they span the cluster), or ``None`` for no node.

    Parameters
    ----------
    problem
        The compiled problem (its HyperNode tree).
    nodes
        Indices of the nodes holding the pods (repeats allowed).

    Returns
    -------
    int or None
        Index into ``problem.topology``; its tier is ``problem.topology.tier[h]``.
    """
    nodes = list(nodes)
    return problem.topology.lca_of_nodes(nodes) if nodes else None


class Footprint:
    """Pods per node of each asked-for group once a plan is applied.

    Parameters
    ----------
    problem
        The compiled problem the plan is for.
    counts
        The plan's new pods: group → node → pods (an
        :class:`~toposolve.core.assignment.Assignment`'s
        ``counts``).
    evicted
        Full names (``namespace/pod``) of the running pods the plan evicts.
    groups
        The groups asked about; the others are not counted (without evictions that keeps the
        cost to those groups, not every running pod).
    """

    def __init__(self, problem: Problem, counts: Mapping[int, Mapping[int, int]],
                 evicted: Collection[str], groups: Iterable[int]) -> None:
        self.problem = problem
        self.pods: dict[int, dict[int, int]] = {g: {} for g in groups}
        if evicted:
            for pod, n in problem.running_pods.items():
                per_node = self.pods.get(problem.pod_group[pod])
                if per_node is not None and pod not in evicted:
                    per_node[n] = per_node.get(n, 0) + 1
        else:  # every running pod stays: the groups' counts
            for g, per_node in self.pods.items():
                per_node.update((n, c) for n, c in problem.group_running[g].items() if c > 0)
        for g, per_node in self.pods.items():
            for n, c in counts.get(g, {}).items():
                if c > 0:
                    per_node[n] = per_node.get(n, 0) + c

    @classmethod
    def of_jobs(cls, problem: Problem, assignment, jobs: Iterable[int]) -> Footprint:
        """The footprint of ``jobs``' groups after ``assignment`` (its counts and evictions)."""
        groups = [g for j in jobs for g in problem.jobs[j].groups]
        evicted = set(assignment.evicted) if assignment.evicted else ()
        return cls(problem, assignment.counts, evicted, groups)

    def node_counts(self, groups: Iterable[int]) -> dict[int, int]:
        """Node → pods of ``groups`` on it after the plan (nodes without any left out)."""
        out: dict[int, int] = {}
        for g in groups:
            for n, c in self.pods[g].items():
                out[n] = out.get(n, 0) + c
        return out

    def domain(self, groups: Iterable[int]) -> int | None:
        """The HyperNode the pods of ``groups`` occupy after the plan (the lowest holding them
        all), or ``None`` when they have no pod on a node.

        Parameters
        ----------
        groups
            Pod groups of one job (``problem.jobs[j].groups``) or SubJob
            (``problem.subjobs[s].groups``); each must have been asked for.

        Returns
        -------
        int or None
            Index into ``problem.topology``; its tier is ``problem.topology.tier[h]``.
        """
        return occupied_domain(self.problem, self.node_counts(groups))

"""The Topology tree a workload is placed in: its flavor's TAS snapshot.

Kueue keeps one TAS snapshot per ResourceFlavor, built from the flavor's Topology over the nodes
its ``nodeLabels`` select; two flavors over the same nodes may name Topologies whose domains
cross (a rack spanning two zones). toposolve reads such a Topology as a constraint tree
(``Problem.trees``); a workload of that flavor is placed in a view of the problem whose
topology is that tree. Node usage is the problem's, shared by every view, as Kueue's
``TASHandleOverlappingFlavors`` (beta, on) counts a node's usage in every flavor's snapshot.
"""

from __future__ import annotations

import dataclasses

from toposolve.core.problem import Problem


def job_tree(problem: Problem, j: int) -> str | None:
    """The constraint tree job ``j`` is placed in, None for the main tree.

    Parameters
    ----------
    problem
        The compiled instance.
    j
        Job index.

    Returns
    -------
    str or None
        The tree its limits (its own, its GangNodes', its SubJobs') are in; for a job without
        a limit, the tree named after its flavor's Topology when there is one (an implied or
        unconstrained podset still uses its flavor's snapshot).

    Raises
    ------
    ValueError
        Its limits name more than one tree (the main one counting as one): a Kueue workload is
        admitted on one flavor, placed in that flavor's Topology only.
    """
    cj = problem.jobs[j]
    limits = [cj.limit, *(problem.gang_nodes[n].limit for n in cj.gang_nodes),
              *(problem.subjobs[s].limit for s in cj.subjobs)]
    trees = {limit.tree for limit in limits if limit is not None}
    if len(trees) > 1:
        names = ", ".join(repr(t or "the main tree") for t in sorted(trees, key=str))
        raise ValueError(f"its constraints are measured in several Topologies ({names}): a Kueue "
                         "workload is placed in its one flavor's Topology")
    if trees:
        return trees.pop()
    flavor_topology = problem.instance.jobs[j].topology_name
    return flavor_topology if flavor_topology in problem.trees else None


class TreeViews:
    """One problem view per constraint tree (the problem itself for the main tree)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.views: dict[str, Problem] = {}

    def of(self, tree: str | None) -> Problem:
        """The problem whose ``topology`` is ``tree`` (the main problem for None)."""
        if tree is None:
            return self.problem
        if tree not in self.views:
            self.views[tree] = dataclasses.replace(self.problem,
                                                   topology=self.problem.trees[tree])
        return self.views[tree]

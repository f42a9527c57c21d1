"""Kueue without TAS: a workload whose ResourceFlavor has no Topology is admitted by quota alone,
then kube-scheduler places its pods one by one (docs/kueue-fidelity.md, "Flavors without a
Topology").

The pods run through the kernel's pod-by-pod run (:mod:`toposolve.engines.common.pod_run`) over
the flavor's nodes in name order, with kube-scheduler's default node scores (or the input's
KubeSchedulerConfiguration). A plan is all-or-nothing per gang: when fewer than the workload's
minimum fit, it is not bound, but stays admitted (quota charged) and its pods that did fit hold
their nodes, as in a cluster until ``waitForPodsReady`` would evict it.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.kube_scoring import KubeScoring
from toposolve.core.problem import Problem
from toposolve.engines.common.capacity import Capacity
from toposolve.engines.common.node_scores import NodeScoring
from toposolve.engines.common.pod_run import Trial, run_groups


def node_scoring(problem: Problem) -> NodeScoring:
    """kube-scheduler's node scores: the input's configuration, upstream's defaults without."""
    return NodeScoring.of(problem, problem.kube_scoring or KubeScoring())


def is_non_tas(problem: Problem, j: int) -> bool:
    """Whether job ``j`` is admitted without TAS: it asks for no topology and either its flavor
    (read from a Kueue ClusterQueue) has no Topology, or the instance has no HyperNode tree at
    all (read as one flavor without a Topology)."""
    cj = problem.jobs[j]
    if cj.limit is not None or cj.gang_nodes or any(
            problem.subjobs[s].limit is not None for s in cj.subjobs):
        return False
    job = problem.instance.jobs[j]
    if job.topology_name is not None:
        return False
    return job.flavor is not None or len(problem.topology.names) <= 1


def flavor_nodes(problem: Problem, pool: np.ndarray | None) -> np.ndarray:
    """The nodes of a flavor (its node pool; every node for None) in name order, the order
    kube-scheduler's ties fall to here (upstream: at random)."""
    inside = np.arange(problem.n_nodes) if pool is None else np.flatnonzero(pool)
    names = np.array(problem.topology.node_names, dtype=object)[inside]
    return inside[np.argsort(names, kind="stable")]


def place_pods(problem: Problem, cap: Capacity, scoring: NodeScoring, j: int) -> Trial:
    """kube-scheduler's pod-by-pod run of job ``j``'s pending pods over its flavor's nodes, on a
    copy of the free capacity: every pod is tried (no gang plugin stops the run)."""
    cj = problem.jobs[j]
    trial = Trial(None, flavor_nodes(problem, cj.pool))
    run_groups(problem, cap, scoring, cj.groups, 0, trial, 0)
    return trial


def whole_subjobs(problem: Problem, pods: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The (group, node) ``pods`` a plan may bind: those of a SubJob of a subGroupPolicy that
    reaches its size (``subGroupSize``) with its running pods are kept; a lone pod of a SubJob
    short of it is left out (it holds its node but would break its SubJob's gang)."""
    count: dict[int, int] = {}
    for g, _ in pods:
        s = int(problem.group_subjob[g])
        count[s] = count.get(s, 0) + 1
    short = {s for s, n in count.items() if problem.subjobs[s].policy >= 0 and n
             + problem.running_count(problem.subjobs[s].groups) < problem.subjobs[s].min_available}
    return [(g, n) for g, n in pods if int(problem.group_subjob[g]) not in short]


def unbound_reason(placed: int, pending: int, needed: int) -> str:
    """Why an admitted non-TAS workload is not bound: ``placed`` of its ``pending`` pods found a
    node, short of its gang (``needed`` pods, each task and sub-group its minimum)."""
    return (f"Kueue admitted it by quota (its flavor has no Topology), but kube-scheduler finds a "
            f"node for only {placed} of its {pending} pending pods ({needed} needed, each task "
            "and sub-group its minimum; the others stay Pending, the workload keeps its quota "
            "until evicted by waitForPodsReady)")

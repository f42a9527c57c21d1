"""kube-scheduler's cycle for a CompositePodGroup hierarchy (a job whose gang tree the kube
reader made of CompositePodGroups and their PodGroups; ``docs/kube-fidelity.md``).

A unit is a CompositePodGroup (a GangNode; the job itself is the root, every direct member
required) or a PodGroup (a SubJob). Each unit generates its placements inside its parent's
placement (TopologyPlacement: the domains of its key, the one holding its pods when some run),
evaluates every one — a CompositePodGroup runs its children in order, each reserving its pods
for the next, and stops once ``minGroupCount`` is out of reach; a PodGroup runs its pods —,
scores the feasible ones with the pods proposed in the whole subtree, keeps the best and
reserves its pods (``compositePodGroupSchedulingPlacementAlgorithm``,
``podGroupSchedulingPlacementAlgorithm`` without the nominated fast path). A unit whose
placements cannot be generated is an Error status: the whole evaluation ends, nothing bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from toposolve.core.instance import KUBE_PODGROUP_LABEL
from toposolve.core.problem import Limit, Problem
from toposolve.engines.common.capacity import Capacity
from toposolve.engines.common.node_scores import NodeScoring
from toposolve.engines.common.pod_run import Trial, run_groups
from toposolve.engines.kube.placement import Domains, placement_scores, placements_of
from toposolve.engines.kube.reasons import NO_PLACEMENT, gang_unschedulable, placements_unavailable
from toposolve.engines.kube.scores import PlacementScoring


@dataclass
class Unit:
    """A CompositePodGroup (``children``) or a PodGroup (``groups`` only) of a hierarchy."""

    limit: Limit | None
    minimum: int  # minGroupCount (basic: 1) or the PodGroup's minCount
    groups: list[int]  # every pod group below it
    children: list[Unit] = field(default_factory=list)
    composite: bool = True


@dataclass
class Outcome:
    """One unit's evaluation: feasible or not, the pods it proposes (group, node), why not;
    ``error``: an Error status (TopologyPlacement could not generate placements), which ends
    the whole hierarchy's evaluation."""

    feasible: bool
    pods: list[tuple[int, int]] = field(default_factory=list)
    reason: str = ""
    error: bool = False
    # the first pod that found no node in the evaluation upstream reports: (its group, the
    # placement's nodes, their free capacity then), for its FitError event
    missed: tuple[int, np.ndarray, np.ndarray] | None = None
    # PlacementFeasible's last status when it refused the unit: (its minimum, members
    # scheduled, members left), for the parent's placements text
    stopped: tuple[int, int, int] | None = None


@dataclass
class Context:
    """What a hierarchy's evaluation reads and the capacity its reservations change."""

    problem: Problem
    cap: Capacity
    node: NodeScoring
    scoring: PlacementScoring
    domains: Domains


def is_hierarchy(problem: Problem, j: int) -> bool:
    """Whether job ``j`` is a CompositePodGroup hierarchy read by the kube reader."""
    keys = problem.jobs[j].policy_match_keys
    return bool(keys) and all(k == (KUBE_PODGROUP_LABEL,) for k in keys)


def hierarchy(problem: Problem, j: int) -> Unit:
    """Job ``j``'s root unit: its one top GangNode (the root CompositePodGroup), else the job
    over its top GangNodes and SubJobs, all required. Children: CompositePodGroups, then
    PodGroups, each in the reader's (creation) order. A GangNode needs at least one member
    (``basic`` is 1 in the model), as GangScheduling counts it: one whose children all fail is a
    failed child."""

    def subjob(s: int) -> Unit:
        sj = problem.subjobs[s]
        return Unit(sj.limit, sj.min_available, list(sj.groups), composite=False)

    def gang(k: int) -> Unit:
        g = problem.gang_nodes[k]
        kids = [gang(c) for c in g.children] + [subjob(s) for s in g.subjobs]
        # a basic group is min_members 1 in the model; a 0 from another format is minCount 1
        # to GangScheduling (getMinCount) too
        return Unit(g.limit, max(g.min_members, 1), [x for u in kids for x in u.groups], kids)

    cj = problem.jobs[j]
    tops = [gang(k) for k in cj.gang_nodes if problem.gang_nodes[k].parent == -1]
    tops += [subjob(s) for s in cj.subjobs if problem.subjobs[s].parent == -1]
    if len(tops) == 1 and cj.limit is None:  # the root CompositePodGroup (the reader's form)
        return tops[0]
    return Unit(cj.limit, len(tops), [x for u in tops for x in u.groups], tops)


def place(ctx: Context, unit: Unit, parent: np.ndarray) -> Outcome:
    """Evaluate ``unit`` inside the nodes ``parent`` (name order); on success its pods stay
    reserved in ``ctx.cap``."""
    problem, domains = ctx.problem, ctx.domains
    found = placements_of(problem, domains, unit.limit, unit.groups)
    if isinstance(found, str):
        return Outcome(False, reason=found, error=True)
    inside = [nodes for d in found
              if len(nodes := parent if d is None else _within(domains, d, parent))]
    feasible: list[tuple[np.ndarray, Outcome]] = []
    running = problem.running_count(unit.groups)
    first: Outcome | None = None  # upstream reports the first placement's results
    for nodes in inside:
        saved = ctx.cap.snapshot()
        outcome = _children(ctx, unit, nodes) if unit.composite else _pods(ctx, unit, nodes,
                                                                             running)
        ctx.cap.restore(saved)
        if outcome.error:
            return outcome
        first = first or outcome
        if outcome.feasible:
            feasible.append((nodes, outcome))
    if not feasible:
        status = None if first is None or first.stopped is None else gang_unschedulable(
            *first.stopped)
        return Outcome(False, reason=(placements_unavailable(len(inside), status) if inside
                                      else NO_PLACEMENT),
                       missed=None if first is None else first.missed)
    try:
        best = feasible[0 if len(feasible) == 1 else _best(ctx, feasible, running)][1]
    except ValueError as exc:  # PodGroupPodsCount's error status: no pod anywhere
        return Outcome(False, reason=str(exc))
    for g, n in best.pods:
        ctx.cap.take(g, n, 1)
    return best


def _within(domains: Domains, d: int, parent: np.ndarray) -> np.ndarray:
    nodes = domains.nodes(d, None)
    return nodes[np.isin(nodes, parent)]


def _pods(ctx: Context, unit: Unit, nodes: np.ndarray, running: int) -> Outcome:
    trial = Trial(None, nodes, record=True)
    ok = run_groups(ctx.problem, ctx.cap, ctx.node, unit.groups, unit.minimum, trial, running)
    missed = None if trial.missed is None else (trial.missed[0], nodes, trial.missed[1])
    stopped = None if trial.stopped is None else (unit.minimum, *trial.stopped)
    return Outcome(ok, trial.pods, missed=missed, stopped=stopped)


def _children(ctx: Context, unit: Unit, nodes: np.ndarray) -> Outcome:
    """The children in order, each reserving its pods for the next; PlacementFeasible
    (``minGroupCount``) stops the run once the minimum is out of reach."""
    pods: list[tuple[int, int]] = []
    missed = None  # the first child's pod that found no node, in evaluation order
    remaining, scheduled = len(unit.children), 0
    for child in unit.children:
        if scheduled + remaining < unit.minimum:
            return Outcome(False, missed=missed, stopped=(unit.minimum, scheduled, remaining))
        outcome = place(ctx, child, nodes)
        if outcome.error:  # upstream wraps the child's Error status and stops
            return Outcome(False, reason="composite pod group evaluation failed due to child "
                           f"error: {outcome.reason}", error=True)
        missed = missed or outcome.missed
        remaining -= 1
        if outcome.feasible:
            scheduled += 1
            pods += outcome.pods
    feasible = scheduled >= unit.minimum
    return Outcome(feasible, pods, missed=missed,
                   stopped=None if feasible else (unit.minimum, scheduled, 0))


def _best(ctx: Context, feasible: list[tuple[np.ndarray, Outcome]], running: int) -> int:
    """The index of the highest placement score (PlacementBinPacking over the placement's
    nodes with every proposed pod of the subtree, PodGroupPodsCount of its leaves); ties: the
    first in domain-name order."""
    problem, scoring = ctx.problem, ctx.scoring
    n = problem.n_nodes
    rows = sp.csr_matrix((np.ones(sum(len(nodes) for nodes, _ in feasible), dtype=np.int64),
                          np.concatenate([nodes for nodes, _ in feasible]),
                          np.cumsum([0] + [len(nodes) for nodes, _ in feasible])),
                         shape=(len(feasible), n))
    placed = np.array([len(o.pods) for _, o in feasible], dtype=np.int64)
    width = len(scoring.resources.columns)
    proposed = np.array([sum((scoring.resources.pod(problem, g) for g, _ in o.pods),
                             np.zeros(width, np.int64)) for _, o in feasible],
                        dtype=np.int64).reshape(len(feasible), -1)
    return int(placement_scores(problem, ctx.cap, rows, None, placed, proposed, running,
                                scoring).argmax())

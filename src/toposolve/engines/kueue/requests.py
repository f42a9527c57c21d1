"""A compiled job → the podset requests Kueue's TAS would place, in order.

Rules (topology requests, slices, partly running slices, podset groups): ``docs/kueue-fidelity.md``,
section ``toposolve.engines.kueue.requests``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from toposolve.core.instance import PARTITION_ID_LABEL
from toposolve.core.podset_groups import (
    GROUP_LABEL,
    PODSET_GANG_PREFIX,
    UNCONSTRAINED_LABEL,
    group_roles,
    is_group,
)
from toposolve.core.problem import Limit, Problem
from toposolve.engines.kueue.counts import PodSetRequest
from toposolve.engines.kueue.tree import DomainTree

NOT_SLICES = ("a gang tree that is not Kueue's multi-layer slices (layers of equal, "
              "hard-constrained members, all required) cannot be placed by Kueue")
NOT_A_GROUP = ("several tasks under one topology cannot be a Kueue podset group (exactly two "
               "podsets, one with a single pod)")


class KueueText(str):
    """A reason Kueue's TAS gives in these words for podset ``podset`` (it prints it after
    ``couldn't assign flavors to pod set <podset>: ``)."""

    podset: str = ""

    def __new__(cls, text: str, podset: str) -> KueueText:
        out = super().__new__(cls, text)
        out.podset = podset
        return out


@dataclass(frozen=True)
class Gates:
    """The Kueue feature gates the mirror honours (Kueue's defaults)."""

    profile_mixed: bool = True  # TASProfileMixed (beta, on): LeastFreeCapacity for unconstrained
    balanced_placement: bool = False  # TASBalancedPlacement (alpha, off)
    node_affinity_preferred: bool = False  # TASRespectNodeAffinityPreferred (alpha, off)


@dataclass
class JobRequest:
    groups: list[int]  # the workers' pod groups, in pod order (slices in partition order)
    spec: PodSetRequest
    leader: list[int] = field(default_factory=list)  # a podset group's leader pod group


def _ordered_groups(problem: Problem, groups: list[int]) -> list[int]:
    def key(g: int):
        s = problem.subjobs[int(problem.group_subjob[g])]
        return (s.match_index, s.id, g)

    return sorted((g for g in groups if problem.group_pending[g]), key=key)


def _split_group(problem: Problem, groups: list[int]) -> tuple[list[int], list[int]] | str:
    """(workers' groups, leader's groups) of the pending groups of one request."""
    tasks: dict[str, list[int]] = {}
    for g in sorted(groups):  # pod groups follow the tasks' declaration order
        tasks.setdefault(problem.group_task[g], []).append(g)
    if len(tasks) == 1:
        return groups, []
    parts = list(tasks.values())
    counts = [sum(len(problem.group_pending[g]) for g in part) for part in parts]
    if not is_group(counts):
        return NOT_A_GROUP
    workers, leader = group_roles(counts)
    return [g for g in groups if g in parts[workers]], parts[leader]


def _pods(problem: Problem, s: int) -> int:
    """SubJob ``s``'s pending pods."""
    return sum(len(problem.group_pending[g]) for g in problem.subjobs[s].groups)


def _short(problem: Problem, s: int) -> bool:
    """Whether SubJob ``s`` can never fill: a podset's last, incomplete slice (Kueue places
    ``count // size`` whole slices and gives the rest no domain)."""
    return _pods(problem, s) < problem.subjobs[s].min_available


def _slices(problem: Problem, subjobs: list[int], tree: DomainTree) -> tuple[int, int] | str:
    """(slice level, slice size) of constrained SubJobs of equal size, or why they are not
    slices."""
    limits = {problem.subjobs[s].limit for s in subjobs}
    sizes = {_pods(problem, s) for s in subjobs}
    if len(limits) != 1 or len(sizes) != 1:
        return "SubJobs of unequal size or topology cannot be Kueue podset slices"
    limit = limits.pop()
    return min(limit.tier, tree.top), sizes.pop()


def _chain(problem: Problem, s: int) -> list[int]:
    """The GangNodes above SubJob ``s``, outermost first."""
    chain: list[int] = []
    n = problem.subjobs[s].parent
    while n >= 0:
        chain.append(n)
        n = problem.gang_nodes[n].parent
    return chain[::-1]


def _layers(problem: Problem, subjobs: list[int], tree: DomainTree,
            below: int = -1) -> list[tuple[int, int]] | str:
    """(level, slice size) per layer of multi-layer slices, outermost first: the GangNodes above
    the SubJobs (those below GangNode ``below`` when it is given), then the SubJobs; or why the
    tree is not Kueue's multi-layer slices (every layer of equal, hard-constrained members, each
    needing all of its members)."""
    chains = [_chain(problem, s) for s in subjobs]
    if below >= 0:
        chains = [chain[chain.index(below) + 1:] for chain in chains]
    pods: dict[int, int] = {}
    for s, chain in zip(subjobs, chains, strict=True):
        for n in chain:
            pods[n] = pods.get(n, 0) + sum(len(problem.group_pending[g])
                                           for g in problem.subjobs[s].groups)
    layers: list[tuple[int, int]] = []
    for k in range(max(len(chain) for chain in chains)):
        nodes = {chain[k] if k < len(chain) else -1 for chain in chains}
        shapes = {(problem.gang_nodes[n].limit, pods[n]) for n in nodes if n >= 0}
        if -1 in nodes or len(shapes) != 1 or any(_partial(problem, n) for n in nodes):
            return NOT_SLICES
        limit, size = shapes.pop()
        if limit is None or not limit.hard:
            return NOT_SLICES
        layers.append((max(min(limit.tier, tree.top), tree.lowest), size))
    got = _slices(problem, subjobs, tree)
    if isinstance(got, str):
        return got
    return [*layers, (max(got[0], tree.lowest), got[1])]


def _running_node(problem: Problem, n: int) -> int | None:
    """The lowest-indexed node running a pod below GangNode ``n`` (None: none runs)."""
    node = problem.gang_nodes[n]
    found = [m for s in node.subjobs for g in problem.subjobs[s].groups
             for m in problem.group_running[g]]
    found += [m for c in node.children if (m := _running_node(problem, c)) is not None]
    return min(found, default=None)


def _anchor(problem: Problem, subjobs: list[int]) -> int | str:
    """The innermost GangNode above the pending SubJobs that already runs pods (-1: none), where
    their replacement must go; or why it is not one node for all of them."""
    job = problem.jobs[int(problem.subjobs[subjobs[0]].job)]
    busy: set[int] = set()  # GangNodes with a running pod below them
    for s in job.subjobs:
        if any(problem.group_running[g] for g in problem.subjobs[s].groups):
            busy.update(_chain(problem, s))
    anchors = set()
    for s in subjobs:
        running = [n for n in _chain(problem, s) if n in busy]
        anchors.add(running[-1] if running else -1)
    if len(anchors) > 1:
        return "pods to replace in several multi-layer slices at once: not mirrored"
    return anchors.pop()


def _partial(problem: Problem, n: int) -> bool:
    node = problem.gang_nodes[n]
    return node.min_members < len(node.children) + len(node.subjobs)


def _inner_sizes(tree: DomainTree, layers: list[tuple[int, int]]) -> dict[int, int] | str:
    """Kueue's ``buildSliceSizeAtLevel``: every level below the slice level down to an inner
    layer's level splits in multiples of that layer's size; or Kueue's reason a layer is wrong."""
    inner: dict[int, int] = {}
    prev_level, prev_size = layers[0]
    for level, size in layers[1:]:
        if level >= prev_level:
            return (f"additional slice layer topology {tree.level_name(level)} must be at a lower "
                    f"level than {tree.level_name(prev_level)}")
        if prev_size % size:
            return (f"additional slice layer size {size} must evenly divide parent layer size "
                    f"{prev_size}")
        for t in range(level, prev_level):
            inner[t] = size
        prev_level, prev_size = level, size
    return inner


def _request(problem: Problem, tree: DomainTree, groups: list[int], limit: Limit | None,
             gates: Gates) -> JobRequest | str:
    split = _split_group(problem, groups)
    if isinstance(split, str):
        return split
    workers, leader = split
    g0 = workers[0]
    root_tier = problem.topology.max_tier
    constrained = limit is not None and not (limit.hard and limit.tier >= root_tier)
    if constrained:
        level = limit.tier if limit.hard else (limit.preferred or limit.tier)
        level = max(min(level, tree.top), tree.lowest)
    else:
        level = tree.lowest
    feasible = np.logical_and.reduce([problem.group_feasible[g] for g in workers])
    # a Workload's unconstrained beside its level: Kueue keeps the level, its algorithm changes
    labels = problem.jobs[int(problem.group_job[g0])].task_labels[problem.group_task[g0]]
    unconstrained = not constrained or labels.get(UNCONSTRAINED_LABEL) == "true"
    spec = PodSetRequest(
        request=problem.group_request[g0],
        feasible=feasible,
        slice_level=tree.lowest,
        slice_size=1,
        leader_request=problem.group_request[leader[0]] if leader else None,
        leader_feasible=np.logical_and.reduce([problem.group_feasible[g] for g in leader])
        if leader
        else None,
        count=sum(len(problem.group_pending[g]) for g in workers),
        level=level,
        required=bool(constrained and limit.hard),
        unconstrained=unconstrained,
        least_free=unconstrained and gates.profile_mixed,
        balanced=gates.balanced_placement,
        preference=_preference(problem, g0) if gates.node_affinity_preferred else None,
    )
    return JobRequest(workers, spec, leader)


def _preference(problem: Problem, g: int) -> np.ndarray:
    """The workers' preferred node-affinity scores (zeros without preferred terms)."""
    score = problem.group_preference[g]
    return np.zeros(problem.n_nodes, dtype=np.int64) if score is None else score


def _with_slices(problem: Problem, tree: DomainTree, req: JobRequest,
                 subjobs: list[int], below: int = -1) -> JobRequest | str:
    """The request with the slices of the workers' constrained SubJobs (the leader's are its
    own); ``below``: the podset's own GangNode above them (-1: none)."""
    workers = set(req.groups)
    pending = [
        s
        for s in subjobs
        if any(problem.group_pending[g] and g in workers for g in problem.subjobs[s].groups)
    ]
    if not pending:
        return req
    if any(problem.subjobs[s].parent not in (-1, below) for s in pending):
        # an incomplete outer slice is a SubJob beside the layers, its pods last in the count
        return _with_layers(problem, tree, req, [s for s in pending if not _short(problem, s)
                                                  and problem.subjobs[s].parent >= 0], below)
    # Kueue places count // size whole slices; the last, incomplete one gets no domain
    whole = [s for s in pending if not _short(problem, s)]
    got = _slices(problem, whole or pending, tree)
    if isinstance(got, str):
        return got
    req.spec.slice_level, req.spec.slice_size = max(got[0], tree.lowest), got[1]
    return req


def _with_layers(problem: Problem, tree: DomainTree, req: JobRequest,
                 pending: list[int], below: int = -1) -> JobRequest | str:
    """The request with the slices below GangNodes (multi-layer slices, or slices below the
    podset's own GangNode ``below``). When a slice of an outer layer already runs pods (node
    replacement), the pending pods are required inside the domain of its level holding them, in
    the layers below it."""
    if req.leader:
        return "a Kueue podset group takes no multi-layer slices"
    anchor = _anchor(problem, pending)
    if isinstance(anchor, str):
        return anchor
    layers = _layers(problem, pending, tree, anchor if anchor >= 0 else below)
    if isinstance(layers, str):
        return layers
    inner = _inner_sizes(tree, layers)
    if isinstance(inner, str):
        return KueueText(inner, problem.group_task[req.groups[0]])
    spec = req.spec
    if len(layers) > 1:
        spec.layers, spec.inner = layers, inner
    spec.slice_level, spec.slice_size = layers[0]
    if anchor >= 0:
        limit = problem.gang_nodes[anchor].limit
        first = _running_node(problem, anchor)
        assert limit is not None and first is not None  # a hard slice that runs pods
        spec.feasible = spec.feasible & replacement_domain(problem, [first], limit.tier)
        spec.level = max(min(limit.tier, tree.top), tree.lowest)
        spec.required, spec.unconstrained, spec.least_free = True, False, False
    # each outer slice's pods consecutive (a stable sort): Kueue hands pods out in order, the
    # incomplete outer slice's last
    def order(g: int) -> tuple[bool, list[int]]:
        s = int(problem.group_subjob[g])
        return _short(problem, s), _chain(problem, s)

    req.groups.sort(key=order)
    return req


def replacement_domain(problem: Problem, running: Sequence[int], tier: int) -> np.ndarray:
    """Nodes of the lowest domain of tier ≥ ``tier`` holding every node of ``running`` (Kueue's
    ``requiredReplacementDomain``: where a running workload's missing pods must go); none when
    no domain at or below ``tier`` holds them all (a node outside the tree, or pods already in
    two such domains: any pod added would break the limit)."""
    topo = problem.topology
    held = topo.lca_of_nodes(sorted(running))
    if topo.tier[held] > tier:
        return np.zeros(problem.n_nodes, dtype=bool)
    domain = next((h for h in topo.ancestors(held) if topo.tier[h] >= tier), topo.root)
    inside = np.zeros(problem.n_nodes, dtype=bool)
    inside[problem.nodes_in(domain)] = True
    return inside


def _partly_running(problem: Problem, subjobs: list[int]) -> list[int]:
    """Hard-constrained SubJobs (slices) with running and pending pods."""
    out = []
    for s in subjobs:
        sj = problem.subjobs[s]
        if (sj.limit is not None and sj.limit.hard
                and any(problem.group_running[g] for g in sj.groups)
                and any(problem.group_pending[g] for g in sj.groups)):
            out.append(s)
    return out


def _replacements(problem: Problem, tree: DomainTree, subjobs: list[int],
                  gates: Gates) -> list[JobRequest] | str:
    """One required request per partly running slice, confined to the domain of its slice level
    that holds its running pods: Kueue replaces missing pods there, never elsewhere."""
    out: list[JobRequest] = []
    for s in subjobs:
        sj = problem.subjobs[s]
        running = [n for g in sj.groups for n in problem.group_running[g]]
        req = _request(problem, tree, _ordered_groups(problem, sj.groups), sj.limit, gates)
        if isinstance(req, str):
            return req
        req.spec.feasible = req.spec.feasible & replacement_domain(problem, running,
                                                                   sj.limit.tier)
        out.append(req)
    return out


def _podset_node(problem: Problem, n: int) -> bool:
    """Whether GangNode ``n`` is a podset's (or podset group's) own level above its slices (the
    Kueue reader's ``podset-<podsets>``), not a slice layer."""
    node = problem.gang_nodes[n]
    first: dict[str, int] = {}  # task → its first pod group: the tasks in declaration order
    for s in _subjobs_below(problem, n):
        for g in problem.subjobs[s].groups:
            first[problem.group_task[g]] = min(first.get(problem.group_task[g], g), g)
    unit = "-".join(sorted(first, key=first.__getitem__))
    return node.parent < 0 and node.id == f"{problem.jobs[node.job].key}/{PODSET_GANG_PREFIX}{unit}"


def _own_node(problem: Problem, s: int) -> int:
    """The podset's own GangNode above SubJob ``s`` (-1: none)."""
    chain = _chain(problem, s)
    return chain[0] if chain and _podset_node(problem, chain[0]) else -1


def _leader_subjobs(problem: Problem, n: int) -> list[int]:
    """The unconstrained SubJobs right below podset GangNode ``n``: a podset group's leader."""
    return [s for s in problem.gang_nodes[n].subjobs if problem.subjobs[s].limit is None]


def _subjobs_below(problem: Problem, n: int) -> list[int]:
    node = problem.gang_nodes[n]
    return node.subjobs + [s for c in node.children for s in _subjobs_below(problem, c)]


def _slice_tree_shape(problem: Problem, j: int) -> bool:
    """Whether job ``j``'s GangNodes (if any) can be Kueue's multi-layer slices, below a podset's
    own GangNode or not: every GangNode of a layer and every SubJob below one hard-constrained,
    every layer's GangNode needing all of its members."""
    cj = problem.jobs[j]
    own = [n for n in cj.gang_nodes if _podset_node(problem, n)]
    layers = [n for n in cj.gang_nodes if n not in own]
    leaders = {s for n in own for s in _leader_subjobs(problem, n)}
    below = [problem.subjobs[s] for n in cj.gang_nodes for s in problem.gang_nodes[n].subjobs
             if s not in leaders]
    return all((node := problem.gang_nodes[n]).limit is not None and node.limit.hard
               and not _partial(problem, n) for n in layers) and all(
        sj.limit is not None and sj.limit.hard for sj in below)


def job_requests(problem: Problem, tree: DomainTree, j: int,
                 gates: Gates = Gates()) -> list[JobRequest] | str:
    cj = problem.jobs[j]
    if not _slice_tree_shape(problem, j):
        return NOT_SLICES
    constrained_sjs = [
        s
        for s in cj.subjobs
        if problem.subjobs[s].policy >= 0 and problem.subjobs[s].limit is not None
    ]
    if cj.limit is not None:
        partial = _partly_running(problem, constrained_sjs)
        replaced = _replacements(problem, tree, partial, gates)
        if isinstance(replaced, str):
            return replaced
        taken = {g for s in partial for g in problem.subjobs[s].groups}
        groups = _ordered_groups(problem, [g for g in cj.groups if g not in taken])
        if not groups:
            return replaced
        req = _request(problem, tree, groups, cj.limit, gates)
        if isinstance(req, str):
            return req
        req = _with_slices(problem, tree, req, [s for s in constrained_sjs if s not in partial])
        req = _slice_above(tree, req)
        if isinstance(req, str):
            return req
        return [*replaced, req]
    return _podset_requests(problem, tree, j, constrained_sjs, gates)


def _slice_above(tree: DomainTree, req: JobRequest | str) -> JobRequest | str:
    """``findTopologyAssignment``'s check of a podset whose slice level is above its level (an
    unconstrained one has none: the slices' level is the request's)."""
    if isinstance(req, str) or req.spec.slice_level <= req.spec.level:
        return req
    if not req.spec.unconstrained:
        problem = tree.problem
        return KueueText(
            f"podset slice topology {tree.level_name(req.spec.slice_level)} is above the "
            f"podset topology {tree.level_name(req.spec.level)}", problem.group_task[req.groups[0]])
    req.spec.level = req.spec.slice_level
    return req


def _sliced_request(problem: Problem, tree: DomainTree, sjs: list[int], groups: list[int],
                    gates: Gates) -> JobRequest | str:
    """The request of a podset's slices ``sjs`` (pending pod groups ``groups``): below its own
    GangNode, at that node's level with a podset group's leader carried along; else slice-only
    (Kueue: at the highest level)."""
    own = _own_node(problem, sjs[0])
    limit = None
    if own >= 0:
        limit = problem.gang_nodes[own].limit
        groups = _ordered_groups(problem, groups + [
            g for s in _leader_subjobs(problem, own) for g in problem.subjobs[s].groups])
    req = _request(problem, tree, groups, limit, gates)
    if isinstance(req, str):
        return req
    if own < 0:
        req.spec.level = tree.top
    return _slice_above(tree, _with_slices(problem, tree, req, sjs, own))


def _podset_requests(problem: Problem, tree: DomainTree, j: int, constrained_sjs: list[int],
                     gates: Gates) -> list[JobRequest] | str:
    """Requests of a job without a job-level topology: per constrained policy, then the rest."""
    cj = problem.jobs[j]
    requests: list[JobRequest] = []
    covered: set[int] = set()
    by_policy: dict[int, list[int]] = {}
    tree_policy: dict[str, int] = {}  # a podset's multi-layer slices: one request, many policies
    # a podset group's leader below its own GangNode: placed with the workers' slices
    covered.update(g for n in cj.gang_nodes if _podset_node(problem, n)
                   for s in _leader_subjobs(problem, n) for g in problem.subjobs[s].groups)
    for s in sorted(constrained_sjs, key=lambda s: problem.subjobs[s].parent < 0):
        sj = problem.subjobs[s]
        p = sj.policy
        task = problem.group_task[sj.groups[0]]
        # below GangNodes, or its incomplete outer slice beside them
        if sj.parent >= 0 or (task in tree_policy and _short(problem, s)):
            p = tree_policy.setdefault(task, p)
        by_policy.setdefault(p, []).append(s)
    for p, sjs in sorted(by_policy.items()):
        covered.update(g for s in sjs for g in problem.subjobs[s].groups)
        partial = _partly_running(problem, sjs)
        replaced = _replacements(problem, tree, partial, gates)
        if isinstance(replaced, str):
            return replaced
        requests.extend(replaced)
        sjs = [s for s in sjs if s not in partial]
        groups = _ordered_groups(problem, [g for s in sjs for g in problem.subjobs[s].groups])
        if not groups:
            continue
        if PARTITION_ID_LABEL in cj.policy_match_keys[p] or len(sjs) > 1:
            req = _sliced_request(problem, tree, sjs, groups, gates)
        else:
            req = _request(problem, tree, groups, problem.subjobs[sjs[0]].limit, gates)
        if isinstance(req, str):
            return req
        requests.append(req)
    rest: dict[tuple[str, str], list[int]] = {}
    for g in cj.groups:
        if g not in covered and problem.group_pending[g]:
            task = problem.group_task[g]
            group = cj.task_labels[task].get(GROUP_LABEL)
            rest.setdefault(("task", task) if group is None else ("group", group), []).append(g)
    for groups in rest.values():
        req = _request(problem, tree, _ordered_groups(problem, groups), None, gates)
        if isinstance(req, str):
            return req
        requests.append(req)
    # Kueue places podsets in spec order
    return sorted(requests, key=lambda r: min(r.groups + r.leader))

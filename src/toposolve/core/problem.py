"""Compile an :class:`Instance` into the array form engines read.

Pods are grouped into **pod groups**: pods of one job, one task and one SubJob are
interchangeable (same requests, same predicates, same gang), so engines reason about counts of a
group on a node instead of individual pods. Names come back only when a plan is written.

SubJob ids follow Volcano's network-topology design: a pod that matches no ``subGroupPolicy``
is in the SubJob whose id is the job id; a pod matching a policy (first matching policy wins) is in
``<job id>/<policy name>-<values of matchLabelKeys joined by '-'>``.

What Volcano accepts is compiled as Volcano reads it (the loaders print the warning lines):

* a ``highestTierName`` no HyperNode's ``tierName`` names is dropped: a hard spec becomes no
  constraint (Volcano leaves ``highestTierAllowed`` nil, so the job is not in hard mode), a soft
  one stays soft up to the root;
* a running pod whose node is not in the instance counts toward its gangs and its queue but
  uses no node's capacity and lies in no HyperNode (``group_running_absent``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from toposolve.core.budgets import CompiledBudget, compile_budgets
from toposolve.core.device_arrays import DeviceArrays
from toposolve.core.errors import InputError, require_type
from toposolve.core.instance import (
    NODE_NAME_FIELD,
    Instance,
    Job,
    NetworkTopology,
    PodConstraints,
    PreferredTerm,
    Queue,
    Task,
)
from toposolve.core.kube_scoring import KubeScoring
from toposolve.core.limits import MAX_HYPERNODES, MAX_NODES, MAX_PODS, UNLIMITED
from toposolve.core.refusal import MISSING_LEVEL, NEVER_PLACED, Refusal, refusal_of
from toposolve.core.topology import Topology, build_topology, requirement_matches, selector_matches

POD_COUNT_RESOURCE = "pods"


@dataclass(frozen=True)
class Limit:
    """A compiled network-topology constraint: ``hard`` with a tier limit, or ``soft``."""

    hard: bool
    tier: int  # highest tier allowed (the root's tier when unlimited)
    preferred: int | None = None  # Kueue/KAI preferred tier (tried first), None for Volcano specs
    tree: str | None = None  # the constraint tree its tiers are in (``Problem.trees``), None: main


@dataclass
class SubJob:
    id: str
    job: int
    policy: int  # index into the job's subgroup policies, -1 for the job-level SubJob
    min_available: int  # SubJob gang: subGroupSize (1 by default)
    limit: Limit | None
    match_index: int  # first matched label value as an integer (0 if not numeric)
    priority: int
    groups: list[int] = field(default_factory=list)
    parent: int = -1  # the GangNode it belongs to (index into Problem.gang_nodes), -1: the job
    depth: int = 2  # its level in the gang tree: the job is 1, a direct member of the job 2


@dataclass
class GangNode:
    """An inner node of a job's gang tree (between the job and its SubJobs): see
    :class:`Problem`."""

    id: str  # "<job key>/<GangGroup name>"
    job: int
    parent: int  # index into Problem.gang_nodes, -1: the job
    depth: int  # 2: a direct member of the job, 3: a member of a depth-2 node, …
    min_members: int  # direct members (nodes and SubJobs) that must be satisfied
    limit: Limit | None
    children: list[int] = field(default_factory=list)  # GangNodes directly below, declaration order
    subjobs: list[int] = field(default_factory=list)  # SubJobs directly below, creation order


@dataclass
class CompiledJob:
    key: str
    index: int
    queue: str
    priority: int
    creation_index: int
    min_available: int
    limit: Limit | None
    subjobs: list[int] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    # per policy index: minimum number of ready SubJobs of that policy
    min_subjobs: dict[int, int] = field(default_factory=dict)
    # per role (``Task.role_name``, the task name unless set): minimum ready pods of that role
    min_per_task: dict[str, int] = field(default_factory=dict)
    # per subGroupPolicy (index order): its matchLabelKeys
    policy_match_keys: list[tuple[str, ...]] = field(default_factory=list)
    # PodGroup spec.minResources by resource name; empty: not given
    min_resources: dict[str, int] = field(default_factory=dict)
    # [N] bool: the nodes of the job's node pool (Kueue's flavor nodes), None for all nodes
    pool: np.ndarray | None = None
    # its GangNodes (indices into Problem.gang_nodes), parents before children; empty: depth 2
    gang_nodes: list[int] = field(default_factory=list)
    # per task name: its pod template's labels, the instance's own dicts (read-only; engines read
    # roles such as a podset group here)
    task_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    # defragmentation: whether the job may be moved, and the price of moving it (None: its
    # running pod count)
    movable: bool = True
    move_cost: int | None = None
    # ``toposolve.io/parallelism`` (canonical text; docs/ranks.md), None: no layout given
    parallelism: str | None = None

    @property
    def has_topology(self) -> bool:
        return self.limit is not None

    @property
    def has_subgroup_policies(self) -> bool:
        return bool(self.policy_match_keys)


class RunningPod(NamedTuple):
    """A pod that holds a node before the plan (an eviction candidate). A named tuple: a
    replay compiles one per busy node every cycle, and tuples are built several times faster."""

    name: str  # full name "ns/pod"
    job: int
    group: int
    subjob: int
    task: str  # the role its task plays (``Task.role_name``), which per-role minimums count
    task_position: int  # declaration order of the task in its job
    index: int  # pod index inside its task (higher = created later)
    node: int


@dataclass
class Problem:
    """The compiled instance: everything an engine reads, as arrays and indices.

    Engines read only this (never the :class:`Instance` it came from, which stays for the
    independent checker and for writing plans). Resource amounts are int64 milli-units. Pods
    are counted per pod group (one job, task and SubJob: interchangeable pods); ``running``
    lists the pods already holding nodes, so a problem can be the cluster as it is mid-replay.

    **Gang tree.** A job's gang is a tree: the job (depth 1) over its SubJobs (depth 2), the
    Volcano ``subGroupPolicy`` semantics. Deeper hierarchies (KAI SubGroups with child SubGroups)
    add inner nodes, ``gang_nodes``, kept flat: each :class:`GangNode` and each
    :class:`SubJob` names its ``parent`` (an index into ``gang_nodes``, -1 for the job) and its
    ``depth``; a job lists its nodes parents first. A node is satisfied when ``min_members`` of
    its direct members are (a SubJob at its ``min_available``), and with a hard ``limit`` all its
    pods lie in one domain of tier ≤ ``limit.tier`` (``limit.preferred``: the soft tier tried
    first). A depth-2 instance has no ``gang_nodes`` and every SubJob's parent is -1: it compiles
    exactly as before the tree existed. Engines that cannot honour a deeper tree refuse it
    (:func:`toposolve.engines.contract.require_depth`).
    """

    instance: Instance
    topology: Topology
    resources: tuple[str, ...]
    allocatable: np.ndarray  # [N, R]
    used: np.ndarray  # [N, R] by running pods
    schedulable: np.ndarray  # [N] bool
    jobs: list[CompiledJob]
    subjobs: list[SubJob]
    queues: dict[str, Queue]  # declared queues by name
    # pod groups
    group_job: np.ndarray  # [G]
    group_subjob: np.ndarray  # [G]
    group_task: list[str]  # [G] task name
    group_priority: list[int]  # [G] the pods' priority (their PriorityClass, else the job's)
    group_request: np.ndarray  # [G, R]
    group_feasible: np.ndarray  # [G, N] bool: predicates and schedulability
    group_pending: list[list[str]]  # [G] full names of pending pods, in pod-index order
    group_running: list[dict[int, int]]  # [G] node -> running pod count
    group_running_absent: list[int]  # [G] running pods on nodes the instance does not have
    running_pods: dict[str, int]  # full pod name -> node index (running pods on known nodes)
    pod_group: dict[str, int]  # full pod name -> group
    # on known nodes; job, task, index order
    running: list[RunningPod] = field(default_factory=list)
    scheduler: str = "volcano"  # the scheduler the input was written for (volcano, kueue, kai)
    # [G] per group: [N] int64 summed weights of the preferred node-affinity terms each node
    # matches, None without such terms (no engine must honour them; Kueue can order by them)
    group_preference: list[np.ndarray | None] = field(default_factory=list)
    gang_nodes: list[GangNode] = field(default_factory=list)  # inner gang-tree nodes, see above
    budgets: list[CompiledBudget] = field(default_factory=list)  # PodDisruptionBudgets
    # group -> [R] the pods' scoring request where it differs from ``group_request`` (a Task's
    # ``score_requests``: kube-scheduler's scores count an unset cpu / memory as a default)
    group_score_overrides: dict[int, np.ndarray] = field(default_factory=dict)
    kube_scoring: KubeScoring | None = None  # the input's kube-scheduler score configuration
    # group -> [pending pods] the node index each pending pod is nominated to (-1: none or a node
    # the instance lacks), for groups with a nomination (``Task.nominated``; kube engine only)
    group_nominated: dict[int, list[int]] = field(default_factory=dict)
    # the instance's constraint trees by name (Topologies crossing the main tree over the same
    # nodes): a limit with ``tree`` set is measured in ``trees[tree]``, never in ``topology``
    trees: dict[str, Topology] = field(default_factory=dict)
    # jobs with pods under a constraint no node satisfies (a level its tree lacks, a request its
    # scheduler never places) → why, in job order: those pods' groups have no candidate node
    refused_jobs: dict[int, Refusal] = field(default_factory=dict)
    # [G] the role the group's pods count toward in ``CompiledJob.min_per_task`` (``Task.role``,
    # else the task name) and the task's position in its job (``instance.jobs[j].tasks``)
    group_role: list[str] = field(default_factory=list)
    group_task_position: list[int] = field(default_factory=list)

    @property
    def unplaceable_jobs(self) -> dict[int, str]:
        """Jobs with pods under a constraint naming a level its tree lacks → that level
        (:attr:`refused_jobs` of kind ``missing_level``)."""
        return {j: r.why for j, r in self.refused_jobs.items() if r.kind == MISSING_LEVEL}

    @property
    def never_placed_jobs(self) -> dict[int, str]:
        """Jobs with pods under a constraint their scheduler never places → its reason
        (:attr:`refused_jobs` of kind ``never_placed``)."""
        return {j: r.why for j, r in self.refused_jobs.items() if r.kind == NEVER_PLACED}

    def task_of(self, g: int) -> Task:
        """The instance's task whose pods form group ``g`` (looked up by its position, as task
        names of a job need not differ in every reader's model)."""
        return self.instance.jobs[int(self.group_job[g])].tasks[self.group_task_position[g]]

    def topology_of(self, limit: Limit | None) -> Topology:
        """The tree ``limit``'s tiers are in: its constraint tree, else the main topology."""
        return self.topology if limit is None or limit.tree is None else self.trees[limit.tree]

    @cached_property
    def crossing_jobs(self) -> dict[int, str]:
        """Jobs with a limit in a constraint tree (theirs, a GangNode's or a SubJob's) → the first
        such tree's name, in job order (empty without constraint trees)."""
        if not self.trees:
            return {}
        out: dict[int, str] = {}
        limits = [(cj.index, cj.limit) for cj in self.jobs]
        limits += [(n.job, n.limit) for n in self.gang_nodes]
        limits += [(s.job, s.limit) for s in self.subjobs]
        for j, limit in limits:
            if limit is not None and limit.tree is not None:
                out.setdefault(j, limit.tree)
        return dict(sorted(out.items()))
    # per-device sharing (docs/formats.md): the resource placed per device (-1: none, and the
    # arrays below are empty), whole devices per node, thousandths of each device the running
    # pods hold ([N, D]; slots past a node's devices count as full), and each group's shape:
    # thousandths of each device and how many devices a pod takes (0, 0: no device)
    device_resource: int = -1
    node_devices: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    device_used: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    group_device_milli: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    group_device_count: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # running pod (full name) -> device of its node -> thousandths it holds (what evicting it
    # frees)
    running_device_use: dict[str, dict[int, int]] = field(default_factory=dict)

    @property
    def has_devices(self) -> bool:
        """Is a resource placed per device (some task shares one per device)?"""
        return self.device_resource >= 0

    def device_shape(self, g: int) -> tuple[int, int]:
        """Group ``g``'s device shape on a problem with devices: thousandths of each device and
        how many devices one pod takes ((0, 0): none)."""
        return int(self.group_device_milli[g]), int(self.group_device_count[g])

    def score_request(self, g: int) -> np.ndarray:
        """[R] what a pod of group ``g`` requests in kube-scheduler's scores: the task's
        ``score_requests`` where given, else its request."""
        override = self.group_score_overrides.get(g)
        return self.group_request[g] if override is None else override

    # ---- gang tree -------------------------------------------------------------------------
    def gang_depth(self, j: int) -> int:
        """Levels of job ``j``'s gang tree: 2 for job → SubJob, 3 with one level of GangNodes, …"""
        return max((self.subjobs[s].depth for s in self.jobs[j].subjobs), default=2)

    @cached_property
    def max_gang_depth(self) -> int:
        """The deepest gang tree of any job (2 without GangNodes)."""
        return max((self.subjobs[s].depth for n in self.gang_nodes for s in n.subjobs), default=2)

    # ---- sizes and indices -----------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return self.allocatable.shape[0]

    @property
    def n_groups(self) -> int:
        return len(self.group_job)

    @property
    def node_index(self) -> dict[str, int]:
        return self.topology.node_index

    @property
    def source(self) -> str:
        """The file the instance was read from (for one-line errors naming it; ``"<memory>"`` if
        built in Python)."""
        return self.instance.source

    @cached_property
    def resource_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.resources)}

    def resource_vector(self, amounts: Mapping[str, int], missing: float = 0) -> np.ndarray:
        """``amounts`` by resource name as a float [R] vector (``missing`` where not listed;
        names the problem does not know are dropped)."""
        out = np.full(len(self.resources), missing, dtype=float)
        for name, amount in amounts.items():
            i = self.resource_index.get(name)
            if i is not None:
                out[i] = amount
        return out

    # ---- pods: pending and running ---------------------------------------------------------
    def group_pending_count(self, g: int) -> int:
        return len(self.group_pending[g])

    def group_running_count(self, g: int) -> int:
        """Running pods of group ``g``, those on nodes absent from the instance included."""
        return sum(self.group_running[g].values()) + self.group_running_absent[g]

    def group_size(self, g: int) -> int:
        """Pods of group ``g`` that exist: pending and running."""
        return len(self.group_pending[g]) + self.group_running_count(g)

    def running_count(self, groups: Iterable[int]) -> int:
        """Running pods of ``groups``."""
        return sum(self.group_running_count(g) for g in groups)

    def running_per_group(self, groups: Iterable[int]) -> dict[int, int]:
        """Running pods of each of ``groups``."""
        return {g: self.group_running_count(g) for g in groups}

    def job_running_count(self, j: int) -> int:
        return self.running_count(self.jobs[j].groups)

    def has_pending(self, j: int) -> bool:
        """Does job ``j`` have pods to place?"""
        return any(self.group_pending[g] for g in self.jobs[j].groups)

    @cached_property
    def pending_jobs(self) -> list[int]:
        """Jobs with pods to place, in job order."""
        return [cj.index for cj in self.jobs if self.has_pending(cj.index)]

    # ---- queues and topology ---------------------------------------------------------------
    def queue_usage(self) -> dict[str, np.ndarray]:
        """[R] float resources the running pods of each queue hold (pods on absent nodes
        included), summed group by group: milli-bytes over many pods overflow int64."""
        usage: dict[str, np.ndarray] = {}
        job_of = self.group_job.tolist()
        for g, (running, absent) in enumerate(
            zip(self.group_running, self.group_running_absent, strict=True)):
            if running or absent:
                total = sum(running.values()) + absent
                queue = self.jobs[job_of[g]].queue
                amount = total * self.group_request[g].astype(float)
                usage[queue] = amount if queue not in usage else usage[queue] + amount
        return usage

    def queue(self, name: str) -> Queue:
        """The queue ``name`` as declared, or a default queue of that name."""
        return self.queues.get(name) or Queue(name=name)

    @cached_property
    def _members(self) -> sp.csr_matrix:
        members = self.topology.members.tocsr(copy=True)
        members.sort_indices()
        return members

    def nodes_in(self, h: int) -> np.ndarray:
        """Nodes under HyperNode ``h``, ascending."""
        m = self._members
        return m.indices[m.indptr[h] : m.indptr[h + 1]]


def _limit(topology: Topology, spec: NetworkTopology | None) -> Limit | None:
    """The compiled ``spec``, its tiers read in ``topology`` (the spec's own tree)."""
    if spec is None:
        return None
    name = spec.highest_tier_name
    unknown_name = name is not None and name not in topology.tier_name_to_tier
    if unknown_name:
        # Volcano cannot translate the name: the spec keeps no tier, so it is not hard mode
        return None if spec.mode == "hard" else Limit(hard=False, tier=topology.max_tier)
    tier = topology.tier_limit(spec.highest_tier_allowed, spec.highest_tier_name)
    # a limit at or above the root's tier allows everything: clamp it so arrays can hold it
    return Limit(hard=spec.mode == "hard", tier=min(tier, topology.max_tier),
                 preferred=spec.preferred_tier, tree=spec.tree)


def _both(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """The nodes in both masks, None standing for every node (the same mask: itself, no copy;
    masks come from one cache, so a SubGroup in its job's Topology shares the job's)."""
    if a is None or b is None or a is b:
        return b if a is None else a
    return a & b


def _tolerated(constraints: PodConstraints, key: str, value: str, effect: str) -> bool:
    for tol in constraints.tolerations:
        if tol.effect and tol.effect != effect:
            continue
        if tol.operator == "Exists" and (tol.key == "" or tol.key == key):
            return True
        if tol.operator == "Equal" and tol.key == key and tol.value == value:
            return True
    return False


def node_exclusion(instance_node, constraints: PodConstraints) -> str | None:
    """Why the node's predicates refuse the pod, checked in Kueue's simulator order.

    Returns
    -------
    str or None
        ``"unschedulable"``, ``"taint <key[=value]:Effect>"`` (the first untolerated
        ``NoSchedule``/``NoExecute`` taint), ``"nodeSelector"``, ``"affinity"``; None: admitted.
    """
    if instance_node.unschedulable:
        return "unschedulable"
    for taint in instance_node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not _tolerated(constraints, taint.key,
                taint.value, taint.effect):
            value = f"={taint.value}" if taint.value else ""
            return f"taint {taint.key}{value}:{taint.effect}"
    labels = instance_node.labels
    if any(labels.get(k) != v for k, v in constraints.node_selector.items()):
        return "nodeSelector"
    if constraints.affinity_terms:
        fields = {**labels, NODE_NAME_FIELD: instance_node.name}  # matchFields test the name
        if not any(all(requirement_matches(r, fields) for r in term)
                   for term in constraints.affinity_terms):
            return "affinity"
    return None


def node_admits(instance_node, constraints: PodConstraints) -> bool:
    """Predicates beyond resources: unschedulable, taints, nodeSelector, required affinity."""
    return node_exclusion(instance_node, constraints) is None


def preference_score(instance_node, terms: Sequence[PreferredTerm]) -> int:
    """Summed weights of the preferred terms the node matches (an empty term matches nothing)."""
    fields = {**instance_node.labels, NODE_NAME_FIELD: instance_node.name}
    return sum(t.weight for t in terms if t.requirements
               and all(requirement_matches(r, fields) for r in t.requirements))


def _subjob_key(job: Job, task: Task, index: int) -> tuple[int, str, int]:
    """(policy index, SubJob id, match index) of one pod, by Volcano's SubJob mapping rule.

    As Volcano's ``getSubJobMatchValues``: a policy takes the pod only when its labelSelector
    matches and every one of its (at least one) matchLabelKeys has a non-empty value.
    """
    labels = task.labels_of(index)
    for p, policy in enumerate(job.subgroup_policies):
        if not selector_matches(policy.label_selector, labels):
            continue
        values = [labels.get(k, "") for k in policy.match_label_keys]
        if not values or "" in values:
            continue
        sid = f"{job.key}/{policy.name}" + "".join(f"-{v}" for v in values)
        try:
            match_index = int(values[0]) if values else 0
        except ValueError:
            match_index = 0
        return p, sid, match_index
    return -1, job.key, 0


def check_size(instance: Instance) -> None:
    """Raise :class:`InputError` if the instance passes a documented limit (:mod:`.limits`)."""
    pods = sum(job.replicas for job in instance.jobs)
    # constraint trees' HyperNodes count too: each is compiled as the main tree is
    hypernodes = len(instance.hypernodes) + sum(len(t.hypernodes)
                                                for t in instance.constraint_trees)
    for count, limit, what in ((len(instance.nodes), MAX_NODES, "nodes"),
            (hypernodes, MAX_HYPERNODES, "HyperNodes"), (pods, MAX_PODS, "pods")):
        if count > limit:
            raise InputError(f"{count:,} {what}, more than the limit {limit:,}",
                             file=instance.source, obj="Instance")


def compile_problem(instance: Instance) -> Problem:
    """The array form of ``instance`` that engines read.

    Steps: the tree (:func:`build_topology`), unique node names, the resource names, the node
    arrays, then job by job the compiled job, its SubJobs and pod groups, and its pods (pending
    or running).

    Parameters
    ----------
    instance
        The instance to compile.

    Returns
    -------
    Problem

    Raises
    ------
    InputError
        Dangling references, duplicate names or sizes beyond the limits.
    """
    require_type(instance, Instance, "instance")
    check_size(instance)
    topology = build_topology(instance.nodes, instance.hypernodes, source=instance.source)
    trees = compile_trees(instance)
    _check_unique_nodes(instance)
    resources = _resource_names(instance)
    allocatable, schedulable = _node_arrays(instance, resources)
    compiler = _Compiler(instance, topology, resources, trees=trees)
    for j, job in enumerate(instance.jobs):
        compiler.add_job(j, job)
    return compiler.problem(allocatable, schedulable)


def compile_trees(instance: Instance) -> dict[str, Topology]:
    """The instance's constraint trees by name, each built as the main tree is.

    Parameters
    ----------
    instance
        The instance.

    Returns
    -------
    dict[str, Topology]
        Empty for an instance without constraint trees.

    Raises
    ------
    InputError
        Two trees of one name, or a tree that is not one (as :func:`build_topology` says).
    """
    trees: dict[str, Topology] = {}
    for k, tree in enumerate(instance.constraint_trees):
        if tree.name in trees:
            raise InputError(f"constraint tree {tree.name!r} is declared twice",
                             file=instance.source, obj="Instance",
                             field=f"constraint_trees[{k}].name")
        trees[tree.name] = build_topology(instance.nodes, tree.hypernodes, source=instance.source)
    return trees


@dataclass
class CompiledCluster:
    """The part of a problem that depends on the nodes and HyperNodes only, compiled once for
    many instances of one cluster (:func:`compile_cluster`, then :func:`compile_jobs`)."""

    topology: Topology
    resources: tuple[str, ...]
    allocatable: np.ndarray  # [N, R]
    schedulable: np.ndarray  # [N]
    trees: dict[str, Topology] = field(default_factory=dict)  # constraint trees by name
    # node predicates by the identity of a task's constraints object (the object is kept alive
    # with them): instances that keep their jobs' constraints objects never serialise them again
    predicates: dict[int, tuple[PodConstraints, np.ndarray]] = field(default_factory=dict)


@dataclass
class RunningPodsJob:
    """A job whose every task is one running pod, given as the arrays it was made from so that it
    compiles in bulk (a replay's usage jobs: one running pod per busy node and queue)."""

    job: Job  # task k: one pod running on nodes[k], no labels, one constraints object for all
    nodes: np.ndarray  # [K] node of each task's pod, ascending
    requests: np.ndarray  # [K, R] each pod's requests as compiled (``pods`` included)
    pod_names: list[str]  # [K] full names of the pods
    # [K, D] thousandths of each device of its node each pod holds (per-device sharing), or None
    device_use: np.ndarray | None = None


def compile_cluster(cluster: Instance, resources: tuple[str, ...]) -> CompiledCluster:
    """The tree and node arrays of ``cluster``, for :func:`compile_jobs`.

    Parameters
    ----------
    cluster
        The instance whose nodes and HyperNodes every later instance shares (jobs ignored).
    resources
        The resource names of every later problem, sorted.

    Returns
    -------
    CompiledCluster
        The topology, [N, R] allocatable, [N] schedulable and an empty predicate cache.
    """
    topology = build_topology(cluster.nodes, cluster.hypernodes, source=cluster.source)
    allocatable, schedulable = _node_arrays(cluster, resources)
    return CompiledCluster(topology, resources, allocatable, schedulable,
                           trees=compile_trees(cluster))


def compile_jobs(cluster: CompiledCluster, instance: Instance,
                 bulk: Sequence[RunningPodsJob] = ()) -> Problem:
    """The problem of ``instance``, on a cluster compiled before: only the jobs are compiled.

    Parameters
    ----------
    cluster
        :func:`compile_cluster` of an instance with the same nodes and HyperNodes.
    instance
        The instance; its first ``len(bulk)`` jobs are the ``bulk`` jobs.
    bulk
        Jobs of one running pod per task, compiled from their arrays.

    Returns
    -------
    Problem
        Equal, field by field, to :func:`compile_problem` of ``instance``.
    """
    compiler = _Compiler(instance, cluster.topology, cluster.resources, cluster.predicates,
                         trees=cluster.trees)
    for j, b in enumerate(bulk):
        compiler.add_running_pods_job(j, b)
    for j, job in enumerate(instance.jobs[len(bulk):], start=len(bulk)):
        compiler.add_job(j, job)
    return compiler.problem(cluster.allocatable, cluster.schedulable)


def _check_unique_nodes(instance: Instance) -> None:
    seen: set[str] = set()
    for n in instance.nodes:
        if n.name in seen:
            raise InputError("duplicate node name", file=instance.source, obj=f"Node/{n.name}",
                             field="metadata.name")
        seen.add(n.name)


def _resource_names(instance: Instance) -> tuple[str, ...]:
    """Every resource a node offers or a task requests, sorted."""
    names: set[str] = set()
    for n in instance.nodes:
        names.update(n.allocatable)
    for job in instance.jobs:
        for task in job.tasks:
            names.update(task.requests)
    return tuple(sorted(names))


def _node_arrays(instance: Instance, resources: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """[N, R] allocatable (a node without a pod limit is not limited by it) and [N] schedulable."""
    r_index = {r: i for i, r in enumerate(resources)}
    allocatable = np.zeros((len(instance.nodes), len(resources)), dtype=np.int64)
    for i, node in enumerate(instance.nodes):
        for r, amount in node.allocatable.items():
            allocatable[i, r_index[r]] = amount
        if POD_COUNT_RESOURCE in r_index and POD_COUNT_RESOURCE not in node.allocatable:
            allocatable[i, r_index[POD_COUNT_RESOURCE]] = UNLIMITED
    schedulable = np.array([not n.unschedulable for n in instance.nodes], dtype=bool)
    return allocatable, schedulable


class _Compiler:
    """Accumulates jobs, SubJobs, pod groups and pods while the instance is walked once."""

    def __init__(self, instance: Instance, topology: Topology, resources: tuple[str, ...],
                 shared: dict[int, tuple[PodConstraints, np.ndarray]] | None = None,
                 trees: dict[str, Topology] | None = None) -> None:
        self.instance = instance
        self.trees = trees or {}
        self.shared = shared  # predicates by constraints identity, across compilers (or None)
        self.src = instance.source
        self.topology = topology
        self.resources = resources
        self.r_index = {r: i for i, r in enumerate(resources)}
        self.node_index = topology.node_index  # the topology is built from instance.nodes
        self.class_value = {pc.name: pc.value for pc in instance.priority_classes}
        self.used = np.zeros((len(instance.nodes), len(resources)), dtype=np.int64)
        self.feasible_cache: dict[str, np.ndarray] = {}
        # [N] nodes under the ``within_hypernode`` of each GangNode and SubJob (and of their
        # ancestors), where one is set
        self.gang_within: dict[int, np.ndarray] = {}
        self.subjob_within: dict[int, np.ndarray] = {}
        self.job_within: np.ndarray | None = None
        self.job_index = -1  # the job being compiled
        self.refused: dict[int, Refusal] = {}  # job → why no node satisfies its pods' constraint
        self.job_keys: set[str] = set()
        self.jobs: list[CompiledJob] = []
        self.subjobs: list[SubJob] = []
        self.gang_nodes: list[GangNode] = []
        self.group_job: list[int] = []
        self.group_subjob: list[int] = []
        self.group_task: list[str] = []
        self.group_role: list[str] = []
        self.group_task_position: list[int] = []
        self.group_priority: list[int] = []
        self.group_request: list[np.ndarray] = []
        self.group_score_overrides: dict[int, np.ndarray] = {}
        self.group_nominated: dict[int, list[int]] = {}
        self.group_feasible: list[np.ndarray] = []
        self.group_preference: list[np.ndarray | None] = []
        self.group_pending: list[list[str]] = []
        self.group_running: list[dict[int, int]] = []
        self.group_running_absent: list[int] = []
        self.running_pods: dict[str, int] = {}
        self.running: list[RunningPod] = []
        self.pod_group: dict[str, int] = {}
        self.devices = DeviceArrays(instance, resources, topology.node_index)

    # ---- jobs ------------------------------------------------------------------------------
    def add_job(self, j: int, job: Job) -> None:
        obj = f"Job/{job.key}"
        self.job_index = j
        if job.key in self.job_keys:
            raise InputError("duplicate job", file=self.src, obj=obj, field="metadata.name")
        self.job_keys.add(job.key)
        if job.priority_class is not None and job.priority_class not in self.class_value:
            raise InputError(f"PriorityClass {job.priority_class!r} does not exist", file=self.src,
                             obj=obj, field="spec.priorityClassName")
        cj = CompiledJob(
            key=job.key,
            index=j,
            queue=job.queue,
            priority=self.instance.job_priority(job),
            creation_index=job.creation_index,
            min_available=job.min_available,
            limit=self.limit(job.network_topology, obj, "networkTopology"),
            policy_match_keys=[tuple(p.match_label_keys) for p in job.subgroup_policies],
            min_resources=dict(job.min_resources),
            pool=self.pool_nodes(job.node_pool) if job.node_pool else None,
            task_labels={task.name: task.labels for task in job.tasks},
            movable=job.movable,
            move_cost=job.move_cost,
            parallelism=job.parallelism,
        )
        for p, policy in enumerate(job.subgroup_policies):
            if policy.min_sub_groups:
                cj.min_subjobs[p] = policy.min_sub_groups
        for task in job.tasks:
            if task.min_available is not None:
                role = task.role_name
                cj.min_per_task[role] = cj.min_per_task.get(role, 0) + task.min_available
        cj.min_per_task.update(job.min_task_member)  # PodGroup minTaskMember entries win
        self.jobs.append(cj)
        self.job_within = self.within_nodes(job.network_topology, obj, "networkTopology")
        gang_index = self.add_gang_nodes(cj, job)
        subjob_by_id: dict[str, int] = {}
        for position, task in enumerate(job.tasks):
            self.add_task(cj, job, position, task, subjob_by_id, gang_index)
        self.finish_gang_nodes(cj)

    def add_gang_nodes(self, cj: CompiledJob, job: Job) -> dict[str, int]:
        """The job's GangGroups as GangNodes, parents first (the model refuses cycles); their
        index by GangGroup name. ``min_members`` None (all) is resolved by
        :meth:`finish_gang_nodes`."""
        by_name = {g.name: g for g in job.gang_groups}
        index: dict[str, int] = {}

        def add(name: str) -> int:
            if name not in index:
                g = by_name[name]
                parent = -1 if g.parent is None else add(g.parent)
                depth = 2 if parent < 0 else self.gang_nodes[parent].depth + 1
                minimum = -1 if g.min_members is None else g.min_members
                index[name] = len(self.gang_nodes)
                limit = self.limit(g.network_topology, f"Job/{job.key}",
                                   f"gangGroups[{name}].networkTopology")
                up = self.job_within if parent < 0 else self.gang_within.get(parent)
                mask = _both(up, self.within_nodes(g.network_topology, f"Job/{job.key}",
                                                   f"gangGroups[{name}].networkTopology"))
                if mask is not None:
                    self.gang_within[len(self.gang_nodes)] = mask
                self.gang_nodes.append(
                    GangNode(f"{job.key}/{name}", cj.index, parent, depth, minimum, limit))
                if parent >= 0:
                    self.gang_nodes[parent].children.append(index[name])
            return index[name]

        for g in job.gang_groups:
            add(g.name)
        top = [index[g.name] for g in job.gang_groups if g.parent is None]
        for n in top:  # breadth-first from the top nodes: parents first
            top += self.gang_nodes[n].children
        cj.gang_nodes = top
        return index

    def finish_gang_nodes(self, cj: CompiledJob) -> None:
        """``min_members`` None means every direct member, known once the SubJobs exist."""
        for n in cj.gang_nodes:
            node = self.gang_nodes[n]
            if node.min_members < 0:
                node.min_members = len(node.children) + len(node.subjobs)

    # ---- tasks, SubJobs, pod groups --------------------------------------------------------
    def add_task(self, cj: CompiledJob, job: Job, position: int, task: Task,
                 subjob_by_id: dict[str, int], gang_index: dict[str, int]) -> None:
        obj = f"Job/{job.key}"
        pod_class = task.constraints.priority_class
        if pod_class is not None and pod_class not in self.class_value:
            raise InputError(f"PriorityClass {pod_class!r} does not exist", file=self.src, obj=obj,
                             field=f"task {task.name}: priorityClassName")
        priority = cj.priority if pod_class is None else self.class_value[pod_class]
        request = self.task_request(task)
        feasible = self.task_feasible(task)
        if cj.pool is not None:
            feasible = feasible & cj.pool
        group_of_subjob: dict[str, int] = {}
        for i in range(task.replicas):
            policy, sid, match_index = _subjob_key(job, task, i)
            s = subjob_by_id.get(sid)
            if s is None:
                s = subjob_by_id[sid] = self.add_subjob(cj, job, sid, policy, match_index,
                                                        gang_index)
            g = group_of_subjob.get(sid)
            if g is None:
                g = group_of_subjob[sid] = self.add_group(cj, s, task, position, priority,
                                                          request, feasible)
                self.devices.add_shape(task, request, obj)
                if task.score_requests is not None:
                    self.group_score_overrides[g] = self.task_request(task, scoring=True)
            self.add_pod(job, task, position, i, cj.index, s, g, request)

    def task_request(self, task: Task, scoring: bool = False) -> np.ndarray:
        """[R] the task's request (``scoring``: its ``score_requests``, which must be set)."""
        request = np.zeros(len(self.resources), dtype=np.int64)
        amounts = task.score_requests if scoring else task.requests
        assert amounts is not None
        for r, amount in amounts.items():
            if r in self.r_index:  # a scoring default of a resource nothing offers or requests
                request[self.r_index[r]] = amount
        if POD_COUNT_RESOURCE in self.r_index:
            pods = self.r_index[POD_COUNT_RESOURCE]
            request[pods] = max(request[pods], 1000)
        return request

    def task_feasible(self, task: Task) -> np.ndarray:
        """[N] nodes whose predicates admit the task's pods (cached per distinct constraints,
        and per constraints object across compilers when ``shared`` is given)."""
        if self.shared is None:
            return self.feasible_by_value(task)
        hit = self.shared.get(id(task.constraints))
        if hit is None:  # keeps the object (and so its id) alive
            hit = (task.constraints, self.feasible_by_value(task))
            self.shared[id(task.constraints)] = hit
        return hit[1]

    def feasible_by_value(self, task: Task) -> np.ndarray:
        key = task.constraints.model_dump_json()
        feasible = self.feasible_cache.get(key)
        if feasible is None:
            feasible = np.array([node_admits(n, task.constraints) for n in self.instance.nodes],
                                dtype=bool)
            self.feasible_cache[key] = feasible
        return feasible

    def task_preference(self, task: Task) -> np.ndarray | None:
        """[N] preferred node-affinity score of the task's pods (None without preferred terms)."""
        terms = task.constraints.preferred_affinity
        if not terms:
            return None
        key = "preference:" + repr([t.model_dump_json() for t in terms])
        score = self.feasible_cache.get(key)
        if score is None:
            score = np.array([preference_score(n, terms) for n in self.instance.nodes],
                             dtype=np.int64)
            self.feasible_cache[key] = score
        return score

    def tree_of(self, spec: NetworkTopology | None, obj: str, field: str) -> Topology:
        """The tree ``spec`` is measured in: its constraint tree, else the main one; a tree the
        instance lacks is an input error."""
        name = spec.tree if spec is not None else None
        if name is None:
            return self.topology
        if name not in self.trees:
            raise InputError(f"constraint tree {name!r} is not in the input", file=self.src,
                             obj=obj, field=f"{field}.tree")
        return self.trees[name]

    def limit(self, spec: NetworkTopology | None, obj: str, field: str) -> Limit | None:
        """The compiled ``spec``, in its own tree."""
        return _limit(self.tree_of(spec, obj, field), spec)

    def below_lowest_tier(self, spec: NetworkTopology | None, obj: str,
                          field: str) -> Refusal | None:
        """A hard ``spec`` whose tier limit is below its tree's lowest HyperNode tier holds on
        no node: Volcano finds no HyperNode to place it in, and every engine refuses it alike
        (else an engine ignoring the limit would emit a plan the checker rejects)."""
        if spec is None or spec.mode != "hard" or spec.highest_tier_allowed is None:
            return None
        topology = self.tree_of(spec, obj, field)
        limit = spec.highest_tier_allowed
        if spec.highest_tier_name is not None or limit >= topology.min_tier:
            return None
        return Refusal(NEVER_PLACED,
                       f"no HyperNode has tier ≤ {limit} (the lowest tier is {topology.min_tier})")

    def within_nodes(self, spec: NetworkTopology | None, obj: str,
                     field: str) -> np.ndarray | None:
        """[N] nodes under the spec's ``within_hypernode`` in the spec's tree (None when it sets
        none); a HyperNode the tree lacks is an input error. A spec naming a ``missing_level``
        or ``never_placed`` holds on no node: its groups have no candidate, so every engine leaves
        them pending."""
        refusal = refusal_of(spec) or self.below_lowest_tier(spec, obj, field)
        if refusal is not None:
            if refusal.outranks(self.refused.get(self.job_index)):
                self.refused[self.job_index] = refusal
            if "missing" not in self.feasible_cache:
                self.feasible_cache["missing"] = np.zeros(len(self.instance.nodes), dtype=bool)
            return self.feasible_cache["missing"]
        name = spec.within_hypernode if spec is not None else None
        if name is None:
            return None
        topology = self.tree_of(spec, obj, field)
        h = topology.index.get(name)
        if h is None:
            raise InputError(f"withinHyperNode {name!r} is not a HyperNode of the input",
                             file=self.src, obj=obj, field=field)
        key = f"within:{spec.tree or ''}:{name}" if spec.tree else "within:" + name
        if key not in self.feasible_cache:
            mask = np.zeros(len(self.instance.nodes), dtype=bool)
            mask[topology.members[h].indices] = True
            self.feasible_cache[key] = mask
        return self.feasible_cache[key]

    def pool_nodes(self, labels: dict[str, str]) -> np.ndarray:
        """[N] nodes carrying every label of a node pool (cached per pool)."""
        key = "pool:" + repr(sorted(labels.items()))
        pool = self.feasible_cache.get(key)
        if pool is None:
            pool = np.array(
                [all(n.labels.get(k) == v for k, v in labels.items()) for n in self.instance.nodes],
                dtype=bool)
            self.feasible_cache[key] = pool
        return pool

    def add_subjob(self, cj: CompiledJob, job: Job, sid: str, policy: int, match_index: int,
                   gang_index: Mapping[str, int] | None = None) -> int:
        """SubJob ``sid`` of policy ``policy`` (-1: the job's own); ``gang_index``: the job's
        GangNodes by GangGroup name (needed when the policy names a parent)."""
        parent = -1
        if policy >= 0:
            pol = job.subgroup_policies[policy]
            limit = self.limit(pol.network_topology, f"Job/{job.key}",
                               f"subGroupPolicy[{pol.name}].networkTopology")
            size = pol.sub_group_size or 1
            parent = -1 if pol.parent is None else (gang_index or {})[pol.parent]
        else:
            # Volcano's default SubJob copies the job's topology; its gang is the job's
            # minMember when the job has no subGroupPolicy, else 1.
            limit = cj.limit
            size = 1 if job.subgroup_policies else max(job.min_available, 1)
        s = len(self.subjobs)
        up = self.job_within if parent < 0 else self.gang_within.get(parent)
        if policy >= 0:
            up = _both(up, self.within_nodes(
                job.subgroup_policies[policy].network_topology, f"Job/{job.key}",
                f"subGroupPolicy[{job.subgroup_policies[policy].name}].networkTopology"))
        if up is not None:
            self.subjob_within[s] = up
        depth = 2 if parent < 0 else self.gang_nodes[parent].depth + 1
        self.subjobs.append(
            SubJob(sid, cj.index, policy, size, limit, match_index, cj.priority, parent=parent,
                   depth=depth))
        cj.subjobs.append(s)
        if parent >= 0:
            self.gang_nodes[parent].subjobs.append(s)
        return s

    def add_group(self, cj: CompiledJob, s: int, task: Task, position: int, priority: int,
                  request: np.ndarray, feasible: np.ndarray) -> int:
        g = len(self.group_job)
        sj = self.subjobs[s]
        if s in self.subjob_within:
            feasible = feasible & self.subjob_within[s]
        # a SubJob's priority is its highest task priority, as Volcano's
        sj.priority = max(sj.priority, priority) if sj.groups else priority
        sj.groups.append(g)
        cj.groups.append(g)
        self.group_job.append(cj.index)
        self.group_subjob.append(s)
        self.group_task.append(task.name)
        self.group_role.append(task.role_name)
        self.group_task_position.append(position)
        self.group_priority.append(priority)
        self.group_request.append(request)
        self.group_feasible.append(feasible)
        self.group_preference.append(self.task_preference(task))
        self.group_pending.append([])
        self.group_running.append({})
        self.group_running_absent.append(0)
        return g

    def add_running_pods_job(self, j: int, bulk: RunningPodsJob) -> None:
        """What :meth:`add_job` gives for ``bulk.job``, its group and pod fields in bulk."""
        job, nodes, requests = bulk.job, bulk.nodes.tolist(), bulk.requests
        if not job.tasks:
            self.add_job(j, job)
            return
        self.add_job(j, job.model_copy(update={"tasks": []}))  # the job's own fields, no pods
        cj = self.jobs[-1]
        cj.task_labels = {task.name: task.labels for task in job.tasks}  # read-only: no copies
        s = self.add_subjob(cj, job, job.key, -1, 0)
        g0, k = len(self.group_job), len(nodes)
        groups = range(g0, g0 + k)
        self.subjobs[s].groups.extend(groups)
        cj.groups.extend(groups)
        tasks = [task.name for task in job.tasks]
        roles = [task.role_name for task in job.tasks]
        self.group_job += [j] * k
        self.group_subjob += [s] * k
        self.group_task += tasks
        self.group_role += roles
        self.group_task_position += range(k)
        self.group_priority += [cj.priority] * k
        self.group_request += list(requests)
        self.group_feasible += [self.task_feasible(job.tasks[0])] * k  # one constraints object
        self.group_preference += [self.task_preference(job.tasks[0])] * k
        self.group_pending += [[] for _ in groups]
        self.group_running += [{n: 1} for n in nodes]
        self.group_running_absent += [0] * k
        names = bulk.pod_names
        self.devices.add_bulk(bulk.requests, bulk.nodes, bulk.device_use, names)
        # bulk pods come first and their names are unique; a later job's pod reusing one is
        # refused by ``add_pod`` as in compile_problem
        self.pod_group.update(zip(names, groups, strict=True))
        self.running_pods.update(zip(names, nodes, strict=True))
        self.running += [
            RunningPod(name, j, g, s, role, position, 0, n)
            for position,
            (name, g, role, n) in enumerate(zip(names, groups, roles, nodes, strict=True))
        ]
        np.add.at(self.used, bulk.nodes, requests)

    # ---- pods ------------------------------------------------------------------------------
    def add_pod(self, job: Job, task: Task, position: int, i: int, j: int, s: int, g: int,
                request: np.ndarray) -> None:
        full = f"{job.namespace}/{task.pod_name(job.name, i)}"
        if full in self.pod_group:
            raise InputError("duplicate pod name", file=self.src, obj=f"Pod/{full}",
                             field="metadata.name")
        self.pod_group[full] = g
        node_name = task.running.get(i)
        if node_name is None:
            self.group_pending[g].append(full)
            if task.nominated:
                nominated = self.group_nominated.setdefault(g, [])
                nominated += [-1] * (len(self.group_pending[g]) - 1 - len(nominated))
                nominated.append(self.node_index.get(task.nominated.get(i, ""), -1))
            return
        n = self.node_index.get(node_name)
        if n is None:
            self.group_running_absent[g] += 1  # a node deleted between two `kubectl get`s
            return
        self.used[n] += request
        if self.devices.resource >= 0:
            self.devices.add_running(task, i, n, request, full)
        self.running_pods[full] = n
        self.group_running[g][n] = self.group_running[g].get(n, 0) + 1
        self.running.append(RunningPod(full, j, g, s, task.role_name, position, i, n))

    def problem(self, allocatable: np.ndarray, schedulable: np.ndarray) -> Problem:
        G, N, R = len(self.group_job), len(self.instance.nodes), len(self.resources)
        return Problem(
            instance=self.instance,
            topology=self.topology,
            resources=self.resources,
            allocatable=allocatable,
            used=self.used,
            schedulable=schedulable,
            jobs=self.jobs,
            subjobs=self.subjobs,
            queues={q.name: q for q in self.instance.queues},
            group_job=np.array(self.group_job, dtype=np.int64),
            group_subjob=np.array(self.group_subjob, dtype=np.int64),
            group_task=self.group_task,
            group_priority=self.group_priority,
            group_request=np.array(self.group_request, dtype=np.int64).reshape(G, R),
            group_feasible=np.array(self.group_feasible, dtype=bool).reshape(G, N),
            group_pending=self.group_pending,
            group_running=self.group_running,
            group_running_absent=self.group_running_absent,
            running_pods=self.running_pods,
            pod_group=self.pod_group,
            running=self.running,
            scheduler=self.instance.scheduler,
            group_preference=self.group_preference,
            gang_nodes=self.gang_nodes,
            budgets=compile_budgets(self.instance, self.running_pods),
            group_score_overrides=self.group_score_overrides,
            kube_scoring=self.instance.kube_scoring,
            group_nominated=self.group_nominated,
            trees=self.trees,
            refused_jobs=self.refused,
            group_role=self.group_role,
            group_task_position=self.group_task_position,
            **self.devices.fields(),
        )

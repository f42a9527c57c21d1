"""Compile an :class:`Instance` into the array form engines read.

Pods are grouped into **pod groups**: pods of one job, one task and one SubJob are
interchangeable (same requests, same predicates, same gang), so engines reason about counts of a
group on a node instead of individual pods. Names come back only when a plan is written.

SubJob ids follow seed 000: a pod that matches no ``subGroupPolicy`` is in the SubJob whose id is
the job id; a pod matching a policy (first matching policy wins) is in
``<job id>/<policy name>-<values of matchLabelKeys joined by '-'>``.

What Volcano accepts is compiled as Volcano reads it (the loaders print the warning lines):

* a ``highestTierName`` no HyperNode's ``tierName`` names is dropped: a hard spec becomes no
  constraint (Volcano leaves ``highestTierAllowed`` nil, so the job is not in hard mode), a soft
  one stays soft up to the root;
* a running pod whose node is not in the instance counts toward its gangs and its queue but
  uses no node's capacity and lies in no HyperNode (``group_running_absent``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .errors import InputError
from .model.instance import NODE_NAME_FIELD, Instance, Job, NetworkTopology, PodConstraints, Task
from .topology import Topology, build_topology, requirement_matches, selector_matches

POD_COUNT_RESOURCE = "pods"
UNLIMITED = 1 << 50  # stands for "no limit" in milli-units


@dataclass(frozen=True)
class Limit:
    """A compiled network-topology constraint: ``hard`` with a tier limit, or ``soft``."""

    hard: bool
    tier: int  # highest tier allowed (the root's tier when unlimited)


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
    # per task name: minimum ready pods of that role
    min_per_task: dict[str, int] = field(default_factory=dict)

    @property
    def has_topology(self) -> bool:
        return self.limit is not None


@dataclass
class Problem:
    """Arrays engines read. Resource amounts are int64 milli-units."""

    instance: Instance
    topology: Topology
    resources: tuple[str, ...]
    allocatable: np.ndarray  # [N, R]
    used: np.ndarray  # [N, R] by running pods
    schedulable: np.ndarray  # [N] bool
    jobs: list[CompiledJob]
    subjobs: list[SubJob]
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

    @property
    def n_nodes(self) -> int:
        return self.allocatable.shape[0]

    @cached_property
    def node_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.topology.node_names)}

    @cached_property
    def resource_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.resources)}

    def group_pending_count(self, g: int) -> int:
        return len(self.group_pending[g])

    def group_running_count(self, g: int) -> int:
        """Running pods of group ``g``, those on nodes absent from the instance included."""
        return sum(self.group_running[g].values()) + self.group_running_absent[g]

    def job_running_count(self, j: int) -> int:
        return sum(self.group_running_count(g) for g in self.jobs[j].groups)


def _limit(topology: Topology, spec: NetworkTopology | None) -> Limit | None:
    if spec is None:
        return None
    unknown_name = spec.highest_tier_name is not None and spec.highest_tier_name not in topology.tier_name_to_tier
    if unknown_name:
        # Volcano cannot translate the name: the spec keeps no tier, so it is not hard mode
        return None if spec.mode == "hard" else Limit(hard=False, tier=topology.max_tier)
    tier = topology.tier_limit(spec.highest_tier_allowed, spec.highest_tier_name)
    return Limit(hard=spec.mode == "hard", tier=tier)


def _tolerated(constraints: PodConstraints, key: str, value: str, effect: str) -> bool:
    for tol in constraints.tolerations:
        if tol.effect and tol.effect != effect:
            continue
        if tol.operator == "Exists" and (tol.key == "" or tol.key == key):
            return True
        if tol.operator == "Equal" and tol.key == key and tol.value == value:
            return True
    return False


def node_admits(instance_node, constraints: PodConstraints) -> bool:
    """Predicates beyond resources: unschedulable, taints, nodeSelector, required affinity."""
    if instance_node.unschedulable:
        return False
    for taint in instance_node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not _tolerated(
            constraints, taint.key, taint.value, taint.effect
        ):
            return False
    labels = instance_node.labels
    if any(labels.get(k) != v for k, v in constraints.node_selector.items()):
        return False
    if constraints.affinity_terms:
        fields = {**labels, NODE_NAME_FIELD: instance_node.name}  # matchFields test the name
        if not any(all(requirement_matches(r, fields) for r in term) for term in constraints.affinity_terms):
            return False
    return True


def _subjob_key(job: Job, task: Task, index: int) -> tuple[int, str, int]:
    """(policy index, SubJob id, match index) of one pod, per seed 000's mapping rule.

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


def compile_problem(instance: Instance) -> Problem:
    """Build the arrays; raise :class:`InputError` for dangling references."""
    src = instance.source
    topology = build_topology(instance.nodes, instance.hypernodes, source=src)
    node_index = {n.name: i for i, n in enumerate(instance.nodes)}
    if len(node_index) != len(instance.nodes):
        seen: set[str] = set()
        for n in instance.nodes:
            if n.name in seen:
                raise InputError("duplicate node name", file=src, obj=f"Node/{n.name}", field="metadata.name")
            seen.add(n.name)

    names: set[str] = set()
    for n in instance.nodes:
        names.update(n.allocatable)
    for job in instance.jobs:
        for task in job.tasks:
            names.update(task.requests)
    resources = tuple(sorted(names))
    r_index = {r: i for i, r in enumerate(resources)}
    count_pods = POD_COUNT_RESOURCE in r_index

    N, R = len(instance.nodes), len(resources)
    allocatable = np.zeros((N, R), dtype=np.int64)
    for i, node in enumerate(instance.nodes):
        for r, amount in node.allocatable.items():
            allocatable[i, r_index[r]] = amount
    if count_pods:
        # a node that does not declare a pod limit is not limited by it
        pods = r_index[POD_COUNT_RESOURCE]
        for i, node in enumerate(instance.nodes):
            if POD_COUNT_RESOURCE not in node.allocatable:
                allocatable[i, pods] = UNLIMITED
    schedulable = np.array([not n.unschedulable for n in instance.nodes], dtype=bool)
    used = np.zeros((N, R), dtype=np.int64)

    priority_names = {pc.name for pc in instance.priority_classes}
    feasible_cache: dict[str, np.ndarray] = {}
    jobs: list[CompiledJob] = []
    subjobs: list[SubJob] = []
    group_job: list[int] = []
    group_subjob: list[int] = []
    group_task: list[str] = []
    group_priority: list[int] = []
    class_value = {pc.name: pc.value for pc in instance.priority_classes}
    group_request: list[np.ndarray] = []
    group_feasible: list[np.ndarray] = []
    group_pending: list[list[str]] = []
    group_running: list[dict[int, int]] = []
    group_running_absent: list[int] = []
    running_pods: dict[str, int] = {}
    pod_group: dict[str, int] = {}
    seen_jobs: set[str] = set()

    for j, job in enumerate(instance.jobs):
        obj = f"Job/{job.key}"
        if job.key in seen_jobs:
            raise InputError("duplicate job", file=src, obj=obj, field="metadata.name")
        seen_jobs.add(job.key)
        if job.priority_class is not None and job.priority_class not in priority_names:
            raise InputError(
                f"PriorityClass {job.priority_class!r} does not exist",
                file=src,
                obj=obj,
                field="spec.priorityClassName",
            )
        cj = CompiledJob(
            key=job.key,
            index=j,
            queue=job.queue,
            priority=instance.job_priority(job),
            creation_index=job.creation_index,
            min_available=job.min_available,
            limit=_limit(topology, job.network_topology),
        )
        for p, policy in enumerate(job.subgroup_policies):
            if policy.min_sub_groups:
                cj.min_subjobs[p] = policy.min_sub_groups
        for task in job.tasks:
            if task.min_available is not None:
                cj.min_per_task[task.name] = cj.min_per_task.get(task.name, 0) + task.min_available
        cj.min_per_task.update(job.min_task_member)  # PodGroup minTaskMember entries win
        sj_by_id: dict[str, int] = {}
        for task in job.tasks:
            pod_class = task.constraints.priority_class
            if pod_class is not None and pod_class not in class_value:
                raise InputError(
                    f"PriorityClass {pod_class!r} does not exist",
                    file=src,
                    obj=obj,
                    field=f"task {task.name}: priorityClassName",
                )
            task_priority = cj.priority if pod_class is None else class_value[pod_class]
            request = np.zeros(R, dtype=np.int64)
            for r, amount in task.requests.items():
                request[r_index[r]] = amount
            if count_pods:
                request[r_index[POD_COUNT_RESOURCE]] = max(request[r_index[POD_COUNT_RESOURCE]], 1000)
            ckey = task.constraints.model_dump_json()
            feasible = feasible_cache.get(ckey)
            if feasible is None:
                feasible = np.array(
                    [node_admits(n, task.constraints) for n in instance.nodes], dtype=bool
                )
                feasible_cache[ckey] = feasible
            groups_here: dict[str, int] = {}
            for i in range(task.replicas):
                policy, sid, match_index = _subjob_key(job, task, i)
                s = sj_by_id.get(sid)
                if s is None:
                    s = len(subjobs)
                    sj_by_id[sid] = s
                    if policy >= 0:
                        pol = job.subgroup_policies[policy]
                        sj_limit = _limit(topology, pol.network_topology)
                        size = pol.sub_group_size or 1
                    else:
                        # Volcano's default SubJob copies the job's topology; its gang is the
                        # job's minMember when the job has no subGroupPolicy, else 1.
                        sj_limit = cj.limit
                        size = 1 if job.subgroup_policies else max(job.min_available, 1)
                    subjobs.append(
                        SubJob(sid, j, policy, size, sj_limit, match_index, cj.priority)
                    )
                    cj.subjobs.append(s)
                g = groups_here.get(sid)
                if g is None:
                    g = len(group_job)
                    groups_here[sid] = g
                    group_job.append(j)
                    group_subjob.append(s)
                    group_task.append(task.name)
                    group_priority.append(task_priority)
                    # a SubJob's priority is its highest task priority (seed 000)
                    subjobs[s].priority = max(subjobs[s].priority, task_priority) if subjobs[s].groups else task_priority
                    group_request.append(request)
                    group_feasible.append(feasible)
                    group_pending.append([])
                    group_running.append({})
                    group_running_absent.append(0)
                    subjobs[s].groups.append(g)
                    cj.groups.append(g)
                full = f"{job.namespace}/{task.pod_name(job.name, i)}"
                if full in pod_group:
                    raise InputError("duplicate pod name", file=src, obj=f"Pod/{full}", field="metadata.name")
                pod_group[full] = g
                node_name = task.running.get(i)
                if node_name is None:
                    group_pending[g].append(full)
                    continue
                if node_name not in node_index:
                    group_running_absent[g] += 1  # a node deleted between two `kubectl get`s
                    continue
                n = node_index[node_name]
                used[n] += request
                running_pods[full] = n
                group_running[g][n] = group_running[g].get(n, 0) + 1
        jobs.append(cj)

    G = len(group_job)
    return Problem(
        instance=instance,
        topology=topology,
        resources=resources,
        allocatable=allocatable,
        used=used,
        schedulable=schedulable,
        jobs=jobs,
        subjobs=subjobs,
        group_job=np.array(group_job, dtype=np.int64),
        group_subjob=np.array(group_subjob, dtype=np.int64),
        group_task=group_task,
        group_priority=group_priority,
        group_request=np.array(group_request, dtype=np.int64).reshape(G, R),
        group_feasible=np.array(group_feasible, dtype=bool).reshape(G, N),
        group_pending=group_pending,
        group_running=group_running,
        group_running_absent=group_running_absent,
        running_pods=running_pods,
        pod_group=pod_group,
    )

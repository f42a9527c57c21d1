"""PodGroups (``scheduling.volcano.sh``) and Pods → :class:`Job`.

* PodGroup fields: minMember (default 0), minTaskMember, queue (default ``default``),
  priorityClassName, networkTopology, subGroupPolicy.
* A PodGroup's pods are grouped into tasks by (label ``volcano.sh/task-spec``, else ``pod``;
  whether the label is there; requests; predicates), in order of appearance; a pod with
  ``spec.nodeName`` is running there. Succeeded pods count as ready for the gang, as in Volcano.
* A pod that names no PodGroup of the input gets a job of its own, as Volcano's shadow PodGroup,
  with the network topology Volcano's PodGroup controller reads from the pod's annotations.

The full rules are in ``docs/formats.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from toposolve.core.disruption import NOT_READY, READY, STARTING
from toposolve.core.errors import InputError
from toposolve.core.instance import TASK_SPEC_LABEL, Job, NetworkTopology, SubGroupPolicy, Task
from toposolve.core.quantity import MilliUnits
from toposolve.formats.k8s.fields import Field, build
from toposolve.formats.k8s.gpushare import GPUSHARE_COUNT, GpuShareRequest, with_gpushare
from toposolve.formats.k8s.pods import pod_constraints, pod_requests, pod_score_requests
from toposolve.formats.k8s.specs import (
    creation_time,
    network_topology,
    object_name,
    object_namespace,
    subgroup_policies,
)

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"
TOPOLOGY_MODE_ANNOTATION = "volcano.sh/network-topology-mode"
TOPOLOGY_TIER_ANNOTATION = "volcano.sh/network-topology-highest-tier"
DEFAULT_TASK_NAME = "pod"

_PODGROUP_FIELDS = {
    "name": "metadata.name",
    "namespace": "metadata.namespace",
    "min_available": "spec.minMember",
    "queue": "spec.queue",
    "priority_class": "spec.priorityClassName",
    "network_topology": "spec.networkTopology",
    "min_task_member": "spec.minTaskMember",
    "min_resources": "spec.minResources",
    "subgroup_policies": "spec.subGroupPolicy",
    "tasks": "",
}


@dataclass
class PodRecord:
    root: Field
    namespace: str
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]
    node: str | None
    phase: str
    scheduler: str | None
    created: datetime | None
    position: int
    nominated: str | None = None  # status.nominatedNodeName
    health: str = "ready"  # of a bound pod: ready, not-ready or starting (pod_health)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    def fail(self, message: str, fieldname: str) -> InputError:
        return InputError(message, file=self.root.file, obj=self.root.obj, field=fieldname)


@dataclass
class PodGroupRecord:
    root: Field
    namespace: str
    name: str
    min_member: int
    min_task_member: dict[str, int]
    min_resources: dict[str, int]
    queue: str
    priority_class: str | None
    topology: NetworkTopology | None
    policies: list[SubGroupPolicy]
    created: datetime | None
    position: int
    phase: str
    members: list[PodRecord] = field(default_factory=list)
    succeeded: list[PodRecord] = field(default_factory=list)


def read_podgroup(root: Field, position: int) -> PodGroupRecord:
    spec = root["spec"]
    policies = subgroup_policies(spec["subGroupPolicy"])
    min_task_member: dict[str, int] = {}
    for task_name, count in spec["minTaskMember"].entries():
        value = count.integer(required=True, minimum=0)
        assert value is not None
        min_task_member[task_name] = value
    min_member = spec["minMember"].integer(0, minimum=0)
    assert min_member is not None
    return PodGroupRecord(
        root=root,
        namespace=object_namespace(root),
        name=object_name(root),
        min_member=min_member,
        min_task_member=min_task_member,
        min_resources=spec["minResources"].resources(),
        queue=spec["queue"].text("") or "default",
        priority_class=spec["priorityClassName"].text("") or None,
        topology=network_topology(spec["networkTopology"]),
        policies=policies,
        created=creation_time(root),
        position=position,
        phase=root.at("status.phase").text("") or "",
    )


def pod_health(root: Field) -> str:
    """A bound pod's health for PodDisruptionBudgets: ``starting`` in phase Pending,
    ``not-ready`` when its ``Ready`` condition is there and not ``True``, else ``ready`` (a dump
    without conditions, as toposolve's own writers make, counts its running pods Ready)."""
    if root.at("status.phase").text("") == "Pending":
        return STARTING
    for condition in root.at("status.conditions").elements():
        if condition["type"].text("") == "Ready":
            return READY if condition["status"].text("") == "True" else NOT_READY
    return READY


def read_pod(root: Field, position: int) -> PodRecord:
    return PodRecord(
        root=root,
        namespace=object_namespace(root),
        name=object_name(root),
        labels=root.at("metadata.labels").string_map(),
        annotations=root.at("metadata.annotations").string_map(),
        node=root.at("spec.nodeName").text("") or None,
        phase=root.at("status.phase").text("") or "",
        scheduler=root.at("spec.schedulerName").text("") or None,
        created=creation_time(root),
        position=position,
        nominated=root.at("status.nominatedNodeName").text("") or None,
        health=pod_health(root),
    )


def role(pod: PodRecord) -> str:
    return pod.labels.get(TASK_SPEC_LABEL) or DEFAULT_TASK_NAME


def podgroup_job(pg: PodGroupRecord) -> Job:
    tasks = distinct_task_names(tasks_from_pods(pg.members))
    pods = sum(t.replicas for t in tasks)
    min_member = max(0, pg.min_member - len(pg.succeeded))
    if min_member > pods:
        done = f" besides {len(pg.succeeded)} succeeded" if pg.succeeded else ""
        raise pg.root.at("spec.minMember").fail(
            f"minMember ({pg.min_member}) exceeds the PodGroup's pods in the input ({pods}{done})"
        )
    min_task_member = dict(pg.min_task_member)
    for pod in pg.succeeded:
        if role(pod) in min_task_member:
            min_task_member[role(pod)] = max(0, min_task_member[role(pod)] - 1)
    return build(
        Job,
        pg.root,
        _PODGROUP_FIELDS,
        namespace=pg.namespace,
        name=pg.name,
        min_available=min_member,
        queue=pg.queue,
        priority_class=pg.priority_class,
        network_topology=pg.topology,
        tasks=tasks,
        subgroup_policies=pg.policies,
        min_task_member=min_task_member,
        min_resources=pg.min_resources,
    )


def annotation_topology(pod: PodRecord, warn: Callable[[str], None]) -> NetworkTopology | None:
    """The ``networkTopology`` Volcano's PodGroup controller derives from the pod's annotations."""
    mode_text = pod.annotations.get(TOPOLOGY_MODE_ANNOTATION)
    tier_text = pod.annotations.get(TOPOLOGY_TIER_ANNOTATION)
    if mode_text is None and tier_text is None:
        return None
    where = f"{pod.root.file}: {pod.root.obj}: metadata.annotations"
    mode = "hard"
    if mode_text is not None:
        if mode_text.lower() in ("hard", "soft"):
            mode = mode_text.lower()
        else:
            warn(f"{where}.{TOPOLOGY_MODE_ANNOTATION}: unknown mode {mode_text!r}; hard is used, "
                 "as Volcano does")
    tier: int | None = None
    if tier_text is not None:
        if re.fullmatch(r"\+?\d{1,18}", tier_text):  # strconv.Atoi; a negative tier is dropped too
            tier = int(tier_text)
        else:
            warn(f"{where}.{TOPOLOGY_TIER_ANNOTATION}: {tier_text!r} is not a tier; left unset, as "
                 "Volcano does")
    return NetworkTopology(mode=mode, highest_tier_allowed=tier)


def shadow_job(pod: PodRecord, warn: Callable[[str], None]) -> Job:
    """The one-pod gang Volcano makes for a pod that names no (known) PodGroup."""
    spec = pod.root["spec"]
    return build(
        Job,
        pod.root,
        {
            "name": "metadata.name",
            "queue": f"metadata.annotations.{QUEUE_NAME_ANNOTATION}",
            "priority_class": "spec.priorityClassName",
            "tasks": "",
        },
        namespace=pod.namespace,
        name=pod.name,
        min_available=1,
        queue=pod.annotations.get(QUEUE_NAME_ANNOTATION) or "default",
        priority_class=spec["priorityClassName"].text("") or None,
        network_topology=annotation_topology(pod, warn),
        tasks=tasks_from_pods([pod]),
    )


def tasks_from_pods(pods: Sequence[PodRecord], scoring: bool = False) -> list[Task]:
    """Group pods into tasks by (task-spec label, requests, predicates), in order of appearance;
    ``scoring`` (kube-scheduler): also by scoring requests, kept as ``Task.score_requests``, the
    pending pods' nominated nodes kept as ``Task.nominated``, pod-level ``spec.resources`` read.
    """
    groups: dict[tuple, list[PodRecord]] = {}
    shapes: dict[tuple, tuple] = {}
    shares: dict[tuple[str, str], GpuShareRequest] = {}
    for pod in pods:
        spec = pod.root["spec"]
        requests = pod_requests(spec, pod_level=scoring)
        scored = pod_score_requests(spec) if scoring else requests
        # the GPU-share annotations ask devices of alibabacloud.com/gpu-count
        requests, constraints, gpushare = with_gpushare(pod.root, requests,
                                                        pod_constraints(spec))
        if gpushare is not None:
            scored = MilliUnits({**scored, GPUSHARE_COUNT: requests[GPUSHARE_COUNT]})
        labelled = TASK_SPEC_LABEL in pod.labels
        key = (role(pod), labelled, tuple(sorted(requests.items())),
               tuple(sorted(scored.items())), constraints.model_dump_json(),
               None if gpushare is None else gpushare.shape)
        groups.setdefault(key, []).append(pod)
        shapes.setdefault(key, (requests, scored, constraints))
        if gpushare is not None:
            shares[pod.key] = gpushare
    tasks: list[Task] = []
    for key, members in groups.items():
        requests, scored, constraints = shapes[key]
        gpushare = shares.get(members[0].key)
        own = [{k: v for k, v in p.labels.items() if k != TASK_SPEC_LABEL} for p in members]
        common = {k: v for k, v in own[0].items() if all(labels.get(k) == v for labels in own)}
        extra = {
            i: {k: v for k, v in labels.items() if k not in common} for i, labels in enumerate(own)
        }
        tasks.append(
            build(
                Task,
                members[0].root,
                name=key[0],
                replicas=len(members),
                requests=requests,
                score_requests=None if scored == requests else scored,
                labels=common,
                constraints=constraints,
                pod_names=[p.name for p in members],
                pod_labels={i: labels for i, labels in extra.items() if labels},
                running={i: p.node for i, p in enumerate(members) if p.node is not None},
                nominated={i: p.nominated for i, p in enumerate(members)
                           if scoring and p.node is None and p.nominated is not None},
                unready={i: p.health for i, p in enumerate(members)
                         if p.node is not None and p.health != READY},
                task_spec_label=key[1],
                device_share=None if gpushare is None else gpushare.share,
                device_use=_recorded_devices(members, shares),
            )
        )
    return tasks


def distinct_task_names(tasks: Sequence[Task]) -> list[Task]:
    """``tasks`` with names that differ: the first task of a name keeps it, each later one
    becomes ``<name>-<k>`` with the smallest k ≥ 2 that no task holds, in order, and keeps the
    name it had as its ``role`` (what ``minTaskMember`` and the ``volcano.sh/task-spec`` label
    name).

    Parameters
    ----------
    tasks
        One job's tasks, in the order they are listed.

    Returns
    -------
    list[Task]
        The same tasks, renamed copies (their role set) where a name was taken; unchanged
        without a clash.
    """
    taken = {task.name for task in tasks}
    seen: set[str] = set()
    next_suffix: dict[str, int] = {}
    out: list[Task] = []
    for task in tasks:
        if task.name in seen:
            k = next_suffix.get(task.name, 2)
            while f"{task.name}-{k}" in taken:
                k += 1
            next_suffix[task.name] = k + 1
            taken.add(f"{task.name}-{k}")
            task = task.model_copy(update={"name": f"{task.name}-{k}", "role": task.role_name})
        seen.add(task.name)
        out.append(task)
    return out


def _recorded_devices(members: Sequence[PodRecord],
                      shares: dict[tuple[str, str], GpuShareRequest]) -> dict[int, dict[int, int]]:
    """The devices running GPU-share pods name in ``gpu-index`` (pod index → device → milli)."""
    out: dict[int, dict[int, int]] = {}
    for i, pod in enumerate(members):
        share = shares.get(pod.key)
        if pod.node is not None and share is not None and share.devices is not None:
            out[i] = {d: share.milli for d in share.devices}
    return out

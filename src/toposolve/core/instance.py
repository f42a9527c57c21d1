"""The instance model users see: nodes, HyperNodes, jobs, queues, priority classes.

Every reader (Kubernetes manifests, the compact native format) produces an :class:`Instance`;
engines never read it directly but through :func:`toposolve.core.problem.compile_problem`.

Resource maps (``Node.allocatable``, ``Task.requests``, ``Job.min_resources``, ``Queue.capability``,
``deserved``, ``guarantee``) take Kubernetes quantities: strings as in a manifest (``"500m"``,
``"16Gi"``, ``"192"``) and plain numbers meaning whole units (``8`` GPUs, ``2.5`` cores), exactly as
Kubernetes reads a YAML or JSON number. Inside, an amount is an integer number of thousandths of the
unit, rounded up as Kubernetes rounds (``cpu: 500m`` is 500, ``nvidia.com/gpu: 8`` is 8,000): that
is what the attributes hold (as :class:`toposolve.core.quantity.MilliUnits`, so passing one model's
map to another is not rescaled) and what engines compute with. ``model_dump()`` gives quantity
strings back, so a dump validates to an equal model. Code that computes thousandths itself passes
them wrapped in
:class:`~toposolve.core.quantity.MilliUnits`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    model_validator,
)

from toposolve.core.disruption import UNREADY_STATES, int_or_percent
from toposolve.core.kube_scoring import KubeScoring
from toposolve.core.limits import (
    MAX_GANG_DEPTH,
    MAX_INTEGER,
    MAX_NAME_LENGTH,
    MAX_PODS_PER_JOB,
    MAX_TIER,
)
from toposolve.core.parallelism import (
    canonical_parallelism,
    is_accelerator,
    parse_parallelism,
    ranks_per_pod,
)
from toposolve.core.parents import find_parent_cycle, nesting_depths
from toposolve.core.quantity import (
    MilliUnits,
    QuantityError,
    format_quantities,
    parse_resource_amount,
)

TASK_SPEC_LABEL = "volcano.sh/task-spec"
# A required node-affinity requirement on this key matches the node's *name*: it is how a
# ``matchFields: [{key: metadata.name, ...}]`` term (DaemonSet pods) is kept in the model.
NODE_NAME_FIELD = "metadata.name"
PARTITION_ID_LABEL = "volcano.sh/partition-id"
# the label the kube reader gives a CompositePodGroup's pods: the name of their PodGroup (each
# PodGroup is one SubJob of the hierarchy's job, matched on this label)
KUBE_PODGROUP_LABEL = "toposolve.io/kube-podgroup"
ROOT_HYPERNODE = "<cluster-top-hypernode>"


def _read_resources(value: object) -> object:
    """Quantities (strings, or numbers of whole units) to thousandths; :class:`MilliUnits` as is."""
    if isinstance(value, MilliUnits):
        return dict(value)
    if not isinstance(value, Mapping):
        return value  # pydantic reports the wrong type
    out: dict[object, int] = {}
    for name, amount in value.items():
        try:
            out[name] = parse_resource_amount(amount, str(name))
        except QuantityError as exc:
            raise ValueError(f"{name}: {exc}") from None
    return out


def _write_resources(value: dict[str, int]) -> dict[str, str]:
    return format_quantities(value)


Resources = Annotated[
    dict[str, int],
    BeforeValidator(_read_resources),
    AfterValidator(MilliUnits),  # so that ``Node(allocatable=other.allocatable)`` is not rescaled
    PlainSerializer(_write_resources, return_type=dict[str, str]),
]
"""A Kubernetes ``ResourceList``: given as quantities, held in thousandths (see the module doc)."""


Name = Annotated[str, Field(max_length=MAX_NAME_LENGTH)]
"""An object name: at most 253 characters, as Kubernetes allows."""


class _Model(BaseModel):
    # validate_assignment: ``node.allocatable = {"cpu": 4}`` reads quantities as the constructor
    # does
    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=True)


class NetworkTopology(_Model):
    """``networkTopology`` of a Job, PodGroup, partition or subGroupPolicy."""

    mode: Literal["hard", "soft"] = "hard"
    # above the root: no limit
    highest_tier_allowed: int | None = Field(default=None, ge=0, le=MAX_INTEGER)
    highest_tier_name: str | None = None
    # Kueue/KAI "preferred" level as a tier: where their schedulers look first (Volcano has none)
    preferred_tier: int | None = Field(default=None, ge=1, le=MAX_INTEGER)
    # Kueue/KAI input with several Topologies: the HyperNode standing for the Topology the
    # constraint names; the pods stay on nodes under it (docs/label-topology.md)
    within_hypernode: str | None = None
    # a Topology crossing the main tree: the ``Instance.constraint_trees`` entry whose tiers and
    # HyperNodes (``within_hypernode`` included) the constraint is measured in; None: the main tree
    tree: str | None = None
    # a level the constraint names that its tree lacks (Kueue leaves such a workload pending,
    # docs/kueue-fidelity.md): no node satisfies the constraint, whatever its mode
    missing_level: str | None = None
    # its scheduler's reason it never places the request (Kueue's TAS: slice layers out of order
    # or whose sizes do not divide, docs/kueue-fidelity.md): no node satisfies the constraint
    never_placed: str | None = None

    @model_validator(mode="after")
    def _one_limit(self) -> NetworkTopology:
        if self.highest_tier_allowed is not None and self.highest_tier_name is not None:
            raise ValueError("highestTierAllowed and highestTierName cannot both be set")
        if (self.missing_level is not None or self.never_placed is not None) and (
                self.highest_tier_allowed is not None or self.highest_tier_name is not None
                or self.preferred_tier is not None):
            raise ValueError("a constraint naming a missing level or never placed sets no tier")
        if (
            self.preferred_tier is not None
            and self.highest_tier_allowed is not None
            and self.preferred_tier > self.highest_tier_allowed
        ):
            raise ValueError("the preferred level is above the required level")
        return self


class LabelRequirement(_Model):
    """One ``matchExpressions`` / ``nodeSelectorTerms`` requirement."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _values_fit_operator(self) -> LabelRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs values")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        if self.operator in ("Gt", "Lt"):
            if len(self.values) != 1:
                raise ValueError(f"operator {self.operator} needs exactly one value")
            try:
                int(self.values[0])
            except ValueError:
                raise ValueError(f"operator {self.operator} needs an integer value") from None
        return self


class LabelSelector(_Model):
    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[LabelRequirement] = Field(default_factory=list)


class MemberSelector(_Model):
    """Exactly one of ``exactMatch.name``, ``regexMatch.pattern``, ``labelMatch``."""

    exact_match: str | None = None
    regex_match: str | None = None
    label_match: LabelSelector | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> MemberSelector:
        count = sum(x is not None for x in (self.exact_match, self.regex_match, self.label_match))
        if count != 1:
            raise ValueError("exactly one of exactMatch, regexMatch, labelMatch must be set")
        return self


class Member(_Model):
    type: Literal["Node", "HyperNode"] = "Node"
    selector: MemberSelector

    @classmethod
    def exact(cls, name: str, kind: Literal["Node", "HyperNode"] = "Node") -> Member:
        """The member naming one node (or, with ``kind`` ``"HyperNode"``, one HyperNode) by its
        exact name (``exactMatch.name``).

        Parameters
        ----------
        name
            The node's or HyperNode's name.
        kind
            The member's ``type``.

        Returns
        -------
        Member
        """
        return cls(type=kind, selector=MemberSelector(exact_match=name))


class HyperNode(_Model):
    name: Name
    # Volcano's CRD: minimum 0 (e.g. NVLink domains below the leaf)
    tier: int = Field(ge=0, le=MAX_TIER)
    tier_name: str | None = None
    members: list[Member] = Field(default_factory=list)


class ConstraintTree(_Model):
    """A HyperNode tree of its own over nodes the main tree also holds: a KAI Topology whose
    levels cross another's (a rack spanning two zones). Only constraints naming it
    (``NetworkTopology.tree``) are measured in it (``docs/label-topology.md``)."""

    name: Name
    hypernodes: list[HyperNode] = Field(default_factory=list)


class Taint(_Model):
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Toleration(_Model):
    key: str = ""  # empty key with operator Exists tolerates everything
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = ""


class Node(_Model):
    name: Name
    labels: dict[str, str] = Field(default_factory=dict)
    allocatable: Resources = Field(default_factory=MilliUnits)
    unschedulable: bool = False
    taints: list[Taint] = Field(default_factory=list)


class PreferredTerm(_Model):
    """A ``preferredDuringSchedulingIgnoredDuringExecution`` entry: a node matching every
    requirement scores ``weight``."""

    weight: int = Field(ge=1, le=100)
    requirements: list[LabelRequirement] = Field(default_factory=list)


class PodConstraints(_Model):
    """Placement predicates beyond resources, from a pod spec or template.

    Affinity requirements whose key is :data:`NODE_NAME_FIELD` test the node's name
    (Kubernetes ``matchFields``), every other key tests the node's labels.
    """

    node_selector: dict[str, str] = Field(default_factory=dict)
    # required node affinity: OR over terms, AND inside a term
    affinity_terms: list[list[LabelRequirement]] = Field(default_factory=list)
    tolerations: list[Toleration] = Field(default_factory=list)
    # preferred node affinity: no restriction; only Kueue's TASRespectNodeAffinityPreferred
    # (alpha) orders domains by it
    preferred_affinity: list[PreferredTerm] = Field(default_factory=list)
    # the pod's own PriorityClass (Volcano orders tasks, and SubJobs, by it; None = the job's)
    priority_class: str | None = None


class PartitionPolicy(_Model):
    total_partitions: int = Field(ge=1, le=MAX_PODS_PER_JOB)
    partition_size: int = Field(ge=1, le=MAX_PODS_PER_JOB)
    min_partitions: int = Field(default=0, ge=0, le=MAX_PODS_PER_JOB)
    network_topology: NetworkTopology | None = None


DEVICE_MILLI = 1000
"""Thousandths of one device: a shared pod takes part of it, a whole-device pod all of it."""
MAX_DEVICES_PER_POD = 1024


class DeviceShare(_Model):
    """Each pod takes ``milli`` thousandths of ``count`` distinct devices of ``resource``
    (openb's ``gpu_milli`` / ``num_gpu``; docs/formats.md, "Per-device GPU sharing").

    A node has ``allocatable[resource]`` whole devices, numbered from 0. The task's pooled request
    of ``resource`` must be ``milli × count``, so every pooled sum (queues, HyperNodes) stays
    what it was. ``memory``: the MiB of each device the pod asked for when it asked by memory
    (KAI's ``gpu-memory``; ``milli`` is that share of the devices it was read against), kept for
    the scheduler's own wording of a refusal."""

    resource: str = "nvidia.com/gpu"
    milli: int = Field(ge=1, le=DEVICE_MILLI)
    count: int = Field(default=1, ge=1, le=MAX_DEVICES_PER_POD)
    memory: int | None = Field(default=None, ge=1)


class Task(_Model):
    """A set of pods of one job with the same template (a Volcano Job task, or a PodGroup role).

    Pod ``i`` is named ``pod_names[i]`` or, without explicit names, ``<job>-<task>-<i>``.
    ``running`` maps pod index → node for pods that are already bound; ``nominated`` maps a
    pending pod's index → its ``status.nominatedNodeName`` (read for the kube engine only);
    ``unready`` marks running pods that are not Ready: ``not-ready`` (phase Running, condition
    Ready not True) or ``starting`` (phase Pending); absent: Ready (PodDisruptionBudgets count
    only Ready pods).
    ``score_requests``: what each pod requests in kube-scheduler's scores where that differs
    from ``requests`` (an unset cpu / memory counts as 100m / 200Mi there); None: ``requests``.
    ``pod_labels`` holds extra labels of individual pods (index → labels).
    ``task_spec_label``: the pods carry ``volcano.sh/task-spec: <role>`` (a Volcano Job's pods
    always do; bare pods of a PodGroup only when they have the label, and SubGroup matching
    sees exactly the labels the pods have).
    ``role``: the role the pods play where it differs from ``name`` (pods of one PodGroup role
    that differ in requests are tasks of distinct names); per-role minimums (``minTaskMember``,
    summed ``min_available``) count the pods by it. None: the task's name
    (:attr:`role_name`).
    """

    name: str
    role: str | None = Field(default=None, min_length=1)
    replicas: int = Field(ge=0, le=MAX_PODS_PER_JOB)
    min_available: int | None = Field(default=None, ge=0, le=MAX_PODS_PER_JOB)
    requests: Resources = Field(default_factory=MilliUnits)
    score_requests: Resources | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    constraints: PodConstraints = Field(default_factory=PodConstraints)
    partition: PartitionPolicy | None = None
    pod_names: list[str] | None = None
    pod_labels: dict[int, dict[str, str]] = Field(default_factory=dict)
    running: dict[int, str] = Field(default_factory=dict)
    nominated: dict[int, str] = Field(default_factory=dict)
    unready: dict[int, Literal[UNREADY_STATES]] = Field(default_factory=dict)
    task_spec_label: bool = True
    # per-device sharing: the pods' share of devices; None: they take whole devices, if any
    device_share: DeviceShare | None = None
    # running pod index -> device index -> thousandths of that device the pod holds (pods of a
    # resource that some task shares per device must say which devices they hold)
    device_use: dict[int, dict[int, int]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if self.pod_names is not None and len(self.pod_names) != self.replicas:
            raise ValueError("pod_names must list exactly `replicas` names")
        p = self.partition
        if p is not None and p.total_partitions * p.partition_size != self.replicas:
            raise ValueError(
                f"replicas ({self.replicas}) must equal totalPartitions × partitionSize "
                f"({p.total_partitions} × {p.partition_size})"
            )
        if p is not None and p.min_partitions > p.total_partitions:
            raise ValueError("minPartitions exceeds totalPartitions")
        if p is not None and self.role_name != self.name:
            # its SubJobs select the pods by the task-spec label, which holds the role
            raise ValueError(f"a partitioned task is named as its role ({self.role!r})")
        if self.min_available is not None and self.min_available > self.replicas:
            raise ValueError(
                f"minAvailable ({self.min_available}) exceeds replicas ({self.replicas})")
        for index in (*self.running, *self.pod_labels, *self.nominated, *self.unready):
            if not 0 <= index < self.replicas:
                raise ValueError(f"pod index {index} out of range 0..{self.replicas - 1}")
        if self.device_share is not None or self.device_use:
            self._check_devices()
        return self

    def _check_devices(self) -> None:
        share = self.device_share
        if share is not None:
            asked = self.requests.get(share.resource, 0)
            if asked != share.milli * share.count:
                raise ValueError(
                    f"deviceShare asks {share.count} × {share.milli}m of {share.resource}, but "
                    f"requests hold {asked}m (they must be milli × count)")
        for index, devices in self.device_use.items():
            if index not in self.running:
                raise ValueError(f"deviceUse names pod {index}, which is not running")
            for device, milli in devices.items():
                if device < 0 or not 1 <= milli <= DEVICE_MILLI:
                    raise ValueError(f"deviceUse of pod {index}: device {device} holding "
                                     f"{milli}m (devices are numbered from 0, 1..1000m each)")

    @property
    def role_name(self) -> str:
        """The role per-role minimums count the task's pods by: ``role``, else ``name``."""
        return self.name if self.role is None else self.role

    def pod_name(self, job_name: str, index: int) -> str:
        if self.pod_names is not None:
            return self.pod_names[index]
        return f"{job_name}-{self.name}-{index}"

    def health_of(self, index: int) -> str:
        """``ready``, ``not-ready`` or ``starting`` (:mod:`toposolve.core.disruption`) for
        running pod ``index``."""
        return self.unready.get(index, "ready")

    def labels_of(self, index: int) -> dict[str, str]:
        """Labels of pod ``index`` as the Volcano job controller would set them."""
        labels = dict(self.labels)
        if self.task_spec_label:
            labels = {TASK_SPEC_LABEL: self.role_name, **labels}
        if self.partition is not None:
            labels[PARTITION_ID_LABEL] = str(index // self.partition.partition_size)
        labels.update(self.pod_labels.get(index, {}))
        return labels


class SubGroupPolicy(_Model):
    """A PodGroup ``subGroupPolicy`` entry: pods it selects form SubJobs keyed by label values."""

    name: str
    sub_group_size: int | None = Field(default=None, ge=1, le=MAX_PODS_PER_JOB)
    label_selector: LabelSelector = Field(default_factory=LabelSelector)
    match_label_keys: list[str] = Field(default_factory=list)
    network_topology: NetworkTopology | None = None
    min_sub_groups: int = Field(default=0, ge=0, le=MAX_PODS_PER_JOB)
    # the GangGroup its SubJobs belong to (deeper gang hierarchies); None: directly the job
    parent: str | None = None


class GangGroup(_Model):
    """An inner node of a job's gang tree, between the job and its SubJobs (KAI: a SubGroup with
    child SubGroups). Its direct members are the GangGroups and the SubJobs of the policies naming
    it as ``parent``; it is satisfied when ``min_members`` of them are (None: all of them), a
    SubJob being satisfied at its ``subGroupSize``. Its pods (those of every SubJob below it) lie
    in one domain of its ``network_topology`` when that is hard. ``basic``: a kube-scheduler
    CompositePodGroup of the ``basic`` policy, which GangScheduling counts as one member needed
    (``min_members`` is 1; the kube writer writes ``basic`` back)."""

    name: str
    parent: str | None = None  # the enclosing GangGroup; None: directly the job
    min_members: int | None = Field(default=None, ge=0, le=MAX_PODS_PER_JOB)
    network_topology: NetworkTopology | None = None
    basic: bool = False

    @model_validator(mode="after")
    def _basic_needs_one(self) -> GangGroup:
        if self.basic and self.min_members not in (None, 1):
            raise ValueError(f"a basic group needs one member, not minMembers {self.min_members}")
        if self.basic and self.min_members is None:
            self.__dict__["min_members"] = 1  # no re-validation
        return self


class Job(_Model):
    """A gang: a Volcano Job or a PodGroup with its pods."""

    namespace: Name = "default"
    name: Name
    min_available: int = Field(default=0, ge=0)
    queue: str = "default"
    priority_class: str | None = None
    network_topology: NetworkTopology | None = None
    tasks: list[Task] = Field(default_factory=list)
    subgroup_policies: list[SubGroupPolicy] = Field(default_factory=list)
    # inner nodes of a gang hierarchy deeper than job → SubJob (empty for depth 2)
    gang_groups: list[GangGroup] = Field(default_factory=list)
    # role (``Task.role_name``) → minimum pods of it holding a node
    min_task_member: dict[str, int] = Field(default_factory=dict)
    # PodGroup spec.minResources; empty: the requests of the first minAvailable pods
    min_resources: Resources = Field(default_factory=MilliUnits)
    creation_index: int = 0  # stands for the creation timestamp: lower is older
    # labels of the only nodes the job's scheduler looks at (Kueue: the nodeLabels of its
    # ResourceFlavor); its pods also carry them as a nodeSelector, so every engine agrees
    node_pool: dict[str, str] = Field(default_factory=dict)
    # the name of the scheduler's topology object the job is placed with (Kueue: its TAS
    # ResourceFlavor's ``topologyName``), for the scheduler's own wording of a reason
    topology_name: str | None = None
    # the scheduler's name of the object the job's nodes and topology come from (Kueue: its TAS
    # ResourceFlavor), written back and used in the scheduler's wording of a reason
    flavor: str | None = None
    # ``toposolve.io/parallelism`` (docs/ranks.md), canonical text; None: one ring over the pods
    parallelism: Annotated[str | None, AfterValidator(canonical_parallelism)] = None
    # defragmentation (docs/defrag.md): ``toposolve.io/movable: "false"`` keeps the job where it
    # runs; ``toposolve.io/move-cost: "N"`` prices moving it (None: its running pod count)
    movable: bool = True
    move_cost: int | None = Field(default=None, ge=1, le=MAX_INTEGER)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def replicas(self) -> int:
        return sum(t.replicas for t in self.tasks)

    @model_validator(mode="after")
    def _consistent(self) -> Job:
        if self.replicas > MAX_PODS_PER_JOB:
            raise ValueError(
                f"the job has {self.replicas:,} pods, more than the limit {MAX_PODS_PER_JOB:,}")
        if self.min_available > self.replicas:
            raise ValueError(
                f"minAvailable ({self.min_available}) exceeds the job's pods ({self.replicas})"
            )
        self._check_gang_tree()
        if self.parallelism is not None and self.replicas:
            ranks_per_pod(parse_parallelism(self.parallelism), self.pod_accelerators())
        return self

    def pod_accelerators(self) -> list[int]:
        """Whole accelerator units of each pod, in task order then pod index (the rank order
        of :mod:`toposolve.core.parallelism`)."""
        out: list[int] = []
        for task in self.tasks:
            units = sum(-(-amount // 1000) for name, amount in task.requests.items()
                        if is_accelerator(name))
            out += [units] * task.replicas
        return out

    def _check_gang_tree(self) -> None:
        """GangGroup names unique, every parent named exists, no parent cycle, nesting at most
        ``MAX_GANG_DEPTH`` deep (engines walk the tree level by level); linear time."""
        parent_of: dict[str, str | None] = {}
        for g in self.gang_groups:
            if g.name in parent_of:
                raise ValueError(f"GangGroup {g.name!r} is declared twice")
            parent_of[g.name] = g.parent
        named = [g.parent for g in self.gang_groups] + [p.parent for p in self.subgroup_policies]
        for parent in named:
            if parent is not None and parent not in parent_of:
                raise ValueError(f"parent GangGroup {parent!r} does not exist")
        cycle = find_parent_cycle(parent_of)
        if cycle:
            raise ValueError(f"GangGroup parents form a cycle through {cycle[0]!r}")
        too_deep = nesting_problem(nesting_depths(parent_of), "GangGroup")
        if too_deep:
            raise ValueError(too_deep[1])


def nesting_problem(depths: Mapping[str, int], kind: str) -> tuple[str, str] | None:
    """The first sub-gang nested deeper than ``MAX_GANG_DEPTH`` and why it is refused, or None.

    Parameters
    ----------
    depths
        Sub-gang name → nesting depth (1: directly under the job), as
        :func:`toposolve.core.parents.nesting_depths` gives.
    kind
        What the message calls a sub-gang (``GangGroup``, ``SubGroup``).
    """
    deep = next((name for name, depth in depths.items() if depth > MAX_GANG_DEPTH), None)
    if deep is None:
        return None
    return deep, (f"{kind} {deep!r} is nested {depths[deep]:,} levels deep, more than the limit "
                  f"of {MAX_GANG_DEPTH} levels of sub-gangs")


class Queue(_Model):
    name: Name
    weight: int = Field(default=1, ge=0)
    capability: Resources = Field(default_factory=MilliUnits)
    deserved: Resources = Field(default_factory=MilliUnits)
    guarantee: Resources = Field(default_factory=MilliUnits)
    reclaimable: bool = True
    priority: int = 0
    # spec.parent (hierarchical queues): read and shown; capability, shares and reclaim treat
    # every queue alone, as Volcano's proportion plugin does
    parent: str | None = None
    # a Kueue ClusterQueue's ResourceFlavors, in order (its quota messages name them)
    flavors: list[str] = Field(default_factory=list)


class PriorityClass(_Model):
    name: Name
    value: int
    global_default: bool = False


# The three classes generated instances and traces use (high, normal, low).
PRIORITY_CLASSES = ({"name": "high", "value": 1000}, {"name": "normal", "value": 100},
                    {"name": "low", "value": 10})


def _budget_value(value: object) -> int | str | None:
    return None if value is None else int_or_percent(value)


class PodDisruptionBudget(_Model):
    """A ``policy/v1 PodDisruptionBudget``: at most one of ``min_available`` and
    ``max_unavailable`` (an integer or ``"N%"``); ``selector`` None selects no pod, an empty one
    every pod of its namespace. Arithmetic: :mod:`toposolve.core.disruption`."""

    namespace: Name = "default"
    name: Name
    selector: LabelSelector | None = None
    min_available: Annotated[int | str | None, BeforeValidator(_budget_value)] = None
    max_unavailable: Annotated[int | str | None, BeforeValidator(_budget_value)] = None
    unhealthy_pod_eviction_policy: Literal["IfHealthyBudget", "AlwaysAllow"] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @model_validator(mode="after")
    def _one_budget(self) -> PodDisruptionBudget:
        if self.min_available is not None and self.max_unavailable is not None:
            raise ValueError("minAvailable and maxUnavailable cannot both be set")
        return self


class Instance(_Model):
    """Everything an engine needs to know about one scheduling decision."""

    nodes: list[Node] = Field(default_factory=list)
    hypernodes: list[HyperNode] = Field(default_factory=list)
    # extra trees over the same nodes, one per crossing Topology (empty for nearly every input)
    constraint_trees: list[ConstraintTree] = Field(default_factory=list)
    jobs: list[Job] = Field(default_factory=list)
    queues: list[Queue] = Field(default_factory=list)
    priority_classes: list[PriorityClass] = Field(default_factory=list)
    disruption_budgets: list[PodDisruptionBudget] = Field(default_factory=list)
    source: str = "<memory>"
    # whose objects the input holds: picks the default engine (volcano, kueue or kai)
    scheduler: Literal["volcano", "kueue", "kai", "kube"] = "volcano"
    # kube-scheduler's score configuration (a KubeSchedulerConfiguration profile); None: defaults
    kube_scoring: KubeScoring | None = None
    # the resource placed per device (docs/formats.md): set from the tasks' ``deviceShare``
    # when they have one; None: every resource is pooled per node, as before
    device_resource: str | None = None

    @model_validator(mode="after")
    def _one_device_resource(self) -> Instance:
        shared = share_resources(self)
        if self.device_resource is not None:
            shared.setdefault(self.device_resource, "deviceResource")
        if len(shared) > 1:
            first, second = list(shared.items())[:2]
            raise ValueError(f"{second[1]}: per-device sharing of {second[0]!r} beside "
                             f"{first[0]!r}: one resource per instance is shared per device")
        if shared and self.device_resource is None:
            self.__dict__["device_resource"] = next(iter(shared))  # no re-validation
        if self.device_resource is None and any(t.device_use for j in self.jobs for t in j.tasks):
            raise ValueError("deviceUse needs a resource shared per device (a deviceShare or "
                             "deviceResource)")
        return self

    def job_priority(self, job: Job) -> int:
        """Priority value of a job: its PriorityClass value, else the global default, else 0."""
        by_name = {pc.name: pc.value for pc in self.priority_classes}
        if job.priority_class is not None:
            return by_name.get(job.priority_class, 0)
        for pc in self.priority_classes:
            if pc.global_default:
                return pc.value
        return 0


def share_resources(instance: Instance) -> dict[str, str]:
    """Resources named by the tasks' ``deviceShare``, in job and task order, each with the first
    job and task naming it (``Job/ns/name: task t``)."""
    out: dict[str, str] = {}
    for job in instance.jobs:
        for task in job.tasks:
            if task.device_share is not None and task.device_share.resource not in out:
                out[task.device_share.resource] = f"Job/{job.key}: task {task.name}"
    return out

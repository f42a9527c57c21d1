"""Kueue ``Workload`` objects → :class:`Job` (see :mod:`toposolve.formats.kueue.request` for
topology).

* Queue: ``spec.queueName`` names a LocalQueue of the workload's namespace, which names the
  ClusterQueue (the job's queue); an admitted workload's ``status.admission.clusterQueue`` wins.
  A pending workload whose LocalQueue is not in the input is skipped (warning): Kueue would not
  admit it either.
* Priority: ``spec.priorityClassRef`` (v1beta2) / ``spec.priorityClassName`` (v1beta1) naming a
  WorkloadPriorityClass or PriorityClass; else ``spec.priority``; else none.
* Podsets are tasks (``count`` replicas, requests from the template); the TAS flavor of the
  ClusterQueue adds its ``nodeLabels`` as a nodeSelector and its tolerations, and its
  ``nodeLabels`` are the job's node pool (Kueue's TAS builds the flavor's topology from those
  nodes only). The gang is the whole workload (``minCount`` lowers it: partial admission).
* Admitted workloads (``status.admission``) hold capacity: ``topologyAssignment`` (v1beta1
  ``domains``, v1beta2 ``slices``) gives each pod its node
  (:mod:`toposolve.formats.kueue.assignment`).
  Finished or deactivated workloads are skipped (warning). Node replacement: the pods an admitted
  workload has on the first of its ``status.unhealthyNodes`` are pending again (the engine
  re-places them), unless a single Pod owns the workload (Kueue then keeps the assignment).
* A slice replacing an admitted one keeps its pods: :mod:`toposolve.formats.kueue.elastic`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from toposolve.core.instance import (
    TASK_SPEC_LABEL,
    GangGroup,
    Job,
    LabelSelector,
    NetworkTopology,
    Node,
    PartitionPolicy,
    SubGroupPolicy,
    Task,
)
from toposolve.core.limits import MAX_PODS_PER_JOB
from toposolve.core.podset_groups import (
    ELASTIC_LABEL,
    GROUP_LABEL,
    PODSET_GANG_PREFIX,
    UNCONSTRAINED_LABEL,
    group_roles,
    inactive_message,
)
from toposolve.formats.k8s.fields import Document, Field, build
from toposolve.formats.k8s.levels import job_constraints
from toposolve.formats.k8s.pods import pod_constraints, pod_requests
from toposolve.formats.k8s.specs import object_name, object_namespace
from toposolve.formats.kueue.assignment import assigned_nodes
from toposolve.formats.kueue.elastic import kept_pods
from toposolve.formats.kueue.empty_topology import mark_no_domain
from toposolve.formats.kueue.reader import WPC_PREFIX, Flavor, KueueCluster
from toposolve.formats.kueue.request import (
    TopologyRequest,
    check_group,
    check_group_slices,
    combined_kinds,
    level_topology,
    request_from_field,
)
from toposolve.formats.kueue.slices import (
    add_slice_tree,
    add_uneven_slices,
    check_layer_count,
    never_placed_reason,
)
from toposolve.formats.volcano.job import partition_subgroup_policy

PODSET_UNIT_LABEL = "toposolve.io/podset-unit"
# a pod group, even of one Pod  # marks the pods of a podset (group) with its own topology
IS_GROUP_WORKLOAD = "kueue.x-k8s.io/is-group-workload"
ELASTIC_JOB = "kueue.x-k8s.io/elastic-job"  # constants.ElasticJobAnnotation


def _condition(root: Field, kind: str) -> bool:
    return any(
        c["type"].text("") == kind and c["status"].text("") == "True"
        for c in root.at("status.conditions").elements()
    )


def _priority(root: Field, cluster: KueueCluster,
              known_classes: set[str]) -> tuple[str | None, int | None]:
    """(model PriorityClass name, literal priority) of a workload."""
    spec = root["spec"]
    name = spec.at("priorityClassRef.name").text("") or spec["priorityClassName"].text("") or None
    if name is not None and name in cluster.priority_values:
        return WPC_PREFIX + name, None
    if name is not None and name in known_classes:
        return name, None
    return None, spec["priority"].integer(None)


def read_workload(doc: Document, cluster: KueueCluster, nodes: list[Node], known_classes: set[str],
                  warn: Callable[[str], None], replaced: Document | None = None
                  ) -> tuple[Job, int | None] | None:
    """The workload's job and its literal priority (``spec.priority`` without a class), or None;
    ``replaced``: the admitted Workload slice this one replaces (its pods are kept)."""
    root = Field.root(doc, doc.object_name(namespaced=True))
    if _condition(root, "Finished") or not root.at("spec.active").boolean(True):
        warn(f"{root.file}: {root.obj}: skipped (finished or inactive)")
        return None
    namespace, name = object_namespace(root), object_name(root)
    admission = root.at("status.admission")
    if admission.present:
        queue = admission["clusterQueue"].required_text()
    else:
        local = root.at("spec.queueName").text("") or ""
        queue = cluster.local_queues.get((namespace, local))
        if queue is None:
            warn(f"{root.file}: {root.obj}: skipped (LocalQueue {local!r} not in the input)")
            return None
    flavor = cluster.workload_flavor(queue, _requested_levels(root), _explicit_tas(root))
    assignments = {a["name"].text("main"): a for a in admission["podSetAssignments"].elements()}
    unhealthy = _replaced_node(root) if admission.present else None
    kept = kept_pods(root, replaced, nodes, warn) if replaced is not None else {}
    elastic = root.at("metadata.annotations")[ELASTIC_JOB].text("") == "true"
    tasks: list[Task] = []
    requests: list[TopologyRequest] = []
    minimum = 0
    for ps in root.at("spec.podSets").elements():
        task, request, task_min = _podset(ps, flavor, assignments, cluster, nodes, unhealthy,
                                          kept.get(ps["name"].text("main") or "main"), elastic)
        tasks.append(task)
        requests.append(request)
        minimum += task_min
    if not tasks:
        raise root.at("spec.podSets").fail("a Workload needs at least one podset")
    priority_class, literal = _priority(root, cluster, known_classes)
    job = build(
        Job,
        root,
        {"tasks": "spec.podSets", "min_available": "spec.podSets"},
        namespace=namespace,
        name=name,
        min_available=minimum,
        queue=queue,
        priority_class=priority_class,
        tasks=tasks,
        node_pool=dict(flavor.node_labels) if flavor is not None else {},
        topology_name=flavor.topology if flavor is not None else None,
        flavor=flavor.name if flavor is not None else None,
    )
    if queue in cluster.inactive:  # never admitted: pending in every engine, whatever it asks
        job.network_topology = NetworkTopology(mode="hard", never_placed=inactive_message(queue))
        return job, literal
    _warn_missing(root, job, requests, cluster, warn)
    if not admission.present and not any(r.missing_level for r in requests):
        marked = mark_no_domain(job, requests, cluster)
        if marked is not None:
            warn(f"{root.file}: {root.obj}: podset {marked[0]!r}: Topology "
                 f"{job.topology_name!r} has no node with all its level labels; the workload "
                 f"stays pending (Kueue: {marked[1]})")
    for podset in _apply_topology(job, requests, cluster):
        warn(f"{root.file}: {root.obj}: podset {podset!r}: its slices are not read (Kueue places "
             "a podset group with its own level by the workers' request)")
    topology = job.topology_name or ""
    _keep_within(job, cluster.within.get(topology), cluster.tree_of.get(topology))
    return job, literal


def _keep_within(job: Job, tree: str | None, crossing: str | None) -> None:
    """With several Topology trees, every constraint of the workload stays in its flavor's;
    a flavor whose Topology crosses the main tree (``crossing``) has its constraints measured
    in that constraint tree."""
    if tree is None:
        return
    for spec in job_constraints(job):
        if spec.missing_level is not None or spec.never_placed is not None:  # on no node
            continue
        spec.within_hypernode = tree
        spec.tree = crossing


def _warn_missing(root: Field, job: Job, requests: list[TopologyRequest], cluster: KueueCluster,
                  warn: Callable[[str], None]) -> None:
    """One line when podsets name a level their flavor's Topology lacks: Kueue's flavor assigner
    finds no flavor (``checkPodSetAndFlavorMatchForTAS``), so the workload stays pending; one per
    podset whose slice layers Kueue's TAS never places."""
    for task, request in zip(job.tasks, requests, strict=True):
        if (combined := combined_kinds(request)) is not None:
            warn(f"{root.file}: {root.obj}: podset {task.name!r}: {combined}")
        if request.never_placed is not None:
            warn(f"{root.file}: {root.obj}: podset {task.name!r}: {request.never_placed}; the "
                 "workload stays pending (Kueue's TAS never places these slice layers)")
    missing = [(task.name, r.missing_level) for task, r in zip(job.tasks, requests, strict=True)
               if r.missing_level is not None]
    if not missing:
        return
    named = ", ".join(f"podset {podset!r} level {level!r}" for podset, level in missing)
    topology = cluster.levels_of(job.topology_name)[0]
    flavor = f" of flavor {job.flavor!r}" if job.flavor else ""
    warn(f"{root.file}: {root.obj}: {named}: not a level of Topology {topology!r}{flavor}; the "
         "workload stays pending (Kueue: no flavor contains the requested level)")


def _replaced_node(root: Field) -> str | None:
    """The node whose pods Kueue re-places now: the first of ``status.unhealthyNodes``
    (``TASFailedNodeReplacement``, beta, on), unless one Pod owns the workload — that pod cannot
    move (``SkipReassignmentForPodOwnedWorkloads``, beta, on)."""
    unhealthy = root.at("status.unhealthyNodes").elements()
    if not unhealthy:
        return None
    owners = root.at("metadata.ownerReferences").elements()
    grouped = root.at("metadata.annotations").string_map().get(IS_GROUP_WORKLOAD) == "true"
    if len(owners) == 1 and not grouped and owners[0]["kind"].text(
        "") == "Pod" and owners[0]["apiVersion"].text("") == "v1":
        return None
    return unhealthy[0]["name"].required_text()


TAS_REQUEST_FIELDS = ("unconstrained", "required", "preferred", "podSetSliceRequiredTopology",
                      "podSetSliceSize", "podsetSliceRequiredTopologyConstraints")


def _explicit_tas(root: Field) -> bool:
    """Whether a podset of the Workload requests TAS itself (kueue@ff69552
    ``workload.IsExplicitlyRequestingTAS``: any field of its ``topologyRequest`` set)."""
    return any(ps["topologyRequest"][key].present for ps in root.at("spec.podSets").elements()
               for key in TAS_REQUEST_FIELDS)


def _requested_levels(root: Field) -> set[str]:
    """The levels a Workload's podsets name (required, preferred, slice layers): the TAS flavor
    must have them all."""
    levels: set[str] = set()
    for ps in root.at("spec.podSets").elements():
        request = request_from_field(ps["topologyRequest"])
        levels |= {level for level in (request.required, request.preferred) if level}
        levels |= {layer.level for layer in request.slices}
    return levels


def _podset(ps: Field, flavor: Flavor | None, assignments: dict[str, Field], cluster: KueueCluster,
            nodes: list[Node], unhealthy: str | None = None, kept: list[str] | None = None,
            elastic: bool = False) -> tuple[Task, TopologyRequest, int]:
    name = ps["name"].text("main") or "main"
    count = ps["count"].integer(required=True, minimum=0, maximum=MAX_PODS_PER_JOB) or 0
    minimum = ps["minCount"].integer(count, minimum=0)
    spec = ps.at("template.spec")
    constraints = pod_constraints(spec)
    if flavor is not None:  # the TAS flavor's nodeLabels and tolerations apply to its pods
        constraints.node_selector = {**flavor.node_labels, **constraints.node_selector}
        constraints.tolerations = [*constraints.tolerations, *flavor.tolerations]
    request = request_from_field(ps["topologyRequest"])
    running: dict[int, str] = {}
    assignment = assignments.get(name)
    if assignment is not None:
        count = assignment["count"].integer(count, minimum=0, maximum=MAX_PODS_PER_JOB) or 0
        placed = assigned_nodes(assignment["topologyAssignment"], nodes, pod_requests(spec), count)
        running = {i: node for i, node in enumerate(placed) if node != unhealthy}
        minimum = count
    elif kept:  # a scale-down keeps the first pods (Kueue's TruncateAssignment)
        running = dict(enumerate(kept[:count]))
    task = build(
        Task,
        ps,
        {"replicas": "count", "requests": "template.spec.containers"},
        name=name,
        replicas=count,
        requests=pod_requests(spec),
        labels=_labels(ps, elastic),
        constraints=constraints,
        running=running,
    )
    topology = flavor.topology if flavor else None
    request.missing_level = cluster.missing_level(request.levels, topology)
    layers = [(layer.level, layer.size) for layer in request.slices]
    if request.layer_fields:
        check_layer_count(layers, request.where["podsetSliceRequiredTopologyConstraints"])
        if request.missing_level is None:
            tiers = [cluster.tier_of(level, here["topology"], topology)
                     for (level, _), here in zip(layers, request.layer_fields, strict=True)]
            request.never_placed = never_placed_reason(layers, tiers)
        check_group_slices(request)
    return task, request, min(minimum or 0, _whole_slices(count, request))


def _whole_slices(count: int, request: TopologyRequest) -> int:
    """The pods of the podset's whole outer slices (all of them without slices): Kueue's TAS
    places ``count // size`` slices and leaves the rest gated (``docs/kueue-fidelity.md``)."""
    if not request.modelled_slices or not count:
        return count
    size = request.slices[0].size
    if size > count:  # the job webhooks' upper bound (ValidateSliceSizeAnnotationUpperBound)
        raise request.where.fail(f"slice size {size} must not be greater than pod set count "
                                 f"{count}")
    return count - count % size


def _labels(ps: Field, elastic: bool) -> dict[str, str]:
    """The podset's pod labels; an elastic Workload's podset adds its topology request's kind
    (the mirror holds required and preferred ones: docs/kueue-fidelity.md), one with
    ``unconstrained`` beside a level :data:`UNCONSTRAINED_LABEL`."""
    labels = ps.at("template.metadata.labels").string_map()
    for own in (ELASTIC_LABEL, UNCONSTRAINED_LABEL):  # toposolve's marks, written back: recomputed
        labels.pop(own, None)
    request = ps["topologyRequest"]
    if request["unconstrained"].boolean(False) and (request["required"].present
                                                    or request["preferred"].present):
        labels[UNCONSTRAINED_LABEL] = "true"
    if elastic:
        kind = next((k for k in ("required", "preferred") if request[k].present),
                    "unconstrained")
        labels = {**labels, ELASTIC_LABEL: kind}
    return labels


def _apply_topology(job: Job, requests: list[TopologyRequest],
                    cluster: KueueCluster) -> list[str]:
    """Job topology, SubJobs and partitions of the workload's podsets (module doc of
    kueue_request); returns the podsets whose slices are not read (a group's leader)."""
    dropped: list[str] = []
    units: dict[str, list[int]] = {}
    for i, request in enumerate(requests):
        units.setdefault(request.group or f"#{i}", []).append(i)
    single = len(units) == 1
    counts = [task.replicas for task in job.tasks]
    for members in units.values():
        lead_at = members[0]
        lead = requests[lead_at]
        if lead.group is not None:  # a podset group: Kueue reads the workers' request for all
            check_group(lead.group, members, counts, lead.where["podSetGroupName"])
            workers, _ = group_roles([counts[i] for i in members])
            lead_at = members[workers]
            lead = requests[lead_at]
            # Kueue checks each podset's levels: one the Topology lacks holds the whole group
            lead.missing_level = next((requests[i].missing_level for i in members
                                       if requests[i].missing_level), None)
            for i in members:
                job.tasks[i].labels[GROUP_LABEL] = lead.group or ""
        topology = level_topology(lead, partial(cluster.tier_of, topology=job.topology_name))
        own_subjob = topology is not None and not single
        parent = None
        if single:
            job.network_topology = topology
        elif own_subjob and lead.modelled_slices:
            parent = _podset_gang(job, members, lead_at, lead, topology)
        elif own_subjob:
            unit = "-".join(job.tasks[i].name for i in members)
            for i in members:  # the unit's pods carry its name: SubJob <workload>/podset-<unit>
                job.tasks[i].labels[PODSET_UNIT_LABEL] = unit
            job.subgroup_policies.append(
                SubGroupPolicy(
                    name="podset",
                    sub_group_size=sum(job.tasks[i].replicas for i in members) or None,
                    label_selector=LabelSelector(match_labels={PODSET_UNIT_LABEL: unit}),
                    match_label_keys=[PODSET_UNIT_LABEL],
                    network_topology=topology,
                )
            )
        for i in members:  # a unit's own level: the workers' slices only (Kueue reads theirs)
            if requests[i].modelled_slices and (not own_subjob or requests[i] is lead):
                _add_slices(job, job.tasks[i], requests[i], cluster, parent)
            elif requests[i].modelled_slices:
                dropped.append(job.tasks[i].name)
    return dropped


def _podset_gang(job: Job, members: list[int], workers: int, request: TopologyRequest,
                 topology: NetworkTopology) -> str:
    """Add the GangGroup ``podset-<unit>`` of a placement unit with its own level and slices
    (the workers' ``request``; its slices go below it); a podset group's leader is one SubJob
    below it, unconstrained there. It needs the leader and the whole outer slices (Kueue places
    ``count // size`` of them: all members when the size divides the count). Returns its name."""
    count, size = job.tasks[workers].replicas, request.slices[0].size
    name = PODSET_GANG_PREFIX + "-".join(job.tasks[i].name for i in members)
    leaders = [job.tasks[i] for i in members if i != workers]
    for leader in leaders:
        job.subgroup_policies.append(SubGroupPolicy(  # SubJob <workload>/podset-<leader>
            name="podset", sub_group_size=leader.replicas or None, parent=name,
            label_selector=LabelSelector(match_labels={TASK_SPEC_LABEL: leader.name}),
            match_label_keys=[TASK_SPEC_LABEL]))
    whole = count // size + len(leaders) if count % size else None
    job.gang_groups.append(GangGroup(name=name, network_topology=topology, min_members=whole))
    return name


def _add_slices(job: Job, task: Task, request: TopologyRequest, cluster: KueueCluster,
                parent: str | None = None) -> None:
    """One slice layer: the podset's partitions; more: a gang tree (``formats.kueue.slices``);
    ``parent``: the podset's own GangGroup, above the slices."""
    tiers = [cluster.tier_of(layer.level, request.where, job.topology_name)
             for layer in request.slices]
    if len(request.slices) > 1:
        if task.replicas:
            add_slice_tree(job, task, [layer.size for layer in request.slices], tiers, parent)
        return
    layer, tier = request.slices[0], tiers[0]
    if task.replicas % layer.size or parent is not None:  # a partition has no parent
        add_uneven_slices(job, task, layer.size, tier, parent)
        return
    task.partition = PartitionPolicy(
        total_partitions=max(task.replicas // layer.size, 1) if task.replicas else 1,
        partition_size=layer.size if task.replicas else 1,
        network_topology=NetworkTopology(mode="hard", highest_tier_allowed=tier),
    )
    if task.replicas == 0:
        task.partition = None
        return
    job.subgroup_policies.append(partition_subgroup_policy(task))

"""Any instance → Kueue objects (``generate --format kueue``).

Level keys are GKE's (``cloud.google.com/gce-topology-block``, ``-subblock``, ``-host``), see
:mod:`toposolve.formats.k8s.levels`. Hard topology → required level, soft → preferred level,
partitions → slices, the multi-layer slice trees the Kueue reader builds → multi-layer slices
(``podsetSliceRequiredTopologyConstraints``). Jobs with running pods are admitted Workloads with
a v1beta2 ``topologyAssignment``; an unconstrained job with pending pods too is that admitted
slice plus the pending elastic slice replacing it (:mod:`toposolve.formats.kueue.elastic`).
An instance with constraint trees (Topologies crossing the main tree over the same nodes) whose
main tree was read from a Topology keeps its Topologies: each one written with its own levels,
and a ResourceFlavor per node pool and Topology its queues use, so a crossing dump round-trips.
A job's own missing level is written back as its podsets' required level, and a queue all of
whose jobs are refused as inactive as a ClusterQueue whose flavor names a Topology the output
lacks. A job Kueue admits without TAS (its flavor had no Topology, or the instance has no tree)
gets a flavor without ``topologyName`` (docs/kueue-fidelity.md). What the form cannot say is
left out and reported by ``warn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toposolve.core.instance import Instance, Job, Task
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.core.podset_groups import UNCONSTRAINED_LABEL, inactive_message, is_group
from toposolve.core.quantity import format_quantities
from toposolve.formats.k8s.constraint_levels import constraint_levels, own_main_levels
from toposolve.formats.k8s.levels import (
    GKE_KEYS,
    TOPOLOGY_NAME,
    Levels,
    job_constraints,
    level_labels,
    warn_unsupported,
)
from toposolve.formats.k8s.objects import (
    creation_timestamp,
    disruption_budget_manifest,
    node_manifest,
    object_metadata,
    pod_spec_manifest,
)
from toposolve.formats.kueue.elastic import REPLACEMENT_FOR
from toposolve.formats.kueue.reader import KUEUE_GROUP
from toposolve.formats.kueue.slices import podset_gang, slice_tree, uneven_slices

KUEUE_VERSION = f"{KUEUE_GROUP}/v1beta2"

# a flavor: node labels and Topology name (None: a flavor without a Topology, non-TAS)
Pool = tuple[tuple[tuple[str, str], ...], str | None]
PREVIOUS_SLICE = "-previous-slice"  # suffix of the admitted slice a partly running job replaces


def kueue_documents(instance: Instance, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """The instance as Kueue objects.

    Parameters
    ----------
    instance
        The instance to write.
    warn
        Called with one line per thing the form cannot say.

    Returns
    -------
    list of dict
        Nodes, Topology, ResourceFlavors, ClusterQueues, LocalQueues, WorkloadPriorityClasses
        and Workloads.
    """
    main, topologies, nodes = _topologies(instance, warn)
    docs: list[dict[str, Any]] = [node_manifest(n) for n in nodes]
    topology_of = {id(job): _job_topology(instance, job, topologies, main)
                   for job in instance.jobs}
    if instance.hypernodes or any(t is not None for t in topology_of.values()):
        for name, levels in topologies.items():  # a flat instance of non-TAS jobs has none
            topology = {"levels": [{"nodeLabel": k} for k in levels.keys]}
            docs.append(_kueue_obj("Topology", name, topology))
    flavors = _flavors(instance, warn, topology_of, main)
    for (labels, topology_name), name in sorted(flavors.items(), key=lambda item: item[1]):
        spec: dict[str, Any] = {"topologyName": topology_name} if topology_name else {}
        if labels:
            spec["nodeLabels"] = dict(labels)
        docs.append(_kueue_obj("ResourceFlavor", name, spec))
    inactive = _inactive_flavors(instance, set(flavors.values()), set(topologies))
    for name, topology_name in sorted(set(inactive.values())):
        docs.append(_kueue_obj("ResourceFlavor", name, {"topologyName": topology_name}))
    docs += _cluster_queues(instance, flavors, topology_of, main, inactive, warn)
    for ns, q in sorted({(j.namespace, j.queue) for j in instance.jobs}):
        local = _kueue_obj("LocalQueue", q, {"clusterQueue": q})
        docs.append({**local, "metadata": object_metadata(q, ns)})
    for pc in instance.priority_classes:
        docs.append({
            "apiVersion": KUEUE_VERSION,
            "kind": "WorkloadPriorityClass",
            "metadata": object_metadata(pc.name),
            "value": pc.value,
        })
    docs += [disruption_budget_manifest(b) for b in instance.disruption_budgets]
    values = {pc.name: pc.value for pc in instance.priority_classes}
    kept = set(topologies) if instance.constraint_trees else set()
    for job in instance.jobs:
        levels = topologies[topology_of[id(job)] or main]
        written = _refusal_written(job, levels, inactive)
        warn_unsupported(_without_slice_trees(
            job.model_copy(update={"network_topology": None}) if written else job), warn, kept)
        flavor = flavors[_workload_pool(instance, job, topology_of, main)]
        if _elastic(job):  # an admitted slice and the pending one replacing it
            previous = f"{job.name}{PREVIOUS_SLICE}"
            pending = [t.model_copy(update={"running": {}}) for t in job.tasks]
            docs += [_workload(job, levels, values, False, flavor, previous),
                     _workload(job.model_copy(update={"tasks": pending}), levels, values, False,
                               flavor, replaces=f"{job.namespace}/{previous}")]
        else:
            docs.append(_workload(job, levels, values, _kueue_group(job, warn), flavor))
    return docs


def _topologies(instance: Instance, warn: Callable[[str], None],
                ) -> tuple[str, dict[str, Levels], list]:
    """(the main Topology's name, every Topology written by name, the nodes as written): the
    instance's own Topologies when it has constraint trees and its main tree was read from a
    Topology, else the tree relabelled with GKE's keys as one Topology."""
    own = own_main_levels(instance) if instance.constraint_trees else None
    if own is None:
        levels, nodes = level_labels(instance, GKE_KEYS)
        return TOPOLOGY_NAME, {TOPOLOGY_NAME: levels}, nodes
    main, levels, nodes = own
    return main, {main: levels, **constraint_levels(instance, nodes, warn)}, nodes


def _job_topology(instance: Instance, job: Job, topologies: dict[str, Levels],
                  main: str) -> str | None:
    """The Topology a job's flavor names: None for a job Kueue admits without TAS (it asks for
    no topology, and its flavor had none or the instance has no tree: the kueue engine's
    ``is_non_tas``), else the constraint tree its constraints are measured in, else its flavor's
    Topology when written, else the main one."""
    constraints = job_constraints(job)
    if not constraints and (not instance.hypernodes
                            or (job.flavor is not None and job.topology_name is None)):
        return None
    trees = sorted({s.tree for s in constraints if s.tree is not None})
    if trees and trees[0] in topologies:
        return trees[0]
    return job.topology_name if job.topology_name in topologies and not trees else main


def _elastic(job: Job) -> bool:
    """A job with running and pending pods and no topology constraint: written as an elastic
    workload slice (Kueue keeps the running pods and places only the pending ones); a
    constrained one would be placed afresh by Kueue, so it stays one admitted Workload."""
    running = any(t.running for t in job.tasks)
    pending = any(len(t.running) < t.replicas for t in job.tasks)
    constrained = (job.network_topology is not None or job.subgroup_policies or job.gang_groups
                   or any(t.partition is not None for t in job.tasks))
    return running and pending and not constrained


def _cluster_queues(instance: Instance, flavors: dict[Pool, str],
                    topology_of: dict[int, str | None], main: str,
                    inactive: dict[str, tuple[str, str]],
                    warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """One ClusterQueue per queue: the cluster's totals, capped by the queue's capability, in
    its flavor (an ``inactive`` queue: in its flavor naming a Topology the output lacks); a queue
    of TAS and non-TAS jobs lists both flavors in the order read, the quota on the first (the
    model sums a ClusterQueue's quota over its flavors), with a warning line."""
    totals: dict[str, int] = {}
    for n in instance.nodes:
        for r, a in n.allocatable.items():
            totals[r] = totals.get(r, 0) + a
    capability = {q.name: q.capability for q in instance.queues}
    docs = []
    read = {q.name: q.flavors for q in instance.queues}
    for q in _queue_names(instance):
        quota = {**totals, **capability.get(q, {})}
        amounts = format_quantities(dict(sorted(quota.items())))
        names = [inactive[q][0]] if q in inactive else _in_read_order(
            [flavors[p] for p in _queue_pools(instance, q, topology_of, main)], read.get(q, []))
        listed = [{"name": name, "resources": [
            {"name": r, "nominalQuota": v if not k else "0"} for r, v in amounts.items()]}
            for k, name in enumerate(names)]
        if len(names) > 1:
            warn(f"ClusterQueue/{q}: its quota is written on flavor {names[0]!r}, none on "
                 f"{names[1]!r} (toposolve sums a ClusterQueue's quota over its flavors; Kueue "
                 "charges each flavor its own)")
        docs.append(_kueue_obj("ClusterQueue", q, {
            "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": sorted(quota), "flavors": listed}],
        }))
    return docs


def _in_read_order(names: list[str], read: list[str]) -> list[str]:
    """``names`` in the order the queue's flavors were read; names not read keep theirs, last."""
    return sorted(names, key=lambda n: (read.index(n) if n in read else len(read), names.index(n)))


def _inactive_flavors(instance: Instance, taken: set[str],
                      topologies: set[str]) -> dict[str, tuple[str, str]]:
    """The queues written as inactive ClusterQueues → (their flavor, the Topology it names,
    which the output lacks): the queues whose every job carries Kueue's inactive-ClusterQueue
    refusal (``NetworkTopology.never_placed``, as the reader marks them). The flavor keeps the
    queue's first one as read (``Queue.flavors``) unless a written flavor has that name."""
    flags: dict[str, list[bool]] = {}
    for job in instance.jobs:
        nt = job.network_topology
        flags.setdefault(job.queue, []).append(
            nt is not None and nt.never_placed == inactive_message(job.queue))
    read = {q.name: q.flavors for q in instance.queues}
    out: dict[str, tuple[str, str]] = {}
    for q in sorted(q for q, all_of in flags.items() if all(all_of)):
        flavor = next(iter(read.get(q, [])), f"{q}-flavor")
        while flavor in taken:
            flavor += "-inactive"
        topology = f"{flavor}-topology"
        while topology in topologies:
            topology += "-missing"
        taken.add(flavor)
        out[q] = (flavor, topology)
    return out


def _written_missing_level(job: Job, levels: Levels) -> str | None:
    """The job's own missing level when written back as its podsets' required level: one the
    written Topology lacks too (else it would become a level and the job placeable)."""
    nt = job.network_topology
    if nt is None or nt.missing_level is None or nt.missing_level in levels.keys:
        return None
    return nt.missing_level


def _refusal_written(job: Job, levels: Levels, inactive: dict[str, tuple[str, str]]) -> bool:
    """Whether the job's own constraint no node satisfies is written back as Kueue carries it
    (:func:`_written_missing_level`, or its queue written inactive)."""
    nt = job.network_topology
    if nt is None:
        return False
    if nt.missing_level is not None:
        return _written_missing_level(job, levels) is not None
    return nt.never_placed is not None and job.queue in inactive  # all its jobs: inactive


def _queue_names(instance: Instance) -> list[str]:
    return sorted({j.queue for j in instance.jobs} | {q.name for q in instance.queues})


def _template(task: Task) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": pod_spec_manifest(task.requests, task.constraints)}
    if task.labels:
        template["metadata"] = {"labels": dict(task.labels)}
    return template


def _podset_counts(job: Job) -> list[int]:
    """Pods of each written podset (the running ones of an admitted workload)."""
    running = any(t.running for t in job.tasks)
    counts = [len(t.running) if running else t.replicas for t in job.tasks]
    return [c for c in counts if c or not running]


def _kueue_group(job: Job, warn: Callable[[str], None]) -> bool:
    """Whether the job's tasks are written as one podset group (LeaderWorkerSet style); a job-level
    topology over tasks that cannot be one is written per podset, with a warning line."""
    counts = _podset_counts(job)
    nt = job.network_topology
    if nt is None or nt.never_placed is not None or len(counts) < 2:  # never placed: no request
        return False
    if is_group(counts):
        return True
    warn(
        f"Job/{job.key}: its network topology is written per podset (a Kueue podset group holds "
        f"exactly two podsets, one of a single pod; this job has {len(counts)} podsets of "
        f"{counts} pods)"
    )
    return False


def _job_pool(job: Job, topology_of: dict[int, str | None]) -> Pool:
    return tuple(sorted(job.node_pool.items())), topology_of[id(job)]


def _writes_topology(instance: Instance, topology_of: dict[int, str | None]) -> bool:
    """Whether Topologies are written: the instance has a tree, or a job asks for TAS."""
    return bool(instance.hypernodes) or any(t is not None for t in topology_of.values())


def _queue_pools(instance: Instance, queue: str, topology_of: dict[int, str | None],
                 main: str) -> list[Pool]:
    """The pools a queue's ClusterQueue lists: its first job's, then the first of its jobs' of
    the other kind (TAS / non-TAS), as Kueue's flavor assigner gives a workload asking for no TAS
    the first flavor without a Topology and one asking for TAS the first with one."""
    pools = [_job_pool(j, topology_of) for j in instance.jobs if j.queue == queue]
    if not pools:
        return [((), main if _writes_topology(instance, topology_of) else None)]
    other = next((p for p in pools if (p[1] is None) != (pools[0][1] is None)), None)
    return [pools[0]] if other is None else [pools[0], other]


def _workload_pool(instance: Instance, job: Job, topology_of: dict[int, str | None],
                   main: str) -> Pool:
    """The pool of the flavor the job's Workload is admitted on: its queue's of its kind."""
    pools = _queue_pools(instance, job.queue, topology_of, main)
    tas = topology_of[id(job)] is not None
    return next((p for p in pools if (p[1] is not None) == tas), pools[0])


def _flavors(instance: Instance, warn: Callable[[str], None],
             topology_of: dict[int, str | None], main: str) -> dict[Pool, str]:
    """A ResourceFlavor per node pool and Topology the queues use (``tas-flavor`` for no pool in
    the main Topology, ``tas-flavor-<k>`` with the pool as ``nodeLabels``; without a Topology
    ``default-flavor`` and ``flavor-<k>``); a job whose pool or Topology differs from its
    queue's gets a warning line (its pods keep the pool's labels as a nodeSelector)."""
    names: dict[Pool, str] = {}
    used = [p for q in _queue_names(instance) for p in _queue_pools(instance, q, topology_of, main)]
    for pool in used:  # the flavor the reader chose keeps its name
        first = next((j.flavor for j in instance.jobs if _job_pool(j, topology_of) == pool),
                      None)
        if first is not None and first not in names.values():
            names.setdefault(pool, first)
    if _writes_topology(instance, topology_of) and ((), main) not in names:
        names[((), main)] = "tas-flavor" if "tas-flavor" not in names.values() else _fresh_name(
            names, "tas-flavor")
    if ((), None) in used and ((), None) not in names:
        names[((), None)] = ("default-flavor" if "default-flavor" not in names.values()
                             else _fresh_name(names, "flavor"))
    for pool in used:
        if pool not in names:
            names[pool] = _fresh_name(names, "flavor" if pool[1] is None else "tas-flavor")
    for job in instance.jobs:
        pool, written = _job_pool(job, topology_of), _workload_pool(instance, job, topology_of,
                                                                    main)
        if pool[1] != written[1]:
            warn(f"Job/{job.key}: its Topology {pool[1]!r} differs from its queue's: placed in "
                 "its queue's flavor's Topology")
        elif pool != written:
            warn(
                f"Job/{job.key}: node pool {job.node_pool} differs from its queue's: kept as a "
                "nodeSelector only"
            )
    return names


def _fresh_name(names: dict[Pool, str], stem: str) -> str:
    """``<stem>-<k>``, the lowest k from the count of names that no flavor has."""
    k = len(names)
    while f"{stem}-{k}" in names.values():
        k += 1
    return f"{stem}-{k}"


def _kueue_obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta = object_metadata(name)
    return {"apiVersion": KUEUE_VERSION, "kind": kind, "metadata": meta, "spec": spec}


def _topology_request(job: Job, task: Task, levels: Levels, group: bool,
                      admitted: bool) -> dict[str, Any]:
    """A podset's ``topologyRequest`` (empty when it has none); an admitted workload's podsets
    carry no slices."""
    request: dict[str, Any] = {}
    own = podset_gang(job, task)  # its own level in a workload of several podsets
    nt = job.network_topology or (own.network_topology if own else None)
    if (missing := _written_missing_level(job, levels)) is not None:  # as read: still missing
        request["required"] = missing
    elif nt is not None and nt.missing_level is None and nt.never_placed is None:
        hard = nt.mode == "hard"
        tier = nt.highest_tier_allowed if hard else (nt.preferred_tier or nt.highest_tier_allowed)
        level = levels.key_of(tier)
        if level is not None:
            request["required" if hard else "preferred"] = level
    if request and group:
        request["podSetGroupName"] = "job"
    if request and task.labels.get(UNCONSTRAINED_LABEL) == "true":
        request["unconstrained"] = True
    tree = None if admitted else slice_tree(job, task)
    if tree is not None:
        keys = [levels.key_of(t) for t in tree.tiers]
        if None not in keys:
            request["podsetSliceRequiredTopologyConstraints"] = [
                {"topology": key, "size": size} for key, size in zip(keys, tree.sizes, strict=True)]
    p = task.partition
    uneven = uneven_slices(job, task)
    if p is not None and p.network_topology is not None and not admitted:
        level = levels.key_of(p.network_topology.highest_tier_allowed)
        if level is not None:
            request["podSetSliceRequiredTopology"] = level
            request["podSetSliceSize"] = p.partition_size
    elif uneven is not None and uneven.network_topology is not None and not admitted:
        level = levels.key_of(uneven.network_topology.highest_tier_allowed)
        if level is not None:
            request["podSetSliceRequiredTopology"] = level
            request["podSetSliceSize"] = uneven.sub_group_size
    return request


def _without_slice_trees(job: Job) -> Job:
    """The job without the GangGroups and policies of its multi-layer slices (written as such)."""
    groups: set[str] = set()
    policies: set[str] = set()
    for task in job.tasks:
        tree = slice_tree(job, task)
        if tree is not None:
            groups |= tree.groups
            policies |= tree.policies
        if uneven_slices(job, task) is not None:
            policies.add(task.name)
        if (own := podset_gang(job, task)) is not None:
            groups.add(own.name)
    if not groups and not policies:
        return job
    return job.model_copy(update={
        "gang_groups": [g for g in job.gang_groups if g.name not in groups],
        "subgroup_policies": [p for p in job.subgroup_policies if p.name not in policies],
    })


def _workload(job: Job, levels: Levels, priorities: dict[str, int], group: bool, flavor: str,
              name: str | None = None, replaces: str | None = None) -> dict[str, Any]:
    """The job's Workload (admitted when it runs pods, its podsets assigned ``flavor``: its
    ClusterQueue's), named ``name`` (default the job's); with ``replaces``, annotated as the
    elastic slice replacing that ``<namespace>/<name>``."""
    running = any(t.running for t in job.tasks)
    podsets = []
    for task in job.tasks:
        count = len(task.running) if running else task.replicas
        if count == 0 and running:
            continue
        ps: dict[str, Any] = {"name": task.name, "count": count, "template": _template(task)}
        request = _topology_request(job, task, levels, group, running)
        if request:
            ps["topologyRequest"] = request
        podsets.append(ps)
    spec: dict[str, Any] = {"queueName": job.queue, "podSets": podsets}
    if job.priority_class is not None:
        spec["priorityClassRef"] = {
            "group": KUEUE_GROUP,
            "kind": "WorkloadPriorityClass",
            "name": job.priority_class,
        }
        spec["priority"] = priorities.get(job.priority_class, 0)
    created = creation_timestamp(job.creation_index)
    doc: dict[str, Any] = {
        "apiVersion": KUEUE_VERSION,
        "kind": "Workload",
        "metadata": object_metadata(name or job.name, job.namespace, creationTimestamp=created),
        "spec": spec,
    }
    if replaces is not None:
        doc["metadata"]["annotations"] = {REPLACEMENT_FOR: replaces}
    if running:
        doc["status"] = {"admission": {"clusterQueue": job.queue, "podSetAssignments": [
            {"name": t.name, "flavors": {r: flavor for r in t.requests},
             "count": len(t.running), "topologyAssignment": _assignment(t)}
            for t in job.tasks if t.running
        ]}, "conditions": [{"type": "Admitted", "status": "True"}]}
    return doc


def _assignment(task: Task) -> dict[str, Any]:
    per_node: dict[str, int] = {}
    for node in task.running.values():
        per_node[node] = per_node.get(node, 0) + 1
    names = sorted(per_node)
    return {"levels": [HOSTNAME_LABEL], "slices": [{
        "domainCount": len(names),
        "valuesPerLevel": [{"individual": {"roots": names}}],
        "podCounts": {"individual": [per_node[n] for n in names]},
    }]}

"""Reader of the compact native instance format (``apiVersion: toposolve/v1``, ``kind: Instance``).

One YAML document describes a whole instance and writes repeated shapes once (node groups, a
regular HyperNode tree as ``levels``, jobs repeated ``count`` times, name patterns and ranges).
The format is specified in one place, ``instances/README-native.md``; the writer is
:mod:`.native_writer`, names both ways are :mod:`.names`. Errors are one line,
``file: object: field: message``; every key the specification does not list is an error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from toposolve.core.disruption import UNREADY_STATES
from toposolve.core.errors import InputError
from toposolve.core.instance import (
    TASK_SPEC_LABEL,
    ConstraintTree,
    DeviceShare,
    HyperNode,
    Instance,
    Job,
    Member,
    MemberSelector,
    Node,
    PartitionPolicy,
    PodConstraints,
    PodDisruptionBudget,
    PreferredTerm,
    PriorityClass,
    Queue,
    Taint,
    Task,
    Toleration,
)
from toposolve.core.limits import (
    MAX_HYPERNODES,
    MAX_INTEGER,
    MAX_NODES,
    MAX_PODS,
    MAX_PODS_PER_JOB,
    MAX_TIER,
)
from toposolve.core.quantity import MilliUnits
from toposolve.core.topology import compile_regex
from toposolve.formats.k8s.comm import read_movability, read_parallelism
from toposolve.formats.k8s.fields import Document, Field, build, check_keys, join_path
from toposolve.formats.k8s.pods import label_requirement
from toposolve.formats.k8s.specs import (
    LABEL_REQUIREMENT_KEYS,
    label_selector,
    network_topology,
    partition_policy,
    subgroup_policies,
)
from toposolve.formats.native.names import MAX_RANGE, NamePattern, expand_range, reject_duplicates
from toposolve.formats.volcano.job import partition_subgroup_policy, read_min_available

API_VERSION = "toposolve/v1"
KIND = "Instance"

_TOP_KEYS = ("apiVersion", "kind", "metadata", "nodeGroups", "topology", "constraintTrees",
             "queues", "priorityClasses", "podDisruptionBudgets", "jobs", "deviceResource")
_CONSTRAINT_TREE_KEYS = ("name", "topology")
_BUDGET_KEYS = ("name", "namespace", "selector", "minAvailable", "maxUnavailable",
                "unhealthyPodEvictionPolicy")
_METADATA_KEYS = ("name", "description")
_GROUP_KEYS = ("name", "count", "start", "allocatable", "labels", "taints", "unschedulable")
_TAINT_KEYS = ("key", "value", "effect")
_TOPOLOGY_KEYS = ("tierNames", "levels", "hyperNodes")
_LEVEL_KEYS = ("tier", "name", "tierName", "count", "per", "nodes")
_HYPERNODE_KEYS = ("name", "tier", "tierName", "nodes", "children", "members")
_MEMBER_KEYS = ("type", "exactMatch", "regexMatch", "labelMatch")
_QUEUE_KEYS = ("name", "weight", "capability", "deserved", "guarantee", "reclaimable", "priority",
               "parent", "flavors")
_CLASS_KEYS = ("name", "value", "globalDefault")
JOB_KEYS = (  # keys of a ``jobs`` entry (a trace entry adds its time keys)
    "name", "count", "start", "namespace", "queue", "priorityClass", "minAvailable",
    "networkTopology", "creationIndex", "minTaskMember", "minResources", "subGroupPolicies",
    "tasks",
    "nodePool", "parallelism", "movable", "moveCost", "topologyName", "flavor",
)
_TASK_KEYS = (
    "name", "role", "replicas", "minAvailable", "requests", "scoreRequests", "labels", "partition",
    "nodeSelector", "affinity", "preferredAffinity", "tolerations", "priorityClass", "podNames",
    "podLabels", "running", "unready", "taskSpecLabel", "deviceShare", "deviceUse",
)
_SHARE_KEYS = ("resource", "milli", "count", "memory")
_PARTITION_KEYS = ("totalPartitions", "partitionSize", "minPartitions", "networkTopology")
_TERM_KEYS = ("matchExpressions",)
_PREFERRED_KEYS = ("weight", "matchExpressions")
_TOLERATION_KEYS = ("key", "operator", "value", "effect")


def is_native(doc: Any) -> bool:
    """True for a document of this format (any ``toposolve/...`` apiVersion: the reader then
    reports a version it does not know)."""
    return isinstance(doc, dict) and str(doc.get("apiVersion") or "").startswith("toposolve/")


def load_native(docs: Sequence[Any], source: str) -> Instance:
    """Build the :class:`Instance` of one native document; raise :class:`InputError` if bad."""
    if len(docs) != 1:
        raise InputError(
            f"a {API_VERSION} file holds exactly one YAML document, found {len(docs)}", file=source
        )
    doc = docs[0]
    if not isinstance(doc, dict):
        raise InputError("expected a mapping at the top level", file=source)
    name = Document(doc, source, 0).name
    root = Field(doc, "", source, f"{KIND}/{name}" if name else KIND)
    check_keys(root, _TOP_KEYS)
    if root["apiVersion"].text() != API_VERSION:
        raise root["apiVersion"].fail(f"unsupported apiVersion (expected {API_VERSION})")
    if root["kind"].text() != KIND:
        raise root["kind"].fail(f"expected kind {KIND}")
    check_keys(root["metadata"], _METADATA_KEYS)
    root.at("metadata.name").text()
    root.at("metadata.description").text()

    nodes = _read_nodes(root["nodeGroups"])
    hypernodes = _read_topology(root["topology"], [n.name for n in nodes])
    trees = _read_constraint_trees(root["constraintTrees"], [n.name for n in nodes])
    queues = _unique([read_native_queue(rooted(f, "Queue",
            i)) for i, f in enumerate(root["queues"].elements())], "Queue", source)
    classes = _unique([read_native_class(rooted(f, "PriorityClass",
            i)) for i, f in enumerate(root["priorityClasses"].elements())], "PriorityClass", source)
    budgets = [read_native_budget(rooted(f, "PodDisruptionBudget", i))
               for i, f in enumerate(root["podDisruptionBudgets"].elements())]
    reject_duplicates((b.key for b in budgets), lambda _, key: InputError(
        f"duplicate PodDisruptionBudget {key!r}", file=source, obj=f"PodDisruptionBudget/{key}",
        field="name"))
    jobs = _read_jobs(root["jobs"])
    return build(Instance, root, nodes=nodes, hypernodes=hypernodes, constraint_trees=trees,
                 jobs=jobs, queues=queues, priority_classes=classes, disruption_budgets=budgets,
                 source=source, device_resource=root["deviceResource"].text())


def _names(field: Field, *, allow_null: bool = False) -> list[str | None]:
    """A list of names with ranges expanded (``null`` kept when ``allow_null``)."""
    out: list[str | None] = []
    for item in field.elements():
        value = item.value
        if value is None and allow_null:
            out.append(None)
            continue
        if not isinstance(value, str) or not value:
            raise item.fail(f"expected a name{' or null' if allow_null else ''}, got {value!r}")
        try:
            expanded = expand_range(value)
        except ValueError as exc:
            raise item.fail(str(exc)) from None
        if expanded is None:
            out.append(value)
        else:
            out.extend(expanded)
        if len(out) > MAX_RANGE:
            raise item.fail(f"the list expands to more than {MAX_RANGE:,} names")
    return out


# -- shared helpers ---------------------------------------------------------------------------


def rooted(field: Field, kind: str, index: int) -> Field:
    """Re-root a list item as its own object ``Kind/name`` (``list[index]`` if nameless)."""
    value = field.value
    name = value.get("name") if isinstance(value, dict) else None
    obj = f"{kind}/{name}" if isinstance(name, str) and name else field.path or f"{kind}[{index}]"
    return Field(value, "", field.file, obj)


def _unique(objects: list, kind: str, file: str) -> list:
    def fail(_: int, name: str) -> InputError:
        return InputError(f"duplicate {kind} name {name!r}", file=file, obj=f"{kind}/{name}",
                          field="name")

    reject_duplicates((o.name for o in objects), fail)
    return objects


def _count(field: Field, default: int, minimum: int, maximum: int = MAX_INTEGER) -> int:
    value = field.integer(default, minimum=minimum, maximum=maximum)
    assert value is not None
    return value


def _within(field: Field, total: int, limit: int, what: str) -> None:
    """Fail on ``field`` before expanding it if the instance would pass ``limit`` ``what``."""
    if total > limit:
        raise field.fail(f"the instance would have {total:,} {what}, more than the limit {limit:,}")


# -- nodes ------------------------------------------------------------------------------------


def _read_nodes(groups: Field) -> list[Node]:
    nodes: list[Node] = []
    seen: set[str] = set()
    for g, item in enumerate(groups.elements()):
        group = Field(item.value, "", item.file, f"nodeGroups[{g}]")
        check_keys(group, _GROUP_KEYS)
        pattern = NamePattern(group["name"])
        count = _count(group["count"], 1, 1, MAX_NODES)
        _within(group["count"], len(nodes) + count, MAX_NODES, "nodes")
        start = _count(group["start"], 0, 0)
        pattern.require_index(count)
        allocatable = group["allocatable"].resources()
        labels = group["labels"].string_map()
        taints = []
        for t in group["taints"].elements():
            check_keys(t, _TAINT_KEYS)
            taints.append(build(Taint, t, key=t["key"].required_text(), value=t["value"].text(""),
                                effect=t["effect"].required_text()))
        cordoned = _unschedulable(group["unschedulable"], count)
        for k in range(count):
            name = pattern(start + k)
            if name in seen:
                raise group["name"].fail(f"duplicate node name {name!r}")
            seen.add(name)
            nodes.append(Node(name=name, labels=dict(labels), allocatable=MilliUnits(allocatable),
                              unschedulable=k in cordoned, taints=[t.model_copy() for t in taints]))
    return nodes


def _unschedulable(field: Field, count: int) -> set[int]:
    if isinstance(field.value, bool) or field.value is None:
        return set(range(count)) if field.value else set()
    chosen: set[int] = set()
    for item in field.elements():
        k = item.integer(required=True, minimum=0)
        assert k is not None
        if k >= count:
            raise item.fail(f"position {k} is outside the group (0..{count - 1})")
        chosen.add(k)
    return chosen


# -- topology ---------------------------------------------------------------------------------


def _read_constraint_trees(field: Field, node_names: list[str]) -> list[ConstraintTree]:
    """``constraintTrees``: per Topology crossing the main tree, its ``name`` and its
    ``topology`` section (the main ``topology``'s form)."""
    trees: list[ConstraintTree] = []
    for item in field.elements():
        check_keys(item, _CONSTRAINT_TREE_KEYS)
        name = item["name"].required_text()
        if any(t.name == name for t in trees):
            raise item["name"].fail(f"duplicate constraint tree {name!r}")
        trees.append(build(ConstraintTree, item, name=name,
                           hypernodes=_read_topology(item["topology"], node_names)))
    return trees


def _read_topology(topology: Field, node_names: list[str]) -> list[HyperNode]:
    check_keys(topology, _TOPOLOGY_KEYS)
    tier_names: dict[int, str] = {}
    names_field = topology["tierNames"]
    for key, value in names_field.mapping().items():
        where = Field(value, join_path(names_field.path, str(key)), names_field.file,
                      names_field.obj)
        try:
            tier = int(key)
        except (TypeError, ValueError):
            raise where.fail("tierNames keys are tiers (integers)") from None
        if not 0 <= tier <= MAX_TIER:
            raise where.fail(f"tiers run from 0 to {MAX_TIER}")
        tier_names[tier] = where.required_text()

    hypernodes = _read_levels(topology["levels"], node_names, tier_names)
    for h, item in enumerate(topology["hyperNodes"].elements()):
        hypernodes.append(_read_hypernode(rooted(item, "HyperNode", h), tier_names))
    seen: set[str] = set()
    for hn in hypernodes:
        if hn.name in seen:
            raise InputError(f"duplicate HyperNode name {hn.name!r}", file=topology.file,
                             obj=f"HyperNode/{hn.name}", field="name")
        seen.add(hn.name)
    return hypernodes


def _read_levels(levels: Field, node_names: list[str],
                 tier_names: dict[int, str]) -> list[HyperNode]:
    items = levels.elements()
    out: list[HyperNode] = []
    parents: list[HyperNode] = []
    for lv, item in enumerate(items):
        level = Field(item.value, "", item.file, f"topology.levels[{lv}]")
        check_keys(level, _LEVEL_KEYS)
        tier = level["tier"].integer(required=True, minimum=0, maximum=MAX_TIER)
        assert tier is not None
        if parents and tier >= parents[0].tier:
            raise level["tier"].fail(
                f"tier {tier} must be lower than the level above ({parents[0].tier})")
        pattern = NamePattern(level["name"])
        tier_name = level["tierName"].text() or tier_names.get(tier)
        is_leaf = lv == len(items) - 1
        if not is_leaf and level["nodes"].present:
            raise level["nodes"].fail("only the last level holds nodes")
        if lv == 0:
            if level["per"].present:
                raise level["per"].fail("the first level has no parents: give count, not per")
            count = _count(level["count"], 1, 1, MAX_HYPERNODES)
            sizes = []
        else:
            per = level["per"].integer(required=True, minimum=1, maximum=MAX_HYPERNODES)
            assert per is not None
            count = _count(level["count"], len(parents) * per, 1)
            _within(level["count"] if level["count"].present else level["per"], count,
                    MAX_HYPERNODES, "HyperNodes in a level")
            if math.ceil(count / per) != len(parents):
                raise level["count"].fail(
                    f"{count} HyperNodes in groups of {per} need {math.ceil(count / per)} parents, "
                    f"the level above has {len(parents)}"
                )
            sizes = [min(per, count - p * per) for p in range(len(parents))]
        _within(level["count"] if level["count"].present else level, len(out) + count,
                MAX_HYPERNODES, "HyperNodes")
        pattern.require_index(count)
        made = [HyperNode(name=pattern(i), tier=tier, tier_name=tier_name) for i in range(count)]
        first = 0
        for parent, size in zip(parents, sizes, strict=True):
            parent.members = [Member.exact(h.name, "HyperNode")
                              for h in made[first:first + size]]
            first += size
        if is_leaf:
            per_leaf = level["nodes"].integer(required=True, minimum=1)
            assert per_leaf is not None
            if math.ceil(len(node_names) / per_leaf) != count:
                raise level["nodes"].fail(
                    f"{count} HyperNodes of {per_leaf} nodes hold {count * per_leaf} nodes at most "
                    "and "
                    f"more than {(count - 1) * per_leaf}; the instance has {len(node_names)} nodes"
                )
            for i, hn in enumerate(made):
                hn.members = [Member.exact(n)
                              for n in node_names[i * per_leaf:(i + 1) * per_leaf]]
        out.extend(made)
        parents = made
    return out


def _read_hypernode(hn: Field, tier_names: dict[int, str]) -> HyperNode:
    check_keys(hn, _HYPERNODE_KEYS)
    name = hn["name"].required_text()
    tier = hn["tier"].integer(required=True, minimum=0, maximum=MAX_TIER)
    assert tier is not None
    members = [Member.exact(n) for n in _names(hn["nodes"])]  # type: ignore[arg-type]
    members += [Member.exact(n, "HyperNode")
                for n in _names(hn["children"])]  # type: ignore[arg-type]
    for m in hn["members"].elements():
        members.append(_member(m))
    return build(HyperNode, hn, name=name, tier=tier,
                 tier_name=hn["tierName"].text() or tier_names.get(tier), members=members)


def _member(m: Field) -> Member:
    check_keys(m, _MEMBER_KEYS)
    kind = m["type"].text("Node")
    if kind not in ("Node", "HyperNode"):
        raise m["type"].fail(f"unknown member type {kind!r} (expected Node or HyperNode)")
    given = [k for k in _MEMBER_KEYS[1:] if m[k].present]
    if len(given) != 1:
        raise m.fail(
            f"exactly one of exactMatch, regexMatch, labelMatch must be set (found {len(given)})")
    exact = m["exactMatch"].text()
    regex = m["regexMatch"].text()
    if regex is not None:
        try:
            compile_regex(regex)
        except ValueError as exc:
            raise m["regexMatch"].fail(str(exc)) from None
    labels = label_selector(m["labelMatch"], strict=True) if m["labelMatch"].present else None
    return build(Member, m, type=kind,
                 selector=build(MemberSelector, m, exact_match=exact, regex_match=regex,
                                label_match=labels))


# -- queues and priority classes --------------------------------------------------------------


def read_native_queue(q: Field) -> Queue:
    """One ``queues`` entry (shared with the native trace reader)."""
    check_keys(q, _QUEUE_KEYS)
    return build(
        Queue,
        q,
        name=q["name"].required_text(),
        weight=q["weight"].integer(1, minimum=0),
        capability=q["capability"].resources(),
        deserved=q["deserved"].resources(),
        guarantee=q["guarantee"].resources(),
        reclaimable=q["reclaimable"].boolean(True),
        priority=q["priority"].integer(0),
        parent=q["parent"].text("") or None,
        flavors=q["flavors"].string_list(),
    )


def read_native_class(pc: Field) -> PriorityClass:
    """One ``priorityClasses`` entry (shared with the native trace reader)."""
    check_keys(pc, _CLASS_KEYS)
    return build(
        PriorityClass,
        pc,
        name=pc["name"].required_text(),
        value=pc["value"].integer(required=True),
        global_default=pc["globalDefault"].boolean(False),
    )


def read_native_budget(pdb: Field) -> PodDisruptionBudget:
    """One ``podDisruptionBudgets`` entry: a PodDisruptionBudget's spec beside its name and
    namespace (``selector`` absent: it selects no pod, as in Kubernetes)."""
    check_keys(pdb, _BUDGET_KEYS)
    selector = pdb["selector"]
    return build(
        PodDisruptionBudget,
        pdb,
        name=pdb["name"].required_text(),
        namespace=pdb["namespace"].text("default"),
        selector=label_selector(selector, strict=True) if selector.present else None,
        min_available=pdb["minAvailable"].value,
        max_unavailable=pdb["maxUnavailable"].value,
        unhealthy_pod_eviction_policy=pdb["unhealthyPodEvictionPolicy"].text(),
    )


# -- jobs -------------------------------------------------------------------------------------


def _read_jobs(jobs_field: Field) -> list[Job]:
    jobs: list[Job] = []
    seen: set[str] = set()
    pods = 0
    for item in jobs_field.elements():
        value = item.value if isinstance(item.value, dict) else {}
        namespace = value.get("namespace") if isinstance(value.get("namespace"), str) else "default"
        name = value.get("name") if isinstance(value.get("name"), str) else "?"
        entry = Field(item.value, "", item.file, f"Job/{namespace or 'default'}/{name}")
        shape = read_job_shape(entry, len(jobs), pods)
        pods += sum(job.replicas for job in shape)
        for job in shape:
            if job.key in seen:
                raise InputError(f"duplicate job {job.key!r}", file=entry.file,
                                 obj=f"Job/{job.key}",
                                 field="name")
            seen.add(job.key)
            jobs.append(job)
    return jobs


def read_job_shape(entry: Field, position: int, pods_before: int = 0) -> list[Job]:
    """All copies of one ``jobs`` entry (``position`` = index of the first copy)."""
    check_keys(entry, JOB_KEYS)
    pattern = NamePattern(entry["name"])
    count = _count(entry["count"], 1, 1, MAX_PODS)
    start = _count(entry["start"], 0, 0)
    pattern.require_index(count)
    namespace = entry["namespace"].text("") or "default"
    creation = _count(entry["creationIndex"], position, 0)

    tasks: list[Task] = []
    for t, task_field in enumerate(entry["tasks"].elements()):
        task = _read_task(task_field, t)
        if any(other.name == task.name for other in tasks):
            raise task_field["name"].fail(f"duplicate task name {task.name!r}")
        tasks.append(task)
    _within(entry["count"], pods_before + count * sum(t.replicas for t in tasks), MAX_PODS, "pods")
    min_available = read_min_available(entry["minAvailable"], tasks)
    if entry["subGroupPolicies"].present:
        policies = subgroup_policies(entry["subGroupPolicies"], strict=True,
                                     shared_names=True)
    else:
        policies = [partition_subgroup_policy(t) for t in tasks if t.partition is not None]
    min_task_member: dict[str, int] = {}
    for task_name, value in entry["minTaskMember"].entries():
        min_task_member[task_name] = _count(value, 0, 0)
    topology = network_topology(entry["networkTopology"], strict=True)

    jobs: list[Job] = []
    for k in range(count):
        jobs.append(
            build(
                Job,
                entry,
                {"subgroup_policies": "subGroupPolicies"},
                namespace=namespace,
                name=pattern(start + k),
                min_available=min_available,
                queue=entry["queue"].text("") or "default",
                priority_class=entry["priorityClass"].text("") or None,
                network_topology=topology.model_copy() if topology else None,
                tasks=[t.model_copy(deep=True) for t in tasks] if k else tasks,
                subgroup_policies=[p.model_copy(deep=True) for p in policies] if k else policies,
                min_task_member=dict(min_task_member),
                min_resources=entry["minResources"].resources(),
                creation_index=creation + k,
                node_pool=entry["nodePool"].string_map(),
                topology_name=entry["topologyName"].text(None),
                flavor=entry["flavor"].text(None),
            )
        )
        read_parallelism(jobs[-1], entry["parallelism"])
        read_movability(jobs[-1], entry["movable"], entry["moveCost"])
    return jobs


def _read_task(t: Field, index: int) -> Task:
    check_keys(t, _TASK_KEYS)
    replicas = _count(t["replicas"], 1, 0, MAX_PODS_PER_JOB)
    labels = t["labels"].string_map()
    labels.pop(TASK_SPEC_LABEL, None)  # the job controller sets it to the task name
    pod_names = _names(t["podNames"]) if t["podNames"].present else None
    pod_labels: dict[int, dict[str, str]] = {}
    for key, value in t["podLabels"].mapping().items():
        where = Field(value, join_path(t["podLabels"].path, str(key)), t.file, t.obj)
        pod_labels[_pod_index(where, key, replicas)] = where.string_map()
    unready: dict[int, str] = {}
    for key, value in t["unready"].mapping().items():
        where = Field(value, join_path(t["unready"].path, str(key)), t.file, t.obj)
        state = where.required_text()
        if state not in UNREADY_STATES:
            raise where.fail(f"expected one of {', '.join(UNREADY_STATES)}, got {state!r}")
        unready[_pod_index(where, key, replicas)] = state
    return build(
        Task,
        t,
        {"constraints": "", "partition": "partition"},
        name=t["name"].text("") or f"default{index}",
        role=t["role"].text(None),
        replicas=replicas,
        min_available=t["minAvailable"].integer(minimum=0),
        requests=t["requests"].resources(),
        score_requests=t["scoreRequests"].resources() if t["scoreRequests"].present else None,
        labels=labels,
        constraints=_constraints(t),
        partition=_partition(t["partition"], replicas),
        pod_names=pod_names,
        pod_labels=pod_labels,
        running=_running(t["running"], replicas),
        unready=unready,
        task_spec_label=t["taskSpecLabel"].boolean(True),
        device_share=_device_share(t["deviceShare"]),
        device_use=_device_use(t["deviceUse"], replicas),
    )


def _device_share(field: Field) -> DeviceShare | None:
    """``deviceShare: {resource, milli, count, memory}`` (docs/formats.md, "Per-device GPU
    sharing")."""
    if not field.present:
        return None
    check_keys(field, _SHARE_KEYS)
    return build(DeviceShare, field, resource=field["resource"].text("nvidia.com/gpu"),
                 milli=field["milli"].integer(required=True),
                 count=field["count"].integer(1),
                 memory=field["memory"].integer(None, minimum=1))


def _device_use(field: Field, replicas: int) -> dict[int, dict[int, int]]:
    """``deviceUse: {pod index: {device index: milli}}`` of running pods."""
    out: dict[int, dict[int, int]] = {}
    for key, value in field.mapping().items():
        where = Field(value, join_path(field.path, str(key)), field.file, field.obj)
        devices: dict[int, int] = {}
        for device, milli in where.mapping().items():
            at = Field(milli, join_path(where.path, str(device)), field.file, field.obj)
            if isinstance(device, bool) or not isinstance(device, int) or device < 0:
                raise at.fail("keys are device indexes (integers from 0)")
            devices[device] = at.integer(minimum=1, maximum=1000, required=True)
        out[_pod_index(where, key, replicas)] = devices
    return out


def _pod_index(where: Field, key: Any, replicas: int) -> int:
    try:
        index = int(key)
    except (TypeError, ValueError):
        raise where.fail("keys are pod indices (integers)") from None
    if not 0 <= index < replicas:
        raise where.fail(f"pod index {index} out of range 0..{replicas - 1}")
    return index


def _running(field: Field, replicas: int) -> dict[int, str]:
    if not field.present:
        return {}
    if isinstance(field.value, list):
        names = _names(field, allow_null=True)
        if len(names) > replicas:
            raise field.fail(f"lists {len(names)} pods, the task has {replicas}")
        return {i: n for i, n in enumerate(names) if n is not None}
    running: dict[int, str] = {}
    for key, value in field.mapping().items():
        where = Field(value, join_path(field.path, str(key)), field.file, field.obj)
        running[_pod_index(where, key, replicas)] = where.required_text()
    return running


def _partition(pp: Field, replicas: int) -> PartitionPolicy | None:
    if not pp.present:
        return None
    check_keys(pp, _PARTITION_KEYS)
    size = pp["partitionSize"].integer(required=True, minimum=1)
    assert size is not None
    if pp["totalPartitions"].present:
        total = _count(pp["totalPartitions"], 1, 1)
        if total * size != replicas:
            raise pp.fail(
                f"replicas ({replicas}) must equal totalPartitions × partitionSize ({total} × "
                f"{size})")
    elif replicas % size:
        raise pp["partitionSize"].fail(
            f"partitionSize {size} does not divide replicas ({replicas})")
    else:
        total = replicas // size
    minimum = _count(pp["minPartitions"], 0, 0)
    return partition_policy(pp, total=total, size=size, minimum=minimum, strict=True)


def _constraints(t: Field) -> PodConstraints:
    terms = []
    affinity = t["affinity"]
    if affinity.present and not affinity.elements():
        raise affinity.fail("must list at least one term")
    for term in affinity.elements():
        check_keys(term, _TERM_KEYS)
        expressions = term["matchExpressions"].elements()
        if not expressions:
            raise term.fail(
                "a node selector term needs matchExpressions (an empty term matches no node)")
        for e in expressions:
            check_keys(e, LABEL_REQUIREMENT_KEYS)
        terms.append([label_requirement(e) for e in expressions])
    preferred = []
    for term in t["preferredAffinity"].elements():
        check_keys(term, _PREFERRED_KEYS)
        for e in term["matchExpressions"].elements():
            check_keys(e, LABEL_REQUIREMENT_KEYS)
        preferred.append(build(PreferredTerm, term, weight=term["weight"].integer(required=True),
                               requirements=[label_requirement(e)
                                             for e in term["matchExpressions"].elements()]))
    tolerations = []
    for tol in t["tolerations"].elements():
        check_keys(tol, _TOLERATION_KEYS)
        tolerations.append(
            build(Toleration, tol, key=tol["key"].text(""), operator=tol["operator"].text("Equal"),
                  value=tol["value"].text(""), effect=tol["effect"].text(""))
        )
    return build(
        PodConstraints,
        t,
        {"node_selector": "nodeSelector", "affinity_terms": "affinity",
         "preferred_affinity": "preferredAffinity"},
        node_selector=t["nodeSelector"].string_map(),
        affinity_terms=terms,
        preferred_affinity=preferred,
        tolerations=tolerations,
        priority_class=t["priorityClass"].text(None),
    )


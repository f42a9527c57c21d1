"""Kueue objects (``kueue.x-k8s.io``, v1beta1 and v1beta2) → nodes' topology, queues, jobs.

Kinds read (any version): ``Topology`` (``spec.levels[].nodeLabel``, top first),
``ResourceFlavor`` (``spec.nodeLabels``, ``spec.tolerations``, ``spec.topologyName``),
``ClusterQueue`` (``spec.resourceGroups[].flavors[].resources[].nominalQuota``, ``spec.cohort``),
``LocalQueue`` (``spec.clusterQueue``), ``WorkloadPriorityClass`` (``value``) and ``Workload``
(:mod:`toposolve.formats.kueue.workload`).

Rules and simplifications:

* The levels of the Topology the ResourceFlavors name become the HyperNode tree
  (:mod:`toposolve.core.label_levels`): every level a tier, ``kubernetes.io/hostname``
  (allowed only as the lowest level) included. Topologies with different levels become a forest
  (:mod:`toposolve.core.topology_forest`): a Topology's subtree holds the nodes its flavors'
  nodeLabels select, and a workload's constraints stay in its flavor's Topology; a Topology
  whose flavors select nodes the forest holds is a constraint tree (``KueueCluster.trees``).
* A ClusterQueue is a :class:`Queue` whose capability is its nominal quota summed over its
  flavors; cohort borrowing and lending are not modelled (``docs/kueue-fidelity.md``).
* WorkloadPriorityClasses become PriorityClasses ``workloadpriorityclass/<name>``; a flavor
  naming a Topology the input lacks makes its ClusterQueues inactive (``_mark_inactive``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

from toposolve.core.instance import (
    ConstraintTree,
    HyperNode,
    Node,
    PriorityClass,
    Queue,
    Toleration,
)
from toposolve.core.label_levels import LabelTopologyError
from toposolve.core.quantity import MilliUnits
from toposolve.core.topology_forest import TREE_SEPARATOR, Forest, topology_forest
from toposolve.formats.k8s.fields import Document, Field
from toposolve.formats.k8s.levels import read_levels
from toposolve.formats.k8s.pods import read_tolerations
from toposolve.formats.k8s.specs import object_name, object_namespace

KUEUE_GROUP = "kueue.x-k8s.io"
TOPOLOGY = (KUEUE_GROUP, "Topology")
RESOURCE_FLAVOR = (KUEUE_GROUP, "ResourceFlavor")
CLUSTER_QUEUE = (KUEUE_GROUP, "ClusterQueue")
LOCAL_QUEUE = (KUEUE_GROUP, "LocalQueue")
WORKLOAD_PRIORITY_CLASS = (KUEUE_GROUP, "WorkloadPriorityClass")
WORKLOAD = (KUEUE_GROUP, "Workload")
KUEUE_KINDS = (TOPOLOGY, RESOURCE_FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, WORKLOAD_PRIORITY_CLASS,
               WORKLOAD)
WPC_PREFIX = "workloadpriorityclass/"


@dataclass
class Flavor:
    name: str
    node_labels: dict[str, str]
    tolerations: list[Toleration]
    topology: str | None


@dataclass
class ClusterQueueRecord:
    name: str
    flavors: list[str]  # in resource-group order
    nominal: dict[str, int]


@dataclass
class KueueCluster:
    """The cluster-scoped Kueue objects a Workload is read against."""

    levels: list[str] = field(default_factory=list)
    topology: str | None = None
    topologies: dict[str, list[str]] = field(default_factory=dict)  # every Topology read
    within: dict[str, str] = field(default_factory=dict)  # Topology → its subtree (a forest)
    # Topologies over nodes the forest holds (flavors selecting the same nodes): Topology → the
    # constraint tree its workloads are placed in, and those trees (``Instance.constraint_trees``)
    tree_of: dict[str, str] = field(default_factory=dict)
    trees: list[ConstraintTree] = field(default_factory=list)
    flavors: dict[str, Flavor] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueueRecord] = field(default_factory=dict)
    local_queues: dict[tuple[str, str], str] = field(default_factory=dict)
    priority_values: dict[str, int] = field(default_factory=dict)  # WorkloadPriorityClass
    # ClusterQueues listing a flavor whose Topology the input lacks (Kueue: inactive,
    # TopologyNotFound): their workloads are never admitted
    inactive: set[str] = field(default_factory=set)
    # Topologies whose tree holds no domain: no node their flavors select carries every level
    # (Kueue's TAS: "no topology domains at level: …"; the model then has no level names)
    empty: set[str] = field(default_factory=set)

    def levels_of(self, topology: str | None = None) -> tuple[str | None, list[str]]:
        """(name, level labels top first) of ``topology``, default the input's one tree."""
        name = topology if topology in self.topologies else self.topology
        return name, self.topologies[name] if name is not None and self.within else self.levels

    def missing_level(self, levels: Iterable[str | None], topology: str | None) -> str | None:
        """The first of ``levels`` (None: not requested) that ``topology`` lacks, or None."""
        known = self.levels_of(topology)[1]
        return next((level for level in levels if level is not None and level not in known),
                    None)

    def tier_of(self, level: str, where: Field, topology: str | None = None) -> int:
        """Tier of a level label of ``topology`` (default: the input's one tree; lowest level =
        tier 1); input error if not a level."""
        name, levels = self.levels_of(topology)
        if level not in levels:
            known = ", ".join(levels) or "none"
            raise where.fail(
                f"{level!r} is not a level of Topology {name!r} (levels: {known})")
        return len(levels) - levels.index(level)

    def tas_flavor(self, cluster_queue: str, levels: Collection[str] = ()) -> Flavor | None:
        """The flavor TAS places with: the ClusterQueue's first flavor with a topology whose
        Topology has every level in ``levels`` (Kueue's flavor assigner skips one that does not,
        "Flavor X does not contain the requested level", ``checkPodSetAndFlavorMatchForTAS``),
        else its first flavor with a topology (the level is then refused, naming it)."""
        record = self.cluster_queues.get(cluster_queue)
        tas = [f for name in (record.flavors if record else ())
               if (f := self.flavors.get(name)) is not None and f.topology is not None]
        has = (f for f in tas if set(levels) <= set(self.topologies.get(f.topology or "", ())))
        return next(has, tas[0] if tas else None)


    def workload_flavor(self, cluster_queue: str, levels: Collection[str] = (),
                        explicit_tas: bool = True) -> Flavor | None:
        """The flavor a Workload is admitted on: for one that requests no TAS
        (``explicit_tas`` False) the ClusterQueue's first flavor without a topology when it has
        one — Kueue's flavor assigner skips a TAS flavor for such a podset in a ClusterQueue not
        TAS-only ("supports only TopologyAwareScheduling", ``checkPodSetAndFlavorMatchForTAS``)
        and a podset requesting TAS skips a non-TAS flavor; otherwise :meth:`tas_flavor`."""
        record = self.cluster_queues.get(cluster_queue)
        # an inactive ClusterQueue's flavor naming a missing Topology reads without one
        if not explicit_tas and cluster_queue not in self.inactive:
            plain = (f for name in (record.flavors if record else ())
                     if (f := self.flavors.get(name)) is not None and f.topology is None)
            if (flavor := next(plain, None)) is not None:
                return flavor
        return self.tas_flavor(cluster_queue, levels)

def _root(doc: Document, *, namespaced: bool = False) -> Field:
    return Field.root(doc, doc.object_name(namespaced=namespaced))


def read_topology(doc: Document) -> tuple[str, list[str]]:
    root = _root(doc)
    return object_name(root), read_levels(root.at("spec.levels"))


def read_flavor(doc: Document) -> Flavor:
    root = _root(doc)
    spec = root["spec"]
    tolerations = read_tolerations(spec["tolerations"])
    return Flavor(name=object_name(root), node_labels=spec["nodeLabels"].string_map(),
                  tolerations=tolerations, topology=spec["topologyName"].text("") or None)


def read_cluster_queue(doc: Document) -> ClusterQueueRecord:
    root = _root(doc)
    flavors: list[str] = []
    nominal: dict[str, int] = {}
    for group in root.at("spec.resourceGroups").elements():
        for flavor in group["flavors"].elements():
            flavors.append(flavor["name"].required_text())
            for res in flavor["resources"].elements():
                name = res["name"].required_text()
                nominal[name] = nominal.get(name, 0) + res["nominalQuota"].quantity(name)
    return ClusterQueueRecord(object_name(root), flavors, nominal)


def read_cluster(
    by_kind: dict[tuple[str, str], list[Document]], nodes: Sequence[Node],
    warn: Callable[[str], None]
) -> tuple[KueueCluster, list[HyperNode], list[Queue], list[PriorityClass]]:
    """Topology, flavors, queues and priority classes; the HyperNodes of the topology."""
    cluster = KueueCluster()
    topologies = cluster.topologies
    named: dict[str, list[str]] = {}  # the Topologies flavors name, in flavor order
    flavor_docs: dict[str, Document] = {}
    missing: dict[str, Field] = {}  # flavor → its spec.topologyName naming no Topology
    for doc in by_kind.get(TOPOLOGY, []):
        name, levels = read_topology(doc)
        if name in topologies:
            raise _root(doc).at("metadata.name").fail(f"Topology {name!r} is declared twice")
        topologies[name] = levels
    for doc in by_kind.get(RESOURCE_FLAVOR, []):
        flavor = read_flavor(doc)
        cluster.flavors[flavor.name] = flavor
        if flavor.topology is None:
            continue
        if flavor.topology not in topologies:  # Kueue builds no TAS cache for it
            missing[flavor.name] = _root(doc).at("spec.topologyName")
            flavor.topology = None
            continue
        named.setdefault(flavor.topology, topologies[flavor.topology])
        flavor_docs.setdefault(flavor.topology, doc)
        if cluster.topology is None:
            cluster.topology, cluster.levels = flavor.topology, topologies[flavor.topology]
    if cluster.topology is None and len(topologies) == 1:
        cluster.topology, cluster.levels = next(iter(topologies.items()))
        named = dict(topologies)
    queues = []
    for doc in by_kind.get(CLUSTER_QUEUE, []):
        record = read_cluster_queue(doc)
        cluster.cluster_queues[record.name] = record
        queues.append(Queue(name=record.name, capability=MilliUnits(record.nominal),
                            flavors=record.flavors))
    _mark_inactive(cluster, missing, warn)
    for doc in by_kind.get(LOCAL_QUEUE, []):
        root = _root(doc, namespaced=True)
        key = (object_namespace(root), object_name(root))
        cluster.local_queues[key] = root.at("spec.clusterQueue").required_text()
    classes = []
    for doc in by_kind.get(WORKLOAD_PRIORITY_CLASS, []):
        root = _root(doc)
        value = root["value"].integer(required=True)
        assert value is not None
        cluster.priority_values[object_name(root)] = value
        classes.append(PriorityClass(name=WPC_PREFIX + object_name(root), value=value))
    try:
        forest = topology_forest(nodes, named, lambda name, node: _selects(cluster, name, node),
                                 crossing=True)
    except LabelTopologyError as exc:
        raise _root(flavor_docs[next(reversed(named))]).at("spec.topologyName").fail(
            str(exc)) from None
    cluster.within = forest.within
    cluster.empty = _empty_topologies(forest, named)
    cluster.tree_of = forest.tree_of
    cluster.trees = [ConstraintTree(name=name, hypernodes=hypernodes)
                     for name, hypernodes in forest.crossing.items()]
    for tree, outside in forest.outside.items():
        warn(f"{len(outside)} node(s) lack a level label of Topology {tree!r} and stay outside "
             f"the topology (first: {outside[0]})")
    return cluster, forest.hypernodes, queues, classes


def _empty_topologies(forest: Forest, named: Iterable[str]) -> set[str]:
    """The Topologies of ``named`` whose tree in ``forest`` holds no domain."""
    if not forest.within:  # one tree for every Topology
        return set() if forest.hypernodes else set(named)

    def holds(topology: str) -> bool:
        tree = forest.within[topology]
        hypernodes = forest.crossing.get(forest.tree_of.get(topology, ""), forest.hypernodes)
        return any(h.name.startswith(tree + TREE_SEPARATOR) for h in hypernodes)

    return {topology for topology in named if not holds(topology)}


def _mark_inactive(cluster: KueueCluster, missing: dict[str, Field],
                   warn: Callable[[str], None]) -> None:
    """Mark inactive the ClusterQueues listing a flavor of ``missing`` (kueue@ff69552
    ``pkg/cache/scheduler/clusterqueue.go:351-356``, ``TopologyNotFound``); one warning line per
    flavor."""
    for flavor, where in missing.items():
        users = [name for name, record in cluster.cluster_queues.items()
                 if flavor in record.flavors]
        cluster.inactive.update(users)
        effect = (f"ClusterQueue(s) {', '.join(users)} inactive (Kueue: TopologyNotFound), their "
                  "workloads pending" if users else "no ClusterQueue lists the flavor")
        warn(f"{where.file}: {where.obj}: {where.path}: Topology {where.text('')!r} is not in the "
             f"input; {effect}")


def _selects(cluster: KueueCluster, topology: str, node: Node) -> bool:
    """Whether a ResourceFlavor naming ``topology`` selects ``node`` by its nodeLabels."""
    return any(f.topology == topology
               and all(node.labels.get(k) == v for k, v in f.node_labels.items())
               for f in cluster.flavors.values())

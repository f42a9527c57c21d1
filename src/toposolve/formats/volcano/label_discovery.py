"""Volcano's HyperNode label discovery, read from the controller ConfigMap in the input.

Volcano's HyperNode controller reads the ConfigMap ``<release>-controller-configmap`` (release
``volcano`` by default), key ``volcano-controller.conf``, and runs the first
``networkTopologyDiscovery`` entry with ``source: label`` and ``enabled: true``. Its
``config.networkTopologyTypes`` maps profile names to either

* the legacy form, a list of ``{nodeLabel[, tierName]}`` top level first, or
* the profile form ``{nodeSelector, levels: [{nodeLabel, tierName}, …]}``;

the last level is always ``kubernetes.io/hostname``. Each profile becomes a HyperNode tree as
:mod:`toposolve.core.label_levels` builds it with value identity, scoped to the profile. Behaviour
follows ``pkg/controllers/hypernode/discovery/label/label.go`` of volcano-sh/volcano pull
request 5877 (commit ``9886a8ee``, on master ``ed72c7c8``), which adds the profile form to the
legacy one; ``docs/label-topology.md`` lists the rules and where master differs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import yaml

from toposolve.core.errors import InputError
from toposolve.core.instance import HyperNode, LabelSelector, Node
from toposolve.core.label_levels import (
    HOSTNAME_LABEL,
    LABEL_NAME,
    Domain,
    LabelLevel,
    LabelTopologyError,
    discover_domains,
)
from toposolve.core.limits import MAX_TIER
from toposolve.core.topology import selector_matches
from toposolve.core.yaml_guard import check_expansion
from toposolve.formats.k8s.fields import Document, Field, check_keys
from toposolve.formats.k8s.levels import read_node_label
from toposolve.formats.k8s.specs import label_selector

CONFIG_KEY = "volcano-controller.conf"
CONFIGMAP_SUFFIX = "-controller-configmap"
SOURCE_LABEL = "volcano.sh/network-topology-source"
PROFILE_LABEL = "volcano.sh/network-topology-profile"
PROFILE_NAME_MAX = 20
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")  # metav1, no Gt/Lt

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class TopologyProfile:
    """One ``networkTopologyTypes`` entry; ``levels`` top level first, hostname dropped;
    ``selector`` ``None`` for selector-less (legacy-behaving) profiles."""

    name: str
    label_value: str
    levels: tuple[LabelLevel, ...]
    selector: LabelSelector | None


@dataclass(frozen=True)
class DiscoveredHyperNode:
    """A HyperNode as the discoverer publishes it, with its labels (source, profile, domain)."""

    hypernode: HyperNode
    labels: dict[str, str]


@dataclass(frozen=True)
class ExistingHyperNode:
    """A HyperNode already in the input: names of label-sourced ones are reused."""

    name: str
    labels: dict[str, str]


def is_controller_configmap(doc: Document) -> bool:
    """A ConfigMap named ``…-controller-configmap`` holding ``volcano-controller.conf``."""
    data = doc.body.get("data") or {}
    return doc.name.endswith(CONFIGMAP_SUFFIX) and isinstance(data, dict) and CONFIG_KEY in data


def read_discovery_profiles(doc: Document) -> list[TopologyProfile] | None:
    """The label-discovery profiles of a controller ConfigMap; ``None`` when no enabled entry
    has ``source: label``. Raises :class:`InputError` where Volcano's discoverer fails to start."""
    obj = doc.object_name(namespaced=True)
    text_field = Field.root(doc, obj)["data"][CONFIG_KEY]
    text = text_field.text("")
    try:
        conf = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise text_field.fail(f"invalid YAML: {' '.join(str(exc).split())}") from None
    check_expansion([conf], doc.file)
    root = Field(conf, f"data[{CONFIG_KEY}]", doc.file, obj)
    for entry in root["networkTopologyDiscovery"].elements():
        if entry["source"].text("") == "label" and entry["enabled"].boolean(False):
            return _profiles(entry["config"])
    return None


def _profiles(config: Field) -> list[TopologyProfile]:
    check_keys(config, ("networkTopologyTypes",))
    types = config["networkTopologyTypes"]
    entries = sorted(types.entries())
    if not entries:
        raise types.fail("must contain at least one topology profile")
    profiles: list[TopologyProfile] = []
    for name, spec in entries:
        if len(name) > PROFILE_NAME_MAX:
            raise spec.fail(f"topology profile name {name!r} exceeds {PROFILE_NAME_MAX} characters")
        value = clean_profile_name(name).strip(".-")
        if not re.fullmatch(LABEL_NAME, value or "-") or len(value) > 63:
            raise spec.fail(
                f"topology profile name {name!r} does not make a label value ({value!r})"
            )
        if any(p.label_value == value for p in profiles):
            other = next(p.name for p in profiles if p.label_value == value)
            raise spec.fail(f"topology profiles {other!r} and {name!r} both normalise to {value!r}")
        if isinstance(spec.value, list):  # legacy form
            level_list, selector = spec, None
        else:
            check_keys(spec, ("nodeSelector", "levels"))
            level_list, selector = spec["levels"], _selector(spec["nodeSelector"])
        profiles.append(TopologyProfile(name, value, _levels(level_list), selector))
    return profiles


def _selector(field: Field) -> LabelSelector | None:
    if field.value is None:
        return None
    selector = label_selector(field, strict=True)
    for i, req in enumerate(selector.match_expressions):
        if req.operator not in SELECTOR_OPERATORS:
            raise field.fail(f"{req.operator!r} is not a valid label selector operator",
                             suffix=f".matchExpressions[{i}].operator")
    return selector


def _levels(field: Field) -> tuple[LabelLevel, ...]:
    items = field.elements()
    if len(items) > MAX_TIER + 1:  # each level but the node level is a HyperNode tier
        raise field.fail(f"{len(items):,} levels, more than the limit of {MAX_TIER} topology "
                         "levels and the node level")
    levels: list[LabelLevel] = []
    labels: set[str] = set()
    for item in items:
        check_keys(item, ("nodeLabel", "tierName"))
        label = read_node_label(item, labels)
        levels.append(LabelLevel(label, item["tierName"].text("") or None))
    if len(levels) < 2:
        raise field.fail("at least one topology level and the node level are required")
    if levels[-1].node_label != HOSTNAME_LABEL:
        raise field.fail(f"the last level must use nodeLabel {HOSTNAME_LABEL}")
    if levels[-1].tier_name is not None:
        raise field.fail("the node level must not set tierName")
    names: set[str] = set()
    for level in levels[:-1]:
        if level.effective_tier_name in names:
            raise field.fail(f"duplicate tierName {level.effective_tier_name!r}")
        names.add(level.effective_tier_name)
    return tuple(levels[:-1])


def clean_profile_name(name: str) -> str:
    """Volcano's ``cleanString``: letters lower-cased, digits ``.`` ``-`` kept, others ``-``."""
    return "".join(
        c.lower() if c.isalpha() else c if (c.isdigit() or c in ".-") else "-" for c in name
    )


def profiles_for_node(node: Node, profiles: Sequence[TopologyProfile]) -> list[TopologyProfile]:
    """An explicit selector owns a node (two matching explicit selectors is an error); without
    one, every selector-less profile whose lowest level label the node carries applies."""
    explicit = [
        p for p in profiles if p.selector is not None and selector_matches(p.selector, node.labels)
    ]
    if len(explicit) > 1:
        raise LabelTopologyError(
            f"node {node.name} matches multiple topology profiles: {explicit[0].name} and "
            f"{explicit[1].name}"
        )
    if explicit:
        return explicit
    return [p for p in profiles if p.selector is None and p.levels[-1].node_label in node.labels]


def discover(nodes: Sequence[Node], profiles: Sequence[TopologyProfile],
             existing: Sequence[ExistingHyperNode] = ()) -> list[DiscoveredHyperNode]:
    """The HyperNodes Volcano's label discoverer publishes for ``nodes`` (sorted by tier, name).

    Raises :class:`LabelTopologyError` where the discoverer fails: a node matched by two
    explicit profiles, a node selected by an explicit profile but missing a level label, a
    domain below two parents, a deterministic name already taken by another HyperNode.
    """
    members: dict[str, list[Node]] = {p.name: [] for p in profiles}
    for node in sorted(nodes, key=lambda n: n.name):
        for profile in profiles_for_node(node, profiles):
            members[profile.name].append(node)
    out: list[DiscoveredHyperNode] = []
    for profile in profiles:
        found = discover_domains(
            members[profile.name],
            profile.levels,
            identity="value",
            missing="truncate" if profile.selector is None else "error",
            name=_namer(profile, existing),
            scope=f"topology profile {profile.name}",
        )
        for hypernode, domain in found:
            labels = {
                SOURCE_LABEL: "label",
                PROFILE_LABEL: profile.label_value,
                domain.level.node_label: domain.value,
            }
            out.append(DiscoveredHyperNode(hypernode, labels))
    out.sort(key=lambda d: (d.hypernode.tier, d.hypernode.name))
    return out


def _namer(profile: TopologyProfile, existing: Sequence[ExistingHyperNode]) -> Callable[[Domain],
                                                                                        str]:
    """Volcano's ``buildHyperNodeName``: reuse the name of a label-sourced HyperNode of the same
    domain (same profile, name prefix ``hypernode-<profile>-tier<N>``), else a name hashed from
    profile, label and value; that name must not belong to another HyperNode."""
    taken = {hn.name for hn in existing}
    stem = f"hypernode-{clean_profile_name(profile.name)}"

    def name(domain: Domain) -> str:
        prefix = f"{stem}-tier{domain.tier}"
        for hn in sorted(existing, key=lambda h: h.name):
            labels = hn.labels
            if (
                labels.get(SOURCE_LABEL) != "label"
                or labels.get(domain.level.node_label) != domain.value
            ):
                continue
            if labels.get(PROFILE_LABEL, profile.label_value) != profile.label_value:
                continue
            if hn.name.startswith(prefix):
                return hn.name
        key = f"{profile.name}\0{domain.level.node_label}\0{domain.value}".encode()
        hashed = f"{prefix}-{hashlib.sha256(key).hexdigest()[:12]}"
        if hashed in taken:
            raise LabelTopologyError(
                f"deterministic HyperNode name {hashed} is already used by a different topology "
                "domain"
            )
        return hashed

    return name


@dataclass(frozen=True)
class LabelDiscovery:
    """An enabled label discovery found in the input: its ConfigMap and profiles."""

    doc: Document
    profiles: list[TopologyProfile]

    @staticmethod
    def keeps(hypernode_doc: Document) -> bool:
        """HyperNodes of other sources stay; discovery replaces its own (as the controller's
        reconcile loop does)."""
        return hypernode_doc.labels.get(SOURCE_LABEL) != "label"

    def hypernodes(self, nodes: Sequence[Node], hypernode_docs: Sequence[Document],
                   warn: Callable[[str], None]) -> list[HyperNode]:
        """Discover from ``nodes``; ``hypernode_docs`` are every input HyperNode (their names
        are reused or must not be taken). Warns once if the input's label-sourced HyperNodes
        are not the ones discovery builds now."""
        existing = [ExistingHyperNode(d.name, d.labels) for d in hypernode_docs]
        try:
            found = discover(nodes, self.profiles, existing)
        except LabelTopologyError as exc:
            raise InputError(
                f"label discovery fails: {exc}",
                file=self.doc.file,
                obj=self.doc.object_name(namespaced=True),
                field=f"data[{CONFIG_KEY}]",
            ) from None
        old = sorted(h.name for h in existing if h.labels.get(SOURCE_LABEL) == "label")
        new = sorted(d.hypernode.name for d in found)
        if old and old != new:
            warn(
                f"{self.doc.file}: {self.doc.object_name(namespaced=True)}: label discovery "
                f"builds {len(new)} HyperNodes from the node labels, replacing the input's "
                f"{len(old)} label-sourced HyperNodes, which differ"
            )
        return [d.hypernode for d in found]


def find_label_discovery(configmaps: Sequence[Document],
                         topology_labels: Sequence[str] = ()) -> LabelDiscovery | None:
    """The enabled label discovery of the input's controller ConfigMap, if any; an error with
    two such ConfigMaps, or with ``--topology-labels`` too (two sources of one topology)."""
    if len(configmaps) > 1:
        names = " and ".join(d.object_name(namespaced=True) for d in configmaps[:2])
        raise InputError(f"two Volcano controller ConfigMaps ({names}); keep one",
                         file=configmaps[1].file)
    if not configmaps:
        return None
    doc = configmaps[0]
    profiles = read_discovery_profiles(doc)
    if profiles is None:
        return None
    if topology_labels:
        raise InputError(
            "enables label discovery, so --topology-labels (topology_labels=) would build the "
            "tree twice; use one of them",
            file=doc.file,
            obj=doc.object_name(namespaced=True),
        )
    return LabelDiscovery(doc, profiles)


"""HyperNode trees from node labels: one label per level, top level first.

:func:`hypernodes_from_labels` turns label levels (``…/spine=sp-2``, ``…/leaf=lf-17``) into
HyperNodes: the lowest level becomes tier 1 (members: the nodes), each level above one tier
higher (members: the domains below). It is the common core of Volcano's label discovery
(:mod:`toposolve.formats.volcano.label_discovery`), of the ``--topology-labels`` option and of
readers of Kueue/KAI topologies (``levels[].nodeLabel``).

Two rules differ between those sources, so they are parameters: ``identity`` (``"value"``: a
value names one domain wherever it appears, as Volcano; ``"path"``: a domain is the path of
values from the top, as Kueue and KAI) and ``missing`` (what a node lacking a level's label
means: ``"error"``, ``"truncate"``, ``"keep"`` or ``"skip"``); ``docs/formats.md`` has the
details. Errors
are :class:`LabelTopologyError` (a ``ValueError``) naming the node, the labels and the domains.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toposolve.core.errors import InputError
from toposolve.core.instance import HyperNode, Member, Node
from toposolve.core.k8s_names import DNS_SUBDOMAIN
from toposolve.core.limits import MAX_TIER

HOSTNAME_LABEL = "kubernetes.io/hostname"
# Kubernetes label-key syntax: a name part, optionally a DNS-subdomain prefix and "/"
LABEL_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

Identity = Literal["value", "path"]
Missing = Literal["error", "truncate", "keep", "skip"]
# the parent recorded for a domain whose level above is unlabelled on a node (``missing="keep"``)
_NO_PARENT: tuple[str, ...] = ()


class LabelTopologyError(ValueError):
    """Node labels that do not form a tree under the chosen rules."""


def qualified_name_problem(key: str) -> str | None:
    """Why ``key`` is not a Kubernetes qualified name (a label key), or ``None``."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        return "a qualified name has at most one '/'"
    if "/" in key and not (re.fullmatch(DNS_SUBDOMAIN, prefix) and len(prefix) <= 253):
        return f"prefix {prefix!r} is not a DNS subdomain"
    if not (re.fullmatch(LABEL_NAME, name) and len(name) <= 63):
        return (
            "the name part must be 1-63 alphanumerics, '-', '_' or '.', alphanumeric at both ends"
        )
    return None


@dataclass(frozen=True)
class LabelLevel:
    """One level: the node label naming its domains and the tier name it exposes (default:
    the label itself, as Volcano's legacy configuration does)."""

    node_label: str
    tier_name: str | None = None

    @property
    def effective_tier_name(self) -> str:
        return self.tier_name or self.node_label


@dataclass(frozen=True)
class Domain:
    """A domain found in the labels: ``tier`` counts from 1 at the lowest level; ``path`` holds
    the values from the top level down to this one (only this level's value where a level above
    is missing)."""

    tier: int
    level: LabelLevel
    value: str
    path: tuple[str, ...]


@dataclass
class _Found:
    domain: Domain
    members: set[str | tuple[str, ...]] = field(default_factory=set)  # node names, domain keys


def strip_hostname_level(levels: Sequence[LabelLevel]) -> list[LabelLevel]:
    """Levels without a trailing ``kubernetes.io/hostname`` (each node is its own leaf already)."""
    levels = list(levels)
    if levels and levels[-1].node_label == HOSTNAME_LABEL:
        levels.pop()
    return levels


def readable_name(domain: Domain, clashes: bool) -> str:
    """Default names: the label value, or ``tier<N>-<value>`` where two levels share a value
    (value identity), or the path joined by ``.`` (path identity, see :func:`path_name`)."""
    return f"tier{domain.tier}-{domain.value}" if clashes else domain.value


def path_name(domain: Domain) -> str:
    """``block-a.rack-1`` for a rack ``rack-1`` in block ``block-a``."""
    return ".".join(domain.path)


def hypernodes_from_labels(nodes: Iterable[Node], levels: Sequence[LabelLevel],
                           **options: Any) -> list[HyperNode]:
    """HyperNodes for ``levels``: :func:`discover_domains` without the domains."""
    return [hn for hn, _ in discover_domains(nodes, levels, **options)]


def discover_domains(
    nodes: Iterable[Node],
    levels: Sequence[LabelLevel],
    *,
    identity: Identity = "value",
    missing: Missing = "error",
    name: Callable[[Domain], str] | None = None,
    scope: str = "",
    hostname_level: bool = False,
) -> list[tuple[HyperNode, Domain]]:
    """HyperNodes for ``levels`` (top level first; a trailing hostname level is ignored),
    each with the domain it stands for.

    Parameters
    ----------
    nodes
        The nodes to place in the tree (callers apply any node selection first).
    levels
        One :class:`LabelLevel` per tier, highest tier first; label keys must be distinct.
    identity, missing
        See the module docstring.
    name
        HyperNode name of a domain. Default: :func:`readable_name` for value identity,
        :func:`path_name` for path identity. Names must be distinct.
    scope
        Prefix for error messages (e.g. ``topology profile "gpu"``).
    hostname_level
        Keep a trailing ``kubernetes.io/hostname`` level as tier 1, one domain per node (Kueue,
        KAI); by default it is dropped, each node being its own leaf already (Volcano).

    Returns
    -------
    list[tuple[HyperNode, Domain]]
        Sorted by (tier, name); members sorted by name; tier 1 holds nodes by ``exactMatch``.
    """
    levels = list(levels) if hostname_level else strip_hostname_level(levels)
    prefix = f"{scope}: " if scope else ""
    if not levels:
        raise LabelTopologyError(f"{prefix}no topology level besides {HOSTNAME_LABEL}")
    labels = [lv.node_label for lv in levels]
    if len(set(labels)) != len(labels):
        raise LabelTopologyError(f"{prefix}duplicate node label in levels {labels}")
    found: dict[tuple[str, ...], _Found] = {}
    parent_of: dict[tuple[str, ...], tuple[str, ...]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        child: str | tuple[str, ...] = node.name  # a node, then the domain below
        for depth, value, path in _chain(node, levels, missing, prefix):
            key = (levels[depth].node_label, value) if identity == "value" else path
            entry = found.get(key)
            if entry is None:
                entry = found[key] = _Found(Domain(len(levels) - depth, levels[depth], value, path))
            if isinstance(child, tuple) and parent_of.setdefault(child, key) != key:
                raise LabelTopologyError(
                    f"{prefix}domain {_show(child, identity)} belongs to multiple parents: "
                    f"{_show(parent_of[child], identity)} and {_show(key, identity)} "
                    f"(node {node.name}); a domain is identified by its label value, so a value "
                    "must not appear under two parents"
                    if parent_of[child] != _NO_PARENT else
                    f"{prefix}domain {_show(child, identity)} belongs to {_show(key, identity)} "
                    f"(node {node.name}) and to no {levels[depth].node_label} (a node of it "
                    "lacks that label)"
                )
            entry.members.add(child)
            child = key
        top_depth = len(levels) - found[child].domain.tier if isinstance(child, tuple) else 0
        if missing == "keep" and top_depth > 0 and parent_of.setdefault(
                child, _NO_PARENT) != _NO_PARENT:
            raise LabelTopologyError(
                f"{prefix}domain {_show(child, identity)} belongs to "
                f"{_show(parent_of[child], identity)} and to no {levels[top_depth - 1].node_label} "
                f"(node {node.name} lacks that label)")
    return _named(found, identity, name)


def _chain(node: Node, levels: Sequence[LabelLevel], missing: Missing, prefix: str):
    """``(level index, value, path)`` from the lowest level up, as far as the node's labels go
    (past a missing label with ``missing="keep"``)."""
    values: list[str | None] = [node.labels.get(lv.node_label) for lv in levels]
    absent = [lv.node_label for lv, v in zip(levels, values, strict=True) if v is None]
    if absent and missing == "error":
        raise LabelTopologyError(f"{prefix}node {node.name} is missing level label {absent[-1]}")
    if absent and missing == "skip":
        return []
    chain = []
    for depth in range(len(levels) - 1, -1, -1):
        if values[depth] is None and missing == "keep":
            continue
        if values[depth] is None:
            break
        top = depth
        while top > 0 and values[top - 1] is not None:
            top -= 1
        chain.append((depth, values[depth], tuple(values[top : depth + 1])))
    return chain


def _show(key: tuple[str, ...], identity: Identity) -> str:
    return f"{key[0]}={key[1]}" if identity == "value" else ".".join(key)


def _named(found: dict[tuple[str, ...], _Found], identity: Identity,
           name: Callable[[Domain], str] | None) -> list[tuple[HyperNode, Domain]]:
    if name is None:
        if identity == "path":
            name = path_name
        else:
            counts: dict[str, int] = {}
            for entry in found.values():
                counts[entry.domain.value] = counts.get(entry.domain.value, 0) + 1
            name = lambda d: readable_name(d, counts[d.value] > 1)  # noqa: E731
    names = {key: name(entry.domain) for key, entry in found.items()}
    by_name: dict[str, Domain] = {}
    for key, hn_name in names.items():
        other = by_name.setdefault(hn_name, found[key].domain)
        if other is not found[key].domain:
            raise LabelTopologyError(f"two domains get the HyperNode name {hn_name!r}")
    out = []
    for key, entry in found.items():
        # nodes (by name) sit at tier 1, and higher where a lower label is missing ("keep")
        kinds = sorted((m, "Node") if isinstance(m, str) else (names[m], "HyperNode")
                       for m in entry.members)
        members = [Member.exact(m, kind) for m, kind in kinds]
        hn = HyperNode(name=names[key], tier=entry.domain.tier,
                       tier_name=entry.domain.level.effective_tier_name, members=members)
        out.append((hn, entry.domain))
    out.sort(key=lambda pair: (pair[0].tier, pair[0].name))
    return out


def parse_label_items(value: str | Sequence[str]) -> list[LabelLevel]:
    """``"a,b=spine,c"`` (or a list of items) → levels, top level first: each item a label key,
    optionally ``=tierName`` (the tier name jobs' ``highestTierName`` refers to; default: the
    label itself, as Volcano's legacy discovery names tiers). Blank items are refused."""
    items = value.split(",") if isinstance(value, str) else list(value)
    if len(items) > MAX_TIER:  # each label is a HyperNode tier
        raise LabelTopologyError(f"{len(items):,} labels, more than the limit of {MAX_TIER} levels")
    levels: list[LabelLevel] = []
    for item in items:
        label, _, tier_name = str(item).partition("=")
        label, tier_name = label.strip(), tier_name.strip()
        if not label or ("=" in str(item) and not tier_name):
            raise LabelTopologyError(f"expected LABEL[=TIERNAME],… (top level first), got "
                                     f"{value!r}")
        levels.append(LabelLevel(label, tier_name or None))
    if not levels:
        raise LabelTopologyError(f"expected LABEL[=TIERNAME],… (top level first), got {value!r}")
    seen: set[str] = set()
    for level in levels:
        if level.node_label in seen:
            raise LabelTopologyError(f"label {level.node_label!r} is given twice")
        seen.add(level.node_label)
        problem = qualified_name_problem(level.node_label)
        if problem:
            raise LabelTopologyError(f"{level.node_label!r} is not a label key: {problem}")
    names = [level.effective_tier_name for level in levels]
    if len(set(names)) < len(names):
        raise LabelTopologyError("two levels have the same tier name")
    return levels


def parse_label_list(value: str | Sequence[str]) -> list[str]:
    """The label keys of :func:`parse_label_items`, top level first."""
    return [level.node_label for level in parse_label_items(value)]


def labels_no_node_has(nodes: Iterable[Node], labels: Sequence[str]) -> list[str]:
    """The ``labels`` that no node carries (their level would hold no domain), in order."""
    carried: set[str] = set()
    for node in nodes:
        carried.update(node.labels)
    return [label for label in labels if label not in carried]


def option_hypernodes(nodes: Sequence[Node], labels: str | Sequence[str],
                      taken: Iterable[str] = ()) -> list[HyperNode]:
    """The tree ``--topology-labels`` / ``topology_labels=`` asks for.

    Volcano's legacy discovery rules (value identity, tier names = label keys, nodes without the
    lowest label left out, chains cut at a missing label) with readable names (the label
    values), which must not clash with the ``taken`` HyperNode names. Raises
    :class:`~toposolve.core.errors.InputError` naming the option.
    """
    try:
        levels = parse_label_items(labels)
        hypernodes = hypernodes_from_labels(nodes, levels, identity="value", missing="truncate")
    except LabelTopologyError as exc:
        raise InputError(str(exc), obj="--topology-labels") from None
    clash = sorted({hn.name for hn in hypernodes} & set(taken))
    if clash:
        raise InputError(
            f"a domain would be named {clash[0]!r}, which an input HyperNode already is",
            obj="--topology-labels",
        )
    return hypernodes


WELL_KNOWN_PREFIXES = ("volcano.sh/", "network.topology.kubernetes.io/",
                       "cloud.google.com/gce-topology-", "topology.k8s.aws/network-node-layer-")
# volcano.sh/ labels that choose a discovery profile or a node group, not a network domain
NOT_TOPOLOGY = ("volcano.sh/network-topology-profile", "volcano.sh/nodegroup-name")


def topology_label_hint(nodes: Sequence[Node]) -> str | None:
    """One warning line when nodes carry well-known topology labels that no HyperNode uses.

    The labels are grouped by naming scheme (their well-known prefix): the schemes usually
    name the same levels several times over, so each gets one suggestion of its own, its labels
    ordered by their number of distinct values, fewest first — the usual top-to-bottom order of
    network levels (a guess the user should confirm).
    """
    values: dict[str, set[str]] = {}
    for node in nodes:
        for key, value in node.labels.items():
            if key.startswith(WELL_KNOWN_PREFIXES) and key not in NOT_TOPOLOGY:
                values.setdefault(key, set()).add(value)
    if not values:
        return None
    schemes: dict[str, list[str]] = {}
    for key in values:
        prefix = next(p for p in WELL_KNOWN_PREFIXES if key.startswith(p))
        schemes.setdefault(prefix, []).append(key)
    suggestions = []
    for prefix in sorted(schemes):
        order = sorted(schemes[prefix], key=lambda k: (len(values[k]), k))
        found = ", ".join(f"{len(values[k])}" for k in order)
        suggestions.append(f"--topology-labels {','.join(order)} ({found} values)")
    one = "pass" if len(suggestions) == 1 else "pass ONE of (they name the same levels)"
    return (
        f"no HyperNodes, so every node sits in the virtual root and every network-topology "
        f"constraint holds trivially; the nodes carry topology labels: {one} "
        f"{'; '.join(suggestions)} (top level first; LABEL=TIERNAME names a tier as your jobs' "
        "highestTierName does; Python: topology_labels=) or add the "
        "volcano-controller-configmap with label discovery to the input"
    )


# ---- Kueue and KAI Topology objects: levels of label keys, domains by label path ----------------
PATH_SEPARATOR = "/"


def domain_name(values: Sequence[str]) -> str:
    """HyperNode name of the domain with label path ``values``."""
    return PATH_SEPARATOR.join(values)


def hypernodes_from_levels(nodes: Sequence[Node], levels: Sequence[str]) -> tuple[list[HyperNode],
                                                                                  list[str]]:
    """HyperNodes of a Kueue / KAI ``Topology`` (levels of label keys, top first).

    :func:`hypernodes_from_labels` with path identity: a domain is its label path (rack ``r1`` of
    block ``b1`` and of ``b2`` differ), named by the path values joined by ``/``; the lowest level
    is tier 1. Returns the HyperNodes and the names of nodes lacking a level (left under the
    root, as Kueue and KAI leave them out of topology-constrained placement).
    """
    outside = [n.name for n in nodes if any(key not in n.labels for key in levels)]
    hypernodes = hypernodes_from_labels(
        nodes,
        [LabelLevel(key) for key in levels],
        identity="path",
        missing="skip",
        name=lambda domain: domain_name(domain.path),
        hostname_level=True,
    )
    return hypernodes, outside

"""The HyperNode tree, re-derived from the instance for the checker (Volcano's rules).

* Node members: ``exactMatch`` (a name; names of absent nodes are ignored), ``regexMatch``
  (RE2, unanchored search like Go's ``MatchString``) or ``labelMatch`` (label selector).
* HyperNode members: ``exactMatch`` only, and the HyperNode must exist.
* The virtual root ``<cluster-top-hypernode>`` has tier = highest tier + 1 (1 without
  HyperNodes) and holds every parentless HyperNode and every node no HyperNode holds.

An instance's constraint trees (KAI Topologies crossing the main tree over the same nodes) are
built by the same rules, each alone (:func:`build_constraint_trees`).

A tree the checker cannot make sense of (unknown member, two parents, a cycle, a child whose tier
is not below its parent's, a node in two HyperNodes, a bad regex, one tierName for two tiers)
raises :class:`InputError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import re2

from toposolve.check.labels import selector_holds
from toposolve.core.errors import InputError
from toposolve.core.instance import ROOT_HYPERNODE, HyperNode, Instance, NetworkTopology
from toposolve.core.parents import find_parent_cycle


@dataclass
class HyperNodeTree:
    tier: dict[str, int]  # HyperNode (root included) -> tier
    parent: dict[str, str | None]  # HyperNode -> parent, None for the root
    home: dict[str, str]  # node -> lowest HyperNode holding it (the root if none)
    tier_by_name: dict[str, int]  # tierName -> tier
    above: dict[str, frozenset[str]]  # HyperNode -> itself and all its ancestors

    @property
    def root_tier(self) -> int:
        return self.tier[ROOT_HYPERNODE]

    def contains(self, hypernode: str, node: str) -> bool:
        """True if ``node`` is a real node somewhere below ``hypernode``."""
        return hypernode in self.above[self.home[node]]

    def lca(self, nodes: Iterable[str]) -> str:
        """Lowest HyperNode holding every node (the root for no nodes)."""
        current: str | None = None
        for home in {self.home[n] for n in nodes}:
            if current is None:
                current = home
                continue
            while current not in self.above[home]:
                current = self.parent[current]  # the root is above everything: this ends
        return ROOT_HYPERNODE if current is None else current

    def tier_limit(self, spec: NetworkTopology) -> int | None:
        """Highest tier a spec allows; the root's tier when it sets none; None for an unknown
        ``highestTierName``."""
        if spec.highest_tier_name is not None:
            return self.tier_by_name.get(spec.highest_tier_name)
        if spec.highest_tier_allowed is not None:
            return spec.highest_tier_allowed
        return self.root_tier


def _regex(pattern: str, where: str):
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error:
        raise InputError(f"invalid regular expression {pattern!r}", obj=where) from None


def build_constraint_trees(instance: Instance) -> dict[str, HyperNodeTree]:
    """Each of the instance's constraint trees by name; a name used twice is an input error."""
    trees: dict[str, HyperNodeTree] = {}
    for tree in instance.constraint_trees:
        if tree.name in trees:
            raise InputError(f"constraint tree {tree.name!r} is declared twice",
                             file=instance.source, obj="Instance", field="constraint_trees")
        trees[tree.name] = build_tree(instance, tree.hypernodes)
    return trees


def build_tree(instance: Instance,
               members: Sequence[HyperNode] | None = None) -> HyperNodeTree:
    """Resolve every member selector and link the HyperNodes (the instance's, else
    ``members``: a constraint tree's) under the virtual root."""
    src = instance.source
    listed = instance.hypernodes if members is None else members
    hypernodes = {h.name: h for h in listed}
    node_names = [n.name for n in instance.nodes]
    known_nodes = set(node_names)
    parent: dict[str, str | None] = {}
    home: dict[str, str] = {}
    tier_by_name: dict[str, int] = {}
    seen: set[str] = set()

    for hn in listed:
        where = f"HyperNode/{hn.name}"
        if hn.name == ROOT_HYPERNODE or hn.name in seen:
            raise InputError("HyperNode name is reserved or used twice", file=src, obj=where)
        seen.add(hn.name)
        if hn.tier_name is not None and tier_by_name.setdefault(hn.tier_name, hn.tier) != hn.tier:
            raise InputError(f"tierName {hn.tier_name!r} names two tiers", file=src, obj=where)
        for member in hn.members:
            sel = member.selector
            if member.type == "HyperNode":
                child = sel.exact_match
                if child is None or child not in hypernodes:
                    raise InputError(f"HyperNode member {child!r} is not an existing HyperNode "
                                     "named by exactMatch", file=src, obj=where)
                if parent.get(child, hn.name) != hn.name:
                    raise InputError(f"HyperNode {child!r} has two parents", file=src, obj=where)
                parent[child] = hn.name
                continue
            if sel.exact_match is not None:
                picked = [sel.exact_match] if sel.exact_match in known_nodes else []
            elif sel.regex_match is not None:
                rx = _regex(sel.regex_match, where)
                picked = [name for name in node_names if rx.search(name)]
            else:
                picked = [n.name for n in instance.nodes
                          if selector_holds(sel.label_match, n.labels)]
            for name in picked:
                if home.get(name, hn.name) != hn.name:
                    raise InputError(f"node {name!r} is in two HyperNodes", file=src, obj=where)
                home[name] = hn.name

    tier = {name: h.tier for name, h in hypernodes.items()}
    tier[ROOT_HYPERNODE] = max(tier.values(), default=0) + 1
    for name in hypernodes:
        parent.setdefault(name, ROOT_HYPERNODE)
    parent[ROOT_HYPERNODE] = None

    links = {child: up for child, up in parent.items() if up is not None}
    cycle = find_parent_cycle(links)
    if cycle:
        raise InputError(f"HyperNode members form a cycle through {cycle[0]!r}", file=src,
                         obj=f"HyperNode/{cycle[-1]}")
    for child, up in links.items():
        if tier[child] >= tier[up]:
            raise InputError(f"member {child!r} has tier {tier[child]}, not lower than {tier[up]}",
                             file=src, obj=f"HyperNode/{up}")
    above: dict[str, frozenset[str]] = {}
    for name in sorted(tier, key=tier.__getitem__, reverse=True):  # parents first: tiers fall
        up = parent[name]
        above[name] = frozenset((name,)) if up is None else above[up] | {name}
    for name in node_names:
        home.setdefault(name, ROOT_HYPERNODE)
    return HyperNodeTree(tier=tier, parent=parent, home=home, tier_by_name=tier_by_name,
                         above=above)

"""The HyperNode tree, built as Volcano builds it, compiled to arrays.

Rules (Volcano's HyperNode API and network-topology design):

* Node members are selected by ``exactMatch`` (name), ``regexMatch`` (RE2 semantics, unanchored
  search as Go's ``regexp.MatchString``) or ``labelMatch``. Names of nodes that are not in the
  instance are ignored: a HyperNode may list nodes that have left the cluster.
* HyperNode members are selected by ``exactMatch`` only and must exist.
* A child's tier must be lower than its parent's; a HyperNode has at most one parent; a node is
  a direct member of at most one HyperNode; the member graph has no cycle.
* A virtual root ``<cluster-top-hypernode>`` with tier = max tier + 1 (1 without HyperNodes)
  holds every parentless HyperNode and every node that no HyperNode holds.

Indices: HyperNodes are sorted by (tier, name); the root is last. Node indices follow the
instance's node order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import re2
import scipy.sparse as sp

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    ROOT_HYPERNODE,
    HyperNode,
    LabelRequirement,
    LabelSelector,
    MemberSelector,
    Node,
)
from toposolve.core.limits import UNLIMITED
from toposolve.core.parents import find_parent_cycle

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


def compile_regex(pattern: str):
    """Compile ``pattern`` with RE2 (Go ``regexp`` syntax); raise ValueError if invalid."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(f"invalid regular expression {pattern!r}: {detail}") from None


def requirement_matches(req: LabelRequirement, labels: dict[str, str]) -> bool:
    """Kubernetes label-requirement semantics (``Gt``/``Lt`` compare integers)."""
    present = req.key in labels
    value = labels.get(req.key)
    match req.operator:
        case "In":
            return present and value in req.values
        case "NotIn":
            return not present or value not in req.values
        case "Exists":
            return present
        case "DoesNotExist":
            return not present
        case "Gt" | "Lt":
            if not present:
                return False
            try:
                number = int(value)
            except ValueError:
                return False
            bound = int(req.values[0])
            return number > bound if req.operator == "Gt" else number < bound
    return False  # pragma: no cover - Literal covers every case


def selector_matches(selector: LabelSelector, labels: dict[str, str]) -> bool:
    """``metav1.LabelSelector`` semantics: all matchLabels and all expressions hold."""
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    return all(requirement_matches(r, labels) for r in selector.match_expressions)


def _regex_matches(nodes: Sequence[Node], hypernodes: Sequence[HyperNode],
                   fail) -> dict[tuple[str, int], list[int]]:
    """Node indices matched by every Node-member regex, in one pass over the node names.

    An RE2 set matches all patterns against a name at once, so thousands of regex HyperNodes
    cost one scan of the nodes instead of one scan per pattern.
    """
    keys: list[tuple[str, int]] = []
    regex_set = re2.Set.SearchSet(_RE2_OPTIONS)
    for hn in hypernodes:
        for m, member in enumerate(hn.members):
            pattern = member.selector.regex_match
            if member.type != "Node" or pattern is None:
                continue
            try:
                compile_regex(pattern)
            except ValueError as exc:
                raise fail(str(exc), hn.name,
                           f"spec.members[{m}].selector.regexMatch.pattern") from None
            regex_set.Add(pattern)
            keys.append((hn.name, m))
    hits: dict[tuple[str, int], list[int]] = {key: [] for key in keys}
    if not keys:
        return hits
    regex_set.Compile()
    for i, node in enumerate(nodes):
        for k in regex_set.Match(node.name) or ():
            hits[keys[k]].append(i)
    return hits


@dataclass(frozen=True, eq=False)
class Topology:
    """Array form of the HyperNode tree (root included, last)."""

    names: tuple[str, ...]
    tier: np.ndarray  # [H] int
    parent: np.ndarray  # [H] int, -1 for the root
    tier_name_to_tier: dict[str, int]
    node_names: tuple[str, ...]
    node_home: np.ndarray  # [N] lowest HyperNode holding the node directly (root if none)
    members: sp.csr_matrix  # [H, N] bool: real nodes under each HyperNode

    @property
    def root(self) -> int:
        return len(self.names) - 1

    @property
    def max_tier(self) -> int:
        return int(self.tier[self.root])

    @property
    def min_tier(self) -> int:
        return int(self.tier.min())

    @cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names)}

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        kids: list[list[int]] = [[] for _ in self.names]
        for child, par in enumerate(self.parent.tolist()):
            if par >= 0:
                kids[par].append(child)
        return tuple(tuple(k) for k in kids)

    @cached_property
    def depth(self) -> np.ndarray:
        """Distance from the root (root = 0)."""
        depth = np.zeros(len(self.names), dtype=np.int64)
        # parents have higher tier, so visiting by descending tier visits parents first
        for h in np.argsort(-self.tier, kind="stable").tolist():
            p = int(self.parent[h])
            depth[h] = 0 if p < 0 else depth[p] + 1
        return depth

    @cached_property
    def node_count(self) -> np.ndarray:
        """Number of real nodes under each HyperNode."""
        return np.asarray(self.members.sum(axis=1)).ravel().astype(np.int64)

    @cached_property
    def node_index(self) -> dict[str, int]:
        """Node name -> index (a repeated name maps to its last index). Shared by every problem
        on this topology: read it, never change it."""
        return {name: i for i, name in enumerate(self.node_names)}

    @cached_property
    def member_counts(self) -> sp.csr_matrix:
        """[H, N] int64 ``members`` with sorted indices, for sums over nodes (``@``). Shared
        by every problem on this topology: read it, never change it."""
        counts = self.members.astype(np.int64).tocsr()
        counts.sort_indices()
        for part in (counts.data, counts.indices, counts.indptr):
            part.flags.writeable = False
        return counts

    @cached_property
    def ancestor_table(self) -> np.ndarray:
        """[H, D] ancestors of each HyperNode (itself first), padded with -1."""
        chains = [self.ancestors(h) for h in range(len(self.names))]
        table = np.full((len(chains), max(map(len, chains))), -1, dtype=np.int64)
        for h, chain in enumerate(chains):
            table[h, : len(chain)] = chain
        table.flags.writeable = False  # shared by every problem on this topology
        return table

    @cached_property
    def node_at_tier(self) -> np.ndarray:
        """[N, max tier + 1] HyperNode of tier ``t`` holding each node in column ``t``, -1 where
        none (column 0 is tier 0, which Volcano allows; the last column is the virtual root)."""
        out = np.full((len(self.node_names), self.max_tier + 1), -1, dtype=np.int64)
        rows, cols = self.members.nonzero()
        out[cols, self.tier[rows]] = rows
        return out

    def held_at_or_below(self, node: int, tier: int) -> bool:
        """Whether a HyperNode of tier ≤ ``tier`` holds ``node``: a gang with a pod on a node
        no such HyperNode holds spans one above ``tier`` (the virtual root holds every node)."""
        return bool((self.node_at_tier[node, : tier + 1] >= 0).any())

    @cached_property
    def node_leaf(self) -> np.ndarray:
        """[N] HyperNode of the lowest tier present holding each node, -1 where none.

        Volcano's ``FindHyperNodeForNode`` looks only at the lowest tier (the virtual root's
        when there are no real HyperNodes), so a node held only higher up has no leaf.
        """
        return self.node_at_tier[:, self.min_tier]

    def ancestors(self, h: int) -> list[int]:
        """``h`` and its ancestors up to the root, lowest first."""
        chain = [h]
        while self.parent[chain[-1]] >= 0:
            chain.append(int(self.parent[chain[-1]]))
        return chain

    def lca(self, a: int, b: int) -> int:
        """Lowest common ancestor of two HyperNodes."""
        seen = set(self.ancestors(a))
        for h in self.ancestors(b):
            if h in seen:
                return h
        return self.root  # pragma: no cover - the root is everyone's ancestor

    def lca_of_nodes(self, nodes: Sequence[int]) -> int:
        """Lowest HyperNode holding every node in ``nodes`` (the root for an empty set)."""
        nodes = list(dict.fromkeys(int(n) for n in nodes))
        if not nodes:
            return self.root
        h = int(self.node_home[nodes[0]])
        for n in nodes[1:]:
            h = self.lca(h, int(self.node_home[n]))
        return h

    def tier_limit(self, highest_tier_allowed: int | None, highest_tier_name: str | None) -> int:
        """Tier limit of a network-topology spec (``None`` limit → the root's tier)."""
        if highest_tier_name is not None:
            return self.tier_name_to_tier[highest_tier_name]
        if highest_tier_allowed is None:
            return self.max_tier
        return highest_tier_allowed


def build_topology(nodes: Sequence[Node], hypernodes: Sequence[HyperNode], *,
                   source: str = "") -> Topology:
    """Resolve member selectors and build the tree.

    Steps, in the order their errors are reported: names, tier names, member selectors, the
    parent links (no cycle, tiers falling downwards), then the arrays.

    Parameters
    ----------
    nodes, hypernodes
        The instance's nodes and HyperNodes.
    source
        The input's name, for error messages.

    Returns
    -------
    Topology

    Raises
    ------
    InputError
        The HyperNodes do not form a tree as Volcano builds it.
    """

    def fail(message: str, name: str, field: str) -> InputError:
        return InputError(message, file=source or None, obj=f"HyperNode/{name}", field=field)

    by_name = _hypernodes_by_name(hypernodes, fail)
    tier_names = _tier_names(hypernodes, fail)
    parent_of, home_of = _resolve_members(nodes, hypernodes, by_name, fail)
    _check_parent_links(parent_of, by_name, fail)
    return _compile_tree(nodes, hypernodes, parent_of, home_of, tier_names)


def _hypernodes_by_name(hypernodes: Sequence[HyperNode], fail) -> dict[str, HyperNode]:
    """Each HyperNode by name; duplicates and the virtual root's name are errors."""
    by_name: dict[str, HyperNode] = {}
    for hn in hypernodes:
        if hn.name in by_name:
            raise fail("duplicate HyperNode name", hn.name, "metadata.name")
        if hn.name == ROOT_HYPERNODE:
            raise fail("name is reserved for the virtual root", hn.name, "metadata.name")
        by_name[hn.name] = hn
    return by_name


def _tier_names(hypernodes: Sequence[HyperNode], fail) -> dict[str, int]:
    """``spec.tierName`` -> tier; one name naming two tiers is an error."""
    tier_names: dict[str, int] = {}
    for hn in sorted(hypernodes, key=lambda h: (h.tier, h.name)):
        if hn.tier_name is None:
            continue
        known = tier_names.setdefault(hn.tier_name, hn.tier)
        if known != hn.tier:
            raise fail(f"tierName {hn.tier_name!r} already names tier {known}, not {hn.tier}",
                       hn.name, "spec.tierName")
    return tier_names


def _resolve_members(nodes: Sequence[Node], hypernodes: Sequence[HyperNode],
        by_name: Mapping[str, HyperNode], fail) -> tuple[dict[str, str], dict[int, str]]:
    """Parent of each member HyperNode and home HyperNode of each member node (by index)."""
    node_index = {n.name: i for i, n in enumerate(nodes)}
    regex_hits = _regex_matches(nodes, hypernodes, fail)
    parent_of: dict[str, str] = {}
    home_of: dict[int, str] = {}
    for hn in hypernodes:
        for m, member in enumerate(hn.members):
            field = f"spec.members[{m}].selector"
            sel = member.selector
            if member.type == "HyperNode":
                child = _child_hypernode(sel, by_name, hn.name, field, fail)
                if child in parent_of and parent_of[child] != hn.name:
                    raise fail(f"HyperNode {child!r} already has parent {parent_of[child]!r}",
                               hn.name, field)
                parent_of[child] = hn.name
                continue
            if sel.exact_match is not None:
                picked = [node_index[sel.exact_match]] if sel.exact_match in node_index else []
            elif sel.regex_match is not None:
                picked = regex_hits.get((hn.name, m), [])
            else:
                picked = [i for i, n in enumerate(nodes)
                          if selector_matches(sel.label_match, n.labels)]
            for i in picked:
                if i in home_of and home_of[i] != hn.name:
                    raise fail(
                        f"node {nodes[i].name!r} is already a member of HyperNode {home_of[i]!r}",
                        hn.name,
                        field,
                    )
                home_of[i] = hn.name
    return parent_of, home_of


def _child_hypernode(sel: MemberSelector, by_name: Mapping[str, HyperNode], owner: str, field: str,
                     fail) -> str:
    """The HyperNode a HyperNode member names: ``exactMatch`` only, and it must exist."""
    if sel.exact_match is None:
        kind = "regexMatch" if sel.regex_match is not None else "labelMatch"
        raise fail(f"{kind} is not allowed for HyperNode members", owner, field)
    if sel.exact_match not in by_name:
        raise fail(f"HyperNode member {sel.exact_match!r} does not exist", owner, field)
    return sel.exact_match


def _check_parent_links(parent_of: Mapping[str, str], by_name: Mapping[str, HyperNode],
                        fail) -> None:
    """No cycle, and every child's tier below its parent's."""
    cycle = find_parent_cycle(parent_of)
    if cycle:
        raise fail(f"HyperNode members form a cycle: {' -> '.join([*cycle, cycle[0]])}", cycle[0],
                   "spec.members")
    for child, par in parent_of.items():
        if by_name[child].tier >= by_name[par].tier:
            raise fail(
                f"member {child!r} has tier {by_name[child].tier}, not lower than "
                f"this HyperNode's tier {by_name[par].tier}",
                par,
                "spec.members",
            )


def _compile_tree(
    nodes: Sequence[Node],
    hypernodes: Sequence[HyperNode],
    parent_of: Mapping[str, str],
    home_of: Mapping[int, str],
    tier_names: dict[str, int],
) -> Topology:
    """The arrays of a checked tree: HyperNodes sorted by (tier, name), the virtual root last."""
    ordered = sorted(hypernodes, key=lambda h: (h.tier, h.name))
    names = [h.name for h in ordered] + [ROOT_HYPERNODE]
    index = {name: i for i, name in enumerate(names)}
    root = len(names) - 1
    tier = np.array([h.tier for h in ordered] + [max((h.tier for h in ordered), default=0) + 1])
    parent = np.array(
        [index[parent_of[h.name]] if h.name in parent_of else root for h in ordered] + [-1],
        dtype=np.int64,
    )
    node_home = np.full(len(nodes), root, dtype=np.int64)
    for i, hname in home_of.items():
        node_home[i] = index[hname]
    return Topology(
        names=tuple(names),
        tier=tier.astype(np.int64),
        parent=parent,
        tier_name_to_tier=tier_names,
        node_names=tuple(n.name for n in nodes),
        node_home=node_home,
        members=_membership(node_home, parent),
    )


def _membership(node_home: np.ndarray, parent: np.ndarray) -> sp.csr_matrix:
    """[H, N] boolean: each node under its home HyperNode and all the home's ancestors."""
    chains: dict[int, list[int]] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, h in enumerate(node_home.tolist()):
        chain = chains.get(h)
        if chain is None:
            chain = [h]
            while parent[chain[-1]] >= 0:
                chain.append(int(parent[chain[-1]]))
            chains[h] = chain
        rows.extend(chain)
        cols.extend([i] * len(chain))
    return sp.csr_matrix((np.ones(len(rows), dtype=bool), (rows, cols)),
                         shape=(len(parent), len(node_home)))


def subtree_sums(members: sp.spmatrix, values: np.ndarray) -> np.ndarray:
    """Sums of per-node ``values`` under each HyperNode: the one tree sum every module uses.

    Parameters
    ----------
    members
        [H, N] membership matrix (a :class:`Topology`'s ``members``, ``member_counts`` or rows of
        them).
    values
        [N] or [N, R] per node. Integer and boolean values are counts: they are clipped at
        :data:`~toposolve.core.limits.UNLIMITED` first, so the int64 sum is exact and cannot
        overflow. Float values (resource amounts, whose milli-unit sums may pass 2^63) are
        summed in float64.

    Returns
    -------
    numpy.ndarray
        [H] (or [H, R]) sums.
    """
    if values.dtype == bool or np.issubdtype(values.dtype, np.integer):
        values = np.minimum(values, UNLIMITED)
    sums = np.asarray(members @ values)
    return sums.ravel() if values.ndim == 1 else sums

"""An admitted podset's ``topologyAssignment`` → the node of each of its pods.

Encodings: v1beta1 ``{levels, domains: [{values, count}]}``; v1beta2 ``{levels, slices:
[{domainCount, valuesPerLevel: [{universal} | {individual: {prefix, suffix, roots}}], podCounts:
{universal} | {individual}}]}``. With ``kubernetes.io/hostname`` as the last level a domain is a
node (matched by its hostname label, else its name); otherwise a domain is a leaf of the label
tree and its pods go to the domain's nodes in name order, as many per node as its allocatable
holds (Kueue pools the leaf's capacity; the real pods are then placed by kube-scheduler).

The assignment places the podset's ``count`` pods: every domain count and ``domainCount`` is
checked against what is left of it before anything is built, so a hostile count costs nothing.
"""

from __future__ import annotations

from toposolve.core.instance import Node
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.core.limits import UNLIMITED
from toposolve.formats.k8s.fields import Field

Domain = tuple[list[str], int, Field]  # label values, pods, where it is written


def assignment_domains(ta: Field, pods: int) -> tuple[list[str], list[Domain]]:
    """(levels, [(values, count, field)]) of either encoding, placing at most ``pods`` pods."""
    levels = ta["levels"].string_list()
    domains: list[Domain] = []
    left = pods
    for d in ta["domains"].elements():
        values = d["values"].string_list()
        if len(values) != len(levels):
            raise d["values"].fail(f"must list one value per level ({len(levels)})")
        count = _pods(d["count"], 0, left)
        domains.append((values, count, d))
        left -= count
    for s in ta["slices"].elements():
        n = _pods(s["domainCount"], 1, left, what="domains")  # of a pod at least each
        per_level = [_level_values(lv, n) for lv in s["valuesPerLevel"].elements()]
        if len(per_level) != len(levels):
            raise s["valuesPerLevel"].fail("must have one entry per level")
        counts = _pod_counts(s["podCounts"], n, left)
        left -= sum(counts)
        domains += [([vals[k] for vals in per_level], counts[k], s) for k in range(n)]
    return levels, domains


def _pods(field: Field, minimum: int, left: int, times: int = 1, what: str = "pods") -> int:
    """A count of at least ``minimum`` whose ``times`` copies fit the ``left`` pods of the
    podset still to place (checked before anything of that size is built)."""
    count = field.integer(required=True, minimum=minimum) or 0
    if count * times > left:
        raise field.fail(f"{count * times:,} {what}, more than the {left:,} pods of the podset's "
                         "count left to place")
    return count


def _level_values(lv: Field, n: int) -> list[str]:
    """The ``n`` values of one level of a v1beta2 slice."""
    if lv["universal"].present:
        return [lv["universal"].required_text()] * n
    ind = lv["individual"]
    roots = ind["roots"].string_list()
    if len(roots) != n:
        raise ind["roots"].fail(f"must list domainCount ({n}) values")
    prefix, suffix = ind["prefix"].text("") or "", ind["suffix"].text("") or ""
    return [prefix + r + suffix for r in roots]


def _pod_counts(counts: Field, n: int, left: int) -> list[int]:
    """The pods of each of the ``n`` domains of a slice, together at most ``left``."""
    if counts["universal"].present:
        return [_pods(counts["universal"], 1, left, times=n)] * n
    pods = []
    for c in counts["individual"].elements():
        pods.append(_pods(c, 1, left))
        left -= pods[-1]
    if len(pods) != n:
        raise counts["individual"].fail(f"must list domainCount ({n}) counts")
    return pods


def _fits(node: Node, request: dict[str, int]) -> int:
    counts = [node.allocatable.get(r, 0) // a for r, a in request.items() if a > 0]
    return min(counts) if counts else UNLIMITED


def assigned_nodes(ta: Field, nodes: list[Node], request: dict[str, int], pods: int) -> list[str]:
    """Node name of each assigned pod, in assignment order (at most ``pods``: the podset's
    count); input error for an unknown domain or counts beyond the podset."""
    if not ta.present:
        return []
    levels, domains = assignment_domains(ta, pods)
    if levels and levels[-1] == HOSTNAME_LABEL:
        by_host = {n.labels.get(HOSTNAME_LABEL, n.name): n.name for n in nodes}
        placed: list[str] = []
        for values, count, where in domains:
            node = by_host.get(values[-1])
            if node is None:
                raise where.fail(f"assigned node {values[-1]!r} is not in the input")
            placed += [node] * count
        return placed
    return _leaf_nodes(levels, domains, nodes, request)


def _leaf_nodes(levels: list[str], domains: list[Domain], nodes: list[Node],
                request: dict[str, int]) -> list[str]:
    """Pods of leaf domains spread over the domains' nodes in name order, as capacity allows."""
    members: dict[tuple[str | None, ...], list[Node]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        members.setdefault(tuple(node.labels.get(key) for key in levels), []).append(node)
    placed: list[str] = []
    for values, count, where in domains:
        found = members.get(tuple(values))
        if not found:
            raise where.fail(f"no node carries the assigned domain {'/'.join(values)!r}")
        left = count
        for node in found:
            take = min(left, _fits(node, request))
            placed += [node.name] * take
            left -= take
        placed += [found[-1].name] * left  # over capacity: the checker will say so
    return placed

"""An admitted podset's ``topologyAssignment`` → the node of each of its pods.

Encodings: v1beta1 ``{levels, domains: [{values, count}]}``; v1beta2 ``{levels, slices:
[{domainCount, valuesPerLevel: [{universal} | {individual: {prefix, suffix, roots}}], podCounts:
{universal} | {individual}}]}``. With ``kubernetes.io/hostname`` as the last level a domain is a
node (matched by its hostname label, else its name); otherwise a domain is a leaf of the label
tree and its pods go to the domain's nodes in name order, as many per node as its allocatable
holds (Kueue pools the leaf's capacity; the real pods are then placed by kube-scheduler).
"""

from __future__ import annotations

from toposolve.core.instance import Node
from toposolve.core.limits import UNLIMITED
from toposolve.formats.k8s.fields import Field
from toposolve.formats.kueue.reader import HOSTNAME_LABEL


def assignment_domains(ta: Field) -> tuple[list[str], list[tuple[list[str], int]]]:
    """(levels, [(values, count)]) of either encoding."""
    levels = ta["levels"].string_list()
    domains: list[tuple[list[str], int]] = []
    for d in ta["domains"].elements():
        domains.append(
            (d["values"].string_list(), d["count"].integer(required=True, minimum=0) or 0))
    for s in ta["slices"].elements():
        n = s["domainCount"].integer(required=True, minimum=1) or 1
        per_level: list[list[str]] = []
        for lv in s["valuesPerLevel"].elements():
            if lv["universal"].present:
                per_level.append([lv["universal"].required_text()] * n)
                continue
            ind = lv["individual"]
            roots = ind["roots"].string_list()
            if len(roots) != n:
                raise ind["roots"].fail(f"must list domainCount ({n}) values")
            prefix, suffix = ind["prefix"].text("") or "", ind["suffix"].text("") or ""
            per_level.append([prefix + r + suffix for r in roots])
        if len(per_level) != len(levels):
            raise s["valuesPerLevel"].fail("must have one entry per level")
        counts = s["podCounts"]
        if counts["universal"].present:
            pods = [counts["universal"].integer(minimum=1) or 1] * n
        else:
            pods = [c.integer(required=True, minimum=1) or 1
                    for c in counts["individual"].elements()]
            if len(pods) != n:
                raise counts["individual"].fail(f"must list domainCount ({n}) counts")
        for k in range(n):
            domains.append(([vals[k] for vals in per_level], pods[k]))
    return levels, domains


def _fits(node: Node, request: dict[str, int]) -> int:
    counts = [node.allocatable.get(r, 0) // a for r, a in request.items() if a > 0]
    return min(counts) if counts else UNLIMITED


def assigned_nodes(ta: Field, nodes: list[Node], request: dict[str, int]) -> list[str]:
    """Node name of each assigned pod, in assignment order; input error for an unknown domain."""
    if not ta.present:
        return []
    levels, domains = assignment_domains(ta)
    by_host = {n.labels.get(HOSTNAME_LABEL, n.name): n.name for n in nodes}
    placed: list[str] = []
    for k, (values, count) in enumerate(domains):
        where = ta if not ta["domains"].present else ta["domains"].elements()[k]
        if levels and levels[-1] == HOSTNAME_LABEL:
            node = by_host.get(values[-1])
            if node is None:
                raise where.fail(f"assigned node {values[-1]!r} is not in the input")
            placed += [node] * count
            continue
        members = sorted((n for n in nodes if all(n.labels.get(key) == v for key, v in zip(levels,
                values, strict=False))), key=lambda n: n.name)
        if not members:
            raise where.fail(f"no node carries the assigned domain {'/'.join(values)!r}")
        left = count
        for node in members:
            take = min(left, _fits(node, request))
            placed += [node.name] * take
            left -= take
        placed += [members[-1].name] * left  # over capacity: the checker will say so
    return placed

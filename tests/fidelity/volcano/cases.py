"""Volcano's own test tables, as data: load the cases and turn one into Kubernetes manifests.

The YAML files under ``data/`` re-express the Go test tables of ``volcano-sh/volcano`` at
:data:`VOLCANO_COMMIT` (field names follow the Go test struct, see ``README.md``). A case that
toposolve does not reproduce carries a ``divergence`` entry (``kind`` and ``reason``); the
suite runs it as a strict xfail and ``docs/volcano-tests.md`` lists it.

Some cases use input Volcano accepts and toposolve reads since issue 9 §1 (tier-0 HyperNodes,
pods on nodes missing from the input, an unknown ``highestTierName``): :func:`features_needed`
names them for the notes in ``docs/volcano-tests.md``; such cases must pass like any other.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.instance import Instance
from toposolve.formats.k8s.fields import Document
from toposolve.formats.k8s.manifests import read_manifests

VOLCANO_COMMIT = "ed72c7c815a9fd547a787134676f73d42e9d049c"
DATA = Path(__file__).parent / "data"
DIVERGENCE_KINDS = ("unmodelled", "stale", "unreachable", "toposolve-choice")


@cache
def load_table(name: str) -> dict[str, Any]:
    """One data file (``data/<name>.yaml``): ``source`` and ``cases``."""
    with open(DATA / f"{name}.yaml", encoding="utf-8") as fh:
        table = yaml.safe_load(fh)
    for case in table.get("cases", []):
        divergence = case.get("divergence")
        if divergence is not None:
            assert divergence["kind"] in DIVERGENCE_KINDS, (case["name"], divergence)
            assert divergence["reason"].strip(), case["name"]
    return table


def numbered(name: str) -> list[tuple[str, dict[str, Any]]]:
    """The cases of a data file with ids ``<Go test>/<index among that Go test's cases>``."""
    seen: dict[str, int] = {}
    out = []
    for case in load_table(name)["cases"]:
        index = seen.get(case["test"], 0)
        seen[case["test"]] = index + 1
        out.append((f"{case['test']}/{index}", case))
    return out


def features_needed(case: dict[str, Any]) -> list[str]:
    """Input features of issue 9 §1 (beyond the plain model) a case uses."""
    needed = []
    tree = hypernode_tree(case)
    if any(spec["tier"] == 0 for spec in tree.values()):
        needed.append("tier-0 HyperNodes")
    nodes = {n["name"] for n in case.get("nodes", [])}
    if any("node" in p and p["node"] not in nodes for p in case.get("pods", [])):
        needed.append("pods on nodes missing from the input")
    tier_names = {spec.get("tierName") for spec in tree.values()}
    limits = [pg.get("networkTopology") or {} for pg in case.get("podgroups", [])]
    if any(limit.get("highestTierName") not in (None, *tier_names) for limit in limits):
        needed.append("an unknown highestTierName")
    return needed


def tree_only(case: dict[str, Any]) -> dict[str, Any]:
    """The case without its workloads: nodes and HyperNodes only."""
    return {k: v for k, v in case.items() if k not in ("podgroups", "pods", "divergence")}


def case_params(name: str, pytest_module, *, tree: bool = False) -> list:
    """``pytest.param`` per case, ids ``<Go test>/<n>``; a divergent case is a strict xfail.
    ``tree``: the cases' trees only."""
    params = []
    for case_id, case in numbered(name):
        case = tree_only(case) if tree else case
        marks = []
        divergence = case.get("divergence")
        if divergence is not None:
            reason = f"{divergence['kind']}: {divergence['reason']}"
            marks.append(pytest_module.mark.xfail(strict=True, reason=reason))
        params.append(pytest_module.param(case, id=case_id, marks=marks))
    return params


def hypernode_tree(case: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The case's HyperNodes (``hypernodes``), or, when the Go test builds only the tier sets and
    the real-node sets, the tree those sets nest into (each HyperNode's parent is the smallest
    HyperNode of a higher tier holding all its nodes)."""
    if "hypernodes" in case:
        return case["hypernodes"]
    tiers = {name: tier for tier, names in case.get("hypernodeTiers", {}).items() for name in names}
    real = {name: set(nodes) for name, nodes in case.get("hypernodeRealNodes", {}).items()}
    tree: dict[str, dict[str, Any]] = {name: {"tier": tier} for name, tier in tiers.items()}
    parent: dict[str, str] = {}
    for name in tiers:
        above = [o for o in tiers if tiers[o] > tiers[name] and real[name] <= real[o]]
        if above:
            parent[name] = min(above, key=lambda o: (tiers[o], o))
    for name in tiers:
        children = sorted(c for c, p in parent.items() if p == name)
        covered = set().union(*(real[c] for c in children)) if children else set()
        if children:
            tree[name]["hypernodes"] = children
        nodes = [n for n in case["hypernodeRealNodes"][name] if n not in covered]
        if nodes:
            tree[name]["nodes"] = nodes
    return tree


NODE_FIELDS = ("name", "labels")
POD_FIELDS = ("name", "namespace", "node", "phase", "group", "labels", "nodeSelector")


def _resources(spec: dict[str, Any], fields: tuple[str, ...]) -> dict[str, str]:
    """Every key of a node or pod entry that is not one of its fields is a resource."""
    return {r: str(v) for r, v in spec.items() if r not in fields}


def _node(spec: dict[str, Any]) -> dict[str, Any]:
    allocatable = _resources(spec, NODE_FIELDS)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": spec["name"], "labels": spec.get("labels", {})},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def _hypernode(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    members = [
        {"type": kind, "selector": {"exactMatch": {"name": member}}}
        for kind, key in (("Node", "nodes"), ("HyperNode", "hypernodes"))
        for member in spec.get(key, [])
    ]
    body: dict[str, Any] = {"tier": spec["tier"], "members": members}
    if "tierName" in spec:
        body["tierName"] = spec["tierName"]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": body,
    }


def _topology(spec: dict[str, Any] | None) -> dict[str, Any] | None:
    """A ``networkTopology`` as the Go builder sets it. Mode ``''`` (a test PodGroup with a tier
    but no mode) is neither hard nor soft in Volcano and constrains nothing: dropped."""
    if spec is None or spec["mode"] == "":
        return None
    return dict(spec)


def _podgroup(spec: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"queue": spec["queue"], "minMember": spec["minMember"]}
    if spec.get("minTaskMember"):
        body["minTaskMember"] = spec["minTaskMember"]
    topology = _topology(spec.get("networkTopology"))
    if topology is not None:
        body["networkTopology"] = topology
    policies = []
    for policy in spec.get("subGroupPolicy", []):
        entry = {k: policy[k] for k in ("name", "matchLabelKeys", "subGroupSize", "minSubGroups")}
        policy_topology = _topology(policy.get("networkTopology"))
        if policy_topology is not None:
            entry["networkTopology"] = policy_topology
        policies.append(entry)
    if policies:
        body["subGroupPolicy"] = policies
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": spec["name"], "namespace": spec["namespace"]},
        "spec": body,
        "status": {"phase": spec["phase"]},
    }


def _pod(spec: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [{"name": "main", "resources": {"requests": _resources(spec, POD_FIELDS)}}],
    }
    if "node" in spec:
        body["nodeName"] = spec["node"]
    if "nodeSelector" in spec:
        body["nodeSelector"] = spec["nodeSelector"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": spec["name"],
            "namespace": spec["namespace"],
            "labels": spec.get("labels", {}),
            "annotations": {"scheduling.k8s.io/group-name": spec["group"]},
        },
        "spec": body,
        "status": {"phase": spec["phase"]},
    }


def _queue(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": spec["name"]},
        "spec": {"weight": spec["weight"]},
    }


def manifests(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The Kubernetes objects of one case, in the Go test's order (nodes, HyperNodes, queues,
    PodGroups, pods)."""
    return [
        *(_node(n) for n in case.get("nodes", [])),
        *(_hypernode(name, spec) for name, spec in sorted(hypernode_tree(case).items())),
        *(_queue(q) for q in case.get("queues", [])),
        *(_podgroup(pg) for pg in case.get("podgroups", [])),
        *(_pod(p) for p in case.get("pods", [])),
    ]


def instance_of(case: dict[str, Any], warnings: list[str] | None = None) -> Instance:
    """Read the case's manifests with toposolve's manifest reader."""
    sink = warnings if warnings is not None else []
    docs = [Document(body, "<case>", i) for i, body in enumerate(manifests(case))]
    return read_manifests(docs, source=case["name"], warn=sink.append)

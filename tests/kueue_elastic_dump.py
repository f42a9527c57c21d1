"""A small Kueue dump with an elastic workload slice scaling up (tests of the reader and the
CLI)."""

from __future__ import annotations

from toposolve.formats.kueue.elastic import REPLACEMENT_FOR

GROUP = "kueue.x-k8s.io/v1beta2"
HOST = "kubernetes.io/hostname"


def _node(name):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"block": "b0", HOST: name}},
        "status": {
            "allocatable": {"cpu": "2", "pods": "10"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def cluster_docs():
    """Three 2-CPU nodes x1-x3 in block b0, Topology ``t`` (block, hostname), flavor ``f``,
    ClusterQueue ``cq`` and LocalQueue ``default/lq``."""
    return [
        *(_node(n) for n in ("x1", "x2", "x3")),
        {"apiVersion": GROUP, "kind": "Topology", "metadata": {"name": "t"},
         "spec": {"levels": [{"nodeLabel": "block"}, {"nodeLabel": HOST}]}},
        {"apiVersion": GROUP, "kind": "ResourceFlavor", "metadata": {"name": "f"},
         "spec": {"topologyName": "t"}},
        {"apiVersion": GROUP, "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"resourceGroups": [
             {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": []}]}]}},
        {"apiVersion": GROUP, "kind": "LocalQueue",
         "metadata": {"name": "lq", "namespace": "default"}, "spec": {"clusterQueue": "cq"}},
    ]


def _podset(count):
    return {
        "name": "main",
        "count": count,
        "topologyRequest": {"unconstrained": True},
        "template": {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
    }


def _old_slice(domains):
    count = sum(c for _, c in domains)
    assignment = {
        "name": "main",
        "count": count,
        "topologyAssignment": {
            "levels": [HOST],
            "domains": [{"values": [host], "count": c} for host, c in domains],
        },
    }
    return {
        "apiVersion": GROUP,
        "kind": "Workload",
        "metadata": {"name": "w-1", "namespace": "default"},
        "spec": {"queueName": "lq", "podSets": [_podset(count)]},
        "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [assignment]}},
    }


def _pod(name, node):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default",
                     "annotations": {"kueue.x-k8s.io/workload": "w-1"}},
        "spec": {"nodeName": node,
                 "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Running"},
    }


def elastic_dump(count=4, previous=(("x1", 2),), reference="default/w-1"):
    """Nodes x1..x3 (2 cpu each), queues, the admitted slice ``w-1`` (its pods on ``previous``,
    two bound Pods on x1) and ``w-2`` of ``count`` pods replacing ``reference``."""
    new = {
        "apiVersion": GROUP,
        "kind": "Workload",
        "metadata": {"name": "w-2", "namespace": "default",
                     "annotations": {REPLACEMENT_FOR: reference}},
        "spec": {"queueName": "lq", "podSets": [_podset(count)]},
    }
    return [
        *cluster_docs(),
        new,
        _old_slice(previous),
        *(_pod(f"w-1-{i}", "x1") for i in range(2)),
    ]

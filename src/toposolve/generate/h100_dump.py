"""The ``h100-dump`` preset: a realistic ``kubectl get … -o yaml`` dump of a 64-node DGX H100
cluster (see :mod:`~toposolve.generate.h100_cluster` and
:mod:`~toposolve.generate.h100_workloads`), in one of two forms:

* ``form="hypernodes"``: the network as HyperNodes, tiers 0 (NVLink) to 3 (core);
* ``form="labels"``: the same cluster without HyperNodes, with Volcano's
  ``volcano-controller-configmap`` whose label discovery builds tiers 1-3 from the nodes'
  ``network.topology.kubernetes.io/*`` labels. Label discovery cannot make tier 0 (its lowest
  level is tier 1), so this form has no NVLink domains: its tree equals the HyperNode form's
  tiers ≥ 1 (same node sets, tiers and tier names; the names are discovery's).

Everything else (nodes, pods, PodGroups, Jobs, queues, priority classes) is identical in both
forms. The output depends only on ``seed``; ``nodes`` and ``load`` are fixed by the scenario.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toposolve.generate import h100_cluster as cluster
from toposolve.generate import h100_workloads as workloads
from toposolve.generate.kubeobjects import ObjectFactory, kube_list

FORMS = ("hypernodes", "labels")
NODES = len(cluster.gpu_node_names()) + len(cluster.CPU_NODES)


def h100_dump(
    rng: np.random.Generator, nodes: int | None, load: float, *, form: str = "hypernodes"
) -> dict[str, Any]:
    """The dump as one ``kind: List`` object."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    if nodes not in (None, NODES):
        raise ValueError(f"the h100-dump scenario has {NODES} nodes; --nodes cannot change it")
    factory = ObjectFactory(rng)
    clique = factory.uid()
    items = cluster.nodes(factory, rng, clique)
    # both forms draw both, so that every later object gets the same uid and name suffix
    hypernodes = cluster.hypernodes(factory, clique)
    configmap = cluster.discovery_configmap(factory)
    items += hypernodes if form == "hypernodes" else [configmap]
    items += cluster.queues(factory) + cluster.priority_classes(factory)
    items += workloads.daemonset_pods(factory, rng)
    gpu = cluster.gpu_node_names()
    items += workloads.pytorch_job(
        factory, "llama-ft", "ml-research", workers=3, nodes=gpu[16:20], hours=12.0
    )
    items += workloads.pytorch_job(
        factory,
        "rlhf-reward",
        "ml-research",
        workers=3,
        nodes=None,
        hours=2.5,
        network_topology=workloads.hard("leaf"),
    )
    items += workloads.deployment_pods(factory, rng, [gpu[60], gpu[61]])
    for job in workloads.volcano_jobs():
        items += workloads.volcano_job(factory, job)
    return kube_list(items)

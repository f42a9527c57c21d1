"""A plan's rank map as Kubernetes ConfigMaps (``toposolve ranks``, docs/ranks.md)."""

from __future__ import annotations

from typing import Any

import yaml

RANKS_LABEL = "toposolve.io/ranks-of"


def rank_configmaps(ranks: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """One ConfigMap per job, ``<job>-ranks`` in its namespace: pod name → first rank.

    Parameters
    ----------
    ranks
        A plan's ``ranks``: job key (``namespace/name``) → pod (``namespace/pod``) → rank.

    Returns
    -------
    list
        The objects, in job order; ``data`` lists pods by rank (values are strings, as a
        ConfigMap holds them).
    """
    out = []
    for job, pods in ranks.items():
        namespace, _, name = job.partition("/")
        data = {pod.partition("/")[2] or pod: str(rank)
                for pod, rank in sorted(pods.items(), key=lambda item: (item[1], item[0]))}
        out.append({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-ranks", "namespace": namespace,
                         "labels": {RANKS_LABEL: name}},
            "data": data,
        })
    return out


def dump_configmaps(objects: list[dict[str, Any]]) -> str:
    """The objects as one multi-document YAML text."""
    return yaml.safe_dump_all(objects, sort_keys=False) if objects else ""

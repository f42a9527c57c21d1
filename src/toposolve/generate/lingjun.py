"""The Alibaba Lingjun cluster: the real 847-host three-tier Clos (``instances/data``, see
ATTRIBUTION.md), with synthetic gangs.

* **Topology** from ``lingjun_topo.csv`` (``ip,DSW,PSW,ASW``): tier 1 = leaves (one ASW under one
  PSW), tier 2 = PSWs, tier 3 = the DSW. ASW labels are local to their PSW (the same ``S14``
  hangs under several PSWs), so a domain is named by its whole label *path*: leaf
  ``g6-p10-s14``, PSW ``g6-p10``, DSW ``g6``. Leaves hold 2–8 hosts: the tree is irregular.
* **Nodes**: hosts ordered by path (PSW, ASW numerically) then by hashed address, named
  ``lingjun-<i:04d>``, each labelled with its path — ``network.alibaba.com/dsw``, ``…/psw``,
  ``…/asw`` (the per-level labels a Kueue Topology or Volcano's label discovery reads; the
  ``asw`` value alone is not unique, the path is). The data has no host shape: hosts are taken
  as 8-GPU servers (DGX H100-like shape, as the superpod preset's).
* **Jobs**: sizes from a mix scaled to the small leaves (1–8, 16–64, 128–256 pods of 8 GPUs),
  constraints and priorities as :mod:`toposolve.generate.jobs` draws them, the tight tier being
  the lowest whose largest domain holds the job. ``jobs`` fixes their number.
"""

from __future__ import annotations

import csv
import re
from functools import lru_cache
from typing import Any

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.paths import TRACE_DIR
from toposolve.formats.native.writer import compress_names
from toposolve.generate.common import document, node_group
from toposolve.generate.jobs import PRIORITY_CLASSES, JobMix, SizeClass, draw_sizes, pending_jobs
from toposolve.generate.superpod import DGX_H100
from toposolve.generate.tree import TierSizes

TOPOLOGY_CSV = "lingjun_topo.csv"
LABEL_PREFIX = "network.alibaba.com"
LEVELS = ("dsw", "psw", "asw")
LINGJUN_MIX = JobMix(
    classes=(
        SizeClass(0.55, (1, 2, 4, 8), (0.4, 0.25, 0.2, 0.15)),
        SizeClass(0.38, (16, 32, 64), (0.45, 0.35, 0.2)),
        SizeClass(0.07, (128, 256), (0.7, 0.3)),
    ),
    partition_sizes=(8, 4),
)


def _number(label: str) -> tuple[str, int]:
    m = re.fullmatch(r"(\D*)(\d+)", label)
    return (m[1], int(m[2])) if m else (label, -1)


@lru_cache(maxsize=1)
def hosts() -> tuple[tuple[str, str, str, str], ...]:
    """(dsw, psw, asw, ip) of every host, in path order."""
    path = TRACE_DIR / TOPOLOGY_CSV
    try:
        with path.open(newline="") as f:
            rows = [(r["DSW"], r["PSW"], r["ASW"], r["ip"]) for r in csv.DictReader(f)]
    except OSError as exc:
        raise InputError(f"Lingjun topology missing ({exc.strerror}); restore instances/data",
                         file=str(path)) from None
    except KeyError as exc:
        raise InputError(f"missing column {exc}", file=str(path)) from None
    return tuple(sorted(rows, key=lambda r: (_number(r[0]), _number(r[1]), _number(r[2]), r[3])))


def lingjun(rng: np.random.Generator, nodes: int | None, load: float, *,
            jobs: int | None = None) -> dict[str, Any]:
    rows = hosts()
    if nodes is not None and nodes != len(rows):
        raise ValueError(f"the Lingjun cluster has {len(rows)} hosts; leave nodes unset")
    names = [f"lingjun-{i:04d}" for i in range(len(rows))]
    doc = document("lingjun",
                   f"Alibaba Lingjun three-tier Clos: {len(rows)} hosts, real topology, synthetic "
                   "gangs")
    leaves: dict[tuple[str, str, str], list[str]] = {}
    for name, (dsw, psw, asw, _) in zip(names, rows, strict=True):
        leaves.setdefault((dsw, psw, asw), []).append(name)
    groups, start = [], 0
    for path, members in leaves.items():  # one node group per leaf: its hosts share their labels
        group = node_group(DGX_H100, len(members), [])
        labels = {f"{LABEL_PREFIX}/{level}": value
                  for level, value in zip(LEVELS, path, strict=True)}
        group.update(name="lingjun-{i:04d}", start=start, labels={**DGX_H100.labels, **labels})
        groups.append(group)
        start += len(members)
    spines: dict[tuple[str, str], list[str]] = {}
    hypernodes = []
    for (dsw, psw, asw), members in leaves.items():
        leaf = f"{dsw}-{psw}-{asw}".lower()
        spines.setdefault((dsw, psw), []).append(leaf)
        hypernodes.append({"name": leaf, "tier": 1, "nodes": compress_names(members)})
    tops: dict[str, list[str]] = {}
    for (dsw, psw), children in spines.items():
        tops.setdefault(dsw, []).append(f"{dsw}-{psw}".lower())
        hypernodes.append({"name": f"{dsw}-{psw}".lower(), "tier": 2, "children": children})
    hypernodes += [{"name": dsw.lower(), "tier": 3, "children": children}
                   for dsw, children in tops.items()]
    doc["nodeGroups"] = groups
    doc["topology"] = {"tierNames": {1: "asw", 2: "psw", 3: "dsw"}, "hyperNodes": hypernodes}
    doc["queues"] = [{"name": "default", "weight": 1}]
    doc["priorityClasses"] = [dict(pc) for pc in PRIORITY_CLASSES]
    spine_sizes = [sum(len(leaves[(d, p, a)]) for (d, p, a) in leaves if (d, p) == key)
                   for key in spines]
    tree = TierSizes((max(len(m) for m in leaves.values()), max(spine_sizes), len(rows)))
    full = DGX_H100.per_node
    draws = draw_sizes(rng, LINGJUN_MIX, full=full, target=load * len(rows) * full,
                       max_pods=len(rows) // 2, n_jobs=jobs)
    doc["jobs"] = pending_jobs(rng, draws, tree=tree, full=full, pod_requests=DGX_H100.pod_requests,
                               mix=LINGJUN_MIX)  # type: ignore[arg-type]
    return doc

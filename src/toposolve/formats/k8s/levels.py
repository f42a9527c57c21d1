"""The HyperNode tree as node-label levels, as the Kueue and KAI writers write it.

One label key per tier, value = the node's HyperNode of that tier; ``kubernetes.io/hostname`` is
the lowest level (tier-1 HyperNodes holding one node each are that level). Trees deeper than the
scheduler's key style get ``toposolve.io/level-<tier>`` for the extra top tiers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toposolve.core.instance import Instance, Job, Node
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.core.topology import build_topology

TOPOLOGY_NAME = "default"


@dataclass
class Levels:
    """Level keys, top first (hostname last), and the key of each tier of the written tree."""

    keys: list[str]
    tier_keys: dict[int, str]

    def key_of(self, tier: int | None) -> str | None:
        """Level key of a tier; None for "no limit" (the root's tier or above)."""
        return None if tier is None else self.tier_keys.get(tier)


def level_labels(instance: Instance, style: tuple[str, ...]) -> tuple[Levels, list[Node]]:
    """The levels of the instance's tree and its nodes relabelled with their level values.

    Parameters
    ----------
    instance
        The instance whose HyperNode tree is written as labels.
    style
        The scheduler's level keys, top first (the lowest used for the lowest real tier).

    Returns
    -------
    tuple of Levels and list of Node
        The levels, and copies of the nodes carrying one label per level.
    """
    topo = build_topology(instance.nodes, instance.hypernodes, source=instance.source)
    real = range(len(topo.names) - 1)
    top = topo.max_tier - 1  # real tiers bottom..top
    bottom = min((int(topo.tier[h]) for h in real), default=top + 1)
    per_node_leaves = top >= bottom and all(
        int(topo.node_count[h]) == 1 for h in real if topo.tier[h] == bottom
    )
    lowest_real = bottom + 1 if per_node_leaves else bottom
    tiers = list(range(top, lowest_real - 1, -1))  # top first
    extra = max(0, len(tiers) - len(style))
    keys = [f"toposolve.io/level-{t}" for t in tiers[:extra]]
    keys += list(style[: len(tiers) - extra])
    at_tier = topo.node_at_tier
    nodes = []
    for i, node in enumerate(instance.nodes):
        labels = {k: v for k, v in node.labels.items() if k not in keys}
        for key, tier in zip(keys, tiers, strict=True):
            h = int(at_tier[i, tier])
            if h >= 0:
                labels[key] = topo.names[h]
        labels[HOSTNAME_LABEL] = node.name
        nodes.append(node.model_copy(update={"labels": labels}))
    tier_keys = dict(zip(tiers, keys, strict=True))
    if per_node_leaves:
        tier_keys[bottom] = HOSTNAME_LABEL
    return Levels([*keys, HOSTNAME_LABEL], tier_keys), nodes


def warn_unsupported(job: Job, warn: Callable[[str], None]) -> None:
    """Warn when a job holds what neither the Kueue nor the KAI form can say.

    Parameters
    ----------
    job
        The job being written.
    warn
        Called with one line when subGroupPolicies other than partitions, GangGroups or
        minTaskMember are left out.
    """
    partitions = {t.name for t in job.tasks if t.partition is not None}
    policies = any(p.name not in partitions for p in job.subgroup_policies)
    if policies or job.min_task_member or job.gang_groups:
        warn(
            f"Job/{job.key}: subGroupPolicies other than partitions, GangGroups and "
            "minTaskMember are left out"
        )

"""The HyperNode tree as node-label levels, as the Kueue and KAI writers write it and their
readers read it (:func:`read_levels`).

One label key per tier, value = the node's HyperNode of that tier; ``kubernetes.io/hostname`` is
the lowest level (tier-1 HyperNodes holding one node each are that level). Trees deeper than the
scheduler's key style get ``toposolve.io/level-<tier>`` for the extra top tiers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from toposolve.core.instance import Instance, Job, NetworkTopology, Node
from toposolve.core.label_levels import HOSTNAME_LABEL, qualified_name_problem
from toposolve.core.limits import MAX_TIER
from toposolve.core.refusal import MISSING_LEVEL, refusal_of
from toposolve.core.topology import build_topology
from toposolve.formats.k8s.fields import Field

TOPOLOGY_NAME = "default"
# GKE's node labels for its block / sub-block / host levels, the keys the Kueue and kube writers use
GKE_KEYS = ("cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
            "cloud.google.com/gce-topology-host")


@dataclass
class Levels:
    """Level keys, top first (hostname last), and the key of each tier of the written tree."""

    keys: list[str]
    tier_keys: dict[int, str]

    def key_of(self, tier: int | None) -> str | None:
        """Level key of a tier; None for "no limit" (the root's tier or above)."""
        return None if tier is None else self.tier_keys.get(tier)


def read_levels(levels: Field) -> list[str]:
    """``spec.levels[].nodeLabel`` of a Kueue or KAI ``Topology``, top first, checked as their
    CRD checks it (one to ``MAX_TIER`` levels, each a label key, none twice, hostname only
    lowest); linear time.

    Parameters
    ----------
    levels
        The Topology's ``spec.levels``.

    Returns
    -------
    list of str
        The level label keys; raises :class:`~toposolve.core.errors.InputError` naming the field.
    """
    items = levels.elements()
    if not items:
        raise levels.fail("a Topology needs at least one level")
    if len(items) > MAX_TIER:  # each level is a HyperNode tier
        raise levels.fail(f"{len(items):,} levels, more than the limit of {MAX_TIER} levels")
    keys: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        keys.append(read_node_label(item, seen))
        if keys[-1] == HOSTNAME_LABEL and i != len(items) - 1:
            raise item["nodeLabel"].fail(f"{HOSTNAME_LABEL} may only be the lowest level")
    return keys


def read_level_aliases(levels: Field, keys: list[str]) -> dict[str, str]:
    """``spec.levels[].alias`` of a KAI ``Topology`` (Kueue's has none): alias → nodeLabel,
    checked as KAI checks it (the CRD: a non-empty label key; its webhook: aliases unique, none
    equal to a nodeLabel); linear time.

    Parameters
    ----------
    levels
        The Topology's ``spec.levels``, already read by :func:`read_levels` into ``keys``.
    keys
        The levels' ``nodeLabel`` keys, top first.

    Returns
    -------
    dict of str to str
        Each alias and the nodeLabel of its level; raises
        :class:`~toposolve.core.errors.InputError` naming the ``alias`` field.
    """
    labels = set(keys)
    aliases: dict[str, str] = {}
    for level, key in zip(levels.elements(), keys, strict=True):
        field = level["alias"]
        if field.value is None:
            continue
        alias = field.required_text()
        problem = qualified_name_problem(alias)
        if problem:
            raise field.fail(f"{alias!r} is not a valid qualified name: {problem}")
        if alias in aliases:
            raise field.fail(f"duplicate alias {alias!r}: aliases must be unique in a Topology")
        if alias in labels:
            raise field.fail(f"alias {alias!r} equals a nodeLabel of the Topology")
        aliases[alias] = key
    return aliases


def read_node_label(level: Field, seen: set[str]) -> str:
    """A level's ``nodeLabel``: a label key (qualified name) not in ``seen``, then added to it."""
    key = level["nodeLabel"].required_text()
    problem = qualified_name_problem(key)
    if problem:
        raise level["nodeLabel"].fail(f"{key!r} is not a valid qualified name: {problem}")
    if key in seen:
        raise level["nodeLabel"].fail(f"duplicate nodeLabel {key!r}")
    seen.add(key)
    return key


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


def warn_unsupported(job: Job, warn: Callable[[str], None], kept: Collection[str] = (),
                     subgroups: bool = False) -> None:
    """Warn when a job holds what neither the Kueue nor the KAI form can say.

    Parameters
    ----------
    job
        The job being written.
    warn
        Called with one line when subGroupPolicies other than partitions, GangGroups or
        minTaskMember are left out, one when a constraint's ``within_hypernode`` (several
        Topologies in the input) is, and one when a constraint no node satisfies is
        (:func:`warn_refused`).
    kept
        Trees and ``within_hypernode`` names the written form keeps (see
        :func:`warn_within_hypernode`).
    subgroups
        Whether the caller writes the job's SubGroupPolicies and GangGroups itself.
    """
    partitions = {t.name for t in job.tasks if t.partition is not None}
    policies = any(p.name not in partitions for p in job.subgroup_policies)
    if not subgroups and (policies or job.min_task_member or job.gang_groups):
        warn(
            f"Job/{job.key}: subGroupPolicies other than partitions, GangGroups and "
            "minTaskMember are left out"
        )
    warn_within_hypernode(job, warn, kept)
    warn_refused(job, warn)


def warn_refused(job: Job, warn: Callable[[str], None]) -> None:
    """Warn in one line when the job has a constraint no node satisfies (a level its topology
    lacks, a request its scheduler never places) that the written form leaves out.

    Parameters
    ----------
    job
        The job being written, without the constraints the form writes back.
    warn
        Called with the line, naming the first such constraint.
    """
    refusal = next((r for s in job_constraints(job) if (r := refusal_of(s)) is not None), None)
    if refusal is None:
        return
    what = (f"the constraint naming level {refusal.why!r}, which its topology lacks,"
            if refusal.kind == MISSING_LEVEL
            else f"the request its scheduler never places ({refusal.why})")
    warn(f"Job/{job.key}: {what} is left out (the written objects cannot hold it): the written "
         "job is unconstrained")


def drop_refused(job: Job, warn: Callable[[str], None]) -> Job:
    """``job`` without its constraints no node satisfies, for a form that cannot hold them
    (one :func:`warn_refused` line when it had any).

    Parameters
    ----------
    job
        The job being written.
    warn
        Called with the line.

    Returns
    -------
    Job
        ``job`` itself when it has none, else a copy with each such constraint unset.
    """
    if all(refusal_of(s) is None for s in job_constraints(job)):
        return job
    warn_refused(job, warn)

    def kept(spec: NetworkTopology | None) -> NetworkTopology | None:
        return None if refusal_of(spec) is not None else spec

    return job.model_copy(update={
        "network_topology": kept(job.network_topology),
        "subgroup_policies": [p.model_copy(update={"network_topology": kept(p.network_topology)})
                              for p in job.subgroup_policies],
        "gang_groups": [g.model_copy(update={"network_topology": kept(g.network_topology)})
                        for g in job.gang_groups],
        "tasks": [t if t.partition is None else t.model_copy(update={
            "partition": t.partition.model_copy(
                update={"network_topology": kept(t.partition.network_topology)})})
            for t in job.tasks],
    })


def job_constraints(job: Job) -> list[NetworkTopology]:
    """Every topology constraint of a job: its own, its SubGroupPolicies', its GangGroups' and its
    partitions'.

    Parameters
    ----------
    job
        The job.

    Returns
    -------
    list of NetworkTopology
        In that order; absent ones left out.
    """
    specs = [job.network_topology, *(p.network_topology for p in job.subgroup_policies),
             *(g.network_topology for g in job.gang_groups),
             *(t.partition.network_topology for t in job.tasks if t.partition is not None)]
    return [s for s in specs if s is not None]


def warn_within_hypernode(job: Job, warn: Callable[[str], None],
                          kept: Collection[str] = ()) -> None:
    """Warn in one line when a constraint of the job names a Topology (``within_hypernode``)
    that the written form leaves out.

    Parameters
    ----------
    job
        The job being written.
    warn
        Called with the line.
    kept
        Constraint trees written as Topologies of their own and the main tree's top when it is
        the only one: constraints naming them lose nothing.
    """
    if any(s.within_hypernode is not None and (s.tree or s.within_hypernode) not in kept
           for s in job_constraints(job)):
        warn(f"Job/{job.key}: the Topology its constraints name is left out (one Topology is "
             "written; its pods may go to the nodes of the others)")

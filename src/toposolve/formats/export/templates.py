"""Pod-template patches that confine a job's podsets to their planned domains.

For pods that do not exist yet (a suspended batch Job, JobSet or PyTorchJob that Kueue holds,
or a queued job or LeaderWorkerSet Kueue has not made a Workload for), the export patches the
owner's pod template, per podset: a required ``nodeAffinity`` — the planned domain's level
labels when the domain is a level of the cluster's Topology, else ``kubernetes.io/hostname In
[planned nodes]`` — added to each existing required term (terms are ORed, so each keeps its
own requirements), and for Kueue the podset topology annotation at the planned level.
Kubernetes lets a suspended Job's template change only in node affinity, node selector,
tolerations, labels, annotations and scheduling gates (``JobMutableNodeSchedulingDirectives``,
GA in 1.27); Kueue relies on the same rule. The patches are partial objects for server-side
apply (``kubectl apply --server-side``), so only these fields are sent. The groups of a
LeaderWorkerSet share its two templates: they are confined to the union of the groups'
planned domains (``docs/formats.md``, export).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.instance import Job, Node
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.formats.export.source import ExportSource, Owner, hostname
from toposolve.formats.kueue.jobs import BATCH_JOB, JOBSET, LEADER_WORKER_SET, PYTORCH_JOB
from toposolve.formats.kueue.request import (
    GROUP_ANNOTATION,
    PREFERRED_ANNOTATION,
    REQUIRED_ANNOTATION,
    UNCONSTRAINED_ANNOTATION,
)

REQUIRED_AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"
PATCHABLE = (BATCH_JOB, JOBSET, PYTORCH_JOB, LEADER_WORKER_SET)
# a LeaderWorkerSet's podsets and the templates they are made from (Kueue's podSets)
LWS_TEMPLATES = {"leader": "leaderTemplate", "worker": "workerTemplate", "main": "workerTemplate"}


def confinement(groups: Sequence[Sequence[Node]],
                levels: Sequence[str]) -> tuple[list[dict], str | None]:
    """Node-selector requirements that hold the planned nodes and the level they name.

    Parameters
    ----------
    groups
        The nodes planned for one podset, per gang made from its template (one, except the
        groups of a LeaderWorkerSet).
    levels
        The Topology's level labels, top first (empty: no label levels).

    Returns
    -------
    tuple
        The requirements (down to the lowest level at which each group lies in one domain,
        per level the label values of the groups' domains; ``hostname In [nodes]`` when a
        group lies in no one top-level domain) and that level's label (None for the
        hostname list).
    """
    prefix: list[dict] = []
    for key in levels:
        per_group = [{n.labels.get(key) for n in nodes} for nodes in groups]
        if any(len(values) != 1 or None in values for values in per_group):
            break
        union = sorted({str(value) for values in per_group for value in values})
        prefix.append({"key": key, "operator": "In", "values": union})
    if prefix:
        return prefix, prefix[-1]["key"]
    return [{"key": HOSTNAME_LABEL, "operator": "In",
             "values": sorted({hostname(n) for nodes in groups for n in nodes})}], None


def placement_units(podsets: Iterable[str],
                    templates: dict[str, dict[str, Any]]) -> list[list[str]]:
    """The podsets confined together: those whose templates name one Kueue podset group
    (``podset-group-name``; Kueue's webhook wants one topology request for both, and places
    them in one domain), each other podset alone; in first-podset order."""
    units: dict[str, list[str]] = {}
    for podset in podsets:
        annotations = (templates.get(podset, {}).get("metadata") or {}).get("annotations") or {}
        group = annotations.get(GROUP_ANNOTATION)
        units.setdefault(f"group {group}" if group else f"podset {podset}", []).append(podset)
    return list(units.values())


def _with_requirements(template: dict[str, Any], requirements: list[dict]) -> dict[str, Any]:
    """The ``nodeAffinity`` of ``template`` with ``requirements`` added to every required term."""
    affinity = ((template.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = copy.deepcopy((affinity.get(REQUIRED_AFFINITY) or {}).get("nodeSelectorTerms") or [])
    if not terms:
        terms = [{}]
    for term in terms:
        # copies: podsets confined together must not share objects (YAML would alias them)
        term["matchExpressions"] = [*(term.get("matchExpressions") or []),
                                    *copy.deepcopy(requirements)]
    return {REQUIRED_AFFINITY: {"nodeSelectorTerms": terms}}


def _annotation(template: dict[str, Any], level: str | None) -> dict[str, str]:
    """The podset topology annotation at ``level``: the kind the template already asks for
    (required or preferred; Kueue refuses both at once); none for an unconstrained podset."""
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    if level is None or str(annotations.get(UNCONSTRAINED_ANNOTATION, "")).lower() == "true":
        return {}
    key = PREFERRED_ANNOTATION if PREFERRED_ANNOTATION in annotations else REQUIRED_ANNOTATION
    return {key: level}


def template_patch(template: dict[str, Any], requirements: list[dict], level: str | None,
                   kueue: bool) -> dict[str, Any]:
    """The partial pod template: node affinity, plus (``kueue``) the topology annotation."""
    patch: dict[str, Any] = {
        "spec": {"affinity": {"nodeAffinity": _with_requirements(template, requirements)}}}
    annotations = _annotation(template, level) if kueue else {}
    if annotations:
        patch["metadata"] = {"annotations": annotations}
    return patch


def owner_templates(owner: Owner, workload: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Podset name → the pod template it is made from (the owner's, else the Workload's copy)."""
    spec = (owner.doc.body.get("spec") or {}) if owner.doc is not None else None
    if spec is None:
        podsets = ((workload or {}).get("spec") or {}).get("podSets") or []
        return {str(p.get("name")): p.get("template") or {} for p in podsets}
    if owner.kind == "Job" and owner.group == "batch":
        return {"main": spec.get("template") or {}}
    if owner.kind == "JobSet":
        return {str(rj.get("name")): ((rj.get("template") or {}).get("spec") or {}).get(
            "template") or {} for rj in spec.get("replicatedJobs") or []}
    if owner.kind == "PyTorchJob":
        return {str(role).lower(): rs.get("template") or {}
                for role, rs in (spec.get("pytorchReplicaSpecs") or {}).items()}
    if owner.kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        names = ("leader", "worker") if lwt.get("leaderTemplate") is not None else ("main",)
        return {name: lwt.get(LWS_TEMPLATES[name]) or {} for name in names}
    return {}


def _role(owner: Owner, podset: str) -> str:
    """The PyTorchJob replica type of a podset (``worker`` → ``Worker``, as in the owner)."""
    roles = ((owner.doc.body.get("spec") or {}).get("pytorchReplicaSpecs") or {}
             if owner.doc is not None else {})
    return next((r for r in roles if str(r).lower() == podset), podset.capitalize())


def owner_patch(owner: Owner, patches: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The partial owner object carrying the podset template ``patches`` (podset → patch)."""
    if owner.kind == "Job" and owner.group == "batch":
        spec: dict[str, Any] = {"template": patches["main"]}
    elif owner.kind == "JobSet":  # replicatedJobs: a list keyed by name (server-side apply)
        spec = {"replicatedJobs": [{"name": name, "template": {"spec": {"template": patch}}}
                                   for name, patch in patches.items()]}
    elif owner.kind == "LeaderWorkerSet":
        spec = {"leaderWorkerTemplate": {LWS_TEMPLATES[name]: patch
                                         for name, patch in patches.items()}}
    else:  # PyTorchJob
        spec = {"pytorchReplicaSpecs": {_role(owner, name): {"template": patch}
                                        for name, patch in patches.items()}}
    return {"apiVersion": owner.api_version, "kind": owner.kind,
            "metadata": {"name": owner.name, "namespace": owner.namespace}, "spec": spec}


def check_patchable(source: ExportSource, job: Job, *, running: bool = False) -> Owner:
    """The owner of ``job`` whose template can be patched; one refusal line otherwise
    (``running``: the owner of its running pods, :meth:`ExportSource.running_owner`)."""
    obj = f"Job/{job.key}"
    owner = source.running_owner(job) if running else source.owner(job)
    if owner is None:
        hint = " (use --as kueue-admission)" if source.workload(job) is not None else ""
        raise InputError(f"no owner object to patch: the job's pods are made by no batch Job, "
                         f"JobSet, PyTorchJob or LeaderWorkerSet of the dump{hint}", obj=obj)
    if owner.kind == "Job" and owner.group == "batch.volcano.sh":
        raise InputError("a Volcano Job's task templates cannot be patched (Volcano's job "
                         "webhook accepts changes to minAvailable and task replicas only); "
                         "export --as bindings once its pods exist", obj=obj)
    if (owner.group, owner.kind) not in PATCHABLE:
        raise InputError(f"cannot patch the pod template of a {owner.kind} "
                         f"({owner.api_version})", obj=obj)
    return owner

"""``toposolve export``: a plan as the objects each scheduler accepts (one form per run).

Forms: ``bindings`` (``v1 Binding`` per planned pod that exists and is pending), ``templates``
(per owner object of pods not created yet, pod templates confined to the planned domain),
``kueue-admission`` (Workload ``status.admission`` with ``topologyAssignment``),
``kai-bindrequests`` (KAI ``BindRequest`` per pending pod), ``evictions`` (``policy/v1
Eviction`` per evicted pod, victims in plan order), ``moves`` (per moved job its owner's
template patch steering the replacements, then per moved pod an Eviction) and ``ranks`` (per
job its rank order: rank labels on its pods, or a ConfigMap keyed by pod index for pods not
created yet). What each object does, how
to apply it and what each form leaves out (a preemptor's nominated pods wait for their
victims): ``docs/formats.md``, export section, ``docs/defrag.md`` for moves and
``docs/ranks.md`` for ranks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from toposolve.core.errors import InputError
from toposolve.core.instance import Job, Node
from toposolve.core.plan import Binding, Move, Plan
from toposolve.formats.export.admission import KUEUE_APIS, admission_patch
from toposolve.formats.export.objects import (
    bind_request_object,
    eviction_command,
    eviction_object,
)
from toposolve.formats.export.ranks import rank_items
from toposolve.formats.export.source import ExportSource, Owner, pod_problem
from toposolve.formats.export.templates import (
    check_patchable,
    confinement,
    owner_patch,
    owner_templates,
    placement_units,
    template_patch,
)
from toposolve.formats.k8s.bindings import binding_object, check_exportable

EXPORT_FORMS = ("bindings", "templates", "kueue-admission", "kai-bindrequests", "evictions",
                "moves", "ranks")
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
Gang = tuple[Job, dict[str, list[Node]]]  # a planned job and its podsets' nodes
LWS_NOTE = ("Kueue's LeaderWorkerSet webhook refuses changes to the template specs of an LWS it "
            "manages (nodeAffinity included): merge each LeaderWorkerSet patch into its manifest "
            "before creating it (e.g. kubectl patch --local --type merge)")

HEADERS = {
    "bindings": ["v1 Binding objects: each binds one pending pod to its planned node.",
                 "Apply: kubectl create -f FILE"],
    "templates": ["Partial owner objects: each confines the pod template of every planned podset",
                  "to its planned domain (required nodeAffinity; Kueue: the podset topology",
                  "annotation at the planned level). The owners are suspended (Kueue holds them):",
                  "Kubernetes lets a suspended Job's template change in exactly these fields.",
                  "A LeaderWorkerSet's groups share its templates: they are confined to the union",
                  "of the groups' planned domains (Kueue keeps each group within one of them).",
                  "Kueue refuses template-spec changes to an LWS it manages: merge its patch into",
                  "the manifest before creating it.",
                  "Apply: kubectl apply --server-side --force-conflicts "
                  "--field-manager=toposolve -f FILE"],
    "kueue-admission": ["Kueue Workloads with only status.admission: the ClusterQueue, each",
                        "podset's flavors, count and topologyAssignment, for those who run",
                        "their own admission (which also sets the QuotaReserved and Admitted",
                        "conditions; Kueue starts a Workload's job once it is admitted).",
                        "Apply (kubectl >= 1.32): kubectl apply --server-side --subresource "
                        "status --field-manager=toposolve -f FILE"],
    "kai-bindrequests": ["KAI BindRequest objects: KAI's binder binds each pending pod to its",
                         "selected node. Apply: kubectl create -f FILE"],
    "evictions": ["policy/v1 Eviction objects, victims in plan order: post each with the",
                  "kubectl line above it (an Eviction is a pod subresource; kubectl create -f",
                  "cannot create one), wait until the pods are gone, then apply the placements."],
    "moves": ["A defragmentation plan's moves. First, per moved job, a partial owner object",
              "confining each podset's pod template to the nodes (or the domain) its pods hold",
              "after the plan (required nodeAffinity), so that the controller's replacements",
              "land there: apply it with kubectl apply --server-side --force-conflicts",
              "--field-manager=toposolve. The API server takes a template change to a batch Job",
              "or JobSet only while it is suspended: suspend the owner, apply, resume (its pods",
              "restart as a whole, as the plan's move cost assumes). Then, in plan order, per",
              "moved pod a policy/v1 Eviction (the node its replacement must go to in the",
              "comment): post each with the kubectl line above it, wait until the pod is gone.",
              "A plan in waves (defrag --max-waves) lists them wave by wave: start a wave only",
              "once every replacement of the previous one is Ready.",
              "Evicting alone only frees the old node: an unsteered replacement goes wherever",
              "the scheduler picks. Last, apply the admitted jobs' placements (--as bindings",
              "or templates)."],
    "ranks": ["Rank order per job, as a launcher reads it (docs/ranks.md). A job whose pods exist:",
              "a partial Pod per pod with the labels toposolve.io/rank (its first rank: RANK",
              "with one rank per pod) and toposolve.io/node-rank (its block: torchrun's",
              "NODE_RANK); read them with the downward API (env valueFrom.fieldRef",
              "metadata.labels['toposolve.io/node-rank'], resolved when the container starts).",
              "A job whose pods are not created yet: a ConfigMap <owner>-ranks with world-size,",
              "ranks-per-pod, master (the index holding rank 0) and per pod index",
              "<index>.rank, <index>.node-rank, <index>.node; mount it in the pod template and",
              "read the files of the pod's own index (the comment says how the index is made).",
              "Apply: kubectl apply --server-side --field-manager=toposolve -f FILE"],
}


@dataclass
class Exported:
    """The objects of one export, each with its comment lines, and stderr notes."""

    form: str
    header: list[str]
    items: list[tuple[list[str], dict[str, Any]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def objects(self) -> list[dict[str, Any]]:
        return [obj for _, obj in self.items]

    def text(self) -> str:
        """Multi-document YAML, a comment above each document."""
        parts = ["".join(f"# {line}\n" for line in self.header)]
        for comment, obj in self.items:
            parts.append("---\n" + "".join(f"# {line}\n" for line in comment)
                         + yaml.dump(obj, Dumper=_DUMPER, sort_keys=False))
        return "".join(parts)


def export_plan(plan: Plan, form: str, source: ExportSource | None, *, plan_file: str = "<plan>",
                kueue_api: str = "v1beta2") -> Exported:
    """The objects of ``plan`` in ``form`` (see the module doc).

    Parameters
    ----------
    plan
        The plan.
    form
        One of :data:`EXPORT_FORMS`.
    source
        The instance and dump the plan was made from; None only for ``bindings`` and
        ``evictions`` (no check that the pods exist).
    plan_file
        The plan's file, for messages.
    kueue_api
        ``v1beta2`` or ``v1beta1`` (``kueue-admission``).

    Returns
    -------
    Exported
        Raises :class:`InputError` (one line) where the form does not fit the input.
    """
    if form not in EXPORT_FORMS:
        raise ValueError(f"export form must be one of {', '.join(EXPORT_FORMS)}, not {form!r}")
    if kueue_api not in KUEUE_APIS:
        raise ValueError(f"kueue API must be one of {', '.join(KUEUE_APIS)}, not {kueue_api!r}")
    check_exportable(plan, plan_file)
    if source is None and form not in ("bindings", "evictions", "moves"):
        raise InputError(f"--as {form} needs the instance the plan was made from "
                         "(toposolve export PLAN INSTANCE...)", file=plan_file)
    out = Exported(form, list(HEADERS[form]))
    if form == "moves":
        if plan.bindings:
            out.notes.append(f"the plan also places {len(plan.bindings)} pods: export them "
                             "with --as bindings (or templates) and apply those after the moves")
        steer = _steering(plan, source, out, plan_file) if source is not None else []
        if source is None and plan.moves:
            out.notes.append("no instance given: the moved jobs' owner patches that steer their "
                             "replacements are left out (toposolve export PLAN INSTANCE... "
                             "--as moves)")
        out.items = [*steer, *_move_items(plan.moves)]
        return out
    if plan.moves:
        out.notes.append(f"the plan moves {len(plan.moves)} pods: export them with --as moves "
                         "and apply those first")
    if form == "evictions":
        out.items = [([f"evict {v.pod} (from {v.node}):", eviction_command(v)],
                      eviction_object(v)) for v in plan.evictions]
        return out
    if plan.evictions:
        out.notes.append(f"the plan evicts {len(plan.evictions)} pods: export them with "
                         "--as evictions and apply those first")
    if form == "ranks":
        out.items, computed = rank_items(plan, source)
        if computed:
            out.notes.append(f"the plan carries no ranks for {computed} jobs: computed with "
                             "policy/ranks (the network-following order, as solve --ranks)")
        return out
    builders = {"bindings": _bindings, "templates": _templates,
                "kueue-admission": _admissions, "kai-bindrequests": _bind_requests}
    if form == "kueue-admission":
        out.header.append(f"Kueue API: kueue.x-k8s.io/{kueue_api}")
    builders[form](plan, source, out, plan_file, kueue_api)
    return out


def _move_items(moves: list[Move]) -> list[tuple[list[str], dict[str, Any]]]:
    """Per move an Eviction, in plan order; in a plan with waves, in wave order, the first of
    each wave saying so (wait for the previous wave's replacements to be Ready first)."""
    waves = sorted({m.wave for m in moves if m.wave is not None})
    items, started = [], set()
    for move in sorted(moves, key=lambda m: m.wave or 0):  # stable: plan order in a wave
        victim = Binding(move.pod, move.source)
        comment = [f"move {move.pod}: evict it from {move.source}; its controller's "
                   f"replacement must go to {move.to}", eviction_command(victim)]
        if move.wave is not None and move.wave not in started:
            started.add(move.wave)
            wait = ("" if move.wave == waves[0] else "; start it only once every replacement "
                    "of the previous wave is Ready (the budgets' disruptionsAllowed renews)")
            comment.insert(0, f"wave {move.wave} of {len(waves)}{wait}")
        items.append((comment, eviction_object(victim)))
    return items


def _steering(plan: Plan, source: ExportSource, out: Exported,
              plan_file: str) -> list[tuple[list[str], dict[str, Any]]]:
    """Per moved job (in the order of its first move), its owner's patch confining each
    podset's template to the nodes its pods hold after the plan (moved or staying); a note for
    each job whose owner cannot be patched."""
    where = {m.pod: m.to for m in plan.moves}
    jobs: dict[str, Job] = {}
    for index, move in enumerate(plan.moves):
        found = source.job_of(move.pod)
        if found is None:
            raise InputError(f"pod {move.pod!r} is not in the instance", file=plan_file,
                             field=f"moves[{index}].pod")
        jobs.setdefault(found[0].key, found[0])
    items = []
    for key, job in jobs.items():
        try:
            owner = check_patchable(source, job, running=True)
        except InputError as err:
            out.notes.append(f"job {key}: its replacements are not steered: {err.message}")
            continue
        podsets = {task.name: [source.nodes[where.get(f"{job.namespace}/"
                                                      f"{task.pod_name(job.name, i)}", node)]
                               for i, node in sorted(task.running.items())]
                   for task in job.tasks if task.running}
        workload = source.workload(job)
        templates = owner_templates(owner, workload.body if workload is not None else None)
        if len(templates) == len(podsets) == 1:  # one template: its podset name is the owner's
            podsets = {next(iter(templates)): next(iter(podsets.values()))}
        if not set(podsets) <= set(templates):
            out.notes.append(f"job {key}: its replacements are not steered: its podsets "
                             f"{', '.join(sorted(podsets))} are not the templates of "
                             f"{owner.kind} {owner.namespace}/{owner.name}")
            continue
        comment, patch = _owner_item(source, owner, [(job, podsets)])
        items.append(([f"steer the replacements of the moved {comment[0]}", *comment[1:]],
                      patch))
    return items


def _new(plan: Plan, out: Exported) -> list[tuple[int, Binding]]:
    """The bindings that may be carried out now; a note counts the nominated ones."""
    nominated = sum(1 for b in plan.bindings if b.nominated)
    if nominated:
        out.notes.append(f"{nominated} nominated pods left out: they wait for their victims "
                         f"(not expressible as {out.form})")
    return [(i, b) for i, b in enumerate(plan.bindings) if not b.nominated]


def _check_pod(source: ExportSource | None, index: int, binding: Binding, plan_file: str) -> None:
    if source is None or source.native:
        return
    problem = pod_problem(source.pods.get(binding.pod))
    if problem is None:
        return
    hint = ""
    if binding.pod not in source.pods and source.job_of(binding.pod) is not None:
        hint = ("; its job's pods are made after admission: export --as templates "
                "(or --as kueue-admission)")
    raise InputError(f"pod {binding.pod} {problem}{hint}", file=plan_file,
                     field=f"bindings[{index}].pod")


def _bindings(plan: Plan, source: ExportSource | None, out: Exported, plan_file: str,
              _api: str) -> None:
    for index, binding in _new(plan, out):
        _check_pod(source, index, binding, plan_file)
        out.items.append(([f"bind {binding.pod} to {binding.node}"], binding_object(binding)))


def _bind_requests(plan: Plan, source: ExportSource | None, out: Exported, plan_file: str,
                   _api: str) -> None:
    assert source is not None
    if source.scheduler != "kai":
        raise InputError("--as kai-bindrequests needs a KAI-Scheduler input (PodGroups of "
                         f"scheduling.run.ai); this one is {source.scheduler}'s",
                         file=source.instance.source)
    for index, binding in _new(plan, out):
        _check_pod(source, index, binding, plan_file)
        found = source.job_of(binding.pod)
        obj = bind_request_object(binding, found[1] if found else None,
                                  source.pods.get(binding.pod))
        out.items.append(([f"KAI's binder binds {binding.pod} to {binding.node}"], obj))


def planned_podsets(plan: Plan, source: ExportSource,
                    plan_file: str) -> dict[str, dict[str, list[Node]]]:
    """Job key → podset name → the node of each planned pod, in plan order."""
    out: dict[str, dict[str, list[Node]]] = {}
    for index, binding in enumerate(plan.bindings):
        found = source.job_of(binding.pod)
        node = source.nodes.get(binding.node)
        if found is None or node is None:
            what = "pod" if found is None else "node"
            raise InputError(f"{what} {getattr(binding, what)!r} is not in the instance",
                             file=plan_file, field=f"bindings[{index}].{what}")
        job, task = found
        out.setdefault(job.key, {}).setdefault(task.name, []).append(node)
    return out


def _templates(plan: Plan, source: ExportSource | None, out: Exported, plan_file: str,
               _api: str) -> None:
    assert source is not None
    gangs_by_owner: dict[tuple[str, str, str, str], tuple[Owner, list[Gang]]] = {}
    for key, podsets in planned_podsets(plan, source, plan_file).items():
        job = source.jobs[key]
        _refuse_existing_pods(source, job)
        owner = check_patchable(source, job)
        _refuse_lws_pods(source, owner, job)
        entry = gangs_by_owner.setdefault((owner.group, owner.kind, owner.namespace, owner.name),
                                          (owner, []))
        entry[1].append((job, podsets))
    lws = False
    for owner, gangs in gangs_by_owner.values():
        out.items.append(_owner_item(source, owner, gangs))
        lws = lws or owner.kind == "LeaderWorkerSet"
    if lws:
        out.notes.append(LWS_NOTE)


def _owner_item(source: ExportSource, owner: Owner,
                gangs: list[Gang]) -> tuple[list[str], dict[str, Any]]:
    """The comment and the patch of one owner whose template makes the pods of ``gangs``
    (several: the groups of a LeaderWorkerSet, which share its templates and flavor)."""
    levels = source.topology_levels(gangs[0][0])
    workload = source.workload(gangs[0][0])
    templates = owner_templates(owner, workload.body if workload is not None else None)
    keys = [job.key for job, _ in gangs]
    jobs = f"job {keys[0]}" if len(keys) == 1 else f"{len(keys)} jobs, one per group: " + \
        ", ".join(keys[:3]) + (", …" if len(keys) > 3 else "")
    patches, comment = {}, [f"{owner.kind} {owner.namespace}/{owner.name} ({jobs}):"]
    names = dict.fromkeys(name for _, podsets in gangs for name in podsets)
    for unit in placement_units(names, templates):
        groups = [nodes for _, podsets in gangs
                  if (nodes := [n for name in unit for n in podsets.get(name, [])])]
        requirements, level = confinement(groups, levels)
        for podset in unit:
            patches[podset] = template_patch(templates.get(podset, {}), requirements, level,
                                             kueue=source.scheduler == "kueue")
        comment.append(f"  podset {'+'.join(unit)}: {sum(map(len, groups))} pods confined "
                       f"to {_describe(requirements)}")
    if len(gangs) > 1:
        comment.append("  one template serves every group: confined to the union of the "
                       "groups' planned domains")
    return comment, owner_patch(owner, patches)


def _describe(requirements: Iterable[dict[str, Any]]) -> str:
    parts = []
    for r in requirements:
        values = r["values"]
        shown = ",".join(values[:3]) + (f",… ({len(values)} nodes)" if len(values) > 3 else "")
        parts.append(f"{r['key']} in {shown}")
    return "; ".join(parts)


def _refuse_lws_pods(source: ExportSource, owner: Owner, job: Job) -> None:
    pod = source.lws_pod(owner) if owner.kind == "LeaderWorkerSet" else None
    if pod is not None:
        raise InputError(f"its pods exist already (pod {pod}): a LeaderWorkerSet makes its "
                         "groups' pods at once, and a template patch does not move them; "
                         "export --as kueue-admission once Kueue has made the Workloads",
                         obj=f"Job/{job.key}")


def _refuse_existing_pods(source: ExportSource, job: Job) -> None:
    existing = next((f"{job.namespace}/{t.pod_name(job.name, i)}" for t in job.tasks
                     for i in range(t.replicas)
                     if f"{job.namespace}/{t.pod_name(job.name, i)}" in source.pods), None)
    if existing is not None:
        form = "kai-bindrequests" if source.scheduler == "kai" else "bindings"
        raise InputError(f"its pods exist already (pod {existing}): a template patch does not "
                         f"move them; export --as {form}", obj=f"Job/{job.key}")


def _admissions(plan: Plan, source: ExportSource | None, out: Exported, plan_file: str,
                api: str) -> None:
    assert source is not None
    if source.scheduler != "kueue":
        raise InputError("--as kueue-admission needs a Kueue input (Workloads or queued jobs); "
                         f"this one is {source.scheduler}'s", file=source.instance.source)
    for key, podsets in planned_podsets(plan, source, plan_file).items():
        job = source.jobs[key]
        levels = source.topology_levels(job)
        workload = source.workload(job)
        if workload is None:
            raise InputError("Kueue has not made a Workload for this job yet: export "
                             "--as templates, or dump again once the Workload exists",
                             obj=f"Job/{key}")
        if (workload.body.get("status") or {}).get("admission"):
            raise InputError("the Workload is admitted already: its admission cannot change",
                             file=workload.file, obj=f"Workload/{key}")
        obj = admission_patch(job, podsets, source.tas_flavor(job), levels, api)
        count = sum(len(n) for n in podsets.values())
        out.items.append(([f"admit Workload {key}: {count} pods in ClusterQueue {job.queue}"],
                          obj))

"""The rank map of a plan as launchers read it (``toposolve export --as ranks``, docs/ranks.md).

A pod that exists gets a partial Pod (server-side apply) with the labels ``toposolve.io/rank``
(its first rank) and ``toposolve.io/node-rank`` (its rank block: torchrun's ``NODE_RANK``). A
job whose pods are not all created yet gets a ConfigMap ``<owner>-ranks`` keyed by the index
the owner's controller gives each pod (``JOB_COMPLETION_INDEX``, a JobSet's job and completion
index, a PyTorchJob's replica index, else the podset and pod index): per index its rank, node
rank and planned node, plus the world size, ranks per pod and the index holding rank 0.
"""

from __future__ import annotations

from typing import Any

from toposolve.core.instance import Job
from toposolve.core.plan import Plan
from toposolve.core.problem import compile_problem
from toposolve.formats.export.objects import metadata
from toposolve.formats.export.source import ExportSource, Owner
from toposolve.formats.k8s.ranks import RANKS_LABEL
from toposolve.policy.ranks import JobPods, assign_ranks, blocks_of, rank_map, ranked_jobs

RANK_LABEL = "toposolve.io/rank"
NODE_RANK_LABEL = "toposolve.io/node-rank"


def index_keys(job: Job, owner: Owner | None) -> tuple[dict[str, str], str]:
    """Pod (``namespace/name``) → the key of its index in the owner's own numbering, and that
    numbering in words (for the object's comment)."""
    kind = (owner.group, owner.kind) if owner is not None else None
    parallelism = _jobset_parallelism(owner) if kind == ("jobset.x-k8s.io", "JobSet") else {}
    out: dict[str, str] = {}
    for task in job.tasks:
        for i in range(task.replicas):
            pod = f"{job.namespace}/{task.pod_name(job.name, i)}"
            if kind == ("batch", "Job"):
                out[pod] = str(i)
            elif task.name in parallelism:
                out[pod] = f"{task.name}-{i // parallelism[task.name]}-" \
                           f"{i % parallelism[task.name]}"
            else:
                out[pod] = f"{task.name}-{i}"
    if kind == ("batch", "Job"):
        return out, "JOB_COMPLETION_INDEX"
    if parallelism:
        return out, "<replicatedJob>-<jobset.sigs.k8s.io/job-index>-<JOB_COMPLETION_INDEX>"
    if kind == ("kubeflow.org", "PyTorchJob"):
        return out, "<replica type, lower case>-<training.kubeflow.org/replica-index>"
    if kind == ("batch.volcano.sh", "Job"):
        return out, "<task>-<VC_TASK_INDEX>"
    return out, "<podset>-<pod index>"


def _jobset_parallelism(owner: Owner) -> dict[str, int]:
    """Replicated job name → its Jobs' parallelism (empty without the JobSet's object)."""
    spec = (owner.doc.body.get("spec") or {}) if owner.doc is not None else {}
    out = {}
    for rj in spec.get("replicatedJobs") or []:
        value = ((rj.get("template") or {}).get("spec") or {}).get("parallelism", 1)
        if isinstance(value, int) and value > 0:
            out[str(rj.get("name"))] = value
    return out


def pod_rank_patch(pod: str, rank: int, node_rank: int) -> dict[str, Any]:
    """The partial Pod that labels ``pod`` with its first rank and its node rank."""
    meta: dict[str, Any] = {**metadata(pod), "labels": {RANK_LABEL: str(rank),
                                                        NODE_RANK_LABEL: str(node_rank)}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def rank_table(name: str, pods: JobPods, first: dict[str, int], keys: dict[str, str],
               node_names: tuple[str, ...]) -> dict[str, Any]:
    """The ConfigMap ``name`` of one job: ``world-size``, ``ranks-per-pod``, ``master`` (the
    index holding rank 0), then per index, by rank, ``<index>.rank``, ``.node-rank``, ``.node``."""
    namespace = pods.key.partition("/")[0]
    data = {"world-size": str(pods.layout.world), "ranks-per-pod": str(pods.per_pod)}
    order = sorted(range(len(pods.pods)), key=lambda i: first[pods.pods[i]])
    data["master"] = keys[pods.pods[order[0]]]
    for i in order:
        key, rank = keys[pods.pods[i]], first[pods.pods[i]]
        data[f"{key}.rank"] = str(rank)
        data[f"{key}.node-rank"] = str(rank // pods.per_pod)
        data[f"{key}.node"] = node_names[int(pods.nodes[i])]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {RANKS_LABEL: pods.key.partition("/")[2]}},
            "data": data}


def plan_ranks(plan: Plan, source: ExportSource
               ) -> tuple[list[tuple[JobPods, dict[str, int]]], int, tuple[str, ...]]:
    """Every ranked job of ``plan`` with its pods' first ranks: the plan's own (checked: one
    block start per ranked pod) where it has them, else :func:`assign_ranks`; how many jobs
    were computed; the node names by node index."""
    problem = compile_problem(source.instance)
    jobs = ranked_jobs(problem, plan)
    computed = assign_ranks(problem, plan) if any(j.key not in plan.ranks for j in jobs) else {}
    out = []
    for pods in jobs:
        if pods.key in plan.ranks:
            out.append((pods, rank_map(pods, blocks_of(pods, plan.ranks[pods.key], pods.key))))
        else:
            out.append((pods, computed[pods.key]))
    return out, sum(1 for j in jobs if j.key not in plan.ranks), problem.topology.node_names


def rank_items(plan: Plan, source: ExportSource) -> tuple[list[tuple[list[str], dict]], int]:
    """The commented objects of ``--as ranks`` (see the module docstring), in job order, and
    how many jobs' ranks were computed rather than read from the plan."""
    ranked, computed, node_names = plan_ranks(plan, source)
    items: list[tuple[list[str], dict]] = []
    for pods, first in ranked:
        job = source.jobs[pods.key]
        head = f"job {pods.key} ({pods.layout.text}, ranks per pod: {pods.per_pod})"
        missing = source.native or any(p not in source.pods for p in pods.pods)
        if not missing:
            for pod in pods.pods:
                items.append(([f"{head}: pod {pod} holds ranks from {first[pod]}"],
                              pod_rank_patch(pod, first[pod], first[pod] // pods.per_pod)))
            continue
        owner = None if source.native else source.owner(job)
        keys, numbering = index_keys(job, owner)
        name = f"{owner.name if owner is not None else job.name}-ranks"
        what = f"{owner.kind} {owner.name}" if owner is not None else "its pods"
        items.append(([f"{head}: rank table of {what}, keyed by {numbering}"],
                      rank_table(name, pods, first, keys, node_names)))
    return items, computed

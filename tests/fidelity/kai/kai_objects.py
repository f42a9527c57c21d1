"""KAI-Scheduler objects for the ported test tables, built the way KAI's test fakes build them.

KAI's fakes (``pkg/scheduler/test_utils`` @ the pinned commit): a node has 20000 CPUs, 20G of
memory, 110 pods and its GPUs; a task asks 1 CPU (or the job's CPUs), 1G of memory and the job's
(or its own) GPUs; a job without SubGroups has one gang of all its tasks; jobs are created in
list order (the first is the oldest).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toposolve.core.instance import Instance
from toposolve.formats.load import load_instance

NODE_CPU = 20000
NODE_MEMORY = "20G"
NODE_PODS = 110
TASK_CPU = 1
TASK_MEMORY = "1G"
AFFINITY_LABEL = "affinity"  # the fakes' per-node affinity label (tasks_fake.NodeAffinityKey)
GRID_LEVELS = ("k8s.io/zone", "k8s.io/spine", "k8s.io/rack")


def grid_nodes(
    zones: int, spines_per_zone: int, racks_per_spine: int, nodes_per_rack: int, gpus: int
) -> dict:
    """The evenly distributed zone/spine/rack layout of KAI's topology allocate tests (node ids,
    spine and rack numbers counted across the whole cluster)."""
    nodes, n = {}, 0
    for z in range(zones):
        for s in range(spines_per_zone):
            spine = s + 1 + z * spines_per_zone
            for r in range(racks_per_spine):
                rack = r + 1 + s * racks_per_spine + z * spines_per_zone * racks_per_spine
                for _ in range(nodes_per_rack):
                    labels = dict(
                        zip(
                            GRID_LEVELS,
                            (f"zone{z + 1}", f"spine{spine}", f"rack{rack}"),
                            strict=True,
                        )
                    )
                    nodes[f"node{n}"] = {"gpus": gpus, "labels": labels}
                    n += 1
    return nodes


def topology_doc(name: str, levels: list[str]) -> dict:
    return {
        "apiVersion": "kai.scheduler/v1alpha1",
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": k} for k in levels]},
    }


def node_doc(name: str, spec: dict) -> dict:
    labels = {AFFINITY_LABEL: name, **spec.get("labels", {})}
    allocatable = {
        "cpu": str(spec.get("cpu", NODE_CPU)),
        "memory": str(spec.get("memory", NODE_MEMORY)),
        "pods": str(spec.get("max_pods", NODE_PODS)),
        "nvidia.com/gpu": str(spec.get("gpus", 0)),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": allocatable},
    }


def _constraint(topology: str, c: dict | None) -> dict:
    if not c:
        return {}
    out = {"topology": c.get("topology", topology)}  # a constraint may name another Topology
    if "required" in c:
        out["requiredTopologyLevel"] = c["required"]
    if "preferred" in c:
        out["preferredTopologyLevel"] = c["preferred"]
    return {"topologyConstraint": out}


def _subgroups(topology: str, tree: list[dict], parent: str | None = None) -> list[dict]:
    """The SubGroup tree, flattened as PodGroup ``spec.subGroups`` entries naming their parent."""
    out = []
    for sg in tree:
        entry = {"name": sg["name"], **_constraint(topology, sg.get("constraint"))}
        if parent is not None:
            entry["parent"] = parent
        if "min" in sg:
            entry["minMember"] = sg["min"]
        if "min_subgroups" in sg:
            entry["minSubGroup"] = sg["min_subgroups"]
        out.append(entry)
        out += _subgroups(topology, sg.get("children", []), sg["name"])
    return out


def _leaf_minimum(tree: list[dict]) -> int:
    return sum(
        _leaf_minimum(sg["children"]) if "children" in sg else sg.get("min", 0) for sg in tree
    )


def job_docs(topology: str, job: dict) -> list[dict]:
    """A PodGroup and its pods (``<job>-<i>``); running tasks are bound to their node."""
    name = job["name"]
    spec: dict[str, Any] = {"queue": "queue0", **_constraint(topology, job.get("constraint"))}
    tree = job.get("subgroups")
    spec["minMember"] = _leaf_minimum(tree) if tree else len(job["tasks"])
    if tree:
        spec["subGroups"] = _subgroups(topology, tree)
    if "min_subgroups" in job:
        spec["minSubGroup"] = job["min_subgroups"]
    docs = [
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    ]
    for i, task in enumerate(job["tasks"]):
        requests = (
            {}
            if job.get("best_effort")
            else {
                "cpu": str(job.get("cpu", TASK_CPU)),
                "memory": TASK_MEMORY,
                "nvidia.com/gpu": str(task.get("gpus", job.get("gpus", 0))),
            }
        )
        pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": "default",
                "annotations": {"pod-group-name": name},
                "labels": {"kai.scheduler/subgroup-name": task["subgroup"]}
                if "subgroup" in task
                else {},
            },
            "spec": {
                "schedulerName": "kai-scheduler",
                "containers": [{"name": "c", "resources": {"requests": requests}}],
            },
        }
        if "node_affinity" in task:
            term = {
                "matchExpressions": [
                    {"key": AFFINITY_LABEL, "operator": "In", "values": task["node_affinity"]}
                ]
            }
            pod["spec"]["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
                }
            }
        if "running_on" in task:
            pod["spec"]["nodeName"] = task["running_on"]
            pod["status"] = {"phase": "Running"}
        docs.append(pod)
    return docs


def plugin_case(levels: list[str], nodes: dict, job: dict) -> dict:
    """An allocate-form case of one job from a plugin table's short form: ``tasks`` pending pods
    (or ``task_gpus``, one pod per entry), ``running_on`` nodes, ``required`` / ``preferred``
    levels."""
    tasks = [{"running_on": n} for n in job.get("running_on", [])]
    tasks += (
        [{"gpus": g} for g in job["task_gpus"]]
        if "task_gpus" in job
        else [{} for _ in range(job.get("tasks", 0))]
    )
    spec = {k: job[k] for k in ("cpu", "gpus", "best_effort") if k in job}
    constraint = {k: job[k] for k in ("required", "preferred") if k in job}
    if constraint:
        spec["constraint"] = constraint
    return {
        "topologies": {"t": levels},
        "nodes": nodes,
        "jobs": [{"name": "job", **spec, "tasks": tasks}],
    }


def case_documents(case: dict) -> list[dict]:
    """All objects of one ported allocate case (constraints name the first Topology unless they
    say ``topology``)."""
    topologies = case.get("topologies", {})
    topology = next(iter(topologies), "")
    nodes = grid_nodes(**case["grid"]) if "grid" in case else case["nodes"]
    docs = [topology_doc(name, levels) for name, levels in topologies.items()]
    docs += [node_doc(n, spec) for n, spec in nodes.items()]
    for job in case["jobs"]:
        docs += job_docs(topology, job)
    return docs


def load_case(tmp_path: Path, docs: list[dict]) -> Instance:
    path = tmp_path / "kai.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return load_instance(path, warn=lambda _: None)

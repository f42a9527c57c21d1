"""Pods of one PodGroup role that differ in requests: tasks of distinct names that keep the role
``minTaskMember`` counts, through the native format and the Volcano writer."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from toposolve.core.instance import Instance
from toposolve.formats import load_instance, write_manifests
from toposolve.formats.native.writer import write_native

DUMP = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", pods: "110"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec: {minMember: 4, minTaskMember: {worker: 3}}
"""
POD = """---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: ns
  labels: {{volcano.sh/task-spec: {role}}}
  annotations: {{scheduling.k8s.io/group-name: pg}}
spec:
  schedulerName: volcano
  containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def dump(tmp_path: Path) -> Path:
    pods = [("w-0", "worker", 1), ("w-1", "worker", 2), ("w-2", "worker", 1), ("p-0", "ps", 1)]
    path = tmp_path / "dump.yaml"
    path.write_text(textwrap.dedent(DUMP) + "".join(
        POD.format(name=name, role=role, cpu=cpu) for name, role, cpu in pods))
    return path


def same(a: Instance, b: Instance) -> bool:
    return a.model_dump(exclude={"source"}) == b.model_dump(exclude={"source"})


def test_pods_of_one_role_and_two_shapes_are_two_tasks_of_that_role(tmp_path):
    (job,) = load_instance(dump(tmp_path)).jobs
    assert [(t.name, t.role_name, t.pod_names) for t in job.tasks] == [
        ("worker", "worker", ["w-0", "w-2"]),
        ("worker-2", "worker", ["w-1"]),
        ("ps", "ps", ["p-0"]),
    ]
    assert job.min_task_member == {"worker": 3}
    # the pods still carry the label of their role, as in the dump
    assert job.tasks[1].labels_of(0)["volcano.sh/task-spec"] == "worker"


def test_the_dump_written_as_native_yaml_reads_back(tmp_path):
    original = load_instance(dump(tmp_path))
    write_native(original, tmp_path / "native.yaml")
    text = (tmp_path / "native.yaml").read_text()
    assert "role: worker" in text
    assert same(load_instance(tmp_path / "native.yaml"), original)


def test_the_dump_written_by_the_volcano_writer_reads_back(tmp_path):
    original = load_instance(dump(tmp_path))
    write_manifests(original, tmp_path / "volcano.yaml")
    text = (tmp_path / "volcano.yaml").read_text()
    # Volcano knows the role only: no task name of toposolve's own is written
    assert "worker-2" not in text
    assert same(load_instance(tmp_path / "volcano.yaml"), original)


def test_native_role_of_a_task_reads_with_its_minimum(tmp_path):
    path = tmp_path / "in.yaml"
    path.write_text(textwrap.dedent("""
        apiVersion: toposolve/v1
        kind: Instance
        nodeGroups: [{name: n, count: 1, allocatable: {cpu: 8}}]
        jobs:
        - name: j
          minAvailable: 2
          tasks:
          - {name: a, replicas: 1, minAvailable: 1}
          - {name: b, role: a, replicas: 1, minAvailable: 1, requests: {cpu: 2}}
        """))
    (job,) = load_instance(path).jobs
    assert [t.role_name for t in job.tasks] == ["a", "a"]
    write_manifests(load_instance(path), tmp_path / "volcano.yaml")
    docs = list(yaml.safe_load_all((tmp_path / "volcano.yaml").read_text()))
    (group,) = [d for d in docs if d["kind"] == "PodGroup"]
    assert group["spec"]["minTaskMember"] == {"a": 2}  # both tasks' minimums, summed per role
    labels = [d["metadata"]["labels"]["volcano.sh/task-spec"] for d in docs if d["kind"] == "Pod"]
    assert labels == ["a", "a"]

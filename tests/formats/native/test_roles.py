"""The native ``role`` of a task (``Task.role``): read, written back, and refused in one line
where it is no role (empty, not a string, beside a partition)."""

from __future__ import annotations

import textwrap

import pytest

from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance
from toposolve.formats.native.writer import instance_to_native

HEAD = """
apiVersion: toposolve/v1
kind: Instance
nodeGroups: [{name: n, count: 1, allocatable: {cpu: 8}}]
jobs:
- name: j
  minTaskMember: {a: 2}
  tasks:
  - {name: a, replicas: 1}
"""


def read(tmp_path, task: str):
    path = tmp_path / "in.yaml"
    path.write_text(textwrap.dedent(HEAD) + f"  - {task}\n")
    return load_instance(path)


def test_a_role_is_read_and_written_back(tmp_path):
    inst = read(tmp_path, "{name: a-2, role: a, replicas: 1, requests: {cpu: 2}}")
    assert [(t.name, t.role, t.role_name) for t in inst.jobs[0].tasks] == [
        ("a", None, "a"), ("a-2", "a", "a")]
    tasks = instance_to_native(inst)["jobs"][0]["tasks"]
    assert ["role" in t for t in tasks] == [False, True] and tasks[1]["role"] == "a"


@pytest.mark.parametrize("task, words", [
    ("{name: b, role: '', replicas: 1}", "tasks[1].role: String should have at least 1"),
    ("{name: b, role: [x], replicas: 1}", "tasks[1].role: expected a string, got a list"),
    ("{name: b, role: a, replicas: 2, partition: {partitionSize: 1}}",
     "tasks[1]: a partitioned task is named as its role ('a')"),
])
def test_a_role_that_is_none_is_an_error_naming_the_field(tmp_path, task, words):
    with pytest.raises(InputError) as info:
        read(tmp_path, task)
    message = str(info.value)
    assert "\n" not in message and "Job/default/j: " + words in message
